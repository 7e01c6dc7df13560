/**
 * The core is the protocol without a framework: no module of it imports Effect (either edition's)
 * or Node, and it has no run-time dependency. ESLint says the same (`no-restricted-imports` on
 * packages/core); this test holds it for whoever runs only the tests.
 */
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"

const core = join(import.meta.dirname, "..")

const sources = (dir: string): Array<string> =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sources(join(dir, entry.name)) : entry.name.endsWith(".ts") ? [join(dir, entry.name)] : []
  )

/** Every module specifier of a file (its comments, such as TSDoc examples, aside). */
const specifiers = (source: string): Array<string> => {
  const text = source.replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "")
  return [...text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+|\brequire\s*\(\s*)["']([^"']+)["']/g)].map((m) => m[1] ?? "")
}

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
