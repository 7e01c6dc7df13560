import * as DateTime from "effect/DateTime"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
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
    raw: Schema.String.pipe(Schema.filter((s) => !known.has(s), { message: () => "a known value" }))
  })
  return Schema.Union(
    Schema.Literal(...literals),
    Schema.transform(Schema.String, Unrecognized, {
      strict: true,
      decode: (raw) => Unrecognized.make({ raw }),
      encode: (u) => u.raw
    })
  )
}

/** A string with at least one non-blank character. */
export const NonBlankString = Schema.String.pipe(
  Schema.filter(Model.isNonBlank, { message: () => Model.nonBlankMessage })
)

/** An absolute http(s) URL. */
export const HttpUrlString = Schema.String.pipe(
  Schema.filter(Model.isHttpUrl, { message: () => Model.httpUrlMessage })
)

/**
 * Parses a timestamp the service sent as `Model.readTimestamp` reads it: ISO 8601, or epoch
 * seconds or milliseconds, as a number or a numeric string. Anything else is `None`, never a failure.
 */
export const parseTimestamp = (raw: string): Option.Option<DateTime.Utc> => {
  const read = Model.readTimestamp(raw)
  return read === undefined ? Option.none() : DateTime.make(read)
}

/** Decodes the caller's input synchronously, turning a parse error into `InvalidRequest`. */
export const validate = <A, I>(
  schema: Schema.Schema<A, I>,
  subject: string
): (input: unknown) => Either.Either<A, InvalidRequest> => {
  const decode = Schema.decodeUnknownEither(schema, { errors: "all", onExcessProperty: "ignore" })
  return (input) =>
    Either.mapLeft(decode(input), (error) => new InvalidRequest({ subject, message: formatIssues(error) }))
}

/**
 * Formats a parse error as `path: problem` lines (`Issues.format`). Total: the platform's
 * formatter prints the actual value recursively and overflows the stack on a deeply nested one (a
 * hostile frame of depth 10,000 is 20 KB); the fallback names the paths and the expected types only.
 */
export const formatIssues = (error: ParseResult.ParseError): string => {
  try {
    return Issues.format(ParseResult.ArrayFormatter.formatErrorSync(error))
  } catch {
    const problems: Array<Issues.Problem> = []
    describeWithoutValues(error.issue, [], problems)
    return Issues.format(problems, Issues.noProblemNamed)
  }
}

/** The problems of a parse issue, without printing the actual values (walks the schema, not the value). */
const describeWithoutValues = (
  issue: ParseResult.ParseIssue,
  path: ReadonlyArray<PropertyKey>,
  out: Array<Issues.Problem>
): void => {
  const at = (message: string) => out.push({ path, message })
  switch (issue._tag) {
    case "Pointer":
      return describeWithoutValues(issue.issue, [...path, ...(Array.isArray(issue.path) ? issue.path : [issue.path])], out)
    case "Composite":
      for (const inner of Array.isArray(issue.issues) ? issue.issues : [issue.issues]) {
        describeWithoutValues(inner, path, out)
      }
      return
    case "Refinement":
    case "Transformation":
      return describeWithoutValues(issue.issue, path, out)
    case "Type":
      return void at(Issues.withoutValues.expected(String(issue.ast)))
    case "Missing":
      return void at(Issues.withoutValues.missing)
    case "Unexpected":
      return void at(Issues.withoutValues.unexpected)
    case "Forbidden":
      return void at(Issues.withoutValues.forbidden)
  }
}
