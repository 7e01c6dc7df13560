/**
 * The fields of the error classes (`Failures.errorFields`, plain data in the core) as `Schema`
 * fields of this edition, and what an error's message reads of them.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as SchemaTransformation from "effect/SchemaTransformation"
import type { Failures } from "effect-agent-session-core"

/**
 * Whether a `Duration` has an encoded form: not negative (no wait or time-out of the SDK is), and
 * under 400 digits of nanoseconds (the most the encoded form accepts) or infinite.
 */
const isEncodable = (duration: Duration.Duration): boolean => {
  const value = duration.value
  switch (value._tag) {
    case "Infinity":
      return true
    case "NegativeInfinity":
      return false
    case "Millis":
      return value.millis >= 0
    case "Nanos":
      return value.nanos >= BigInt(0) && String(value.nanos).length <= 400
  }
}

/**
 * A `Duration` whose encoded form is JSON and keeps the way it was made (whole milliseconds as
 * such, anything else in nanoseconds), so that it decodes to a `Duration` equal to the original:
 * `{ millis: <number> }`, `{ nanos: "<integer>" }` or `"Infinity"`. It is never negative.
 */
export const JsonDuration = Schema.Union([
  Schema.Struct({ millis: Schema.Finite.check(Schema.isGreaterThanOrEqualTo(0)) }),
  Schema.Struct({ nanos: Schema.String.check(Schema.isPattern(/^\d{1,400}$/)) }),
  Schema.Literal("Infinity")
]).pipe(
  Schema.decodeTo(
    Schema.Duration.check(Schema.makeFilter(isEncodable, { expected: "a duration >= 0, under 10^400 ns or infinite" })),
    SchemaTransformation.transform({
      decode: (encoded): Duration.Duration =>
        encoded === "Infinity"
          ? Duration.infinity
          : "millis" in encoded
          ? Duration.millis(encoded.millis)
          : Duration.nanos(BigInt(encoded.nanos)),
      encode: (duration): { readonly millis: number } | { readonly nanos: string } | "Infinity" => {
        const value = duration.value
        switch (value._tag) {
          case "Infinity":
            return "Infinity"
          case "NegativeInfinity":
            return { millis: 0 }
          case "Millis":
            return { millis: value.millis }
          case "Nanos":
            // Effect 4 makes `Duration.nanos(0n)` a zero of milliseconds: encoded so, it decodes the same.
            return value.nanos === BigInt(0) ? { millis: 0 } : { nanos: String(value.nanos) }
        }
      }
    })
  )
)

/** The schema of a field's `type`. */
type Base<T extends Failures.Field["type"]> = T extends "string" ? Schema.String
  : T extends "number" ? Schema.Finite
  : T extends "boolean" ? Schema.Boolean
  : T extends "duration" ? typeof JsonDuration
  : T extends readonly [string, ...Array<string>] ? Schema.Literals<T>
  : never

/**
 * A field that may be absent, held as an own property `undefined` then: given as `undefined` or
 * not given, built or decoded from JSON (which drops `undefined`), the error is the same. Effect 4
 * applies constructor defaults only when building: the decoding default puts the key back on an
 * error decoded without it.
 */
const optionalField = <S extends Schema.Top>(schema: S) =>
  Schema.UndefinedOr(schema).pipe(
    Schema.withDecodingDefault(Effect.succeed(undefined)),
    Schema.withConstructorDefault(Effect.succeed(undefined))
  )

/**
 * The `Schema` field of a field: a constructor default when one is given or it may be absent
 * (decoding still requires a defaulted field); an absent one as `undefined` or `Option.none()`.
 */
type FieldOf<F extends Failures.Field, S extends Schema.Top & Schema.WithoutConstructorDefault = Base<F["type"]>> = F extends
  { readonly absent: "undefined" } ? ReturnType<typeof optionalField<S>>
  : F extends { readonly absent: "option-key" } ? Schema.withConstructorDefault<Schema.OptionFromOptionalKey<S>>
  : F extends { readonly absent: "option-null" } ? Schema.withConstructorDefault<Schema.OptionFromNullOr<S>>
  : F extends { readonly default: string | number } ? Schema.withConstructorDefault<S>
  : S

/** The `Schema` fields of a table of fields, in its order. */
export type FieldsOf<S extends Failures.Fields> = { readonly [K in keyof S]: FieldOf<S[K]> }

const base = (type: Failures.Field["type"]): Schema.Top & Schema.WithoutConstructorDefault =>
  typeof type !== "string"
    ? Schema.Literals(type)
    : type === "string"
    ? Schema.String
    : type === "number"
    ? Schema.Finite
    : type === "boolean"
    ? Schema.Boolean
    : JsonDuration

const none = Effect.sync(() => Option.none())

const field = ({ absent, default: value, type }: Failures.Field): Schema.Struct.Fields[string] => {
  const schema = base(type)
  switch (absent) {
    case "undefined":
      return optionalField(schema)
    case "option-key":
      return Schema.OptionFromOptionalKey(schema).pipe(Schema.withConstructorDefault(none))
    case "option-null":
      return Schema.OptionFromNullOr(schema).pipe(Schema.withConstructorDefault(none))
  }
  if (value === undefined) return schema
  return schema.pipe(Schema.withConstructorDefault(Effect.sync(() => type === "duration" ? Duration.millis(Number(value)) : value)))
}

/** The `Schema` fields of a table of fields (`Failures.errorFields`). */
export const fieldsOf = <S extends Failures.Fields>(fields: S): FieldsOf<S> =>
  Object.fromEntries(Object.entries(fields).map(([name, spec]) => [name, field(spec)])) as FieldsOf<S>

/** A field's value as an error's message reads it (`Failures.Plain`): a duration formatted, an `Option` unwrapped. */
export const plain = (value: unknown): unknown => {
  const unwrapped = Option.isOption(value) ? Option.getOrUndefined(value) : value
  return Duration.isDuration(unwrapped) ? Duration.format(unwrapped) : unwrapped
}
