/**
 * The editions' shared glue is plain TypeScript over the core: no module of it imports Effect or
 * Node, and it reaches the core only through its package name (`effect-agent-session-core`, the
 * public entry point), never by a path into packages/core. ESLint says the same
 * (`no-restricted-imports` on packages/shell); this test holds it for whoever runs only the tests.
 */
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { sourceFiles as sources, specifiers } from "effect-agent-session-test-support/imports"
import { describe, expect, it } from "vitest"

const shell = join(import.meta.dirname, "..")

describe("packages/shell", () => {
  it("imports its own modules and the core's public entry point: nothing of Effect, nor Node", () => {
    const files = sources(join(shell, "src"))
    expect(files.length).toBeGreaterThan(0)
    for (const file of files) {
      for (const specifier of specifiers(readFileSync(file, "utf8"))) {
        expect(specifier, `${file} imports ${specifier}`).toMatch(/^(\.\/|\.\.\/(?!\.\.\/)|effect-agent-session-core$)/)
      }
    }
  })

  it("the tests import no Effect, and the core only by its package name", () => {
    for (const file of sources(join(shell, "test"))) {
      for (const specifier of specifiers(readFileSync(file, "utf8"))) {
        expect(specifier, `${file} imports ${specifier}`).not.toMatch(/^(effect(\/|$)|@effect\/)|core\/src|^effect-agent-session-core\//)
      }
    }
  })

  it("has the core as its one run-time dependency", () => {
    const manifest = JSON.parse(readFileSync(join(shell, "package.json"), "utf8")) as Record<string, unknown>
    expect(manifest["dependencies"]).toEqual({ "effect-agent-session-core": "^0.1.0" })
    expect(manifest["peerDependencies"]).toBeUndefined()
  })
})
