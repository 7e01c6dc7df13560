/**
 * How two JSON values differ (`Recording.difference`): the text of a replay's mismatch.
 * Re-exported by `Recording`.
 */
import { isObject } from "./json.js"

const show = (value: unknown): string => value === undefined ? "(absent)" : JSON.stringify(value)

/**
 * The differences between two JSON values, one per line (`field: expected X, got Y`), or the
 * empty string when they are equal. Objects are compared member by member (in name order).
 *
 * @since 0.1.0
 * @category combinators
 */
export const difference = (expected: unknown, actual: unknown, path = "", depth = 0): string => {
  if (isObject(expected) && isObject(actual) && depth < 16) {
    const names = [...new Set([...Object.keys(expected), ...Object.keys(actual)])].sort()
    return names
      .map((name) => difference(expected[name], actual[name], path.length === 0 ? name : `${path}.${name}`, depth + 1))
      .filter((line) => line.length > 0)
      .join("\n")
  }
  if (JSON.stringify(expected) === JSON.stringify(actual)) return ""
  return `${path.length === 0 ? "" : `${path}: `}expected ${show(expected)}, got ${show(actual)}`
}
