/**
 * The names of Effect 4 that the binding (the repository's `binding/`, Effect code written once
 * for both editions) uses where Effect 3 names the same thing differently. The Effect 3 edition's
 * `line.ts` exports the same names, bound to Effect 3: a binding module imports them from here
 * (`../src/internal/line.js`, relative to where its copy lies), never from the line's own module.
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as References from "effect/References"
import * as Scheduler from "effect/Scheduler"
import * as Tracer from "effect/Tracer"
import type * as Socket from "effect/socket/Socket"

/** What a duration may be given as (`"5 seconds"`, millis, a `Duration`). */
export type DurationInput = Duration.Input

/** The `Duration` of an input (a malformed one is a defect: inputs are typed). */
export const durationOf: (input: DurationInput) => Duration.Duration = Duration.fromInputUnsafe

/** The tracer Effect runs with when no tracer was provided (its spans reach no exporter). */
export const builtInTracer: Tracer.Tracer = Tracer.nativeTracer

/** A clock's time in nanoseconds, read synchronously. */
export const currentTimeNanos = (clock: Clock.Clock): bigint => clock.currentTimeNanosUnsafe()

/**
 * A span under the current one with these attributes, made without capturing the caller's stack
 * (a stack trace per span is heap for nothing here).
 */
export const makeSpanNoStack = (name: string, attributes: Record<string, unknown>): Effect.Effect<Tracer.Span> =>
  Effect.makeSpan(name, { attributes })

/** A new `Deferred`, made outside any fiber. */
export const makeDeferredUnsafe: <A, E = never>() => Deferred.Deferred<A, E> = Deferred.makeUnsafe

/** Completes a `Deferred` with an effect (its waiters run it), outside any fiber. */
export const doneDeferredUnsafe: <A, E>(self: Deferred.Deferred<A, E>, effect: Effect.Effect<A, E>) => void =
  Deferred.doneUnsafe

/** A clock's time in milliseconds, read synchronously. */
export const currentTimeMillis = (clock: Clock.Clock): number => clock.currentTimeMillisUnsafe()

/**
 * What a fiber started from outside any fiber (a socket's callback) runs with, taken from a
 * running fiber: its Clock, logger, log annotations and services.
 */
export type RunContext = Context.Context<never>

/** The current fiber's {@link RunContext}. */
export const runContext: Effect.Effect<RunContext> = Effect.context<never>()

/** What a detached fiber keeps of its starter's context: the Clock, the loggers and the scheduler. */
const keptByDetached: (context: Context.Context<never>) => Context.Context<never> = Context.pick(
  Clock.Clock,
  Scheduler.Scheduler,
  References.CurrentLoggers,
  References.MinimumLogLevel,
  References.LogToStderr
)

/**
 * Runs an effect in a fiber of its own (not the caller's child) with `context`'s Clock and logger,
 * none of its log annotations, span or services: a fiber that serves many callers.
 */
export const forkDetached = (context: RunContext, effect: Effect.Effect<void>): void => {
  Effect.runForkWith(keptByDetached(context))(effect)
}

/** A socket the line's `Socket.WebSocketConstructor` service makes. */
export type WebSocketLike = Socket.WebSocketLike
