/**
 * The test kit's replay of a recording (issue 23): the recorded timing kept on the `TestClock`.
 * What a replay must do alike in both editions (the recorded events and outcome, answers and
 * creates checked, what the recording does not hold refused, damaged and foreign files refused
 * with the line named, the recorded dialect's `replaysOnReconnect` honoured as over a socket) is the conformance suite's replay scenarios (packages/conformance,
 * `replayScenarios`), run with this edition by test/conformance.test.ts.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as TestClock from "effect/TestClock"
import { AgentSessions, Answer } from "../../src/index.js"
import { AgentSessionsTest } from "../../src/testing/index.js"
import { request, session, writeRecording } from "./helpers.js"

describe("AgentSessionsTest.replay", () => {
  it.effect("keeps the recorded timing on the TestClock: nothing before its time", () =>
    Effect.gen(function*() {
      const seen: Array<string> = []
      const fiber = yield* Effect.fork(AgentSessions.run(request, {
        onEvent: (event) => Effect.sync(() => void seen.push(event._tag)),
        onRequest: () => Effect.succeed(Answer.grant("jane@example.com"))
      }))
      yield* TestClock.adjust("500 millis")
      assert.deepStrictEqual(seen, ["Started"])
      // The action was recorded 1 s after the first event; the request 430 ms after it.
      yield* TestClock.adjust("700 millis")
      assert.deepStrictEqual(seen, ["Started", "ActionRun"])
      yield* TestClock.adjust("10 seconds")
      assert.deepStrictEqual(seen, ["Started", "ActionRun", "ExternalResourceRequested", "ExternalResourceGranted"])
      yield* TestClock.adjust("1 minute")
      const outcome = yield* Fiber.join(fiber)
      assert.strictEqual(outcome.response, "Mon-Fri 9-17")
    }).pipe(Effect.provide(AgentSessionsTest.replay(writeRecording(session({ drop: false }))))))
})
