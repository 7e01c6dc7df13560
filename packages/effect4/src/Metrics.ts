/**
 * The SDK's metrics, as `effect/Metric` values: events received by tag, actions, reconnects,
 * answers sent, HTTP attempts and retries by status, and the create-session latency.
 *
 * They live in Effect's metric registry (`Metric.MetricRegistry`), so any exporter that reads it
 * (the OTLP layers of `effect/observability`, `Metric.snapshot`) sees them without extra wiring; see `docs/observability.md`. Every name starts with
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
import type * as SessionEvent from "./SessionEvent.js"

/**
 * The prefix of every metric name of this SDK.
 *
 * @since 0.1.0
 * @category models
 */
export const prefix = "agent_session_"

/**
 * Events received on the event channel, with the attribute `event` set to the SDK tag
 * (`ActionRun`, `Complete`, ..., `Unrecognized`).
 *
 * @since 0.1.0
 * @category models
 */
export const eventsReceived: Metric.Counter<number> = Metric.counter("agent_session_events_received_total", {
  description: "Events received on the event channel, by event tag",
  incremental: true
})

/**
 * `action_run` events received: the chargeable actions (U20).
 *
 * @since 0.1.0
 * @category models
 */
export const actions: Metric.Counter<number> = Metric.counter("agent_session_actions_total", {
  description: "Chargeable action_run events received",
  incremental: true
})

/**
 * Reconnections of the event channel (each reopening after a drop counts once).
 *
 * @since 0.1.0
 * @category models
 */
export const reconnects: Metric.Counter<number> = Metric.counter("agent_session_reconnects_total", {
  description: "Event channel reconnections",
  incremental: true
})

/**
 * Reconnect attempts of the event channel: each try to reopen a channel that was open counts
 * once, whether or not it succeeds (`reconnects` counts the ones that did).
 *
 * @since 0.2.0
 * @category models
 */
export const reconnectAttempts: Metric.Counter<number> = Metric.counter("agent_session_reconnect_attempts_total", {
  description: "Event channel reconnect attempts (tries made)",
  incremental: true
})

/**
 * Answers sent to the agent's requests, with the attribute `answer` (`grant` or `deny`).
 *
 * @since 0.1.0
 * @category models
 */
export const answersSent: Metric.Counter<number> = Metric.counter("agent_session_answers_sent_total", {
  description: "Answers sent to external resource requests",
  incremental: true
})

/**
 * HTTP requests sent, with the attributes `operation` and `status` (the HTTP status, or
 * `transport` / `timeout` / `decode` when no usable response came).
 *
 * @since 0.1.0
 * @category models
 */
export const httpAttempts: Metric.Counter<number> = Metric.counter("agent_session_http_attempts_total", {
  description: "HTTP requests sent, by operation and status",
  incremental: true
})

/**
 * HTTP retries, with the attributes `operation` and `status` (the status of the attempt that was
 * retried).
 *
 * @since 0.1.0
 * @category models
 */
export const httpRetries: Metric.Counter<number> = Metric.counter("agent_session_http_retries_total", {
  description: "HTTP requests retried, by operation and the status that caused the retry",
  incremental: true
})

/**
 * The boundaries of {@link createSessionLatency}, in milliseconds: 5 ms to about 41 s.
 *
 * @since 0.1.0
 * @category models
 */
export const latencyBoundaries: ReadonlyArray<number> = Metric.exponentialBoundaries({
  start: 5,
  factor: 2,
  count: 14
})

/**
 * How long `createSession` took, in milliseconds, retries included.
 *
 * @since 0.1.0
 * @category models
 */
export const createSessionLatency: Metric.Histogram<number> = Metric.histogram(
  "agent_session_create_session_latency_ms",
  {
    description: "Latency of createSession in milliseconds, retries included",
    boundaries: latencyBoundaries
  }
)

/**
 * The counters of one metric per attribute set, each built once: at most `MAX_ATTRIBUTED` are
 * kept (the set is bounded by the SDK's own labels); past that a counter is built per update.
 */
const MAX_ATTRIBUTED = 1024
const attributed = new Map<string, Metric.Counter<number>>()

const withAttributes = (
  counter: Metric.Counter<number>,
  attributes: Readonly<Record<string, string>>
): Metric.Counter<number> => {
  const id = [counter.id, ...Object.entries(attributes).flat()].join("\u0000")
  const known = attributed.get(id)
  if (known !== undefined) return known
  const made = Metric.withAttributes(counter, attributes)
  if (attributed.size < MAX_ATTRIBUTED) attributed.set(id, made)
  return made
}

const tallyByTag = (events: Iterable<SessionEvent.SessionEvent>): Map<string, number> => {
  const counts = new Map<string, number>()
  for (const event of events) counts.set(event._tag, (counts.get(event._tag) ?? 0) + 1)
  return counts
}

/**
 * Records a batch of received events: one counter update per tag present, plus the actions.
 * Call it once per batch, not per event.
 *
 * @since 0.1.0
 * @category combinators
 */
export const recordEvents = (events: Iterable<SessionEvent.SessionEvent>): Effect.Effect<void> =>
  Effect.suspend(() => {
    const counts = tallyByTag(events)
    if (counts.size === 0) return Effect.void
    const updates: Array<Effect.Effect<void>> = []
    for (const [tag, n] of counts) {
      updates.push(Metric.update(withAttributes(eventsReceived, { event: tag }), n))
      if (tag === "ActionRun") updates.push(Metric.update(actions, n))
    }
    return Effect.all(updates, { discard: true })
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
 * @since 0.2.0
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
  Metric.update(withAttributes(answersSent, { answer: answer._tag === "Grant" ? "grant" : "deny" }), 1)

/**
 * The `status` attribute of an HTTP attempt: the status code, or what happened instead.
 *
 * @since 0.1.0
 * @category models
 */
export type HttpOutcome = number | "transport" | "timeout" | "decode"

const statusLabel = (status: HttpOutcome): string => typeof status === "number" ? String(status) : status

/**
 * Records one HTTP attempt of an operation (`onboard`, `createSession`) and its status.
 *
 * @since 0.1.0
 * @category combinators
 */
export const recordHttpAttempt = (operation: string, status: HttpOutcome): Effect.Effect<void> =>
  Metric.update(withAttributes(httpAttempts, { operation, status: statusLabel(status) }), 1)

/**
 * Records one HTTP retry of an operation, with the status that caused it.
 *
 * @since 0.1.0
 * @category combinators
 */
export const recordHttpRetry = (operation: string, status: HttpOutcome): Effect.Effect<void> =>
  Metric.update(withAttributes(httpRetries, { operation, status: statusLabel(status) }), 1)

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
export type Reading =
  | {
    readonly _tag: "Counter"
    readonly name: string
    readonly labels: Readonly<Record<string, string>>
    readonly count: number
  }
  | {
    readonly _tag: "Histogram"
    readonly name: string
    readonly labels: Readonly<Record<string, string>>
    readonly count: number
    readonly sum: number
    readonly min: number
    readonly max: number
  }

const toReading = (metric: Metric.Metric.Snapshot): Reading | undefined => {
  if (!metric.id.startsWith(prefix)) return undefined
  const labels: Record<string, string> = { ...metric.attributes }
  switch (metric.type) {
    case "Counter":
      return { _tag: "Counter", name: metric.id, labels, count: Number(metric.state.count) }
    case "Histogram":
      return {
        _tag: "Histogram",
        name: metric.id,
        labels,
        count: metric.state.count,
        sum: metric.state.sum,
        min: metric.state.min,
        max: metric.state.max
      }
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
export const snapshot: Effect.Effect<ReadonlyArray<Reading>> = Effect.map(Metric.snapshot, (metrics) => {
  const out: Array<Reading> = []
  for (const metric of metrics) {
    const reading = toReading(metric)
    if (reading !== undefined) out.push(reading)
  }
  return out.sort((a, b) => {
    const byName = a.name.localeCompare(b.name)
    return byName !== 0 ? byName : formatLabels(a.labels).localeCompare(formatLabels(b.labels))
  })
})

/**
 * The labels of a reading as `{k="v",...}` (empty when there are none).
 *
 * @since 0.1.0
 * @category accessors
 */
export const formatLabels = (labels: Readonly<Record<string, string>>): string => {
  const entries = Object.entries(labels).sort(([a], [b]) => a.localeCompare(b))
  return entries.length === 0 ? "" : `{${entries.map(([k, v]) => `${k}="${v}"`).join(",")}}`
}

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
  Effect.map(snapshot, (readings) => {
    const wanted = formatLabels(labels)
    let total = 0
    for (const reading of readings) {
      if (reading._tag === "Counter" && reading.name === name && formatLabels(reading.labels) === wanted) {
        total += reading.count
      }
    }
    return total
  })

/**
 * The readings as text lines, `name{labels} value` (histograms: count, sum, min, max), for a
 * terminal or a log.
 *
 * @since 0.1.0
 * @category accessors
 */
export const format = (readings: ReadonlyArray<Reading>): ReadonlyArray<string> =>
  readings.map((reading) =>
    reading._tag === "Counter"
      ? `${reading.name}${formatLabels(reading.labels)} ${reading.count}`
      : `${reading.name}${formatLabels(reading.labels)} count=${reading.count} sum=${round(reading.sum)} min=${
        round(reading.count === 0 ? 0 : reading.min)
      } max=${round(reading.count === 0 ? 0 : reading.max)}`
  )

const round = (n: number): string => Number.isFinite(n) ? String(Math.round(n * 100) / 100) : "0"
