/**
 * The retry policy of `AgentApi`: the default schedule, and the schedule actually run (only while
 * the error is retryable; each wait at least the `Retry-After` asked), logged and
 * counted per retry. The rules (which failed attempt of each operation is sent again, the create
 * policy among them: the core shell's `HttpCall.retryable`; the wait: `Http.retryWaitMillis`) are
 * the protocol core's; this module binds them to `Schedule`.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import { Failures, Http } from "effect-agent-session-core"
import { Telemetry } from "effect-agent-session-shell"
import { type AgentApiError, isRetryable } from "../../src/Errors.js"
import { delaysCappedAt, optionFromNullish, recurringUpTo, retryingWhile } from "../../src/internal/line.js"
import * as Metrics from "../../src/Metrics.js"

/** The default request time-out. */
export const defaultTimeout: Duration.Duration = Duration.millis(Http.defaults.timeoutMillis)

/** The default cap on a wait asked by `Retry-After`. */
export const defaultMaxRetryAfter: Duration.Duration = Duration.millis(Http.defaults.maxRetryAfterMillis)

const { factor, initialMillis, maxDelayMillis, retries } = Http.defaults.retry

/** The protocol's default retry (`Http.defaults.retry`): 2 retries, exponential from 500 ms, factor 2, jittered, each wait capped at 8 s. */
export const defaultRetry: Schedule.Schedule<unknown, AgentApiError> = Schedule.exponential(
  Duration.millis(initialMillis),
  factor
).pipe(
  Schedule.jittered,
  delaysCappedAt(Duration.millis(maxDelayMillis)),
  recurringUpTo(retries)
)

const retryAfterOf = (error: AgentApiError): number | undefined =>
  (error._tag === "RateLimited" || error._tag === "ServerError") && Option.isSome(error.retryAfter)
    ? Duration.toMillis(error.retryAfter.value)
    : undefined

/**
 * The schedule actually run: the caller's schedule, only while `retryable` holds of the error
 * (the operation's rule, `HttpCall.retryable`; by default `isRetryable`), each wait at least the
 * `Retry-After` the service asked for, capped at `maxRetryAfter`. `onRetry` runs once per retry
 * that will happen, with the error and the wait.
 */
export const effectiveRetry = (
  schedule: Schedule.Schedule<unknown, AgentApiError>,
  maxRetryAfter: Duration.Duration,
  onRetry: (error: AgentApiError, wait: Duration.Duration) => Effect.Effect<void> = () => Effect.void,
  retryable: (error: AgentApiError) => boolean = isRetryable
): Schedule.Schedule<unknown, AgentApiError> =>
  retryingWhile(schedule, retryable, (error, delay) => {
    const wait = Duration.millis(
      Http.retryWaitMillis(Duration.toMillis(delay), retryAfterOf(error), Duration.toMillis(maxRetryAfter))
    )
    return Effect.as(onRetry(error, wait), wait)
  })

/** The metrics `status` label of a failed attempt (`Failures.httpOutcome`). */
export const outcomeOf: (error: AgentApiError) => Metrics.HttpOutcome | undefined = Failures.httpOutcome

/** A retry about to happen: logged at debug level and counted by the outcome of the failed attempt. */
export const logRetry = (operation: string) => (error: AgentApiError, wait: Duration.Duration) =>
  Effect.andThen(
    Effect.logDebug(Telemetry.retryLog(operation, Duration.format(wait))).pipe(
      Effect.annotateLogs({ error: error._tag })
    ),
    Option.match(optionFromNullish(outcomeOf(error)), {
      onNone: () => Effect.void,
      onSome: (outcome) => Metrics.recordHttpRetry(operation, outcome)
    })
  )
