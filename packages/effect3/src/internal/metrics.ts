/**
 * The update of the event path's counters that the engine makes inside the consumer's pull, in
 * the pulling fiber's metrics (no Effect of its own per chunk); the counters are the public
 * `Metrics` module's.
 */
import * as FiberRef from "effect/FiberRef"
import * as Metric from "effect/Metric"
import type * as MetricLabel from "effect/MetricLabel"
import { Memo, Telemetry } from "effect-agent-session-shell"
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
 * update per tag present, plus the actions (`Telemetry.countByTag`).
 */
export const countEvents = (events: Iterable<SessionEvent.SessionEvent>, fiber: PullFiber): void =>
  Telemetry.countByTag(events, add, fiber.getFiberRef(FiberRef.currentMetricLabels))
