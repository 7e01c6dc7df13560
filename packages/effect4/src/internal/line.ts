/**
 * The names of Effect 4 that the binding (the repository's `binding/`, Effect code written once
 * for both editions) uses where Effect 3 names the same thing differently. The Effect 3 edition's
 * `line.ts` exports the same names, bound to Effect 3: a binding module imports them from here
 * (`../src/internal/line.js`, relative to where its copy lies), never from the line's own module.
 */
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import type * as SchemaAST from "effect/SchemaAST"
import * as SchemaTransformation from "effect/SchemaTransformation"

/** What a duration may be given as (`"5 seconds"`, millis, a `Duration`). */
export type DurationInput = Duration.Input

/** The `Duration` of an input (a malformed one is a defect: inputs are typed). */
export const durationOf: (input: DurationInput) => Duration.Duration = Duration.fromInputUnsafe

/**
 * Declares a service's tag as a class: `class X extends ServiceTag<X, Service>()("key") {}`. The
 * class is the key a layer provides the service under and an effect reads it by.
 */
export const ServiceTag: <Self, Shape>() => <const Key extends string>(key: Key) => Context.ServiceClass<Self, Key, Shape> =
  Context.Service

/** The effect that reads a service from the context by its tag. */
export const service: <Id, Shape>(tag: Context.Key<Id, Shape>) => Effect.Effect<Shape, never, Id> = Effect.service

/** A secret read from the configuration (an environment variable by default), as `Redacted`. */
export const configRedacted: (name: string) => Config.Config<Redacted.Redacted<string>> = Config.Redacted

/** A string read from the configuration (an environment variable by default). */
export const configString: (name: string) => Config.Config<string> = Config.String

/** The failure of reading the configuration. */
export type ConfigError = Config.ConfigError

/** A literal read from the configuration: one of the given values. */
export const configLiteral = <const Literals extends ReadonlyArray<SchemaAST.LiteralValue>>(
  literals: Literals,
  name: string
): Config.Config<Literals[number]> => Config.schema(Schema.Literals(literals), name)

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

/** `Some` of a value, `None` of `null` or `undefined`. */
export const optionFromNullable: <A>(value: A) => Option.Option<NonNullable<A>> = Option.fromNullishOr

/** The platform's HTTP client: the service a client layer provides and requests are sent by. */
export * as HttpClient from "effect/http/HttpClient"

/** The HTTP client over the runtime's `fetch`, and the `RequestInit` its requests are made with. */
export * as FetchHttpClient from "effect/http/FetchHttpClient"

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

/** The platform's sockets: the `WebSocketConstructor` service a WebSocket is opened through. */
export * as Socket from "effect/socket/Socket"

/**
 * A string configuration checked by `predicate` when read: a value that fails it is a
 * `ConfigError` with `message`.
 */
export const configValidated = (
  predicate: (value: string) => boolean,
  message: string
): (self: Config.Config<string>) => Config.Config<string> => {
  const schema = Schema.String.check(Schema.makeFilter(predicate, { message }))
  return Config.mapEffect((value: string) =>
    Effect.mapError(Schema.decodeUnknownEffect(schema)(value), (error) => new Config.ConfigError(error))
  )
}

/** The layer `f` makes of a configuration, read when the layer is built. */
export const layerFromConfig = <A, ROut, E, RIn>(
  config: Config.Config<A>,
  f: (value: A) => Layer.Layer<ROut, E, RIn>
): Layer.Layer<ROut, E | ConfigError, RIn> =>
  Layer.unwrap(
    Effect.gen(function*() {
      return f(yield* config)
    })
  )
