/**
 * The façade (`AgentSessions` over `NodeAgentSessions.layer`) end to end against the simulator
 * with its faults (started as `simulate --port 0 --fault ...` starts it, in process on Effect 3, a
 * child process on Effect 4; a fault applies to every session of that simulator), both transports,
 * both dialects, written once for both editions: what a whole session is, read from what the client
 * received (the simulator's script is deterministic, `./e2e.ts`). The Effect 3 edition's
 * `test/e2e/sessions.test.ts` and `test/e2e/events.replay.test.ts` hold the cases that read its
 * in-process simulator's own state (its script, its answers, its connection count). The action budget, two
 * watchers of one session (`Superseded`), a channel that keeps closing before complete, a wrong
 * key and a service that replays on reconnect (declared or not) are cases of the conformance suite
 * both editions run (`test/conformance.test.ts`, scenarios in `packages/conformance`).
 */
import { assert } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as AgentSessions from "../../src/AgentSessions.js"
import * as Answer from "../../src/Answer.js"
import type * as NodeAgentSessions from "../../src/NodeAgentSessions.js"
import type * as SessionEvent from "../../src/SessionEvent.js"
import { type LayerMethods, type Sim, type SimOptions } from "../helpers/line.js"
import { actionNumbers, meaningful, sdkLayer, stepNumbers, suiteOn, type TransportName, upTo } from "./e2e.js"

const request = { start_url: "https://example.com", max_actions: 8, goal: "Find the opening hours" }

/** A whole session received exactly once, in order: every action and step `1..5` once, ending in `Complete`. */
const assertWhole = (events: ReadonlyArray<SessionEvent.SessionEvent>) => {
  assert.strictEqual(events[0]?._tag, "Started")
  assert.strictEqual(events.at(-1)?._tag, "Complete")
  assert.deepStrictEqual(actionNumbers(events), upTo(5))
  assert.deepStrictEqual(stepNumbers(events), upTo(5))
}

const base: SimOptions = { actions: 5, ask: "none", frameDelay: 2 }

const suite = (
  transport: TransportName,
  dialect: "documented" | "observed",
  name: string,
  simulator: SimOptions,
  tests: (it: LayerMethods<Sim | NodeAgentSessions.Services>) => void
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

    suite(transport, dialect, "dropped 3 times, run with forEachBatch", { ask: "input", faults: ["drop-after=2,5,8"] }, (it) => {
      it.effect("U17 forEachBatch: every event exactly once in order, the request answered, the outcome counted", () =>
        Effect.scoped(Effect.gen(function*() {
          const running = yield* AgentSessions.start(request)
          const received: Array<SessionEvent.SessionEvent> = []
          yield* running.forEachBatch((batch) =>
            Effect.forEach(batch, (event) => {
              received.push(event)
              return event._tag === "ExternalResourceRequested"
                ? running.respond(event, Answer.grant("jane@example.com"))
                : Effect.void
            }, { discard: true })
          )
          const events = meaningful(received)
          assertWhole(events)
          assert.strictEqual(events.filter((e) => e._tag === "ExternalResourceGranted").length, 1)
          const outcome = yield* running.outcome
          assert.strictEqual(outcome.actions, 5)
          assert.deepStrictEqual(yield* SubscriptionRef.get(running.pending), [])
        })))
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
  }
}
