/**
 * The SDK's metrics, the cases whose text is Effect 3's: a labelled counter is the metric
 * `Metric.taggedWithLabels` names, and the metrics of a scripted run against the simulator over
 * real sockets. The cases that read the same on both lines are in `shared/Metrics.test.ts`.
 */
import { describe, expect, it, layer } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"
import * as MetricLabel from "effect/MetricLabel"
import * as Schedule from "effect/Schedule"
import * as AgentSessions from "../src/AgentSessions.js"
import * as Answer from "../src/Answer.js"
import * as Metrics from "../src/Metrics.js"
import * as NodeAgentSessions from "../src/NodeAgentSessions.js"
import * as Simulator from "effect-agent-session-simulator/Simulator"
import { eventCount, httpCount } from "./shared/metrics.js"

describe("Metrics", () => {
  it.effect("the counter of a label pair is the very metric taggedWithLabels names", () =>
    Effect.gen(function*() {
      yield* Metrics.recordHttpAttempt("test-op", 503)
      const tagged = Metric.taggedWithLabels(Metrics.httpAttempts, [
        MetricLabel.make("operation", "test-op"),
        MetricLabel.make("status", "503")
      ])
      expect((yield* Metric.value(tagged)).count).toBe(yield* httpCount("agent_session_http_attempts_total", "503"))
      expect((yield* Metric.value(tagged)).count).toBeGreaterThanOrEqual(1)
    }))
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
