/**
 * The façade (`AgentSessions` over `NodeAgentSessions.layer`) end to end against the simulator as
 * a child process, with its faults (`simulate --port 0 --fault ...`; a fault applies to every
 * session of that simulator), both transports, both dialects: the Effect 3 edition's
 * `test/e2e/sessions.test.ts` and `test/e2e/events.replay.test.ts` cases. What the simulator's own
 * state answered there (its script, its connection count) is read here from what the client
 * received: the simulator's script is deterministic (`helpers/sdk.ts`). The action budget, two
 * watchers of one session (`Superseded`), a channel that keeps closing before complete and a
 * wrong key are cases of the conformance suite both editions run (`test/conformance.test.ts`,
 * scenarios in `packages/conformance`).
 */
import { assert, type Vitest } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import * as AgentSessions from "../../src/AgentSessions.js"
import * as Answer from "../../src/Answer.js"
import type * as NodeAgentSessions from "../../src/NodeAgentSessions.js"
import type * as SessionEvent from "../../src/SessionEvent.js"
import {
  actionNumbers,
  meaningful,
  type Sim,
  sdkLayer,
  stepNumbers,
  suiteOn,
  type TransportName,
  upTo
} from "../helpers/sdk.js"
import type { SimulatorOptions } from "../helpers/simulator.js"

const request = { start_url: "https://example.com", max_actions: 8, goal: "Find the opening hours" }

/** Every event of a running session (keep-alives aside), and how its stream ended. */
const consume = (running: Pick<AgentSessions.RunningSession, "events">) =>
  Stream.runCollect(Stream.result(running.events)).pipe(
    Effect.map((results) => {
      const events = results.flatMap((r) => (Result.isSuccess(r) ? [r.success] : []))
      const last = results.at(-1)
      return {
        events: meaningful(events),
        failure: last !== undefined && Result.isFailure(last) ? last.failure : undefined
      }
    })
  )

/** A whole session received exactly once, in order: every action and step `1..5` once, ending in `Complete`. */
const assertWhole = (events: ReadonlyArray<SessionEvent.SessionEvent>) => {
  assert.strictEqual(events[0]?._tag, "Started")
  assert.strictEqual(events.at(-1)?._tag, "Complete")
  assert.deepStrictEqual(actionNumbers(events), upTo(5))
  assert.deepStrictEqual(stepNumbers(events), upTo(5))
}

const tags = (events: ReadonlyArray<SessionEvent.SessionEvent>) => events.map((e) => e._tag)

const base: SimulatorOptions = { actions: 5, ask: "none", frameDelay: 2 }

const suite = (
  transport: TransportName,
  dialect: "documented" | "observed",
  name: string,
  simulator: SimulatorOptions,
  tests: (it: Vitest.MethodsNonLive<Sim | NodeAgentSessions.Services>) => void
) =>
  suiteOn(
    `AgentSessions end to end (${transport}, ${dialect} dialect): ${name}`,
    sdkLayer(transport),
    { ...base, ...simulator, dialect },
    tests
  )

for (const transport of ["websocket", "sse"] as const) {
  for (const dialect of ["documented", "observed"] as const) {
    suite(transport, dialect, "dropped 3 times", { ask: "input", faults: ["drop-after=2,5,8"] }, (it) => {
      it.effect("U17 run: every event exactly once in order, the request answered once, the outcome counted", () =>
        Effect.gen(function*() {
          let asked = 0
          const outcome = yield* AgentSessions.run(request, {
            onRequest: () => Effect.sync(() => (asked += 1)).pipe(Effect.as(Answer.grant("jane@example.com")))
          })
          const events = meaningful(outcome.events)
          assertWhole(events)
          assert.strictEqual(asked, 1)
          assert.deepStrictEqual(
            events.flatMap((e) => e._tag === "ExternalResourceGranted" ? [Option.getOrUndefined(e.input)] : []),
            ["jane@example.com"],
            "the simulator echoed the one answer"
          )
          assert.strictEqual(outcome.actions, 5)
          assert.strictEqual(outcome.maxActions, 8)
          assert.isTrue(Option.isSome(outcome.totalCost))
          assert.strictEqual(outcome.complete._tag, "Complete")
        }))
    })

    suite(transport, dialect, "agents and keys", {}, (it) => {
      it.effect("U11 onboards an agent and runs a session with the agent's key, over both channels", () =>
        Effect.gen(function*() {
          const agent = yield* AgentSessions.onboard({
            name: `e2e-${transport}-${dialect}-${Date.now()}`,
            website: "https://example.com",
            domain: "automation"
          })
          assert.isTrue(Option.isSome(agent.apiKey))
          const outcome = yield* AgentSessions.run(request, { agent: { agentId: agent.agentId, apiKey: agent.apiKey } })
          assertWhole(meaningful(outcome.events))
        }))
    })

    suite(transport, dialect, "replays its last 3 events on each reconnect", {
      faults: ["drop-after=4,8", "replay-on-reconnect=3"]
    }, (it) => {
      it.effect("issue 20: a service that replays, declared (replaysOnReconnect): every event exactly once", () =>
        Effect.gen(function*() {
          const running = yield* AgentSessions.start(request, { replaysOnReconnect: true })
          const { events, failure } = yield* consume(running)
          assert.isUndefined(failure)
          assertWhole(events)
        }))

      it.effect("issue 20: the same service, not declared: the replayed events are delivered again, none lost, the repeats counted", () =>
        Effect.gen(function*() {
          const declared = yield* consume(yield* AgentSessions.start(request, { replaysOnReconnect: true }))
          const script = declared.events
          const running = yield* AgentSessions.start(request, { onBudgetExceeded: "report" })
          const { events, failure } = yield* consume(running)
          const outcome = yield* running.outcome
          assert.isUndefined(failure)
          // Connection 1 sends 1-4, connection 2 sends 2-8 (2-4 again), connection 3 sends 6-end.
          const expected = [...script.slice(0, 4), ...script.slice(1, 8), ...script.slice(5)]
          assert.deepStrictEqual(tags(events), tags(expected))
          const actions = expected.filter((e) => e._tag === "ActionRun").length
          assert.strictEqual(outcome.actions, actions)
          assert.isAbove(actions, 5, "more than the service ran, never fewer")
        }))
    })
  }
}
