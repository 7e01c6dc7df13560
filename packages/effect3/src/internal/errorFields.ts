/**
 * The fields of the error classes (`Failures.errorFields`, plain data in the core) as `Schema`
 * fields of this edition, and what an error's message reads of them.
 */
import * as Duration from "effect/Duration"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type { Failures } from "effect-agent-session-core"

/**
 * The `Duration` of a count of nanoseconds, as it was made. A zero count comes only from
 * `Duration.millis` of less than half a nanosecond, which Effect keeps as zero nanoseconds, a
 * value that hashes apart from `Duration.zero`: it is made again the same way.
 */
const fromNanos = (nanos: bigint): Duration.Duration =>
  nanos === BigInt(0) ? Duration.millis(Number.MIN_VALUE) : Duration.nanos(nanos)

/**
 * A `Duration` whose encoded form is JSON and keeps the way it was made (Effect keeps whole
 * milliseconds as such, and anything else in nanoseconds), so that it decodes to a `Duration`
 * equal to the original (`Equal.equals`, whose hash tells the two apart):
 * `{ millis: <number> }`, `{ nanos: "<integer>" }` or `"Infinity"`.
 */
export const JsonDuration = Schema.transform(
  Schema.Union(
    Schema.Struct({ millis: Schema.JsonNumber.pipe(Schema.nonNegative()) }),
    Schema.Struct({ nanos: Schema.String.pipe(Schema.pattern(/^\d{1,400}$/)) }),
    Schema.Literal("Infinity")
  ),
  // Generated durations include fractional milliseconds, as a jittered wait or a time-out can be.
  Schema.DurationFromSelf.annotations({
    arbitrary: () => (fc) =>
      fc.oneof(
        fc.constant(Duration.infinity),
        fc.bigInt({ min: BigInt(0) }).map(Duration.nanos),
        fc.double({ min: 0, max: 1e15, noNaN: true }).map(Duration.millis)
      )
  }),
  {
    strict: true,
    decode: (encoded) =>
      encoded === "Infinity"
        ? Duration.infinity
        : "millis" in encoded
        ? Duration.millis(encoded.millis)
        : fromNanos(BigInt(encoded.nanos)),
    encode: (duration) => {
      const value = duration.value
      switch (value._tag) {
        case "Infinity":
          return "Infinity" as const
        case "Millis":
          return { millis: value.millis }
        case "Nanos":
          return { nanos: String(value.nanos) }
      }
    }
  }
)

/** The schema of a field's `type`. */
type Base<T extends Failures.Field["type"]> = T extends "string" ? typeof Schema.String
  : T extends "number" ? typeof Schema.JsonNumber
  : T extends "boolean" ? typeof Schema.Boolean
  : T extends "duration" ? typeof JsonDuration
  : T extends readonly [string, ...Array<string>] ? Schema.Literal<T>
  : never

/**
 * The `Schema` field of a field: a constructor default when one is given or it may be absent
 * (decoding still requires a defaulted field); an absent one as `undefined` or `Option.none()`.
 */
type FieldOf<F extends Failures.Field, S extends Schema.Schema.AnyNoContext = Base<F["type"]>> = F extends
  { readonly absent: "undefined" } ?
  Schema.PropertySignature<"?:", Schema.Schema.Type<S> | undefined, never, "?:", Schema.Schema.Encoded<S> | undefined, true>
  : F extends { readonly absent: "option-key" } ?
    Schema.PropertySignature<":", Option.Option<Schema.Schema.Type<S>>, never, "?:", Schema.Schema.Encoded<S>, true>
  : F extends { readonly absent: "option-null" } ?
    Schema.PropertySignature<":", Option.Option<Schema.Schema.Type<S>>, never, ":", Schema.Schema.Encoded<S> | null, true>
  : F extends { readonly default: string | number } ?
    Schema.PropertySignature<":", Schema.Schema.Type<S>, never, ":", Schema.Schema.Encoded<S>, true>
  : S

/** The `Schema` fields of a table of fields, in its order. */
export type FieldsOf<S extends Failures.Fields> = { -readonly [K in keyof S]: FieldOf<S[K]> }

const base = (type: Failures.Field["type"]): Schema.Schema.AnyNoContext =>
  typeof type !== "string"
    ? Schema.Literal(...type)
    : type === "string"
    ? Schema.String
    : type === "number"
    ? Schema.JsonNumber
    : type === "boolean"
    ? Schema.Boolean
    : JsonDuration

const none = () => Option.none()

const field = ({ absent, default: value, type }: Failures.Field): Schema.Struct.Field => {
  const schema = base(type)
  switch (absent) {
    // Given as `undefined` or not given, the error is the same, and equal to itself decoded from
    // JSON (which drops `undefined`).
    case "undefined":
      return Schema.optional(schema).pipe(Schema.withConstructorDefault(() => undefined))
    case "option-key":
      return Schema.optionalWith(schema, { as: "Option", exact: true }).pipe(Schema.withConstructorDefault(none))
    case "option-null":
      return Schema.OptionFromNullOr(schema).pipe(Schema.propertySignature, Schema.withConstructorDefault(none))
  }
  if (value === undefined) return schema
  const made = type === "duration" ? () => Duration.millis(Number(value)) : () => value
  return Schema.propertySignature(schema).pipe(Schema.withConstructorDefault(made))
}

/** The `Schema` fields of a table of fields (`Failures.errorFields`). */
export const fieldsOf = <S extends Failures.Fields>(fields: S): FieldsOf<S> =>
  Object.fromEntries(Object.entries(fields).map(([name, spec]) => [name, field(spec)])) as FieldsOf<S>

/** A field's value as an error's message reads it (`Failures.Plain`): a duration formatted, an `Option` unwrapped. */
export const plain = (value: unknown): unknown => {
  const unwrapped = Option.isOption(value) ? Option.getOrUndefined(value) : value
  return Duration.isDuration(unwrapped) ? Duration.format(unwrapped) : unwrapped
}
