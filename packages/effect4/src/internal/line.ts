/**
 * The names of Effect 4 that the binding (the repository's `binding/`, Effect code written once
 * for both editions) uses where Effect 3 names the same thing differently. The Effect 3 edition's
 * `line.ts` exports the same names, bound to Effect 3: a binding module imports them from here
 * (`../src/internal/line.js`, relative to where its copy lies), never from the line's own module.
 */
import * as Config from "effect/Config"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as HttpClientError from "effect/http/HttpClientError"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"

/** What a duration may be given as (`"5 seconds"`, millis, a `Duration`). */
export type DurationInput = Duration.Input

/** The `Duration` of an input (a malformed one is a defect: inputs are typed). */
export const durationOf: (input: DurationInput) => Duration.Duration = Duration.fromInputUnsafe

/** The platform's HTTP client failures (`HttpClientError.HttpClientError` is every one of them). */
export * as HttpClientError from "effect/http/HttpClientError"

/** An `Option` of a value that may be `null` or `undefined` (`None` for either). */
export const optionFromNullish: <A>(value: A) => Option.Option<NonNullable<A>> = Option.fromNullishOr

/**
 * What an HTTP client failure says of itself, as the protocol core's `Http.transportFailure`
 * reads it: the client's word for the failure (`Transport`, `Encode`, `InvalidUrl`, `StatusCode`,
 * `Decode`, `EmptyBody`), its description and cause, and the request's method and URL.
 */
export const httpFailureOf = (error: HttpClientError.HttpClientError): {
  readonly reason: string
  readonly description: string | undefined
  readonly cause: unknown
  readonly method: string
  readonly url: string
} => {
  const { _tag, cause, description, request } = error.reason
  return { reason: _tag.replace(/Error$/, ""), description, cause, method: request.method, url: request.url }
}

/** The platform's HTTP client. */
export * as HttpClient from "effect/http/HttpClient"

/** The platform's sockets (and the `WebSocketConstructor` service). */
export * as Socket from "effect/socket/Socket"

/** A failure to read configuration. */
export type ConfigError = Config.ConfigError

/** A string read from configuration under a name. */
export const configString: (name: string) => Config.Config<string> = Config.String

/** One of the given strings, read from configuration under a name. */
export const configLiterals: <const L extends ReadonlyArray<string>>(literals: L, name: string) => Config.Config<L[number]> =
  Config.Literals

/** The layer an effect makes, built when that effect has run. */
export const unwrapLayer = Layer.unwrap

/**
 * A layer never shared by reference with the layers of another `Effect.provide`: built with a memo
 * map of its own, where the layers of one program are otherwise memoized across its `provide`s.
 */
export const unshared: <A, E, R>(layer: Layer.Layer<A, E, R>) => Layer.Layer<A, E, R> = Layer.fresh

/** The schedule with every delay at most `max`. */
export const delaysCappedAt =
  (max: Duration.Duration) => <O, I, E, R>(self: Schedule.Schedule<O, I, E, R>): Schedule.Schedule<O, I, E, R> =>
    Schedule.modifyDelay(self, ({ duration }) => Effect.succeed(Duration.min(duration, max)))

/** The schedule, ending after at most `times` recurrences. */
export const recurringUpTo =
  (times: number) => <O, I, E, R>(self: Schedule.Schedule<O, I, E, R>): Schedule.Schedule<unknown, I, E, R> =>
    Schedule.upTo(self, { times })

/**
 * A retry schedule: the schedule, only while `retryable` holds of the error it is fed, each
 * delay replaced by what `delayOf` makes of the error and that delay.
 */
export const retryingWhile = <E>(
  schedule: Schedule.Schedule<unknown, E>,
  retryable: (error: E) => boolean,
  delayOf: (error: E, delay: Duration.Duration) => Effect.Effect<Duration.Duration>
): Schedule.Schedule<unknown, E> =>
  schedule.pipe(
    Schedule.while(({ input }) => retryable(input)),
    Schedule.modifyDelay(({ duration, input }) => delayOf(input, duration))
  )
