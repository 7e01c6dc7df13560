/**
 * The Effect 4 edition's documentation holds: every public export carries a summary, `@since` and
 * a `@category`; every entry point a module overview; and every ```ts block of an `@example` and
 * of the README compiles against the sources (imported by the package's own name, which resolves
 * to `src/` under the `effect-agent-session-source` condition of tsconfig.json). The readers of
 * JSDoc and Markdown are the repository's (`JsDoc.ts` and `DocBlocks.ts` of the private package
 * `effect-agent-session-test-support`): one reader, two editions.
 */
import { assert, describe, it } from "@effect/vitest"
import { execFile } from "node:child_process"
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { basename, join } from "node:path"
import * as Effect from "effect/Effect"
import { docBlocks, documents } from "effect-agent-session-test-support/DocBlocks"
import { bindingModules, examples, undocumented } from "effect-agent-session-test-support/JsDoc"

const packageDir = join(import.meta.dirname, "..")
/** Paths as the JsDoc reader takes them: relative to the repository's root. */
const fromRoot = (path: string) => `packages/effect4/${path}`

const publicModules = [
  ...readdirSync(join(packageDir, "src"))
    .filter((name) => name.endsWith(".ts") && name !== "index.ts")
    .sort()
    .map((name) => fromRoot(`src/${name}`)),
  fromRoot("src/testing/AgentSessionsTest.ts")
]
/**
 * The declarations of the public modules written once for both editions (`binding/*.ts` of the
 * Effect 3 edition, `packages/effect3`, which this edition's `src/*.ts` re-export): their JSDoc as written, their
 * examples as this edition's copy of the binding holds them (importing this package), compiled
 * here against Effect 4. The test kit's declarations are among them.
 */
const bindingDocs = [...bindingModules(), "packages/effect3/binding/testing/AgentSessionsTest.ts"]
const bindingExamples = bindingDocs.map((file) => file.replace(/^packages\/effect3\//, "packages/effect4/"))
const entryPoints = [fromRoot("src/index.ts"), fromRoot("src/testing/index.ts")]

const outDir = join(packageDir, ".tmp", `doc-examples-${process.pid}`)

const tsc = (project: string) =>
  Effect.callback<{ readonly code: number; readonly output: string }>((resume) => {
    const bin = createRequire(import.meta.url).resolve("typescript/bin/tsc")
    const child = execFile(process.execPath, [bin, "-p", project], { cwd: packageDir, timeout: 120_000 }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === "number" ? error.code : 1
      resume(Effect.succeed({ code, output: `${stdout}${stderr}` }))
    })
    return Effect.sync(() => child.kill())
  })

describe("JSDoc and README of the Effect 4 edition", () => {
  it("every public export has a summary, @since and a @category", () => {
    const findings = [...publicModules, ...bindingDocs].flatMap(undocumented)
    assert.deepStrictEqual(findings.map((f) => `${f.file} ${f.name}: ${f.missing.join(", ")}`), [])
  })

  it("every entry point has a module overview, and every namespace it exports a summary and @since", () => {
    for (const file of entryPoints) {
      const text = readFileSync(join(packageDir, "..", "..", file), "utf8")
      assert.match(text, /^\/\*\*[\s\S]*?@since \d+\.\d+\.\d+[\s\S]*?@module [\w/-]+[\s\S]*?\*\//, file)
      const reExports = [...text.matchAll(/(\/\*\*(?:(?!\*\/)[\s\S])*\*\/)\s*export \* as (\w+)/g)]
      assert.strictEqual(reExports.length, [...text.matchAll(/export \* as /g)].length, `${file}: a namespace without JSDoc`)
    }
  })

  it.live("every @example block, every ```ts block of the README, and every Effect 4 program of docs/, compiles", () =>
    Effect.gen(function*() {
      const blocks = [
        ...publicModules.flatMap(examples).map((e) => ({ ...e, name: `${basename(e.file, ".ts")}_L${e.line}.ts` })),
        ...bindingExamples.flatMap(examples).map((e) => ({ ...e, name: `binding_${basename(e.file, ".ts")}_L${e.line}.ts` })),
        ...docBlocks(fromRoot("README.md")).map((e) => ({ ...e, name: e.name ?? `README_L${e.line}.ts` })),
        // The Effect 4 programs of docs/ (the scale-out walk-through's), which the Effect 3 suite does not compile.
        ...documents().flatMap(docBlocks).filter((e) => e.kind === "effect4").map((e) => ({
          ...e,
          name: `${basename(e.file, ".md")}_${e.name ?? `L${e.line}.ts`}`
        }))
      ]
      assert.isAtLeast(blocks.length, 8, "the modules and the README have examples")
      rmSync(outDir, { recursive: true, force: true })
      mkdirSync(outDir, { recursive: true })
      for (const block of blocks) {
        const module = /^\s*(import|export)\s/m.test(block.code) ? block.code : `${block.code}\nexport {}\n`
        writeFileSync(join(outDir, block.name), `// ${block.file}:${block.line}\n${module}\n`)
      }
      writeFileSync(
        join(outDir, "tsconfig.json"),
        JSON.stringify({ extends: "../../tsconfig.json", compilerOptions: { noEmit: true }, include: blocks.map((b) => b.name) })
      )
      const { output } = yield* tsc(join(outDir, "tsconfig.json"))
      const ownErrors = output.split("\n").filter((line) => line.includes(`.tmp/${basename(outDir)}/`))
      assert.deepStrictEqual(ownErrors, [], output)
      rmSync(outDir, { recursive: true, force: true })
    }), 120_000)
})
