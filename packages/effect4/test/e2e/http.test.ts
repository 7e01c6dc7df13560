/**
 * End to end over real HTTP on loopback: the Effect 4 edition's `AgentApi` (Node's undici client)
 * against the reference simulator running as a child process (the root's command line,
 * `simulate --port 0 --fault ...`), in both dialects, with the simulator's HTTP faults. The cases
 * without faults are written once for both editions (`test/shared/e2e.http.test.ts`).
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Result from "effect/Result"
import * as Schedule from "effect/Schedule"
import { type SimulatorInfo, spawnSimulator, type SimulatorOptions } from "../helpers/simulator.js"
import { apiFor, attemptsDuring, uniqueName } from "../shared/e2e.js"

const validSession = { start_url: "https://example.com/start", max_actions: 3, goal: "Find the pricing page" }

/** The simulator of a describe block, as a service of its layer. */
class Sim extends Context.Service<Sim, SimulatorInfo>()("test/e2e/Sim") {}

const simLayer = (options: SimulatorOptions) => Layer.effect(Sim, spawnSimulator(options))

for (const dialect of ["documented", "observed"] as const) {
  describe(`e2e HTTP (${dialect} dialect, the simulator as a child process)`, () => {
    // The simulator's first five requests are answered 503, the sixth 429 with `Retry-After: 1`.
    // The two tests run in order and spend the faults in turn.
    layer(simLayer({ dialect, faults: ["fail-503=5", "rate-limit=1:1"] }), {
      excludeTestServices: true,
      timeout: "90 seconds"
    })((it) => {
      it.effect("U21 503 past the retries is ServerError after 3 attempts (503 says nothing was created)", () =>
        Effect.gen(function*() {
          const sim = yield* Sim
          const api = yield* apiFor(sim, { retry: Schedule.spaced("10 millis").pipe(Schedule.upTo({ times: 2 })) })
          const { result, sent } = yield* attemptsDuring("onboard", ["503"], api.onboard({
            name: uniqueName("busy"),
            website: "https://example.com",
            domain: "research"
          }))
          assert.isTrue(Result.isFailure(result) && result.failure._tag === "ServerError", String(result))
          assert.deepStrictEqual(sent, { "503": 3 })
        }))

      it.effect("U21 503 x 2, then 429 with Retry-After: 1, then success: one createSession call, one session", () =>
        Effect.gen(function*() {
          const sim = yield* Sim
          const api = yield* apiFor(sim, { retry: Schedule.exponential("10 millis").pipe(Schedule.upTo({ times: 4 })) })
          const key = uniqueName("faults")
          const started = Date.now()
          const { result, sent } = yield* attemptsDuring(
            "createSession",
            ["503", "429", "200"],
            api.createSession(validSession, { idempotencyKey: key })
          )
          const elapsed = Date.now() - started
          assert.isTrue(Result.isSuccess(result), String(result))
          assert.deepStrictEqual(sent, { "503": 2, "429": 1, "200": 1 })
          // The 429's Retry-After (1 s) was honoured over the schedule's 40 ms.
          assert.isAtLeast(elapsed, 1000)
          // The faults are spent: the next call is one attempt, and the same key is the same session.
          const next = yield* attemptsDuring("createSession", ["200"], api.createSession(validSession, { idempotencyKey: key }))
          assert.isTrue(Result.isSuccess(next.result) && Result.isSuccess(result))
          if (Result.isSuccess(next.result) && Result.isSuccess(result)) {
            assert.strictEqual(next.result.success.session_id, result.success.session_id)
          }
          assert.deepStrictEqual(next.sent, { "200": 1 })
        }))
    })
  })
}
