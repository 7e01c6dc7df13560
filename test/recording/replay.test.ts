/**
 * The test kit's replay of a recording (issue 23): the recorded timing kept on the `TestClock`,
 * and the recorded dialect's `replaysOnReconnect` honoured as over a socket.
 * What a replay must do alike in both editions (the recorded events and outcome, answers and
 * creates checked, what the recording does not hold refused, damaged and foreign files refused
 * with the line named) is the conformance suite's replay scenarios (packages/conformance,
 * `replayScenarios`), run with this edition by test/conformance.test.ts.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as TestClock from "effect/TestClock"
import { AgentSessions, Answer } from "../../src/index.js"
import { AgentSessionsTest } from "../../src/testing/index.js"
import { frame, header, request, session, sessionId, writeRecording } from "./helpers.js"

/**
 * A session whose service replays on reconnect, declared by the recorded dialect: connection 1
 * delivers `started` and an action and drops (1006); connection 2 sends both again, then a second
 * action and `complete`.
 */
const replayingService = [
  header({ dialect: { ...header().dialect, replaysOnReconnect: true } }),
  { type: "create", t: 0, request },
  { type: "created", t: 40, session: { session_id: sessionId, status: "started" } },
  { type: "connect", t: 50, conn: 1 },
  { type: "open", t: 60, conn: 1 },
  frame(70, 1, "started", { sessionId, start_url: request.start_url }),
  frame(1_070, 1, "action_run", { name: "click", action_session_id: "as_1", content: "Open the page" }),
  { type: "close", t: 1_100, conn: 1, opened: true, outcome: { _tag: "Retry", cause: "closed with code 1006" } },
  { type: "connect", t: 1_400, conn: 2 },
  { type: "open", t: 1_410, conn: 2 },
  frame(1_420, 2, "started", { sessionId, start_url: request.start_url }),
  frame(1_430, 2, "action_run", { name: "click", action_session_id: "as_1", content: "Open the page" }),
  frame(2_430, 2, "action_run", { name: "type", action_session_id: "as_2", content: "Type the query" }),
  frame(2_500, 2, "complete", { response: "Mon-Fri 9-17", type: "STRING", total_cost: 0.02, session_id: sessionId }),
  { type: "close", t: 2_510, conn: 2, opened: true, outcome: { _tag: "End", reason: "complete" } },
  { type: "end", t: 2_520, reason: "complete" }
]

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

  it.effect("a recorded dialect that replays on reconnect (replaysOnReconnect): the replayed events are dropped, as over a socket", () =>
    Effect.gen(function*() {
      const seen: Array<string> = []
      const fiber = yield* Effect.fork(AgentSessions.run(request, {
        onEvent: (event) => Effect.sync(() => void seen.push(event._tag === "ActionRun" ? `ActionRun ${event.name}` : event._tag))
      }))
      yield* TestClock.adjust("1 minute")
      const outcome = yield* Fiber.join(fiber)
      assert.strictEqual(outcome.response, "Mon-Fri 9-17")
      assert.deepStrictEqual(seen, ["Started", "ActionRun click", "ActionRun type", "Complete"])
    }).pipe(Effect.provide(AgentSessionsTest.replay(writeRecording(replayingService)))))
})
