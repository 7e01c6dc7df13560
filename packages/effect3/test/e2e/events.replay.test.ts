/**
 * Issue 20 items 1 and 2 over real sockets: against the simulator (which resumes at its cursor),
 * against a raw `ws` server (four identical `action_run` frames around a reconnect), and two
 * watchers of one session (`start`, then `attach`): the older is superseded and stays so. A
 * service that replays its last events on reconnect (the simulator's `replayOnReconnect` fault),
 * declared or not, is a scenario of the conformance suite both editions run
 * (`test/conformance.test.ts`, scenarios in `packages/conformance`).
 */
import { assert, describe, it, layer } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { AgentSessions, Errors, NodeAgentSessions } from "../../src/index.js"
import * as Simulator from "effect-agent-session-simulator/Simulator"
import { fastReconnect, meaningful, sdkFor, variants, withFaults as withFaultsAnd } from "../helpers/simulation.js"
import { sessionInfo } from "../helpers/sdk.js"
import { hostileServer } from "../hostile/server.js"

const baseScenario: Partial<Simulator.Scenario> = { actions: 8, ask: "none", frameDelay: "1 millis" }
const withFaults = (faults: Simulator.Faults, scenario: Partial<Simulator.Scenario> = {}) =>
  withFaultsAnd(faults, scenario, baseScenario)
const request = { start_url: "https://example.com", max_actions: 8, goal: "Find the opening hours" }

/** Every event of a running session, and how its stream ended. */
const consume = (running: AgentSessions.RunningSession) =>
  Stream.runCollect(Stream.either(running.events)).pipe(
    Effect.map((all) => {
      const results = Chunk.toReadonlyArray(all)
      const events = results.flatMap((r) => (Either.isRight(r) ? [r.right] : []))
      const last = results.at(-1)
      return { events: meaningful(events), failure: last !== undefined && Either.isLeft(last) ? last.left : undefined }
    })
  )

for (const { dialect, transport } of variants) {
  describe(`replays against the simulator (${dialect.name} dialect, ${transport})`, () => {
    const SimulatorLive = Simulator.layer({ port: 0, dialect, scenario: baseScenario })

    layer(Layer.provideMerge(sdkFor({ transport }), SimulatorLive), { excludeTestServices: true })((it) => {
      it.scoped("declared to replay against the simulator that resumes at its cursor: every event exactly once", () =>
        Effect.gen(function*() {
          const simulator = yield* Simulator.Simulator
          const { events, failure, sessionId } = yield* Effect.gen(function*() {
            const running = yield* AgentSessions.start(request, { replaysOnReconnect: true })
            return { ...yield* consume(running), sessionId: running.session.session_id }
          }).pipe(withFaults({ ws: { dropAfter: [3, 6] } }))
          assert.isUndefined(failure)
          assert.deepStrictEqual(events, yield* simulator.script(sessionId))
        }))

      // Over SSE the simulator ends a superseded stream without saying why (docs/reliability.md).
      if (transport !== "sse") {
      it.scoped("two watchers of one session (start, then attach): the first ends with Superseded and never takes it back", () =>
        Effect.gen(function*() {
          const simulator = yield* Simulator.Simulator
          const { first, second, sessionId } = yield* Effect.gen(function*() {
            const running = yield* AgentSessions.start(request)
            const sessionId = running.session.session_id
            const seen = yield* Effect.makeLatch(false)
            let count = 0
            const firstFiber = yield* Effect.fork(
              consume({
                ...running,
                events: Stream.tap(running.events, () =>
                  Effect.suspend(() => (++count === 3 ? seen.open : Effect.void)))
              })
            )
            yield* seen.await
            // Another watcher of the same session (the command line's `attach`, say).
            const other = yield* AgentSessions.attach(running.session, request.max_actions)
            const second = yield* consume(other)
            const first = yield* Fiber.join(firstFiber)
            return { first, second, sessionId }
          }).pipe(withFaults({}, { frameDelay: "30 millis" }))
          assert.instanceOf(first.failure, Errors.Superseded)
          assert.isUndefined(second.failure)
          assert.strictEqual(second.events.at(-1)?._tag, "Complete")
          // Nothing lost, nothing twice: the older watcher's events, then the newer's.
          assert.deepStrictEqual([...first.events, ...second.events], yield* simulator.script(sessionId))
          assert.strictEqual(yield* simulator.connections(sessionId), 2, "the superseded watcher never reconnected")
        }))
      }
    })
  })
}

describe("the budget over real sockets (issue 20 item 1)", () => {
  /** A raw server: connection 1 sends started and `scroll` twice then drops; connection 2 sends `scroll` twice, then complete. */
  const scroll = JSON.stringify({
    event: "action_run",
    data: { name: "scroll", action_session_id: "as-1", content: "scroll down" }
  })
  const frames = [
    [JSON.stringify({ event: "started", data: { sessionId: "raw-session", start_url: "https://example.com" } }), scroll, scroll],
    [scroll, scroll, JSON.stringify({ event: "complete", data: { response: "ok", type: "STRING", total_cost: 1 } })]
  ]

  for (const replays of [false, true]) {
    it.live(`max_actions 3 and 4 identical action_run around a reconnect${replays ? " (replaying service declared: the 2 replayed are dropped)" : ""}: ActionBudgetExceeded`, () =>
      Effect.gen(function*() {
        const server = yield* hostileServer({
          ws: (socket, _request, index) => {
            // A replaying service resends its last two before going on.
            const send = replays && index === 1 ? [scroll, scroll, ...frames[1]!] : frames[index] ?? []
            socket.once("message", () => {
              for (const frame of send) socket.send(frame)
              if (index === 0) setTimeout(() => socket.terminate(), 20)
            })
          }
        })
        const exit = yield* Effect.exit(
          AgentSessions.attach(sessionInfo("raw-session"), 3, { replaysOnReconnect: replays }).pipe(
            Effect.flatMap((running) => Stream.runDrain(running.events)),
            Effect.scoped,
            Effect.provide(NodeAgentSessions.layer({
              apiKey: "sk-raw-server-key",
              baseUrl: server.baseUrl,
              wsUrl: server.wsUrl,
              events: { reconnect: fastReconnect }
            }))
          )
        )
        const error = Exit.isFailure(exit) ? Cause.failureOption(exit.cause) : Option.none()
        assert.isTrue(Option.isSome(error), "a typed failure")
        if (Option.isNone(error)) return
        assert.instanceOf(error.value, Errors.ActionBudgetExceeded)
        if (error.value._tag === "ActionBudgetExceeded") {
          assert.strictEqual(error.value.actions, 4)
          assert.strictEqual(error.value.maxActions, 3)
        }
        assert.strictEqual(server.upgrades(), 2)
      }).pipe(Effect.scoped))
  }
})
