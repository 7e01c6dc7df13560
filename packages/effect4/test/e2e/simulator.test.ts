/**
 * The harness of the end-to-end tests: the root's simulator as a child process on port 0.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import { spawnSimulator } from "../helpers/simulator.js"

describe("the simulator as a child process", () => {
  it.live("starts on port 0, prints its addresses, answers HTTP, and is stopped by its PID with the scope", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const sim = yield* spawnSimulator({ dialect: "observed" }).pipe(Scope.provide(scope))
      assert.isAbove(sim.port, 0)
      assert.strictEqual(sim.baseUrl, `http://127.0.0.1:${sim.port}`)
      assert.strictEqual(sim.dialect, "observed")
      const response = yield* Effect.promise(() =>
        fetch(`${sim.baseUrl}/api/v1/sessions`, {
          method: "POST",
          headers: { "x-api-key": sim.accountKey, "content-type": "application/json" },
          body: JSON.stringify({ goal: "g" })
        })
      )
      assert.strictEqual(response.status, 200)
      yield* Scope.close(scope, Exit.void)
      // The process is gone: signal 0 to its PID fails.
      assert.throws(() => process.kill(sim.pid, 0))
    }))
})
