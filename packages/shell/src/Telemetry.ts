/**
 * What the SDK reports, by name: each metric's name, description and attributes, the latency
 * histogram's boundaries, the attributes of the HTTP client's spans, and how the SDK's metrics read
 * back from a registry are sorted, summed and printed. Each edition makes its `Metric`s and spans
 * with its own Effect API from these names, so a dashboard reads both alike
 * (`docs/sessions.md#logs-spans-and-metrics`).
 *
 * @since 0.1.0
 */
import { Failures } from "effect-agent-session-core"

/**
 * The prefix of every metric name of the SDK.
 *
 * @since 0.1.0
 * @category models
 */
export const prefix = "agent_session_"

/**
 * The metrics of the SDK, each a name and a description: counters of events received (attribute
 * `event`, the SDK tag), chargeable actions, reconnections and reconnect attempts, answers
 * sent (attribute `answer`, `grant` or `deny`), HTTP attempts and retries (attributes `operation`
 * and `status`), and the histogram of the create-session latency in milliseconds.
 *
 * @since 0.1.0
 * @category models
 */
export const metrics = {
  eventsReceived: {
    name: "agent_session_events_received_total",
    description: "Events received on the event channel, by event tag"
  },
  actions: { name: "agent_session_actions_total", description: "Chargeable action_run events received" },
  reconnects: { name: "agent_session_reconnects_total", description: "Event channel reconnections" },
  reconnectAttempts: {
    name: "agent_session_reconnect_attempts_total",
    description: "Event channel reconnect attempts (tries made)"
  },
  answersSent: { name: "agent_session_answers_sent_total", description: "Answers sent to external resource requests" },
  httpAttempts: { name: "agent_session_http_attempts_total", description: "HTTP requests sent, by operation and status" },
  httpRetries: {
    name: "agent_session_http_retries_total",
    description: "HTTP requests retried, by operation and the status that caused the retry"
  },
  createSessionLatency: {
    name: "agent_session_create_session_latency_ms",
    description: "Latency of createSession in milliseconds, retries included"
  }
} as const

/**
 * The boundaries of the create-session latency histogram, in milliseconds: exponential from 5 ms,
 * factor 2, 14 of them (5 ms to about 41 s).
 *
 * @since 0.1.0
 * @category models
 */
export const latencyBoundaries = { start: 5, factor: 2, count: 14 } as const

/**
 * The tag whose events are also counted as actions (`actions`): `ActionRun`.
 *
 * @since 0.1.0
 * @category models
 */
export const chargeableTag = "ActionRun"

/**
 * The events of a batch counted by tag: one count per tag present, for one counter update per tag.
 *
 * @since 0.1.0
 * @category constructors
 */
export const tallyByTag = (events: Iterable<{ readonly _tag: string }>): Map<string, number> => {
  const counts = new Map<string, number>()
  for (const event of events) counts.set(event._tag, (counts.get(event._tag) ?? 0) + 1)
  return counts
}

/**
 * Counts a batch of events by tag: `add(tag, n, target)` once per tag present. A batch (an array)
 * of one tag, the common chunk, is counted without a tally. `target` is handed to `add` as it is
 * (the metrics the count goes to), so no closure is made per batch.
 *
 * @since 0.1.0
 * @category constructors
 */
export const countByTag = <T>(
  events: Iterable<{ readonly _tag: string }>,
  add: (tag: string, n: number, target: T) => void,
  target: T
): void => {
  if (Array.isArray(events)) {
    const batch: ReadonlyArray<{ readonly _tag: string }> = events
    if (batch.length === 0) return
    const tag = batch[0]!._tag
    let same = true
    for (let i = 1; i < batch.length && same; i++) same = batch[i]!._tag === tag
    if (same) return add(tag, batch.length, target)
  }
  for (const [tag, n] of tallyByTag(events)) add(tag, n, target)
}

/**
 * The `answer` attribute of an answer sent.
 *
 * @since 0.1.0
 * @category constructors
 */
export const answerLabel = (answer: { readonly _tag: "Grant" | "Deny" }): "grant" | "deny" =>
  answer._tag === "Grant" ? "grant" : "deny"

/**
 * The `status` attribute of an HTTP attempt: the status code as text, or what happened instead.
 *
 * @since 0.1.0
 * @category constructors
 */
export const statusLabel = (status: Failures.HttpOutcome): string => typeof status === "number" ? String(status) : status

/**
 * The `operation` and `status` attributes of an HTTP attempt or retry.
 *
 * @since 0.1.0
 * @category constructors
 */
export const httpAttributes = (
  operation: string,
  status: Failures.HttpOutcome
): { readonly operation: string; readonly status: string } => ({ operation, status: statusLabel(status) })

/**
 * The identity of a metric with attributes: its name and each attribute's key and value, in the
 * order given, joined by NUL (a character no name, key or value of the SDK holds). An edition keys
 * the counters it builds per attribute set with it.
 *
 * @since 0.1.0
 * @category constructors
 */
export const attributedId = (name: string, attributes: Readonly<Record<string, string>>): string => {
  let id = name
  for (const key of Object.keys(attributes)) id += `\u0000${key}\u0000${attributes[key]}`
  return id
}

/**
 * The most counters with attributes an edition keeps built (the SDK's own attributes make a few
 * dozen); past that one is built per update.
 *
 * @since 0.1.0
 * @category models
 */
export const maxAttributed = 1024

// ---------------------------------------------------------------------------
// Spans
// ---------------------------------------------------------------------------

/**
 * The attributes of the HTTP client's spans (`AgentApi.onboard`, `AgentApi.createSession`,
 * `AgentApi.getSession`): the dialect, the server's host, the agent whose key is used, the session
 * created.
 *
 * @since 0.1.0
 * @category models
 */
export const spanAttributes = {
  dialect: "agent_session.dialect",
  serverAddress: "server.address",
  agentId: "agent_session.agent_id",
  sessionId: "agent_session.session_id"
} as const

/**
 * The attributes an HTTP client's span starts with: the dialect's name, the server's host, and
 * the agent's id when an agent was named.
 *
 * @since 0.1.0
 * @category constructors
 */
export const apiSpanAttributes = (options: {
  readonly dialect: string
  readonly serverAddress: string
  readonly agentId?: string | undefined
}): Record<string, string> => ({
  [spanAttributes.dialect]: options.dialect,
  [spanAttributes.serverAddress]: options.serverAddress,
  ...(options.agentId === undefined ? {} : { [spanAttributes.agentId]: options.agentId })
})

/**
 * The name of an `AgentApi` operation in spans, logs and errors: `AgentApi.<operation>`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const apiOperation = (operation: string): string => `AgentApi.${operation}`

/**
 * The spans of the HTTP client, by operation.
 *
 * @since 0.1.0
 * @category models
 */
export const apiSpans = {
  onboard: "AgentApi.onboard",
  createSession: "AgentApi.createSession",
  getSession: "AgentApi.getSession"
} as const

// ---------------------------------------------------------------------------
// Logs
// ---------------------------------------------------------------------------

/**
 * The debug log line of a failed HTTP attempt.
 *
 * @since 0.1.0
 * @category models
 */
export const attemptFailedLog = "AgentApi request failed"

/**
 * The annotations of {@link attemptFailedLog}: the error's tag and message, whether it is
 * retryable (`Failures.isRetryable`), and the status when the error has one. Its message is
 * already scrubbed of keys.
 *
 * @since 0.1.0
 * @category constructors
 */
export const attemptFailedAnnotations = (
  error: { readonly _tag: string; readonly message: string }
): Record<string, unknown> => ({
  error: error._tag,
  message: error.message,
  retryable: Failures.isRetryable(error),
  ...("status" in error ? { status: error.status } : {})
})

/**
 * The debug log line of a retry: the operation and the wait, formatted by the edition.
 *
 * @since 0.1.0
 * @category constructors
 */
export const retryLog = (operation: string, wait: string): string => `${apiOperation(operation)} retrying in ${wait}`

// ---------------------------------------------------------------------------
// Readings
// ---------------------------------------------------------------------------

/**
 * One metric of the SDK as read from a registry: its name, attributes (labels) and value.
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

/**
 * The reading of a counter.
 *
 * @since 0.1.0
 * @category constructors
 */
export const counterReading = (name: string, labels: Readonly<Record<string, string>>, count: number): Reading => ({
  _tag: "Counter",
  name,
  labels,
  count
})

/**
 * The reading of a histogram, from its state's count, sum, min and max.
 *
 * @since 0.1.0
 * @category constructors
 */
export const histogramReading = (
  name: string,
  labels: Readonly<Record<string, string>>,
  state: { readonly count: number; readonly sum: number; readonly min: number; readonly max: number }
): Reading => ({ _tag: "Histogram", name, labels, count: state.count, sum: state.sum, min: state.min, max: state.max })

/**
 * The readings of the SDK's metrics among a registry's: each metric read by `read` (`undefined`
 * for one that is not the SDK's, or of a kind it has none of), sorted as {@link sortReadings} does.
 *
 * @since 0.1.0
 * @category constructors
 */
export const readingsOf = <M>(metrics: Iterable<M>, read: (metric: M) => Reading | undefined): Array<Reading> => {
  const out: Array<Reading> = []
  for (const metric of metrics) {
    const reading = read(metric)
    if (reading !== undefined) out.push(reading)
  }
  return sortReadings(out)
}

/**
 * Whether a metric's name is one of the SDK's (it has the {@link prefix}).
 *
 * @since 0.1.0
 * @category guards
 */
export const isOwnMetric = (name: string): boolean => name.startsWith(prefix)

/**
 * The labels of a reading as `{k="v",...}`, by key (empty when there are none).
 *
 * @since 0.1.0
 * @category constructors
 */
export const formatLabels = (labels: Readonly<Record<string, string>>): string => {
  const entries = Object.entries(labels).sort(([a], [b]) => a.localeCompare(b))
  return entries.length === 0 ? "" : `{${entries.map(([k, v]) => `${k}="${v}"`).join(",")}}`
}

/**
 * Readings in order: by name, then by labels. Sorts the array given, and returns it.
 *
 * @since 0.1.0
 * @category constructors
 */
export const sortReadings = (readings: Array<Reading>): Array<Reading> =>
  readings.sort((a, b) => {
    const byName = a.name.localeCompare(b.name)
    return byName !== 0 ? byName : formatLabels(a.labels).localeCompare(formatLabels(b.labels))
  })

/**
 * The value of one counter with exactly the given labels among readings (0 when absent).
 *
 * @since 0.1.0
 * @category constructors
 */
export const counterTotal = (
  readings: ReadonlyArray<Reading>,
  name: string,
  labels: Readonly<Record<string, string>> = {}
): number => {
  const wanted = formatLabels(labels)
  let total = 0
  for (const reading of readings) {
    if (reading._tag === "Counter" && reading.name === name && formatLabels(reading.labels) === wanted) {
      total += reading.count
    }
  }
  return total
}

const round = (n: number): string => Number.isFinite(n) ? String(Math.round(n * 100) / 100) : "0"

/**
 * Readings as text lines, `name{labels} value` (histograms: count, sum, min, max, to two
 * decimals), for a terminal or a log.
 *
 * @since 0.1.0
 * @category constructors
 */
export const format = (readings: ReadonlyArray<Reading>): ReadonlyArray<string> =>
  readings.map((reading) =>
    reading._tag === "Counter"
      ? `${reading.name}${formatLabels(reading.labels)} ${reading.count}`
      : `${reading.name}${formatLabels(reading.labels)} count=${reading.count} sum=${round(reading.sum)} min=${
        round(reading.count === 0 ? 0 : reading.min)
      } max=${round(reading.count === 0 ? 0 : reading.max)}`
  )
