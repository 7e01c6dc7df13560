/**
 * Keeps the fast inner loop honest (test/suites.ts): every test file the suite runs is classified,
 * fast or slow, exactly once, and no entry names a file that is gone.
 */
import { assert, describe, it } from "@effect/vitest"
import { readdirSync } from "node:fs"
import { join, relative } from "node:path"
import config from "../vitest.config.js"
import fastConfig from "../vitest.fast.config.js"
import { covers, fast, pattern, slow } from "./suites.js"

const root = join(import.meta.dirname, "..")

/** Every `*.test.ts` under a folder, relative to the root. */
const testFiles = (dir: string): ReadonlyArray<string> =>
  readdirSync(join(root, dir), { recursive: true, encoding: "utf8" })
    .filter((name) => name.endsWith(".test.ts"))
    .map((name) => relative(root, join(root, dir, name)).split("\\").join("/"))

/** The files the whole suite runs: its `include` patterns, each of the form `<folder>/**\/*.test.ts`. */
const suiteFiles = (): ReadonlyArray<string> =>
  (config.test?.include ?? []).flatMap((include) => {
    const folder = /^([\w./-]+)\/\*\*\/\*\.test\.ts$/.exec(include)?.[1]
    assert.isDefined(folder, `vitest.config.ts include "${include}": teach test/suites.test.ts its form`)
    return testFiles(folder ?? ".")
  }).sort()

describe("the fast inner loop (test/suites.ts)", () => {
  it("every test file of the suite is fast or slow, exactly once", () => {
    const entries = [...fast, ...slow.map((entry) => entry.path)]
    const findings = suiteFiles().flatMap((file) => {
      const matches = entries.filter((entry) => covers(entry, file))
      return matches.length === 1 ? [] : [`${file}: ${matches.length === 0 ? "in neither list: add it to fast or slow" : `in ${matches.join(" and ")}`}`]
    })
    assert.deepStrictEqual(findings, [])
  })

  it("every entry names a test file of the suite, and every slow one says why", () => {
    const files = suiteFiles()
    const stale = [...fast, ...slow.map((entry) => entry.path)].filter((entry) => !files.some((file) => covers(entry, file)))
    assert.deepStrictEqual(stale, [])
    for (const entry of slow) assert.isAbove(entry.why.length, 10, entry.path)
  })

  it("npm run test:fast runs the fast list with the suite's own settings", () => {
    assert.deepStrictEqual(fastConfig.test?.include, fast.map(pattern))
    assert.strictEqual(fastConfig.test?.pool, config.test?.pool)
    assert.deepStrictEqual(fastConfig.resolve, config.resolve)
    assert.isAbove(fast.length, 20)
  })
})
