/**
 * The counters of the event path and their update, shared by the public `Metrics` module (which
 * exports them and `recordEvents`) and the engine, which counts each chunk inside the consumer's
 * pull in the pulling fiber's metrics (no Effect of its own per chunk).
 */
import type * as Context from "effect/Context"
import type * as Fiber from "effect/Fiber"
import * as Metric from "effect/Metric"
import { Memo, Telemetry } from "effect-agent-session-shell"
import type * as SessionEvent from "../SessionEvent.js"

/** A counter of the SDK's, by its name and description (`Telemetry.metrics`). */
export const counter = (metric: { readonly name: string; readonly description: string }): Metric.Counter<number> =>
  Metric.counter(metric.name, { description: metric.description, incremental: true })

/** Events received, by the attribute `event` (the SDK tag). */
export const eventsReceived: Metric.Counter<number> = counter(Telemetry.metrics.eventsReceived)

/** `action_run` events received. */
export const actions: Metric.Counter<number> = counter(Telemetry.metrics.actions)

/** The counters of one metric per attribute set, each built once (bounded: `Telemetry.maxAttributed`). */
const attributed = Memo.bounded<Metric.Counter<number>>(Telemetry.maxAttributed)

export const withAttributes = (
  counter: Metric.Counter<number>,
  attributes: Readonly<Record<string, string>>
): Metric.Counter<number> =>
  attributed(Telemetry.attributedId(counter.id, attributes), () => Metric.withAttributes(counter, attributes))

/** `eventsReceived` of one tag, looked up once per tag (the tags are the SDK's few). */
const ofTag = new Map<string, Metric.Counter<number>>()

const receivedOf = (tag: string): Metric.Counter<number> => {
  let counter = ofTag.get(tag)
  if (counter === undefined) {
    counter = withAttributes(eventsReceived, { event: tag })
    if (ofTag.size < Telemetry.maxAttributed) ofTag.set(tag, counter)
  }
  return counter
}

const add = (tag: string, n: number, context: Context.Context<never>): void => {
  receivedOf(tag).updateUnsafe(n, context)
  if (tag === Telemetry.chargeableTag) actions.updateUnsafe(n, context)
}

/**
 * Counts a batch of received events in the metric registry of `fiber`'s context: one update per
 * tag present, plus the actions (`Telemetry.countByTag`).
 */
export const countEvents = (events: Iterable<SessionEvent.SessionEvent>, fiber: Fiber.Fiber<unknown, unknown>): void =>
  Telemetry.countByTag(events, add, fiber.context)
