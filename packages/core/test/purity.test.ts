/**
 * The core is the protocol without a framework: no module of it imports Effect (either edition's)
 * or Node, and it has no run-time dependency. ESLint says the same (`no-restricted-imports` on
 * packages/core); this test holds it for whoever runs only the tests.
 */
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { sourceFiles as sources, specifiers } from "effect-agent-session-test-support/imports"
import { describe, expect, it } from "vitest"

const core = join(import.meta.dirname, "..")

describe("packages/core", () => {
  it("imports nothing of Effect, nor Node, nor any package: its modules only", () => {
    const files = sources(join(core, "src"))
    expect(files.length).toBeGreaterThan(0)
    for (const file of files) {
      for (const specifier of specifiers(readFileSync(file, "utf8"))) {
        expect(specifier, `${file} imports ${specifier}`).toMatch(/^\.\.?\//)
      }
    }
  })

  it("the tests import no Effect either", () => {
    for (const file of sources(join(core, "test"))) {
      for (const specifier of specifiers(readFileSync(file, "utf8"))) {
        expect(specifier, `${file} imports ${specifier}`).not.toMatch(/^(effect(\/|$)|@effect\/)/)
      }
    }
  })

  it("has no run-time dependency", () => {
    const manifest = JSON.parse(readFileSync(join(core, "package.json"), "utf8")) as Record<string, unknown>
    expect(manifest["dependencies"]).toBeUndefined()
    expect(manifest["peerDependencies"]).toBeUndefined()
  })
})
