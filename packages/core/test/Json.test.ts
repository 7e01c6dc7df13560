import { assert, describe, it } from "vitest"
import * as FastCheck from "fast-check"
import { Json } from "../src/index.js"

/**
 * The reference: one character at a time, a backslash inside a string skips the next character, a
 * quote opens or closes a string, brackets count only outside strings. The fast check must agree
 * with it on every text, JSON or not.
 */
const referenceExceedsDepth = (text: string, maxDepth: number): boolean => {
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text[i]
    if (inString) {
      if (c === "\\") i += 1
      else if (c === "\"") inString = false
    } else if (c === "\"") {
      inString = true
    } else if (c === "{" || c === "[") {
      depth += 1
      if (depth > maxDepth) return true
    } else if (c === "}" || c === "]") {
      depth -= 1
    }
  }
  return false
}

/** Strings made of the characters that matter to the scan (JSON.stringify escapes `"` and `\`). */
const trickyString = FastCheck.string({
  unit: FastCheck.constantFrom("\"", "\\", "[", "]", "{", "}", "a", " ", "\\\"", "\\\\", "\n", "é"),
  maxLength: 12
})

/** JSON values nested up to about 12 deep (and deeper chains of single arrays, up to 100). */
const { value: jsonValue } = FastCheck.letrec<{ value: unknown }>((tie) => ({
  value: FastCheck.oneof(
    { depthSize: "small", withCrossShrink: true },
    trickyString,
    FastCheck.integer(),
    FastCheck.constantFrom(null, true, false),
    FastCheck.array(tie("value"), { maxLength: 4 }),
    FastCheck.dictionary(trickyString, tie("value"), { maxKeys: 4 })
  )
}))
const deepValue = FastCheck.tuple(jsonValue, FastCheck.integer({ min: 0, max: 100 }), FastCheck.boolean()).map(
  ([inner, depth, asObject]) => {
    let value = inner
    for (let i = 0; i < depth; i++) value = asObject ? { k: value } : [value]
    return value
  }
)
const jsonText = FastCheck.oneof(jsonValue, deepValue).map((value) => JSON.stringify(value) ?? "null")

/** JSON texts broken by a few edits: unbalanced, unterminated strings, odd backslash runs. */
const edit = FastCheck.tuple(
  FastCheck.nat(),
  FastCheck.constantFrom("", "\"", "\\", "[", "]", "{", "}", "\\\"", "[[[[[[")
)
const brokenText = FastCheck.tuple(jsonText, FastCheck.array(edit, { minLength: 1, maxLength: 4 })).map(
  ([text, edits]) =>
    edits.reduce((acc, [at, insert]) => {
      const i = acc.length === 0 ? 0 : at % acc.length
      // An empty insert deletes the character at `i`.
      return insert === "" ? acc.slice(0, i) + acc.slice(i + 1) : acc.slice(0, i) + insert + acc.slice(i)
    }, text)
)

/** Any text over the characters that matter, with no structure at all. */
const anyText = FastCheck.array(
  FastCheck.constantFrom("\"", "\\", "[", "]", "{", "}", "a", ":", ",", "[[[[", "{\"a\":"),
  { maxLength: 400 }
).map((parts) => parts.join(""))

const maxDepth = FastCheck.integer({ min: 0, max: 80 })

describe("Json.exceedsDepth", () => {
  it("agrees with the one-character-at-a-time reference on JSON texts (strings with quotes and brackets)", () => {
    FastCheck.assert(
      FastCheck.property(
        jsonText,
        maxDepth,
        (text, depth) => Json.exceedsDepth(text, depth) === referenceExceedsDepth(text, depth)
      ),
      { numRuns: 500 }
    )
  })

  it("agrees with the reference on any text (not JSON: unbalanced, unterminated, odd escapes)", () => {
    FastCheck.assert(
      FastCheck.property(
        FastCheck.oneof(brokenText, anyText),
        FastCheck.integer({ min: 0, max: 12 }),
        (text, depth) => Json.exceedsDepth(text, depth) === referenceExceedsDepth(text, depth)
      ),
      { numRuns: 500 }
    )
  })

  it("on JSON texts, is whether the parsed value nests deeper than the bound", () => {
    FastCheck.assert(
      FastCheck.property(jsonText, maxDepth, (text, depth) => {
        const nesting = (value: unknown): number =>
          value !== null && typeof value === "object"
            ? 1 + Math.max(0, ...Object.values(value).map(nesting))
            : 0
        return Json.exceedsDepth(text, depth) === nesting(JSON.parse(text)) > depth
      }),
      { numRuns: 300 }
    )
  })

  it("at the bound and one over; brackets inside strings, escaped quotes and backslash runs do not count", () => {
    const nested = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`
    assert.isFalse(Json.exceedsDepth(nested(64)))
    assert.isTrue(Json.exceedsDepth(nested(65)))
    assert.isFalse(Json.exceedsDepth(nested(3), 3))
    assert.isTrue(Json.exceedsDepth(nested(4), 3))
    assert.isTrue(Json.exceedsDepth("{", 0))
    assert.isFalse(Json.exceedsDepth("1", 0))
    const brackets = JSON.stringify({ a: "[".repeat(200), b: "{\"[\\".repeat(100) })
    assert.isFalse(Json.exceedsDepth(brackets, 2))
    // An escaped quote does not close the string; an escaped backslash before a quote does.
    assert.isFalse(Json.exceedsDepth(`["\\"[[[[[[[["]`, 2))
    assert.isTrue(Json.exceedsDepth(`["\\\\"[[[[[[[["]`, 2))
    // A string that never ends hides what follows it.
    assert.isFalse(Json.exceedsDepth(`["${"[".repeat(100)}`, 2))
  })

  it("bounded on hostile input: a megabyte of openers, of escaped quotes, of backslash runs", () => {
    const mib = 1024 * 1024
    assert.isTrue(Json.exceedsDepth("[".repeat(mib)))
    assert.isFalse(Json.exceedsDepth(`["${"\\\"".repeat(mib / 2)}"]`))
    assert.isFalse(Json.exceedsDepth(`[${"\"\\\\\\\\\",".repeat(mib / 8)}1]`))
    assert.isFalse(Json.exceedsDepth(`${"[1],".repeat(mib / 4)}`))
  })
})
