/**
 * The names of Effect 3 that the binding (the repository's `binding/`, Effect code written once
 * for both editions) uses where Effect 4 names the same thing differently. The Effect 4 edition's
 * `line.ts` exports the same names, bound to Effect 4: a binding module imports them from here
 * (`../src/internal/line.js`, relative to where it lies), never from the line's own module.
 */
import type * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as FiberId from "effect/FiberId"
import * as FiberRef from "effect/FiberRef"
import * as HashMap from "effect/HashMap"
import * as Runtime from "effect/Runtime"
import type * as Tracer from "effect/Tracer"

/** What a duration may be given as (`"5 seconds"`, millis, a `Duration`). */
export type DurationInput = Duration.DurationInput

/** The `Duration` of an input (a malformed one is a defect: inputs are typed). */
export const durationOf: (input: DurationInput) => Duration.Duration = Duration.decode

/** The tracer Effect runs with when no tracer was provided (its spans reach no exporter). */
export const builtInTracer: Tracer.Tracer = Effect.runSync(Effect.tracer)

/** A clock's time in nanoseconds, read synchronously. */
export const currentTimeNanos = (clock: Clock.Clock): bigint => clock.unsafeCurrentTimeNanos()

/**
 * A span under the current one with these attributes, made without capturing the caller's stack
 * (a stack trace per span is heap for nothing here).
 */
export const makeSpanNoStack = (name: string, attributes: Record<string, unknown>): Effect.Effect<Tracer.Span> =>
  Effect.makeSpan(name, { attributes, captureStackTrace: false })

/** A new `Deferred`, made outside any fiber. */
export const makeDeferredUnsafe = <A, E = never>(): Deferred.Deferred<A, E> => Deferred.unsafeMake<A, E>(FiberId.none)

/** Completes a `Deferred` with an effect (its waiters run it), outside any fiber. */
export const doneDeferredUnsafe: <A, E>(self: Deferred.Deferred<A, E>, effect: Effect.Effect<A, E>) => void =
  Deferred.unsafeDone

/** A clock's time in milliseconds, read synchronously. */
export const currentTimeMillis = (clock: Clock.Clock): number => clock.unsafeCurrentTimeMillis()

/**
 * What a fiber started from outside any fiber (a socket's callback) runs with, taken from a
 * running fiber: its Clock, logger, log annotations and services.
 */
export type RunContext = Runtime.Runtime<never>

/** The current fiber's {@link RunContext}. */
export const runContext: Effect.Effect<RunContext> = Effect.runtime<never>()

/** Drops the caller's log annotations and services, its span among them (the Clock and the logger are not services). */
const dropCaller: Effect.Effect<void> = Effect.zipRight(
  FiberRef.set(FiberRef.currentLogAnnotations, HashMap.empty()),
  FiberRef.set(FiberRef.currentContext, Context.empty())
)

/**
 * Runs an effect in a fiber of its own (not the caller's child) with `context`'s Clock and logger,
 * none of its log annotations, span or services: a fiber that serves many callers.
 */
export const forkDetached = (context: RunContext, effect: Effect.Effect<void>): void => {
  Runtime.runFork(context)(Effect.zipRight(dropCaller, effect))
}

/** A socket the line's `Socket.WebSocketConstructor` service makes. */
export type WebSocketLike = globalThis.WebSocket
