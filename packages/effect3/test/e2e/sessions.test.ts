/**
 * The façade (`AgentSessions` over `NodeAgentSessions.layer`) end to end against the simulator in
 * this process, checked against its own state: the events received equal to its script, the
 * answers it got, the connections it counted. The cases both editions make (a whole session read
 * from what the client received) are written once (`test/shared/e2e.sessions.test.ts`).
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { AgentSessions, Answer } from "../../src/index.js"
import * as Simulator from "effect-agent-session-simulator/Simulator"
import { meaningful, sdkFor, variants, withFaults as withFaultsAnd } from "../helpers/simulation.js"

const withFaults = (faults: Simulator.Faults, scenario: Partial<Simulator.Scenario> = {}) =>
  withFaultsAnd(faults, scenario, { ask: "input" })

const request = { start_url: "https://example.com", max_actions: 5, goal: "Find the opening hours" }

for (const { dialect, transport } of variants) {
  describe(`AgentSessions end to end (${dialect.name} dialect, ${transport})`, () => {
    const SimulatorLive = Simulator.layer({
      port: 0,
      dialect,
      scenario: { actions: 4, ask: "input", frameDelay: "1 millis" }
    })

    layer(Layer.provideMerge(sdkFor({ transport }), SimulatorLive), { excludeTestServices: true })((it) => {
      it.effect("runs a whole session, answers the request, and every scripted event arrives once in order", () =>
        Effect.gen(function*() {
          const simulator = yield* Simulator.Simulator
          const outcome = yield* AgentSessions.run(request, {
            onRequest: () => Effect.succeed(Answer.grant("jane@example.com"))
          })
          const script = yield* simulator.script(outcome.sessionId)
          assert.deepStrictEqual(meaningful(outcome.events), script)
          assert.strictEqual(outcome.actions, 4)
          assert.isTrue(Option.isSome(outcome.totalCost))
          const answers = yield* simulator.answers(outcome.sessionId)
          assert.strictEqual(answers.length, 1)
          assert.strictEqual(answers[0]?.granted, true)
          assert.strictEqual(answers[0]?.input, "jane@example.com")
          assert.strictEqual(answers[0]?.resource_type, "request_user_input")
        }))

      it.effect("U17 the socket dropped 3 times still gives every event exactly once, ending in Complete", () =>
        Effect.gen(function*() {
          const simulator = yield* Simulator.Simulator
          const outcome = yield* AgentSessions.run(request, { onRequest: () => Effect.succeed(Answer.deny()) }).pipe(
            withFaults({ ws: { dropAfter: [2, 5, 8] } })
          )
          assert.deepStrictEqual(meaningful(outcome.events), yield* simulator.script(outcome.sessionId))
          assert.strictEqual(outcome.events.at(-1)?._tag, "Complete")
          assert.isAtLeast(yield* simulator.connections(outcome.sessionId), 4)
        }))

      it.effect("onboards an agent and runs a session with the agent's key (U11)", () =>
        Effect.gen(function*() {
          const simulator = yield* Simulator.Simulator
          const agent = yield* AgentSessions.onboard({
            name: `e2e-${dialect.name}-${Date.now()}`,
            website: "https://example.com",
            domain: "automation"
          })
          assert.isTrue(Option.isSome(agent.apiKey))
          const outcome = yield* AgentSessions.run(request, {
            agent: { agentId: agent.agentId, apiKey: agent.apiKey },
            onRequest: () => Effect.succeed(Answer.grant("x@example.com"))
          })
          assert.deepStrictEqual(meaningful(outcome.events), yield* simulator.script(outcome.sessionId))
        }))
    })
  })
}
