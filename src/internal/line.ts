/**
 * The names of Effect 3 that the binding (the repository's `binding/`, Effect code written once
 * for both editions) uses where Effect 4 names the same thing differently. The Effect 4 edition's
 * `line.ts` exports the same names, bound to Effect 4: a binding module imports them from here
 * (`../src/internal/line.js`, relative to where it lies), never from the line's own module.
 */
import type * as Socket from "@effect/platform/Socket"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Either from "effect/Either"
import { identity } from "effect/Function"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"

/** What a duration may be given as (`"5 seconds"`, millis, a `Duration`). */
export type DurationInput = Duration.DurationInput

/** The `Duration` of an input (a malformed one is a defect: inputs are typed). */
export const durationOf: (input: DurationInput) => Duration.Duration = Duration.decode

/** A success or a failure, as a value. */
export type Result<A, E> = Either.Either<A, E>

/** The effect that succeeds or fails as a {@link Result} did (the result itself: it is one). */
export const fromResult = <A, E>(result: Result<A, E>): Effect.Effect<A, E> => result

/** Decodes unknown input with a schema, as an effect. */
export const decodeUnknownEffect = Schema.decodeUnknown

/** The platform's sockets (and the `WebSocketConstructor` service). */
export * as Socket from "@effect/platform/Socket"

/** What a WebSocket constructor is given beside the address: its subprotocols. */
export type WebSocketConstructorOptions = string | Array<string> | undefined

/** A WebSocket constructor: the service of `Socket.WebSocketConstructor`. */
export type WebSocketConstructorService = Context.Tag.Service<typeof Socket.WebSocketConstructor>

/** The subprotocols among a WebSocket constructor's options. */
export const protocolsOf: (options: WebSocketConstructorOptions) => string | Array<string> | undefined = identity

/** A latch: fibers wait on it while it is closed. */
export type Latch = Effect.Latch

/** Makes a latch, open or closed. */
export const makeLatch = Effect.makeLatch

/** Closes a latch at once, outside an effect. */
export const closeLatchUnsafe = (latch: Latch): void => latch.unsafeClose()

/** What a pull of a stream's next element fails with: the stream's error, or the stream's end. */
export type PullFailure<E> = Option.Option<E>

/** Fails a pull with the stream's error. */
export const pullError = <E>(error: E): Effect.Effect<never, PullFailure<E>> => Effect.fail(Option.some(error))

/** Fails a pull with the stream's end: no element follows. */
export const pullDone = (): Effect.Effect<never, PullFailure<never>> => Effect.fail(Option.none())

/** The stream of a pull run again and again, until it fails with the stream's end. */
export const fromPull = Stream.repeatEffectOption

/** Runs a finalizer given how the stream ended, when it ends. */
export const streamOnExit = Stream.ensuringWith

/** The first failure of a cause, if it has one. */
export const failureOption = Cause.failureOption

/** The stream an effect makes, the effect's scope closed when the stream ends. */
export const unwrapScoped = Stream.unwrapScoped

/**
 * Declares a service's tag as a class: `class X extends ServiceTag<X, Service>()("key") {}`. The
 * class is the key a layer provides the service under and an effect reads it by.
 */
export const ServiceTag = <Self, Shape>() => <const Key extends string>(key: Key): Context.TagClass<Self, Key, Shape> =>
  Context.Tag(key)<Self, Shape>()

/** The effect that reads a service from the context by its tag. */
export const service: <Id, Shape>(tag: Context.Tag<Id, Shape>) => Effect.Effect<Shape, never, Id> = (tag) => tag

/** `Some` of a value, `None` of `null` or `undefined`. */
export const optionFromNullable: <A>(value: A) => Option.Option<NonNullable<A>> = Option.fromNullable

/**
 * A layer never shared by reference with the layers of another `Effect.provide`: each `provide`
 * builds its layers with a memo map of its own, so this is the layer itself.
 */
export const unshared = <A, E, R>(layer: Layer.Layer<A, E, R>): Layer.Layer<A, E, R> => layer

/** The layer of the services in the context an effect makes, what the effect opens lasting as long as the layer. */
export const scopedContextLayer = Layer.scopedContext
