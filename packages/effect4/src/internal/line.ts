/**
 * The names of Effect 4 that the binding (the repository's `binding/`, Effect code written once
 * for both editions) uses where Effect 3 names the same thing differently. The Effect 3 edition's
 * `line.ts` exports the same names, bound to Effect 3: a binding module imports them from here
 * (`../src/internal/line.js`, relative to where its copy lies), never from the line's own module.
 */
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as LatchModule from "effect/Latch"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Result_ from "effect/Result"
import * as Schema from "effect/Schema"
import type * as Socket from "effect/socket/Socket"
import * as Stream from "effect/Stream"

/** What a duration may be given as (`"5 seconds"`, millis, a `Duration`). */
export type DurationInput = Duration.Input

/** The `Duration` of an input (a malformed one is a defect: inputs are typed). */
export const durationOf: (input: DurationInput) => Duration.Duration = Duration.fromInputUnsafe

/** A success or a failure, as a value. */
export type Result<A, E> = Result_.Result<A, E>

/** The effect that succeeds or fails as a {@link Result} did. */
export const fromResult: <A, E>(result: Result<A, E>) => Effect.Effect<A, E> = Effect.fromResult

/** Decodes unknown input with a schema, as an effect. */
export const decodeUnknownEffect = Schema.decodeUnknownEffect

/** The platform's sockets (and the `WebSocketConstructor` service). */
export * as Socket from "effect/socket/Socket"

/** What a WebSocket constructor is given beside the address: its subprotocols, or options with headers. */
export type WebSocketConstructorOptions = Socket.WebSocketConstructorOptions | undefined

/** A WebSocket constructor: the service of `Socket.WebSocketConstructor`. */
export type WebSocketConstructorService = Socket.WebSocketConstructor["Service"]

/** The subprotocols among a WebSocket constructor's options (an options object's headers are not among them). */
export const protocolsOf = (options: WebSocketConstructorOptions): string | Array<string> | undefined =>
  options === undefined || typeof options === "string" || Array.isArray(options) ? options : options.protocols

/** A latch: fibers wait on it while it is closed. */
export type Latch = LatchModule.Latch

/** Makes a latch, open or closed. */
export const makeLatch = LatchModule.make

/** Closes a latch at once, outside an effect. */
export const closeLatchUnsafe = (latch: Latch): void => {
  latch.closeUnsafe()
}

/** What a pull of a stream's next element fails with: the stream's error, or the stream's end. */
export type PullFailure<E> = E | Cause.Done

/** Fails a pull with the stream's error. */
export const pullError: <E>(error: E) => Effect.Effect<never, PullFailure<E>> = Effect.fail

/** Fails a pull with the stream's end: no element follows. */
export const pullDone = (): Effect.Effect<never, PullFailure<never>> => Cause.done()

/** The stream of a pull run again and again, until it fails with the stream's end. */
export const fromPull = Stream.fromEffectRepeat

/** Runs a finalizer given how the stream ended, when it ends. */
export const streamOnExit = Stream.onExit

/** The first failure of a cause, if it has one. */
export const failureOption = Cause.findErrorOption

/** The stream an effect makes, the effect's scope closed when the stream ends. */
export const unwrapScoped = Stream.unwrap

/**
 * Declares a service's tag as a class: `class X extends ServiceTag<X, Service>()("key") {}`. The
 * class is the key a layer provides the service under and an effect reads it by.
 */
export const ServiceTag: <Self, Shape>() => <const Key extends string>(key: Key) => Context.ServiceClass<Self, Key, Shape> =
  Context.Service

/** The effect that reads a service from the context by its tag. */
export const service: <Id, Shape>(tag: Context.Key<Id, Shape>) => Effect.Effect<Shape, never, Id> = Effect.service

/** `Some` of a value, `None` of `null` or `undefined`. */
export const optionFromNullable: <A>(value: A) => Option.Option<NonNullable<A>> = Option.fromNullishOr

/**
 * A layer never shared by reference with the layers of another `Effect.provide`: built with a memo
 * map of its own, where the layers of one program are otherwise memoized across its `provide`s.
 */
export const unshared: <A, E, R>(layer: Layer.Layer<A, E, R>) => Layer.Layer<A, E, R> = Layer.fresh

/** The layer of the services in the context an effect makes, what the effect opens lasting as long as the layer. */
export const scopedContextLayer = Layer.effectContext
