/**
 * The `Schema` names of Effect 3 that the binding uses where Effect 4 spells the same thing
 * differently: part of `line.ts`, which re-exports them, kept in a module that imports nothing of
 * the edition, so that the binding's `Errors` can build its schemas while it loads (`line.ts`
 * imports the edition's schema helpers, which import `Errors`).
 */
import type * as Arr from "effect/Array"
import * as Schema from "effect/Schema"
import type * as AST from "effect/SchemaAST"

/** The schema of one of the given literal values. */
export const literals = <const Literals extends Arr.NonEmptyReadonlyArray<AST.LiteralValue>>(
  values: Literals
): Schema.Literal<[...Literals]> => Schema.Literal(...values)

/**
 * An optional field as an `Option`: a missing key decodes to `None`, and `None` encodes to no key
 * (a key that is present must be of the schema).
 */
export const optionFromOptionalKey = <S extends Schema.Schema.All>(
  schema: S
): Schema.optionalWith<S, { as: "Option"; exact: true }> => Schema.optionalWith(schema, { as: "Option", exact: true })

/** A string held as `Redacted` once decoded (it never prints), encoded as the plain string. */
export const RedactedString: Schema.Redacted<typeof Schema.String> = Schema.Redacted(Schema.String)

/** The schema of a value of any of the given schemas (the first that decodes it). */
export const union = <const Members extends AST.Members<Schema.Schema.All>>(members: Members): Schema.Union<Members> =>
  Schema.Union(...members)

/** A number decoded to its string (`String(n)`), encoded back with `Number`. */
export const NumberAsString: Schema.transform<typeof Schema.Number, typeof Schema.String> = Schema.transform(
  Schema.Number,
  Schema.String,
  { strict: true, decode: (n) => String(n), encode: (s) => Number(s) }
)

/** An integer at least `minimum`; a smaller one fails with `message`. */
export const intAtLeast = (minimum: number, message: string): Schema.filter<typeof Schema.Int> =>
  Schema.Int.pipe(Schema.greaterThanOrEqualTo(minimum, { message: () => message }))

/** The fields of a tagged struct: its tag first. */
type Tagged<Tag extends string, Fields extends Schema.Struct.Fields> = { readonly _tag: Schema.tag<Tag> } & Fields

/**
 * The class `Schema.TaggedError` builds for a tag and its fields, whose instances also have
 * `Inherited` and `Proto`.
 */
export interface TaggedErrorClass<Self, Tag extends string, Fields extends Schema.Struct.Fields, Inherited, Proto>
  extends
    Schema.Class<
      Self,
      Tagged<Tag, Fields>,
      Schema.Struct.Encoded<Tagged<Tag, Fields>>,
      Schema.Struct.Context<Tagged<Tag, Fields>>,
      Schema.Struct.Constructor<Omit<Tagged<Tag, Fields>, "_tag">>,
      Inherited,
      Proto
    >
{
  readonly _tag: Tag
}

/** A finite number (no `NaN`, no infinity): what JSON can carry. */
export const FiniteNumber: typeof Schema.JsonNumber = Schema.JsonNumber

/**
 * An optional field as an `Option`: a missing key or `null` decodes to `None`, and `None` encodes
 * to no key.
 */
export const optionFromOptionalNullable = <S extends Schema.Schema.All>(
  schema: S
): Schema.optionalWith<S, { as: "Option"; exact: true; nullable: true }> =>
  Schema.optionalWith(schema, { as: "Option", exact: true, nullable: true })
