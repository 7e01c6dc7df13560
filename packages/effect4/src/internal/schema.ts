import * as DateTime from "effect/DateTime"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"
import * as SchemaTransformation from "effect/SchemaTransformation"
import { InvalidRequest } from "../Errors.js"

/** A value the service sent that the SDK has no name for (U05, U13, U15). */
export interface Unrecognized {
  readonly _tag: "Unrecognized"
  readonly raw: string
}

/**
 * An open enumeration: the named literals, or `{ _tag: "Unrecognized", raw }` for any other
 * string. Encodes back to the raw string, so an unknown value survives a round trip.
 */
export const openEnum = <const L extends readonly [string, ...Array<string>]>(...literals: L) => {
  const known: ReadonlySet<string> = new Set(literals)
  const Unrecognized = Schema.TaggedStruct("Unrecognized", {
    raw: Schema.String.check(Schema.makeFilter((s) => !known.has(s), { expected: "a value other than the known ones" }))
  })
  return Schema.Union([
    Schema.Literals(literals),
    Schema.String.pipe(
      Schema.decodeTo(
        Unrecognized,
        SchemaTransformation.transform({
          decode: (raw: string) => ({ _tag: "Unrecognized" as const, raw }),
          encode: (u: { readonly raw: string }) => u.raw
        })
      )
    )
  ])
}

/** A string with at least one non-blank character. */
export const NonBlankString = Schema.String.check(
  Schema.makeFilter((s: string) => s.trim().length > 0, { message: "must not be empty or blank" })
)

const isHttpUrl = (s: string): boolean => {
  if (!URL.canParse(s)) return false
  const url = new URL(s)
  return (url.protocol === "http:" || url.protocol === "https:") && url.host.length > 0
}

/** An absolute http(s) URL. */
export const HttpUrlString = Schema.String.check(
  Schema.makeFilter(isHttpUrl, { message: "must be an absolute http(s) URL" })
)

/**
 * Parses a timestamp the service sent (U02): ISO 8601, or epoch seconds or milliseconds, as a
 * number or a numeric string. Anything else is `None`, never a failure.
 */
export const parseTimestamp = (raw: string): Option.Option<DateTime.Utc> => {
  const trimmed = raw.trim()
  if (trimmed.length === 0) return Option.none()
  if (/^-?\d+(\.\d+)?$/.test(trimmed)) {
    const n = Number(trimmed)
    // Below 1e11 is read as seconds (up to year 5138), above as milliseconds.
    const millis = Math.abs(n) < 1e11 ? n * 1000 : n
    return DateTime.make(millis)
  }
  // Date.parse accepts many non-ISO shapes; require an ISO-looking date first.
  if (!/^\d{4}-\d{2}-\d{2}/.test(trimmed)) return Option.none()
  return DateTime.make(trimmed)
}

const formatter = SchemaIssue.makeFormatterStandardSchemaV1()

/**
 * Formats a schema issue as `path: problem` lines. The issue's input is never printed (the v4
 * formatter reports it only when asked with `reportInput`), so a deeply nested value cannot
 * overflow the stack here.
 */
export const formatIssue = (issue: SchemaIssue.Issue): string =>
  formatter(issue).issues
    .map((entry) => (entry.path !== undefined && entry.path.length > 0 ? `${entry.path.map(String).join(".")}: ${entry.message}` : entry.message))
    .join("; ")

/** Decodes the caller's input synchronously, turning a schema error into `InvalidRequest`. */
export const validate = <S extends Schema.Decoder<unknown>>(
  schema: S,
  subject: string
): (input: unknown) => Result.Result<S["Type"], InvalidRequest> => {
  const decode = Schema.decodeUnknownResult(schema, { errors: "all", onExcessProperty: "ignore" })
  return (input) =>
    Result.mapError(decode(input), (error) => new InvalidRequest({ subject, message: formatIssue(error.issue) }))
}
