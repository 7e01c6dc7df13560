/**
 * The editions' shared glue is plain TypeScript over the core: no module of it imports Effect or
 * Node, and it reaches the core only through its package name (`effect-agent-session-core`, the
 * public entry point), never by a path into packages/core. ESLint says the same
 * (`no-restricted-imports` on packages/shell); this test holds it for whoever runs only the tests.
 */
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"

const shell = join(import.meta.dirname, "..")

const sources = (dir: string): Array<string> =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sources(join(dir, entry.name)) : entry.name.endsWith(".ts") ? [join(dir, entry.name)] : []
  )

/** Every module specifier of a file (its comments, such as TSDoc examples, aside). */
const specifiers = (source: string): Array<string> => {
  const text = source.replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "")
  return [...text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+|\brequire\s*\(\s*)["']([^"']+)["']/g)].map((m) => m[1] ?? "")
}

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
