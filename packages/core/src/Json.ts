/**
 * Bounds on JSON text before it is parsed: nesting depth, found without recursion.
 *
 * `JSON.parse` itself is iterative in V8, but what walks a parsed value afterwards
 * (`JSON.stringify`, `util.inspect`, schema formatters that print the value) recurses, and
 * overflows the stack on a few kilobytes of `[[[[...`. Refusing text nested deeper than a bound
 * before parsing keeps every later step total.
 *
 * The check runs on every frame, so it costs little beside `JSON.parse`: a text with at most
 * `maxDepth` openers cannot be deeper and is answered by counting them with `indexOf` (most
 * frames); only a text with more openers is scanned, jumping over string contents with `indexOf`
 * (figures: src/internal/README.md, "Frame decoding").
 *
 * @since 0.1.0
 */

/**
 * The deepest nesting accepted by default: far above any payload of the service (depth 3 or 4).
 *
 * @since 0.1.0
 * @category models
 */
export const defaultMaxDepth = 64

const OPEN_BRACE = 123 // {
const OPEN_BRACKET = 91 // [
const CLOSE_BRACE = 125 // }
const CLOSE_BRACKET = 93 // ]
const QUOTE = 34 // "
const BACKSLASH = 92 // \

/** Whether a text holds more than `bound` of `{` and `[` together (strings included; stops early). */
const openersExceed = (text: string, bound: number): boolean => {
  let count = 0
  let at = text.indexOf("{")
  while (at !== -1) {
    if (++count > bound) return true
    at = text.indexOf("{", at + 1)
  }
  at = text.indexOf("[")
  while (at !== -1) {
    if (++count > bound) return true
    at = text.indexOf("[", at + 1)
  }
  return false
}

/**
 * Where the string opened at `open` ends: the next quote not escaped (preceded by an even run of
 * backslashes, which all lie inside the string), or the text's length when it does not end. Linear
 * over the whole scan: each run of backslashes is walked back once, by the quote that ends it.
 */
const closingQuote = (text: string, open: number): number => {
  let at = text.indexOf("\"", open + 1)
  while (at !== -1) {
    let before = at - 1
    while (text.charCodeAt(before) === BACKSLASH) before -= 1
    if ((at - 1 - before) % 2 === 0) return at
    at = text.indexOf("\"", at + 1)
  }
  return text.length
}

/** The scan: depth of `{` and `[` outside strings (unbalanced closers may take it below zero). */
const scanExceeds = (text: string, maxDepth: number): boolean => {
  let depth = 0
  const length = text.length
  for (let i = 0; i < length; i++) {
    const c = text.charCodeAt(i)
    if (c === QUOTE) {
      i = closingQuote(text, i)
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > maxDepth) return true
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth -= 1
    }
  }
  return false
}

/**
 * Whether JSON text nests objects and arrays deeper than `maxDepth` (brackets inside strings do not
 * count; a string that does not end runs to the end of the text). Linear in the text, constant
 * stack. A text with at most `maxDepth` openers cannot be deeper, and is answered by a quick count
 * (most frames).
 *
 * @since 0.1.0
 * @category guards
 */
export const exceedsDepth = (text: string, maxDepth: number = defaultMaxDepth): boolean =>
  text.length > maxDepth && openersExceed(text, maxDepth) && scanExceeds(text, maxDepth)

const strictUtf8 = new TextDecoder("utf-8", { fatal: true })

/**
 * Decodes strict UTF-8: a malformed sequence makes the whole answer `undefined`, never U+FFFD, so a
 * frame that is not text is refused rather than altered.
 *
 * @since 0.1.0
 * @category combinators
 */
export const decodeUtf8 = (bytes: Uint8Array): string | undefined => {
  try {
    return strictUtf8.decode(bytes)
  } catch {
    return undefined
  }
}
