/**
 * The test kit's replay of a recording (issues 23, 25), written once for both editions: the
 * recorded timing kept on the `TestClock`, a drain on a replayed connection, a session recorded by
 * the Effect 3 edition replayed, and `withReplayErrors`. What a replay must do alike in both
 * editions (the recorded events and outcome, answers and creates checked, what the recording does
 * not hold refused, damaged and foreign files refused with the line named, the recorded dialect's
 * `replaysOnReconnect` honoured as over a socket) is the conformance suite's replay scenarios
 * (packages/conformance, `replayScenarios`), run by `./conformance.test.ts`.
 */
import { assert, describe, it } from "@effect/vitest"
import { fileURLToPath } from "node:url"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import { request, session, writeRecording } from "effect-agent-session-conformance/recordings"
import { AgentSessions, Answer } from "../../src/index.js"
import { AgentSessionsTest } from "../../src/testing/index.js"
import { advanceBy, failureIn, failureOf, forkChild, outcomes, successOf } from "../helpers/line.js"

/** Runs on virtual time: forked, the clock advanced past the recording, joined. */
const onVirtualTime = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const fiber = yield* forkChild(effect)
    yield* advanceBy("10 minutes")
    return yield* Fiber.join(fiber)
  })

describe("AgentSessionsTest.replay", () => {
  it.effect("keeps the recorded timing on the TestClock: nothing before its time", () =>
    Effect.gen(function*() {
      const seen: Array<string> = []
      const fiber = yield* forkChild(AgentSessions.run(request, {
        onEvent: (event) => Effect.sync(() => void seen.push(event._tag)),
        onRequest: () => Effect.succeed(Answer.grant("jane@example.com"))
      }))
      yield* advanceBy("500 millis", "10 millis")
      assert.deepStrictEqual(seen, ["Started"])
      // The action was recorded 1 s after the first event; the request 430 ms after it.
      yield* advanceBy("700 millis", "10 millis")
      assert.deepStrictEqual(seen, ["Started", "ActionRun"])
      yield* advanceBy("10 seconds")
      assert.deepStrictEqual(seen, ["Started", "ActionRun", "ExternalResourceRequested", "ExternalResourceGranted"])
      yield* advanceBy("1 minute")
      const outcome = yield* Fiber.join(fiber)
      assert.strictEqual(outcome.response, "Mon-Fri 9-17")
    }).pipe(Effect.provide(AgentSessionsTest.replay(writeRecording(session({ drop: false }))))))

  it.effect("drain on a replayed connection is close: its events end where they are, the state is closed by the caller", () =>
    Effect.gen(function*() {
      const running = yield* AgentSessions.start(request)
      const seen: Array<string> = []
      const events = yield* forkChild(Stream.runForEach(outcomes(running.events), (r) =>
        Effect.sync(() => void seen.push(successOf(r)?._tag ?? `!${failureIn(r)?._tag}`))))
      yield* advanceBy("500 millis", "10 millis")
      assert.deepStrictEqual(seen, ["Started"])
      yield* running.drain
      yield* Fiber.join(events)
      assert.deepStrictEqual(seen, ["Started", "!SessionEndedWithoutComplete"])
      assert.deepStrictEqual(yield* SubscriptionRef.get(running.state), { _tag: "Closed", reason: "closed-by-caller" })
    }).pipe(Effect.scoped, Effect.provide(AgentSessionsTest.replay(writeRecording(session({ drop: false }))))))

  it.effect("a session recorded by the Effect 3 edition (examples/recordings/book-a-table.jsonl) replays as recorded", () =>
    Effect.gen(function*() {
      const outcome = yield* onVirtualTime(AgentSessions.run(
        { start_url: "https://example.com/reservations", max_actions: 15, goal: "Book a table for 4 tonight" },
        { onRequest: () => Effect.succeed(Answer.grant("jane@example.com")) }
      ))
      assert.strictEqual(outcome.actions, 3)
      assert.deepStrictEqual((yield* AgentSessionsTest.answers).map((a) => a.answer), [Answer.grant("jane@example.com")])
      // One connection, which the engine reopened after the recorded drop.
      assert.strictEqual((yield* AgentSessionsTest.connections).length, 1)
    }).pipe(Effect.provide(AgentSessionsTest.replay(
      fileURLToPath(new URL("../../../../examples/recordings/book-a-table.jsonl", import.meta.url))
    ))))

  it.effect("withReplayErrors makes only a replay's stop typed: other defects stay defects", () =>
    Effect.gen(function*() {
      const bug = new Error("a bug")
      const exit = yield* Effect.exit(AgentSessionsTest.withReplayErrors(Effect.die(bug)))
      assert.isTrue(Exit.isFailure(exit))
      if (Exit.isFailure(exit)) {
        assert.isTrue(Option.isNone(failureOf(exit.cause)), "not a typed failure")
        assert.strictEqual(Cause.squash(exit.cause), bug, "the defect itself")
      }
    }))
})
