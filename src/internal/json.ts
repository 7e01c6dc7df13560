/**
 * Bounds on JSON text before it is parsed: nesting depth, found without recursion.
 *
 * `JSON.parse` itself is iterative in V8, but everything that walks the parsed value afterwards
 * (`JSON.stringify`, `util.inspect`, the Schema formatters that print the actual value) recurses,
 * and overflows the stack on a few kilobytes of `[[[[...`. Refusing text nested deeper than a
 * bound before parsing keeps every later step total.
 */

/** The deepest nesting accepted by default: far above any payload of the service (depth 3 or 4). */
export const defaultMaxDepth = 64

const OPEN_BRACE = 123 // {
const OPEN_BRACKET = 91 // [
const CLOSE_BRACE = 125 // }
const CLOSE_BRACKET = 93 // ]
const QUOTE = 34 // "
const BACKSLASH = 92 // \

/** How many `{` and `[` a text holds, counting no further than `stopAfter`. */
const countOpeners = (text: string, stopAfter: number): number => {
  let count = 0
  for (const opener of ["{", "["]) {
    let at = text.indexOf(opener)
    while (at >= 0) {
      count += 1
      if (count > stopAfter) return count
      at = text.indexOf(opener, at + 1)
    }
  }
  return count
}

/**
 * Whether JSON text nests objects and arrays deeper than `maxDepth` (brackets inside strings do not
 * count). Linear in the text, constant stack. A text with at most `maxDepth` openers cannot be
 * deeper, and is answered by a quick count (most frames).
 */
export const exceedsDepth = (text: string, maxDepth: number = defaultMaxDepth): boolean => {
  if (text.length <= maxDepth || countOpeners(text, maxDepth) <= maxDepth) return false
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === BACKSLASH) i += 1
      else if (c === QUOTE) inString = false
    } else if (c === QUOTE) {
      inString = true
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      depth += 1
      if (depth > maxDepth) return true
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth -= 1
    }
  }
  return false
}
