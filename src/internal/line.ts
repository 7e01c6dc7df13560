/**
 * The names of Effect 3 that the binding (the repository's `binding/`, Effect code written once
 * for both editions) uses where Effect 4 names the same thing differently. The Effect 4 edition's
 * `line.ts` exports the same names, bound to Effect 4: a binding module imports them from here
 * (`../src/internal/line.js`, relative to where it lies), never from the line's own module.
 */
import type * as Arr from "effect/Array"
import * as Config from "effect/Config"
import type * as ConfigErrors from "effect/ConfigError"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import type * as AST from "effect/SchemaAST"

/** What a duration may be given as (`"5 seconds"`, millis, a `Duration`). */
export type DurationInput = Duration.DurationInput

/** The `Duration` of an input (a malformed one is a defect: inputs are typed). */
export const durationOf: (input: DurationInput) => Duration.Duration = Duration.decode

/**
 * Declares a service's tag as a class: `class X extends ServiceTag<X, Service>()("key") {}`. The
 * class is the key a layer provides the service under and an effect reads it by.
 */
export const ServiceTag = <Self, Shape>() => <const Key extends string>(key: Key): Context.TagClass<Self, Key, Shape> =>
  Context.Tag(key)<Self, Shape>()

/** The effect that reads a service from the context by its tag. */
export const service: <Id, Shape>(tag: Context.Tag<Id, Shape>) => Effect.Effect<Shape, never, Id> = (tag) => tag

/** A secret read from the configuration (an environment variable by default), as `Redacted`. */
export const configRedacted: (name: string) => Config.Config<Redacted.Redacted<string>> = Config.redacted

/** A string read from the configuration (an environment variable by default). */
export const configString: (name: string) => Config.Config<string> = Config.string

/** The failure of reading the configuration. */
export type ConfigError = ConfigErrors.ConfigError

/** A literal read from the configuration: one of the given values. */
export const configLiteral = <const Literals extends Arr.NonEmptyReadonlyArray<AST.LiteralValue>>(
  literals: Literals,
  name: string
): Config.Config<Literals[number]> => Config.literal(...literals)(name)

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

/** `Some` of a value, `None` of `null` or `undefined`. */
export const optionFromNullable: <A>(value: A) => Option.Option<NonNullable<A>> = Option.fromNullable

/** The platform's HTTP client: the service a client layer provides and requests are sent by. */
export * as HttpClient from "@effect/platform/HttpClient"

/** The HTTP client over the runtime's `fetch`, and the `RequestInit` its requests are made with. */
export * as FetchHttpClient from "@effect/platform/FetchHttpClient"

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

/** The platform's sockets: the `WebSocketConstructor` service a WebSocket is opened through. */
export * as Socket from "@effect/platform/Socket"

/**
 * A string configuration checked by `predicate` when read: a value that fails it is a
 * `ConfigError` with `message`.
 */
export const configValidated = (
  predicate: (value: string) => boolean,
  message: string
): (self: Config.Config<string>) => Config.Config<string> => Config.validate({ message, validation: predicate })

/** The layer `f` makes of a configuration, read when the layer is built. */
export const layerFromConfig = <A, ROut, E, RIn>(
  config: Config.Config<A>,
  f: (value: A) => Layer.Layer<ROut, E, RIn>
): Layer.Layer<ROut, E | ConfigError, RIn> => Layer.unwrapEffect(Config.map(config, f))
