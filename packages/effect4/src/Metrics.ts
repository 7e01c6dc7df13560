/**
 * The SDK's metrics, as `effect/Metric` values: events received by tag, actions, reconnects,
 * answers sent, HTTP attempts and retries by status, and the create-session latency.
 *
 * They live in Effect's metric registry (`Metric.MetricRegistry`), so any exporter that reads it
 * (the OTLP layers of `effect/observability`, `Metric.snapshot`) sees them without extra wiring; see `docs/sessions.md#logs-spans-and-metrics`. Every name starts with
 * `agent_session_`.
 *
 * The `record*` helpers are what the SDK calls; they are cheap enough for the event path
 * (one update per chunk and tag, not per frame).
 *
 * @example
 * ```ts
 * import { Metrics } from "effect-agent-session-effect4"
 * import * as Effect from "effect/Effect"
 * import * as Metric from "effect/Metric"
 *
 * const program = Effect.gen(function*() {
 *   const actions = yield* Metric.value(Metrics.actions)
 *   yield* Effect.log(`actions so far: ${actions.count}`)
 * })
 * ```
 *
 * @since 0.1.0
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import type { Failures } from "effect-agent-session-core"
import { Telemetry } from "effect-agent-session-shell"
import { actions as actionsCounter, counter, countEvents, eventsReceived as received, withAttributes } from "./internal/metrics.js"
import type * as SessionEvent from "./SessionEvent.js"

export * from "../binding/Metrics.js"

/**
 * Events received on the event channel, with the attribute `event` set to the SDK tag
 * (`ActionRun`, `Complete`, ..., `Unrecognized`).
 *
 * @since 0.1.0
 * @category models
 */
export const eventsReceived: Metric.Counter<number> = received

/**
 * `action_run` events received: the chargeable actions.
 *
 * @since 0.1.0
 * @category models
 */
export const actions: Metric.Counter<number> = actionsCounter

/**
 * Reconnections of the event channel (each reopening after a drop counts once).
 *
 * @since 0.1.0
 * @category models
 */
export const reconnects: Metric.Counter<number> = counter(Telemetry.metrics.reconnects)

/**
 * Reconnect attempts of the event channel: each try to reopen a channel that was open counts
 * once, whether or not it succeeds (`reconnects` counts the ones that did).
 *
 * @since 0.1.0
 * @category models
 */
export const reconnectAttempts: Metric.Counter<number> = counter(Telemetry.metrics.reconnectAttempts)

/**
 * Answers sent to the agent's requests, with the attribute `answer` (`grant` or `deny`).
 *
 * @since 0.1.0
 * @category models
 */
export const answersSent: Metric.Counter<number> = counter(Telemetry.metrics.answersSent)

/**
 * HTTP requests sent, with the attributes `operation` and `status` (the HTTP status, or
 * `transport` / `timeout` / `decode` when no usable response came).
 *
 * @since 0.1.0
 * @category models
 */
export const httpAttempts: Metric.Counter<number> = counter(Telemetry.metrics.httpAttempts)

/**
 * HTTP retries, with the attributes `operation` and `status` (the status of the attempt that was
 * retried).
 *
 * @since 0.1.0
 * @category models
 */
export const httpRetries: Metric.Counter<number> = counter(Telemetry.metrics.httpRetries)

/**
 * The boundaries of {@link createSessionLatency}, in milliseconds: 5 ms to about 41 s.
 *
 * @since 0.1.0
 * @category models
 */
export const latencyBoundaries: ReadonlyArray<number> = Metric.exponentialBoundaries(Telemetry.latencyBoundaries)

/**
 * How long `createSession` took, in milliseconds, retries included.
 *
 * @since 0.1.0
 * @category models
 */
export const createSessionLatency: Metric.Histogram<number> = Metric.histogram(
  Telemetry.metrics.createSessionLatency.name,
  { description: Telemetry.metrics.createSessionLatency.description, boundaries: latencyBoundaries }
)

/**
 * Records a batch of received events: one counter update per tag present, plus the actions.
 * Call it once per batch, not per event.
 *
 * @since 0.1.0
 * @category combinators
 */
export const recordEvents = (events: Iterable<SessionEvent.SessionEvent>): Effect.Effect<void> =>
  Effect.withFiber((fiber) => {
    countEvents(events, fiber)
    return Effect.void
  })

/**
 * Records one reconnection of the event channel.
 *
 * @since 0.1.0
 * @category combinators
 */
export const recordReconnect: Effect.Effect<void> = Metric.update(reconnects, 1)

/**
 * Records one reconnect attempt of the event channel (a try about to be made).
 *
 * @since 0.1.0
 * @category combinators
 */
export const recordReconnectAttempt: Effect.Effect<void> = Metric.update(reconnectAttempts, 1)

/**
 * Records one answer sent (or queued to be sent) to the agent.
 *
 * @since 0.1.0
 * @category combinators
 */
export const recordAnswer = (answer: { readonly _tag: "Grant" | "Deny" }): Effect.Effect<void> =>
  Metric.update(withAttributes(answersSent, { answer: Telemetry.answerLabel(answer) }), 1)

/**
 * The `status` attribute of an HTTP attempt: the status code, or what happened instead.
 *
 * @since 0.1.0
 * @category models
 */
export type HttpOutcome = Failures.HttpOutcome

/**
 * Records one HTTP attempt of an operation (`onboard`, `createSession`) and its status.
 *
 * @since 0.1.0
 * @category combinators
 */
export const recordHttpAttempt = (operation: string, status: HttpOutcome): Effect.Effect<void> =>
  Metric.update(withAttributes(httpAttempts, Telemetry.httpAttributes(operation, status)), 1)

/**
 * Records one HTTP retry of an operation, with the status that caused it.
 *
 * @since 0.1.0
 * @category combinators
 */
export const recordHttpRetry = (operation: string, status: HttpOutcome): Effect.Effect<void> =>
  Metric.update(withAttributes(httpRetries, Telemetry.httpAttributes(operation, status)), 1)

/**
 * Records the latency of one `createSession`.
 *
 * @since 0.1.0
 * @category combinators
 */
export const recordCreateSessionLatency = (duration: Duration.Input): Effect.Effect<void> =>
  Metric.update(createSessionLatency, Duration.toMillis(duration))

/**
 * Times an effect into {@link createSessionLatency}, whether it succeeds or fails.
 *
 * @since 0.1.0
 * @category combinators
 */
export const trackCreateSession = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.clockWith((clock) => {
    const start = clock.currentTimeNanosUnsafe()
    return Effect.onExit(
      self,
      () => recordCreateSessionLatency(Duration.nanos(clock.currentTimeNanosUnsafe() - start))
    )
  })

/**
 * One metric of this SDK as read from the registry: its name, attributes and value.
 *
 * @since 0.1.0
 * @category models
 */
export type Reading = Telemetry.Reading

const toReading = (metric: Metric.Metric.Snapshot): Reading | undefined => {
  if (!Telemetry.isOwnMetric(metric.id)) return undefined
  const labels: Record<string, string> = { ...metric.attributes }
  switch (metric.type) {
    case "Counter":
      return Telemetry.counterReading(metric.id, labels, Number(metric.state.count))
    case "Histogram":
      return Telemetry.histogramReading(metric.id, labels, metric.state)
    default:
      return undefined
  }
}

/**
 * Every metric of this SDK with its current value, sorted by name then labels. Counters that
 * were never updated are absent.
 *
 * @since 0.1.0
 * @category accessors
 */
export const snapshot: Effect.Effect<ReadonlyArray<Reading>> = Effect.map(
  Metric.snapshot,
  (metrics) => Telemetry.readingsOf(metrics, toReading)
)

/**
 * The value of one counter with the given labels (0 when never updated): handy in tests.
 *
 * @since 0.1.0
 * @category accessors
 */
export const counterValue = (
  name: string,
  labels: Readonly<Record<string, string>> = {}
): Effect.Effect<number> =>
  Effect.map(snapshot, (readings) => Telemetry.counterTotal(readings, name, labels))
