/**
 * Test your own application without a network: in-memory `AgentApi`, `EventStream` and
 * `Credentials` driven by a script of events, under the real `AgentSessions` façade. No sockets;
 * `sleep` steps follow the `TestClock`.
 *
 * @example
 * ```ts
 * import { AgentSessions } from "effect-agent-session"
 * import { AgentSessionsTest } from "effect-agent-session/testing"
 * import { Effect } from "effect"
 *
 * const program = AgentSessions.run(
 *   { start_url: "https://example.com", max_actions: 3, goal: "Find the price" },
 *   { onRequest: () => Effect.succeed({ _tag: "Deny" } as const) }
 * )
 *
 * const TestLayer = AgentSessionsTest.layer({ script: AgentSessionsTest.session({ actions: 2, ask: "permission" }) })
 * // Effect.runPromise(Effect.provide(program, TestLayer))
 * ```
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type { AgentApi } from "../AgentApi.js"
import type * as AgentSessions from "../AgentSessions.js"
import type * as Credentials from "../Credentials.js"
import type { InvalidRecording, ReplayError } from "../Errors.js"
import type * as EventStream from "../EventStream.js"
import * as internal from "../../binding/internal/testing/inMemory.js"
import type { AgentSessionsTestControl, ReplayOptions } from "../../binding/internal/testing/kitTypes.js"
import { isReplayError, session } from "../../binding/testing/AgentSessionsTest.js"

export * from "../../binding/testing/AgentSessionsTest.js"

/**
 * Runs an effect against a {@link replay} and turns the defect a replay stops with (a
 * `ReplayMismatch`, or an `InvalidRecording` met mid-way) into a typed failure, for a test that
 * asserts on the difference. Other defects stay defects.
 *
 * @example
 * ```ts
 * import { AgentSessions, Answer } from "effect-agent-session"
 * import { AgentSessionsTest } from "effect-agent-session/testing"
 * import * as Effect from "effect/Effect"
 *
 * const program = AgentSessions.run(
 *   { start_url: "https://example.com", max_actions: 5, goal: "Read the title" },
 *   { onRequest: () => Effect.succeed(Answer.deny()) }
 * )
 * // Fails with `ReplayMismatch` (typed) when the recorded answer was a grant.
 * const checked = AgentSessionsTest.withReplayErrors(program)
 * ```
 *
 * @since 0.1.0
 * @category combinators
 */
export const withReplayErrors = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E | ReplayError, R> =>
  Effect.catchSomeDefect(self, (defect) => isReplayError(defect) ? Option.some(Effect.fail(defect)) : Option.none())

/**
 * Replays a recorded session (`Recording.layer`, `effect-agent-session run --record`) through the
 * real `AgentSessions` façade, without sockets: `createSession` answers what was recorded, and
 * every connection of the session is the SDK's real event channel engine fed the recorded frames
 * of that connection, each after its recorded delay on the `Clock` (virtual time under the
 * `TestClock`: fork the program, `TestClock.adjust` past the recording's length, join it), and
 * ended as the recorded one ended (a drop, a close code, `complete`), so the application's
 * reconnects, decoding and answers run as they did.
 *
 * - **Answers are checked.** Where the recording has an answer, the application's (after
 *   `redact`) must be the same, in the same order, within `answerTimeout`; else the replay stops
 *   with `ReplayMismatch` naming the line and the difference. Two requests pending at once are
 *   compared in the order answered. An answer the recording never holds (the recorded
 *   connection ends without one) stops it too. A create request that differs from the recorded
 *   one, or a create against a recording without one (of `attach`), stops it the same way
 *   (`subject: "create"`).
 * - **Streamed.** The file is read line by line as the replay goes, never whole.
 * - **Checked.** A file that is not a recording, of a newer format version, or with a header that
 *   is not valid fails the layer with `InvalidRecording`; a line that is not valid, met later,
 *   stops the replay with it, naming the line.
 * - **How a replay stops.** No production channel can meet a `ReplayMismatch` (or an
 *   `InvalidRecording` met mid-way), so no public error channel names them: the replay ends the
 *   events with a defect carrying the error, as a stub layer dies on a call it does not implement,
 *   and the test fails with the error's message. {@link withReplayErrors} turns that defect back
 *   into a typed failure where a test asserts on it.
 * - `AgentSessionsTest.answers`, `sessionsCreated` and `connections` report what the
 *   application did, as with {@link layer}; `setScript` has no effect on a replay.
 *
 * @example
 * ```ts
 * import { AgentSessions } from "effect-agent-session"
 * import { AgentSessionsTest } from "effect-agent-session/testing"
 * import * as Effect from "effect/Effect"
 * import * as Fiber from "effect/Fiber"
 * import * as TestClock from "effect/TestClock"
 *
 * const test = Effect.gen(function*() {
 *   const fiber = yield* Effect.fork(
 *     AgentSessions.run({ start_url: "https://example.com", max_actions: 5, goal: "Read the title" })
 *   )
 *   yield* TestClock.adjust("10 minutes")
 *   return yield* Fiber.join(fiber)
 * }).pipe(Effect.provide(AgentSessionsTest.replay("test/recordings/read-the-title.jsonl")))
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const replay = (
  path: string,
  options: ReplayOptions = {}
): Layer.Layer<
  AgentSessions.AgentSessions | AgentApi | EventStream.EventStream | Credentials.Credentials | AgentSessionsTestControl,
  InvalidRecording
> => internal.kitLayer(internal.makeReplay(path, options, session))
