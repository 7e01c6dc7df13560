/**
 * The SDK's metrics, the cases whose text is Effect 4's: a counter with attributes is the metric
 * `Metric.withAttributes` names, and a batch of events may be any iterable. The cases that read
 * the same on both lines are in `shared/Metrics.test.ts`.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import * as Metrics from "../src/Metrics.js"
import { action, complete, eventCount, httpCount } from "./shared/metrics.js"

describe("Metrics", () => {
  it.effect("the counter with the attributes is the very one Metric.withAttributes names", () =>
    Effect.gen(function*() {
      yield* Metrics.recordHttpAttempt("test-op", 503)
      const attributed = Metric.withAttributes(Metrics.httpAttempts, { operation: "test-op", status: "503" })
      expect((yield* Metric.value(attributed)).count).toBe(yield* httpCount("agent_session_http_attempts_total", "503"))
      expect((yield* Metric.value(attributed)).count).toBeGreaterThanOrEqual(1)
    }))

  it.effect("recordEvents counts the events of any iterable, a Set among them", () =>
    Effect.gen(function*() {
      const before = { action: yield* eventCount("ActionRun"), complete: yield* eventCount("Complete") }
      yield* Metrics.recordEvents(new Set([action(3), complete]))
      expect((yield* eventCount("ActionRun")) - before.action).toBe(1)
      expect((yield* eventCount("Complete")) - before.complete).toBe(1)
    }))
})
