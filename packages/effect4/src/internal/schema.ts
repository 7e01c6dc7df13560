import * as DateTime from "effect/DateTime"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"
import * as SchemaTransformation from "effect/SchemaTransformation"
import { Model } from "effect-agent-session-core"
import { Issues } from "effect-agent-session-shell"
import { InvalidRequest } from "../Errors.js"

/** A value the service sent that the SDK has no name for. */
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
  Schema.makeFilter(Model.isNonBlank, { message: Model.nonBlankMessage })
)

/** An absolute http(s) URL. */
export const HttpUrlString = Schema.String.check(
  Schema.makeFilter(Model.isHttpUrl, { message: Model.httpUrlMessage })
)

/**
 * Parses a timestamp the service sent as `Model.readTimestamp` reads it: ISO 8601, or epoch
 * seconds or milliseconds, as a number or a numeric string. Anything else is `None`, never a failure.
 */
export const parseTimestamp = (raw: string): Option.Option<DateTime.Utc> => {
  const read = Model.readTimestamp(raw)
  return read === undefined ? Option.none() : DateTime.make(read)
}

const formatter = SchemaIssue.makeFormatterStandardSchemaV1()

/**
 * Formats a schema issue as `path: problem` lines (`Issues.format`). The issue's input is never
 * printed (the v4 formatter reports it only when asked with `reportInput`), so a deeply nested
 * value cannot overflow the stack here.
 */
export const formatIssue = (issue: SchemaIssue.Issue): string => Issues.format(formatter(issue).issues)

/** Decodes the caller's input synchronously, turning a schema error into `InvalidRequest`. */
export const validate = <S extends Schema.Decoder<unknown>>(
  schema: S,
  subject: string
): (input: unknown) => Result.Result<S["Type"], InvalidRequest> => {
  const decode = Schema.decodeUnknownResult(schema, { errors: "all", onExcessProperty: "ignore" })
  return (input) =>
    Result.mapError(decode(input), (error) => new InvalidRequest({ subject, message: formatIssue(error.issue) }))
}
