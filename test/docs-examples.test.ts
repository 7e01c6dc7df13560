/**
 * The API reference is generated from the JSDoc (`npm run docs`): every public export must carry
 * a summary, `@since` and a `@category`, and every ```ts block of an `@example` must compile
 * against the sources (imports of `effect-agent-session` rewritten to `src/`). So must every
 * ```ts block of the README and of `docs/*.md`, each marked for what it is (a program, run by
 * test/docs-programs.test.ts, or a fragment: helpers/DocBlocks.ts).
 */
import { assert, describe, it } from "@effect/vitest"
import { execFile } from "node:child_process"
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { basename, join, relative } from "node:path"
import * as Effect from "effect/Effect"
import { docBlocks, documents, misMarked, writeBlocks } from "effect-agent-session-test-support/DocBlocks"
import { entryPoints, examples, publicModules, rewriteImports, root, undocumented } from "effect-agent-session-test-support/JsDoc"

// One directory per run: other runs of the suite may be under way in the same working tree.
const outDir = join(root, ".tmp", `doc-examples-${process.pid}`)

/** Runs `tsc -p <project>`: the exit code and what it printed. */
const tsc = (project: string) =>
  Effect.async<{ readonly code: number; readonly output: string }>((resume) => {
    const bin = createRequire(import.meta.url).resolve("typescript/bin/tsc")
    const child = execFile(process.execPath, [bin, "-p", project], { cwd: root, timeout: 120_000 }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === "number" ? error.code : 1
      resume(Effect.succeed({ code, output: `${stdout}${stderr}` }))
    })
    return Effect.sync(() => child.kill())
  })

describe("JSDoc", () => {
  it("every public export has a summary, @since and a @category", () => {
    const findings = publicModules().flatMap(undocumented)
    assert.deepStrictEqual(
      findings.map((finding) => `${finding.file} ${finding.name}: ${finding.missing.join(", ")}`),
      []
    )
  })

  it("every entry point has a module overview, and every namespace it exports a summary and @since", () => {
    for (const file of entryPoints) {
      const text = readFileSync(join(root, file), "utf8")
      assert.match(text, /^\/\*\*[\s\S]*?@since \d+\.\d+\.\d+[\s\S]*?@module [\w/-]+[\s\S]*?\*\//, file)
      const reExports = [...text.matchAll(/(\/\*\*(?:(?!\*\/)[\s\S])*\*\/)\s*export \* as (\w+)/g)]
      assert.strictEqual(reExports.length, [...text.matchAll(/export \* as /g)].length, `${file}: a namespace without JSDoc`)
      for (const [, comment = "", name = ""] of reExports) {
        assert.match(comment, /^\/\*\*\s*\n\s*\* \S/, `${file}: ${name} has no summary`)
        assert.include(comment, "@since", `${file}: ${name}`)
      }
    }
  })

  it("every ```ts block of the README and docs/*.md is a whole program, or is marked for what it is", () => {
    const blocks = documents().flatMap(docBlocks)
    assert.isAtLeast(blocks.length, 25, "the documents have ts blocks")
    assert.deepStrictEqual(blocks.map(misMarked).filter((finding) => finding !== undefined), [])
    // Most of them are programs, run by test/docs-programs.test.ts.
    assert.isAtLeast(blocks.filter((block) => block.kind === "program").length, 10)
  })

  it.live("every @example block, and every ```ts block of the README and docs/*.md, compiles", () =>
    Effect.gen(function*() {
      const fromJsDoc = publicModules().flatMap(examples)
      assert.isAtLeast(fromJsDoc.length, 10, "the public modules have examples")
      rmSync(outDir, { recursive: true, force: true })
      const files: Array<string> = []
      const write = (dir: string, name: string, source: string, code: string) => {
        mkdirSync(join(outDir, dir), { recursive: true })
        files.push(`${dir}/${name}`)
        writeFileSync(join(outDir, dir, name), `// ${source}\n${rewriteImports(code, join(outDir, dir))}\n`)
      }
      for (const example of fromJsDoc) {
        // A public module's src/ entry point and its binding/ declarations share a name.
        const prefix = example.file.includes("/binding/") ? "binding_" : ""
        write("jsdoc", `${prefix}${basename(example.file, ".ts")}_L${example.line}.ts`, `${example.file}:${example.line}`, example.code)
      }
      for (const { path } of writeBlocks(join(outDir, "docs"))) files.push(relative(outDir, path))
      writeFileSync(
        join(outDir, "tsconfig.json"),
        JSON.stringify({ extends: "../../tsconfig.json", compilerOptions: { noEmit: true }, include: files }, null, 2)
      )
      const { output } = yield* tsc(join(outDir, "tsconfig.json"))
      // Only the examples' own errors count here: the sources are type-checked by `npm run typecheck`.
      const ownErrors = output.split("\n").filter((line) => line.includes(`.tmp/${basename(outDir)}/`))
      assert.deepStrictEqual(ownErrors, [], output)
      rmSync(outDir, { recursive: true, force: true })
    }), 120_000)
})
