/**
 * The `Schema` names of Effect 4 that the binding uses where Effect 3 spells the same thing
 * differently: part of `line.ts`, which re-exports them, kept in a module that imports nothing of
 * the edition, so that the binding's `Errors` can build its schemas while it loads (`line.ts`
 * imports the edition's schema helpers, which import `Errors`).
 */
import * as Schema from "effect/Schema"
import type * as SchemaAST from "effect/SchemaAST"
import * as SchemaTransformation from "effect/SchemaTransformation"

/** The schema of one of the given literal values. */
export const literals: <const Literals extends ReadonlyArray<SchemaAST.LiteralValue>>(
  values: Literals
) => Schema.Literals<Literals> = Schema.Literals

/**
 * An optional field as an `Option`: a missing key decodes to `None`, and `None` encodes to no key
 * (a key that is present must be of the schema).
 */
export const optionFromOptionalKey: <S extends Schema.Constraint>(schema: S) => Schema.OptionFromOptionalKey<S> =
  Schema.OptionFromOptionalKey

/** A string held as `Redacted` once decoded (it never prints), encoded as the plain string. */
export const RedactedString: Schema.RedactedFromValue<Schema.String> = Schema.RedactedFromValue(Schema.String)

/** The schema of a value of any of the given schemas (the first that decodes it). */
export const union: <const Members extends ReadonlyArray<Schema.Constraint>>(members: Members) => Schema.Union<Members> =
  Schema.Union

/** A number decoded to its string (`String(n)`), encoded back with `Number`. */
export const NumberAsString: Schema.decodeTo<Schema.String, Schema.Number> = Schema.Number.pipe(
  Schema.decodeTo(
    Schema.String,
    SchemaTransformation.transform({ decode: (n: number) => String(n), encode: (s: string) => Number(s) })
  )
)

/** An integer at least `minimum`; a smaller one fails with `message`. */
export const intAtLeast = (minimum: number, message: string): Schema.Int =>
  Schema.Int.check(Schema.isGreaterThanOrEqualTo(minimum, { message }))

/**
 * The class `Schema.TaggedError` builds for a tag and its fields, whose instances also have
 * `Inherited` and `Proto`.
 */
export type TaggedErrorClass<Self, Tag extends string, Fields extends Schema.Struct.Fields, Inherited, Proto> =
  Schema.Class<Self, Schema.TaggedStruct<Tag, Fields>, Inherited & Proto>

/** A finite number (no `NaN`, no infinity): what JSON can carry. */
export const FiniteNumber: Schema.Finite = Schema.Finite

/**
 * An optional field as an `Option`: a missing key or `null` decodes to `None`, and `None` encodes
 * to no key.
 */
export const optionFromOptionalNullable = <S extends Schema.Constraint>(schema: S): Schema.OptionFromOptionalNullOr<S> =>
  Schema.OptionFromOptionalNullOr(schema, { onNoneEncoding: "omit" })
