/**
 * The names of Effect 3 that the binding (the repository's `binding/`, Effect code written once
 * for both editions) uses where Effect 4 names the same thing differently. The Effect 4 edition's
 * `line.ts` exports the same names, bound to Effect 4: a binding module imports them from here
 * (`../src/internal/line.js`, relative to where it lies), never from the line's own module.
 */
import type * as HttpClientError from "@effect/platform/HttpClientError"
import * as Config from "effect/Config"
import type * as ConfigErrors from "effect/ConfigError"
import * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"

/** What a duration may be given as (`"5 seconds"`, millis, a `Duration`). */
export type DurationInput = Duration.DurationInput

/** The `Duration` of an input (a malformed one is a defect: inputs are typed). */
export const durationOf: (input: DurationInput) => Duration.Duration = Duration.decode

/** The platform's HTTP client failures (`HttpClientError.HttpClientError` is every one of them). */
export * as HttpClientError from "@effect/platform/HttpClientError"

/** An `Option` of a value that may be `null` or `undefined` (`None` for either). */
export const optionFromNullish: <A>(value: A) => Option.Option<NonNullable<A>> = Option.fromNullable

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
} => ({
  reason: error.reason,
  description: error.description,
  cause: error.cause,
  method: error.request.method,
  url: error.request.url
})

/** The platform's HTTP client. */
export * as HttpClient from "@effect/platform/HttpClient"

/** The platform's sockets (and the `WebSocketConstructor` service). */
export * as Socket from "@effect/platform/Socket"

/** A failure to read configuration. */
export type ConfigError = ConfigErrors.ConfigError

/** A string read from configuration under a name. */
export const configString: (name: string) => Config.Config<string> = Config.string

/** One of the given strings, read from configuration under a name. */
export const configLiterals = <const L extends ReadonlyArray<string>>(
  literals: L,
  name: string
): Config.Config<L[number]> => Config.literal(...literals)(name)

/** The layer an effect makes, built when that effect has run. */
export const unwrapLayer = Layer.unwrapEffect

/**
 * A layer never shared by reference with the layers of another `Effect.provide`: each `provide`
 * builds its layers with a memo map of its own, so this is the layer itself.
 */
export const unshared = <A, E, R>(layer: Layer.Layer<A, E, R>): Layer.Layer<A, E, R> => layer

/** The schedule with every delay at most `max`. */
export const delaysCappedAt =
  (max: Duration.Duration) => <O, I, R>(self: Schedule.Schedule<O, I, R>): Schedule.Schedule<O, I, R> =>
    Schedule.modifyDelay(self, (_, delay) => Duration.min(delay, max))

/** The schedule, ending after at most `times` recurrences. */
export const recurringUpTo =
  (times: number) => <O, I, R>(self: Schedule.Schedule<O, I, R>): Schedule.Schedule<unknown, I, R> =>
    Schedule.intersect(self, Schedule.recurs(times))

/**
 * A retry schedule: the schedule, only while `retryable` holds of the error it is fed, each
 * delay replaced by what `delayOf` makes of the error and that delay.
 */
export const retryingWhile = <E>(
  schedule: Schedule.Schedule<unknown, E>,
  retryable: (error: E) => boolean,
  delayOf: (error: E, delay: Duration.Duration) => Effect.Effect<Duration.Duration>
): Schedule.Schedule<unknown, E> =>
  Schedule.intersect(schedule, Schedule.identity<E>()).pipe(
    Schedule.whileInput(retryable),
    Schedule.modifyDelayEffect(([, error], delay) => delayOf(error, delay))
  )
