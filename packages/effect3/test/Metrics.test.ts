import { assert, describe, expect, it, layer } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"
import * as MetricLabel from "effect/MetricLabel"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as TestClock from "effect/TestClock"
import * as AgentSessions from "../src/AgentSessions.js"
import * as Answer from "../src/Answer.js"
import * as Metrics from "../src/Metrics.js"
import * as NodeAgentSessions from "../src/NodeAgentSessions.js"
import type * as SessionEvent from "../src/SessionEvent.js"
import { ActionSessionId, SessionId } from "../src/Session.js"
import * as Simulator from "effect-agent-session-simulator/Simulator"

const action = (n: number): SessionEvent.SessionEvent => ({
  _tag: "ActionRun",
  name: `step-${n}`,
  action_session_id: ActionSessionId.make("as-1"),
  content: `doing ${n}`
})

const thought: SessionEvent.SessionEvent = { _tag: "ThoughtsAndMemories", thought: "hmm", memory: "" }
const complete: SessionEvent.SessionEvent = {
  _tag: "Complete",
  response: "done",
  type: "STRING",
  total_cost: Option.some(1),
  cost_summary: Option.none(),
  session_id: SessionId.make("s-1")
}

// Counters are global to the process: every assertion compares a delta.
const eventCount = (tag: string) => Metrics.counterValue("agent_session_events_received_total", { event: tag })

describe("Metrics", () => {
  it.effect("recordEvents counts per tag and counts actions, one update per chunk", () =>
    Effect.gen(function*() {
      const before = {
        action: yield* eventCount("ActionRun"),
        thought: yield* eventCount("ThoughtsAndMemories"),
        complete: yield* eventCount("Complete"),
        actions: (yield* Metric.value(Metrics.actions)).count
      }
      yield* Metrics.recordEvents(Chunk.make(action(1), thought, action(2)))
      yield* Metrics.recordEvents([action(3), complete])
      yield* Metrics.recordEvents([])
      expect((yield* eventCount("ActionRun")) - before.action).toBe(3)
      expect((yield* eventCount("ThoughtsAndMemories")) - before.thought).toBe(1)
      expect((yield* eventCount("Complete")) - before.complete).toBe(1)
      expect((yield* Metric.value(Metrics.actions)).count - before.actions).toBe(3)
    }))

  it.effect("recordHttpAttempt and recordHttpRetry label operation and status", () =>
    Effect.gen(function*() {
      const attempts503 = () =>
        Metrics.counterValue("agent_session_http_attempts_total", { operation: "test-op", status: "503" })
      const attempts201 = () =>
        Metrics.counterValue("agent_session_http_attempts_total", { operation: "test-op", status: "201" })
      const retries = () =>
        Metrics.counterValue("agent_session_http_retries_total", { operation: "test-op", status: "503" })
      const [a503, a201, r] = [yield* attempts503(), yield* attempts201(), yield* retries()]
      yield* Metrics.recordHttpAttempt("test-op", 503)
      yield* Metrics.recordHttpRetry("test-op", 503)
      yield* Metrics.recordHttpAttempt("test-op", 503)
      yield* Metrics.recordHttpRetry("test-op", 503)
      yield* Metrics.recordHttpAttempt("test-op", 201)
      expect((yield* attempts503()) - a503).toBe(2)
      expect((yield* attempts201()) - a201).toBe(1)
      expect((yield* retries()) - r).toBe(2)
      // The counters built once per label pair are the very metric `taggedWithLabels` names.
      const tagged = Metric.taggedWithLabels(Metrics.httpAttempts, [
        MetricLabel.make("operation", "test-op"),
        MetricLabel.make("status", "503")
      ])
      expect((yield* Metric.value(tagged)).count).toBe(yield* attempts503())
      const transport = yield* Metrics.counterValue("agent_session_http_attempts_total", {
        operation: "test-op",
        status: "transport"
      })
      yield* Metrics.recordHttpAttempt("test-op", "transport")
      expect(
        (yield* Metrics.counterValue("agent_session_http_attempts_total", { operation: "test-op", status: "transport" })) -
          transport
      ).toBe(1)
    }))

  it.effect("recordAnswer labels grant and deny; recordReconnect counts", () =>
    Effect.gen(function*() {
      const grant = yield* Metrics.counterValue("agent_session_answers_sent_total", { answer: "grant" })
      const deny = yield* Metrics.counterValue("agent_session_answers_sent_total", { answer: "deny" })
      const reconnects = (yield* Metric.value(Metrics.reconnects)).count
      yield* Metrics.recordAnswer({ _tag: "Grant" })
      yield* Metrics.recordAnswer({ _tag: "Deny" })
      yield* Metrics.recordAnswer({ _tag: "Deny" })
      yield* Metrics.recordReconnect
      expect((yield* Metrics.counterValue("agent_session_answers_sent_total", { answer: "grant" })) - grant).toBe(1)
      expect((yield* Metrics.counterValue("agent_session_answers_sent_total", { answer: "deny" })) - deny).toBe(2)
      expect((yield* Metric.value(Metrics.reconnects)).count - reconnects).toBe(1)
    }))

  it.effect("trackCreateSession records the latency of successes and failures on the clock", () =>
    Effect.gen(function*() {
      const before = yield* Metric.value(Metrics.createSessionLatency)
      const fiber = yield* Effect.fork(Metrics.trackCreateSession(Effect.as(Effect.sleep(Duration.millis(120)), "ok")))
      yield* TestClock.adjust(Duration.millis(120))
      const result = yield* fiber.await
      assert.isTrue(result._tag === "Success")
      const failed = yield* Effect.flip(Metrics.trackCreateSession(Effect.fail("boom")))
      expect(failed).toBe("boom")
      const after = yield* Metric.value(Metrics.createSessionLatency)
      expect(after.count - before.count).toBe(2)
      expect(after.sum - before.sum).toBeGreaterThanOrEqual(120)
      expect(after.max).toBeGreaterThanOrEqual(120)
    }))

  it.effect("snapshot keeps only this SDK's metrics and format prints one line each", () =>
    Effect.gen(function*() {
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

// A scripted run end to end: the simulator on port 0, the SDK over real sockets, one drop.
const SimulatorLive = Simulator.layer({
  scenario: { actions: 4, ask: "permission", frameDelay: Duration.millis(1) },
  faults: { ws: { dropAfter: [3] } }
})
const SdkLive = Layer.unwrapEffect(
  Effect.map(Simulator.Simulator, (sim) =>
    NodeAgentSessions.layer({
      apiKey: sim.accountKey,
      baseUrl: sim.baseUrl,
      wsUrl: sim.wsUrl,
      events: { reconnect: Schedule.spaced(Duration.millis(20)).pipe(Schedule.intersect(Schedule.recurs(5))) }
    }))
)

layer(Layer.provideMerge(SdkLive, SimulatorLive), { excludeTestServices: true })("Metrics of a scripted run", (it) => {
  it.effect("counters match the events, actions, answers, reconnects and HTTP attempts of the run", () =>
    Effect.gen(function*() {
      const sim = yield* Simulator.Simulator
      const tags = [
        "Started",
        "BrowserStarted",
        "ActionRun",
        "ThoughtsAndMemories",
        "ExternalResourceRequested",
        "ExternalResourceGranted",
        "Complete"
      ] as const
      const read = Effect.gen(function*() {
        const byTag: Record<string, number> = {}
        for (const tag of tags) byTag[tag] = yield* eventCount(tag)
        return {
          byTag,
          actions: (yield* Metric.value(Metrics.actions)).count,
          reconnects: (yield* Metric.value(Metrics.reconnects)).count,
          grants: yield* Metrics.counterValue("agent_session_answers_sent_total", { answer: "grant" }),
          created: yield* Metrics.counterValue("agent_session_http_attempts_total", {
            operation: "createSession",
            status: "200"
          }),
          latency: (yield* Metric.value(Metrics.createSessionLatency)).count
        }
      })
      const before = yield* read
      const outcome = yield* AgentSessions.run(
        { goal: "Count everything", start_url: "https://example.com", max_actions: 4 },
        { onRequest: () => Effect.succeed(Answer.grant()) }
      )
      const after = yield* read

      const expected: Record<string, number> = {}
      for (const event of outcome.events) expected[event._tag] = (expected[event._tag] ?? 0) + 1
      for (const tag of tags) {
        expect([tag, after.byTag[tag]! - before.byTag[tag]!]).toEqual([tag, expected[tag] ?? 0])
      }
      expect(expected["ActionRun"]).toBe(4)
      expect(after.actions - before.actions).toBe(outcome.actions)
      expect(after.grants - before.grants).toBe((yield* sim.answers(outcome.sessionId)).length)
      expect(after.grants - before.grants).toBe(1)
      expect(after.reconnects - before.reconnects).toBe((yield* sim.connections(outcome.sessionId)) - 1)
      expect(after.reconnects - before.reconnects).toBe(1)
      expect(after.created - before.created).toBe(1)
      expect(after.latency - before.latency).toBe(1)
    }))
})
