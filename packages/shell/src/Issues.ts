/**
 * The problems a schema found in a value, as text, the same in both editions: each problem as
 * `path: message` (the path dotted), the problems joined by `; `. Each edition walks its own
 * `Schema`'s issues and hands the problems here; the texts of a walk that must not print the
 * actual value (a value too deeply nested for the schema's own formatter) are here too.
 *
 * @since 0.1.0
 */

/**
 * One problem: where in the value (property keys and indexes from the root, each printed as
 * `String` prints it; none at the root) and what is wrong.
 *
 * @since 0.1.0
 * @category models
 */
export interface Problem {
  readonly path?: ReadonlyArray<unknown> | undefined
  readonly message: string
}

/**
 * One problem as a line: `path: message`, the path dotted (a symbol key by its description), or
 * the message alone at the root.
 *
 * @since 0.1.0
 * @category constructors
 */
export const line = (problem: Problem): string =>
  problem.path !== undefined && problem.path.length > 0
    ? `${problem.path.map(String).join(".")}: ${problem.message}`
    : problem.message

/**
 * The problems as one text: their {@link line}s joined by `; `; `none` when there are none.
 *
 * @since 0.1.0
 * @category constructors
 */
export const format = (problems: ReadonlyArray<Problem>, none: string = ""): string =>
  problems.length === 0 ? none : problems.map(line).join("; ")

/**
 * What a report says when it names no problem.
 *
 * @since 0.1.0
 * @category models
 */
export const noProblemNamed = "the value does not match the schema"

/**
 * The messages of a report that does not print the actual value: a value of the wrong type (by
 * the type expected), a key missing, unexpected or forbidden.
 *
 * @since 0.1.0
 * @category models
 */
export const withoutValues = {
  expected: (expected: string): string => `Expected ${expected} (the actual value is too deeply nested to print)`,
  missing: "is missing",
  unexpected: "is unexpected",
  forbidden: "is forbidden"
} as const
