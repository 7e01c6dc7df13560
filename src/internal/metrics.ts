/**
 * The update of the event path's counters that the engine makes inside the consumer's pull, in
 * the pulling fiber's metrics (no Effect of its own per chunk); the counters are the public
 * `Metrics` module's.
 */
import * as FiberRef from "effect/FiberRef"
import * as Metric from "effect/Metric"
import type * as MetricLabel from "effect/MetricLabel"
import { Memo, Telemetry } from "effect-agent-session-core/shell"
import { actions, eventsReceived } from "../Metrics.js"
import type * as SessionEvent from "../SessionEvent.js"
import type { PullFiber } from "./line.js"

/** `eventsReceived` of one tag, built once per tag (the tags are the SDK's few; bounded). */
const ofTag = Memo.bounded<Metric.Metric.Counter<number>>(Telemetry.maxAttributed)

const receivedOf = (tag: string): Metric.Metric.Counter<number> =>
  ofTag(
    Telemetry.attributedId(Telemetry.metrics.eventsReceived.name, { event: tag }),
    () => Metric.tagged(eventsReceived, "event", tag)
  )

const add = (tag: string, n: number, labels: ReadonlyArray<MetricLabel.MetricLabel>): void => {
  receivedOf(tag).unsafeUpdate(n, labels)
  if (tag === Telemetry.chargeableTag) actions.unsafeUpdate(n, labels)
}

/**
 * Counts a batch of received events in the metrics of `fiber` (with its metric labels): one
 * update per tag present, plus the actions. A batch of one tag (the common chunk) is counted
 * without a tally.
 */
export const countEvents = (events: Iterable<SessionEvent.SessionEvent>, fiber: PullFiber): void => {
  const labels = fiber.getFiberRef(FiberRef.currentMetricLabels)
  if (Array.isArray(events)) {
    const batch: ReadonlyArray<SessionEvent.SessionEvent> = events
    if (batch.length === 0) return
    const tag = batch[0]!._tag
    let same = true
    for (let i = 1; i < batch.length && same; i++) same = batch[i]!._tag === tag
    if (same) return add(tag, batch.length, labels)
  }
  for (const [tag, n] of Telemetry.tallyByTag(events)) add(tag, n, labels)
}
