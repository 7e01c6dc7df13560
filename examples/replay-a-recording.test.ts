/**
 * Replay a recorded session in your tests (docs/testing.md).
 *
 * `examples/recordings/book-a-table.jsonl` is a real session of `bookTable` (see
 * `testing-your-app.ts`), recorded with `record-a-session.ts`: the agent asks for an email,
 * the connection drops once and comes back, and the session completes. These tests run the
 * application against it again:
 *
 * - in memory, with `AgentSessionsTest.replay`: the real façade and event channel fed the
 *   recorded frames on the `TestClock`, no sockets;
 * - over real sockets, with the simulator's `Replay`: the application's real layer, pointed at
 *   a server that serves the recording.
 *
 * Where the recording has an answer, the application's must be the same: an application that
 * now answers otherwise fails with `ReplayMismatch`, naming the line and the difference.
 *
 * In your own project, import the kits as `effect-agent-session/testing` and
 * `effect-agent-session-simulator`.
 *
 *   npx vitest run examples/replay-a-recording.test.ts
 */
import { assert, describe, it } from "@effect/vitest"
import { join } from "node:path"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as TestClock from "effect/TestClock"
import { Answer, NodeAgentSessions } from "effect-agent-session"
import { Replay } from "effect-agent-session-simulator"
import { AgentSessionsTest } from "effect-agent-session/testing"
import { bookTable } from "./testing-your-app.js"

const recording = join(import.meta.dirname, "recordings", "book-a-table.jsonl")

// The booking the session was recorded with: the create request must be the same.
const booking = { restaurantUrl: "https://example.com/reservations", partySize: 4, email: "jane@example.com" }

describe("bookTable against a recorded session", () => {
  it.effect("books the table again, in memory, on virtual time", () =>
    Effect.gen(function*() {
      const fiber = yield* Effect.fork(bookTable(booking))
      // The recorded delays (and the reconnect after the drop) are virtual time: advance it.
      yield* TestClock.adjust("1 minute")
      const result = yield* Fiber.join(fiber)

      assert.strictEqual(result._tag, "Booked")
      assert.deepStrictEqual(result._tag === "Booked" ? [result.actions, result.cost] : [], [3, 0.03])
      const answers = yield* AgentSessionsTest.answers
      assert.deepStrictEqual(answers.map((given) => given.answer), [Answer.grant(booking.email)])
      // One connection to the session, which its engine reopened after the recorded drop.
      assert.deepStrictEqual((yield* AgentSessionsTest.connections).length, 1)
    }).pipe(Effect.provide(AgentSessionsTest.replay(recording))))

  it.effect("fails with ReplayMismatch when the application now answers differently", () =>
    Effect.gen(function*() {
      // A replay stops with a defect that no production channel names; `withReplayErrors` makes it typed.
      const fiber = yield* Effect.fork(
        Effect.flip(AgentSessionsTest.withReplayErrors(bookTable({ ...booking, email: "someone.else@example.com" })))
      )
      yield* TestClock.adjust("1 minute")
      const error = yield* Fiber.join(fiber)

      assert.strictEqual(error._tag, "ReplayMismatch")
      if (error._tag !== "ReplayMismatch") return
      assert.strictEqual(error.subject, "answer")
      assert.strictEqual(error.difference, "input: expected \"jane@example.com\", got \"someone.else@example.com\"")
    }).pipe(Effect.provide(AgentSessionsTest.replay(recording))))

  it.live("books the table again over real sockets, served by the simulator's Replay", () =>
    Effect.gen(function*() {
      // `speed: 10`: the recorded delays, ten times shorter.
      const replay = yield* Replay.make({ path: recording, speed: 10 })
      const result = yield* bookTable(booking).pipe(
        Effect.provide(NodeAgentSessions.layer({ apiKey: replay.accountKey, baseUrl: replay.baseUrl }))
      )
      assert.strictEqual(result._tag, "Booked")
      const report = yield* replay.result
      assert.deepStrictEqual([report.connections, report.answers], [2, 1])
    }).pipe(Effect.scoped))
})
