/**
 * The SDK's metrics, as `effect/Metric` values: events received by tag, actions, reconnects,
 * answers sent, HTTP attempts and retries by status, and the create-session latency.
 *
 * They live in Effect's global metric registry, so any exporter that reads it (the
 * OpenTelemetry layer of `@effect/opentelemetry`, a Prometheus bridge, `Metric.snapshot`) sees
 * them without extra wiring; see `docs/sessions.md#logs-spans-and-metrics`. Every name starts with
 * `agent_session_`.
 *
 * The `record*` helpers are what the SDK calls; they are cheap enough for the event path
 * (one update per chunk and tag, not per frame).
 *
 * @example
 * ```ts
 * import { Metrics } from "effect-agent-session"
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
import type * as Chunk from "effect/Chunk"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import * as MetricBoundaries from "effect/MetricBoundaries"
import * as MetricKey from "effect/MetricKey"
import type * as MetricKeyType from "effect/MetricKeyType"
import * as MetricLabel from "effect/MetricLabel"
import type * as MetricPair from "effect/MetricPair"
import * as MetricState from "effect/MetricState"
import type { Failures } from "effect-agent-session-core"
import { Memo, Telemetry } from "effect-agent-session-shell"
import type * as SessionEvent from "./SessionEvent.js"

export * from "../binding/Metrics.js"

/** A counter of the SDK's, by its name and description (`Telemetry.metrics`). */
const counter = (metric: { readonly name: string; readonly description: string }): Metric.Metric.Counter<number> =>
  Metric.counter(metric.name, { description: metric.description, incremental: true })

/**
 * Events received on the event channel, labelled `event` with the SDK tag (`ActionRun`,
 * `Complete`, ..., `Unrecognized`).
 *
 * @since 0.1.0
 * @category models
 */
export const eventsReceived: Metric.Metric.Counter<number> = counter(Telemetry.metrics.eventsReceived)

/**
 * `action_run` events received: the chargeable actions.
 *
 * @since 0.1.0
 * @category models
 */
export const actions: Metric.Metric.Counter<number> = counter(Telemetry.metrics.actions)

/**
 * Reconnections of the event channel (each reopening after a drop counts once).
 *
 * @since 0.1.0
 * @category models
 */
export const reconnects: Metric.Metric.Counter<number> = counter(Telemetry.metrics.reconnects)

/**
 * Reconnect attempts of the event channel: each try to reopen a channel that was open counts
 * once, whether or not it succeeds (`reconnects` counts the ones that did).
 *
 * @since 0.1.0
 * @category models
 */
export const reconnectAttempts: Metric.Metric.Counter<number> = counter(Telemetry.metrics.reconnectAttempts)

/**
 * Answers sent to the agent's requests, labelled `answer` (`grant` or `deny`).
 *
 * @since 0.1.0
 * @category models
 */
export const answersSent: Metric.Metric.Counter<number> = counter(Telemetry.metrics.answersSent)

/**
 * HTTP requests sent, labelled `operation` and `status` (the HTTP status, or `transport` /
 * `timeout` when no response came).
 *
 * @since 0.1.0
 * @category models
 */
export const httpAttempts: Metric.Metric.Counter<number> = counter(Telemetry.metrics.httpAttempts)

const httpAttemptsKey = MetricKey.counter(Telemetry.metrics.httpAttempts.name, {
  description: Telemetry.metrics.httpAttempts.description,
  incremental: true
})

/**
 * HTTP retries, labelled `operation` and `status` (the status of the attempt that was retried).
 *
 * @since 0.1.0
 * @category models
 */
export const httpRetries: Metric.Metric.Counter<number> = counter(Telemetry.metrics.httpRetries)

const httpRetriesKey = MetricKey.counter(Telemetry.metrics.httpRetries.name, {
  description: Telemetry.metrics.httpRetries.description,
  incremental: true
})

/**
 * The boundaries of {@link createSessionLatency}, in milliseconds: 5 ms to about 41 s.
 *
 * @since 0.1.0
 * @category models
 */
export const latencyBoundaries: MetricBoundaries.MetricBoundaries = MetricBoundaries.exponential(
  Telemetry.latencyBoundaries
)

/**
 * How long `createSession` took, in milliseconds, retries included.
 *
 * @since 0.1.0
 * @category models
 */
export const createSessionLatency: Metric.Metric<
  MetricKeyType.MetricKeyType.Histogram,
  number,
  MetricState.MetricState.Histogram
> = Metric.histogram(
  Telemetry.metrics.createSessionLatency.name,
  latencyBoundaries,
  Telemetry.metrics.createSessionLatency.description
)

/**
 * The counters of one metric per label set, each built once (the same metric key as
 * `Metric.taggedWithLabels` builds, which builds and hashes a new key on every update), at most
 * `Telemetry.maxAttributed` of them.
 */
const labelled = Memo.bounded<Metric.Metric.Counter<number>>(Telemetry.maxAttributed)

const withLabels = (
  key: MetricKey.MetricKey.Counter<number>,
  labels: Readonly<Record<string, string>>
): Metric.Metric.Counter<number> =>
  labelled(
    Telemetry.attributedId(key.name, labels),
    () =>
      Metric.fromMetricKey(
        MetricKey.taggedWithLabels(key, Object.entries(labels).map(([name, value]) => MetricLabel.make(name, value)))
      )
  )

// Tagged counters are built once per tag, not per event.
const eventCounter = (tag: string): Metric.Metric.Counter<number> =>
  labelled(
    Telemetry.attributedId(Telemetry.metrics.eventsReceived.name, { event: tag }),
    () => Metric.tagged(eventsReceived, "event", tag)
  )

/**
 * Records a chunk of received events: one counter update per tag present, plus the actions.
 * Call it once per chunk, not per event.
 *
 * @since 0.1.0
 * @category combinators
 */
export const recordEvents = (
  events: Chunk.Chunk<SessionEvent.SessionEvent> | ReadonlyArray<SessionEvent.SessionEvent>
): Effect.Effect<void> =>
  Effect.suspend(() => {
    const counts = Telemetry.tallyByTag(events)
    if (counts.size === 0) return Effect.void
    const updates: Array<Effect.Effect<void>> = []
    for (const [tag, n] of counts) {
      updates.push(Metric.incrementBy(eventCounter(tag), n))
      if (tag === Telemetry.chargeableTag) updates.push(Metric.incrementBy(actions, n))
    }
    return Effect.all(updates, { discard: true })
  })

/**
 * Records one reconnection of the event channel.
 *
 * @since 0.1.0
 * @category combinators
 */
export const recordReconnect: Effect.Effect<void> = Metric.increment(reconnects)

/**
 * Records one reconnect attempt of the event channel (a try about to be made).
 *
 * @since 0.1.0
 * @category combinators
 */
export const recordReconnectAttempt: Effect.Effect<void> = Metric.increment(reconnectAttempts)

const grantCounter = Metric.tagged(answersSent, "answer", Telemetry.answerLabel({ _tag: "Grant" }))
const denyCounter = Metric.tagged(answersSent, "answer", Telemetry.answerLabel({ _tag: "Deny" }))

/**
 * Records one answer sent (or queued to be sent) to the agent.
 *
 * @since 0.1.0
 * @category combinators
 */
export const recordAnswer = (answer: { readonly _tag: "Grant" | "Deny" }): Effect.Effect<void> =>
  Metric.increment(answer._tag === "Grant" ? grantCounter : denyCounter)

/**
 * The `status` label of an HTTP attempt: the status code, or what happened instead.
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
  Metric.increment(withLabels(httpAttemptsKey, Telemetry.httpAttributes(operation, status)))

/**
 * Records one HTTP retry of an operation, labelled with the status that caused it.
 *
 * @since 0.1.0
 * @category combinators
 */
export const recordHttpRetry = (operation: string, status: HttpOutcome): Effect.Effect<void> =>
  Metric.increment(withLabels(httpRetriesKey, Telemetry.httpAttributes(operation, status)))

/**
 * Records the latency of one `createSession`.
 *
 * @since 0.1.0
 * @category combinators
 */
export const recordCreateSessionLatency = (duration: Duration.DurationInput): Effect.Effect<void> =>
  Metric.update(createSessionLatency, Duration.toMillis(duration))

/**
 * Times an effect into {@link createSessionLatency}, whether it succeeds or fails.
 *
 * @since 0.1.0
 * @category combinators
 */
export const trackCreateSession = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  // `Effect.timed`, read from the clock held (fewer effects per call on a hot path).
  Effect.clockWith((clock) => {
    const start = clock.unsafeCurrentTimeNanos()
    return Effect.flatMap(Effect.exit(self), (exit) =>
      Effect.zipRight(recordCreateSessionLatency(Duration.nanos(clock.unsafeCurrentTimeNanos() - start)), exit))
  })

/**
 * One metric of this SDK as read from the registry: its name, labels and value.
 *
 * @since 0.1.0
 * @category models
 */
export type Reading = Telemetry.Reading

const toReading = (pair: MetricPair.MetricPair.Untyped): Reading | undefined => {
  const key: MetricKey.MetricKey.Untyped = pair.metricKey
  if (!Telemetry.isOwnMetric(key.name)) return undefined
  const labels: Record<string, string> = {}
  for (const label of key.tags) labels[label.key] = label.value
  const state: unknown = pair.metricState
  if (MetricState.isCounterState(state)) return Telemetry.counterReading(key.name, labels, Number(state.count))
  if (MetricState.isHistogramState(state)) return Telemetry.histogramReading(key.name, labels, state)
  return undefined
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
  (pairs) => Telemetry.readingsOf(pairs, toReading)
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
