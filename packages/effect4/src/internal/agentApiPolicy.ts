/**
 * The retry and create policies of `AgentApi`: the default schedule, the schedule actually run
 * (only while the error is retryable; each wait at least the `Retry-After` asked), and
 * whether a failed creating call may have created what it asked (at most one session per call).
 * The rules are the protocol core's (`Http`, `Failures`); this module applies them to the typed
 * errors.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as HttpClientError from "effect/http/HttpClientError"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as Schedule from "effect/Schedule"
import { Failures, Http, Telemetry } from "effect-agent-session-core"
import { type AgentApiError, isRetryable, type TransportError } from "../Errors.js"
import * as Metrics from "../Metrics.js"
import { fromRequestError } from "./httpErrors.js"

/** The default request time-out. */
export const defaultTimeout: Duration.Duration = Duration.millis(Http.defaults.timeoutMillis)

/** The default cap on a wait asked by `Retry-After`. */
export const defaultMaxRetryAfter: Duration.Duration = Duration.millis(Http.defaults.maxRetryAfterMillis)

const { factor, initialMillis, maxDelayMillis, retries } = Http.defaults.retry

/** The protocol's default retry: 2 retries, exponential from 500 ms, factor 2, jittered, each wait capped at 8 s. */
export const defaultRetry: Schedule.Schedule<unknown, AgentApiError> = Schedule.exponential(
  Duration.millis(initialMillis),
  factor
).pipe(
  Schedule.jittered,
  Schedule.modifyDelay(({ duration }) => Effect.succeed(Duration.min(duration, Duration.millis(maxDelayMillis)))),
  Schedule.upTo({ times: retries }),
  Schedule.setInputType<AgentApiError>()
)

const retryAfterOf = (error: AgentApiError): number | undefined =>
  (error._tag === "RateLimited" || error._tag === "ServerError") && Option.isSome(error.retryAfter)
    ? Duration.toMillis(error.retryAfter.value)
    : undefined

/**
 * The schedule actually run: the caller's schedule, only while the error is retryable,
 * each wait at least the `Retry-After` the service asked for, capped at `maxRetryAfter`.
 * `onRetry` runs once per retry that will happen, with the error and the wait.
 */
export const effectiveRetry = (
  schedule: Schedule.Schedule<unknown, AgentApiError>,
  maxRetryAfter: Duration.Duration,
  onRetry: (error: AgentApiError, wait: Duration.Duration) => Effect.Effect<void> = () => Effect.void,
  retryable: (error: AgentApiError) => boolean = isRetryable
): Schedule.Schedule<unknown, AgentApiError> =>
  schedule.pipe(
    Schedule.while(({ input }) => isRetryable(input) && retryable(input)),
    Schedule.modifyDelay(({ duration, input }) => {
      const wait = Duration.millis(
        Http.retryWaitMillis(Duration.toMillis(duration), retryAfterOf(input), Duration.toMillis(maxRetryAfter))
      )
      return Effect.as(onRetry(input, wait), wait)
    })
  )

/** The metrics `status` attribute of a failed attempt. */
export const outcomeOf: (error: AgentApiError) => Metrics.HttpOutcome | undefined = Failures.httpOutcome

// ---------------------------------------------------------------------------
// The create policy: at most one session per call
// ---------------------------------------------------------------------------

/**
 * Marks the `TransportError`s of requests that provably never reached the service: a hidden
 * property (not a field: it is not part of the error's data).
 */
const NotSent: unique symbol = Symbol.for("effect-agent-session/internal/AgentApi/NotSent")

/** Whether a transport failure happened before anything was written (no connection at all). */
const provablyNotSent = (error: HttpClientError.HttpClientError): boolean =>
  error.reason._tag === "InvalidUrlError" || Http.provablyNotSent(error.reason.cause)

/** Maps a failure without a response, remembering whether the request provably never left. */
export const transportError = (
  error: HttpClientError.HttpClientError,
  call: { readonly operation: string; readonly secrets: ReadonlyArray<string> }
): TransportError => {
  const mapped = fromRequestError(error, call)
  if (provablyNotSent(error)) Object.defineProperty(mapped, NotSent, { value: true, enumerable: false })
  return mapped
}

/** Whether a transport failure was marked as a request that provably never left. */
const notSent = (error: AgentApiError): boolean => Predicate.hasProperty(error, NotSent) && error[NotSent] === true

/**
 * Whether the service cannot have acted on a failed attempt (`Failures.didNotAct`): the request
 * never left (no connection), or the service said it did not act (429, 503, 408).
 */
export const didNotAct = (error: AgentApiError): boolean => Failures.didNotAct(error, notSent(error))

/** Whether a failed attempt of a creating call may have created something (`Failures.mayHaveActed`). */
export const mayHaveActed = (error: AgentApiError): boolean => Failures.mayHaveActed(error, notSent(error))

/** Whether a failed attempt of a creating call is sent again under the create policy (`Failures.mayResend`). */
export const mayResend = (policy: Failures.CreatePolicy) => (error: AgentApiError): boolean =>
  Failures.mayResend(policy, error, notSent(error))

export const logRetry = (operation: string) => (error: AgentApiError, wait: Duration.Duration) =>
  Effect.andThen(
    Effect.logDebug(Telemetry.retryLog(operation, Duration.format(wait))).pipe(
      Effect.annotateLogs({ error: error._tag })
    ),
    Option.match(Option.fromNullishOr(outcomeOf(error)), {
      onNone: () => Effect.void,
      onSome: (outcome) => Metrics.recordHttpRetry(operation, outcome)
    })
  )
