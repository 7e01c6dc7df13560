/**
 * The SDK's metrics, tested once for both editions: the events, actions, HTTP attempts and
 * retries, answers and reconnects counted, the latency of creating a session on the clock, the
 * snapshot and its text. Each edition's `Metrics.test.ts` holds the cases whose text differs
 * between the lines (how a labelled counter is named, what a batch of events may be) and, on
 * Effect 3, the metrics of a scripted run against the simulator.
 */
import { assert, describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Metric from "effect/Metric"
import * as Metrics from "../../src/Metrics.js"
import { action, complete, eventCount, httpCount, thought } from "./metrics.js"
import { forkChild, TestClock } from "../helpers/line.js"

describe("Metrics", () => {
  it.effect("recordEvents counts per tag and counts actions, one update per batch", () =>
    Effect.gen(function*() {
      const before = {
        action: yield* eventCount("ActionRun"),
        thought: yield* eventCount("ThoughtsAndMemories"),
        complete: yield* eventCount("Complete"),
        actions: (yield* Metric.value(Metrics.actions)).count
      }
      yield* Metrics.recordEvents(Chunk.make(action(1), thought))
      yield* Metrics.recordEvents([action(2), action(3), complete])
      yield* Metrics.recordEvents([])
      expect((yield* eventCount("ActionRun")) - before.action).toBe(3)
      expect((yield* eventCount("ThoughtsAndMemories")) - before.thought).toBe(1)
      expect((yield* eventCount("Complete")) - before.complete).toBe(1)
      expect((yield* Metric.value(Metrics.actions)).count - before.actions).toBe(3)
    }))

  it.effect("recordHttpAttempt and recordHttpRetry label operation and status", () =>
    Effect.gen(function*() {
      const [a503, a201, r, t] = [
        yield* httpCount("agent_session_http_attempts_total", "503"),
        yield* httpCount("agent_session_http_attempts_total", "201"),
        yield* httpCount("agent_session_http_retries_total", "503"),
        yield* httpCount("agent_session_http_attempts_total", "transport")
      ]
      yield* Metrics.recordHttpAttempt("test-op", 503)
      yield* Metrics.recordHttpRetry("test-op", 503)
      yield* Metrics.recordHttpAttempt("test-op", 503)
      yield* Metrics.recordHttpRetry("test-op", 503)
      yield* Metrics.recordHttpAttempt("test-op", 201)
      yield* Metrics.recordHttpAttempt("test-op", "transport")
      expect((yield* httpCount("agent_session_http_attempts_total", "503")) - a503).toBe(2)
      expect((yield* httpCount("agent_session_http_attempts_total", "201")) - a201).toBe(1)
      expect((yield* httpCount("agent_session_http_retries_total", "503")) - r).toBe(2)
      expect((yield* httpCount("agent_session_http_attempts_total", "transport")) - t).toBe(1)
    }))

  it.effect("recordAnswer labels grant and deny; recordReconnect and recordReconnectAttempt count", () =>
    Effect.gen(function*() {
      const grant = yield* Metrics.counterValue("agent_session_answers_sent_total", { answer: "grant" })
      const deny = yield* Metrics.counterValue("agent_session_answers_sent_total", { answer: "deny" })
      const reconnects = (yield* Metric.value(Metrics.reconnects)).count
      const attempts = (yield* Metric.value(Metrics.reconnectAttempts)).count
      yield* Metrics.recordAnswer({ _tag: "Grant" })
      yield* Metrics.recordAnswer({ _tag: "Deny" })
      yield* Metrics.recordAnswer({ _tag: "Deny" })
      yield* Metrics.recordReconnect
      yield* Metrics.recordReconnectAttempt
      yield* Metrics.recordReconnectAttempt
      expect((yield* Metrics.counterValue("agent_session_answers_sent_total", { answer: "grant" })) - grant).toBe(1)
      expect((yield* Metrics.counterValue("agent_session_answers_sent_total", { answer: "deny" })) - deny).toBe(2)
      expect((yield* Metric.value(Metrics.reconnects)).count - reconnects).toBe(1)
      expect((yield* Metric.value(Metrics.reconnectAttempts)).count - attempts).toBe(2)
    }))

  it.effect("trackCreateSession records the latency of successes and failures on the clock", () =>
    Effect.gen(function*() {
      const before = yield* Metric.value(Metrics.createSessionLatency)
      const fiber = yield* forkChild(Metrics.trackCreateSession(Effect.as(Effect.sleep(Duration.millis(120)), "ok")))
      yield* TestClock.adjust(Duration.millis(120))
      expect(yield* Fiber.join(fiber)).toBe("ok")
      const failed = yield* Effect.flip(Metrics.trackCreateSession(Effect.fail("boom")))
      expect(failed).toBe("boom")
      const after = yield* Metric.value(Metrics.createSessionLatency)
      expect(after.count - before.count).toBe(2)
      expect(after.sum - before.sum).toBeGreaterThanOrEqual(120)
      expect(after.max).toBeGreaterThanOrEqual(120)
    }))

  it.effect("snapshot keeps only this SDK's metrics and format prints one line each", () =>
    Effect.gen(function*() {
      yield* Metric.update(Metric.counter("someone_elses_total"), 1)
      yield* Metrics.recordEvents([complete])
      yield* Metrics.recordCreateSessionLatency(Duration.millis(7))
      const readings = yield* Metrics.snapshot
      assert.isTrue(readings.length > 0)
      for (const reading of readings) assert.isTrue(reading.name.startsWith(Metrics.prefix))
      const lines = Metrics.format(readings)
      expect(lines.length).toBe(readings.length)
      assert.isTrue(lines.some((line) => /^agent_session_events_received_total\{event="Complete"\} \d+$/.test(line)))
      assert.isTrue(lines.some((line) => /^agent_session_create_session_latency_ms count=\d+ sum=/.test(line)))
    }))

  it("formatLabels sorts keys and is empty without labels", () => {
    expect(Metrics.formatLabels({})).toBe("")
    expect(Metrics.formatLabels({ status: "503", operation: "x" })).toBe(`{operation="x",status="503"}`)
  })
})
