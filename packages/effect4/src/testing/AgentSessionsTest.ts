/**
 * Test your own application without a network: in-memory `AgentApi`, `EventStream` and
 * `Credentials` driven by a script of events, under the real `AgentSessions` façade. No sockets;
 * `sleep` steps follow the `TestClock`.
 *
 * @example
 * ```ts
 * import { AgentSessions, Answer } from "effect-agent-session-effect4"
 * import { AgentSessionsTest } from "effect-agent-session-effect4/testing"
 * import * as Effect from "effect/Effect"
 *
 * const program = AgentSessions.run(
 *   { start_url: "https://example.com", max_actions: 3, goal: "Find the price" },
 *   { onRequest: () => Effect.succeed(Answer.deny()) }
 * )
 *
 * const TestLayer = AgentSessionsTest.layer({ script: AgentSessionsTest.session({ actions: 2, ask: "permission" }) })
 * // Effect.runPromise(Effect.provide(program, TestLayer))
 * ```
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import { Script } from "effect-agent-session-core/shell"
import type { OnboardRequest } from "../Agent.js"
import { AgentApi } from "../AgentApi.js"
import * as AgentSessions from "../AgentSessions.js"
import * as Credentials from "../Credentials.js"
import {
  type CreateSessionError,
  InvalidRecording,
  type OnboardError,
  type ReplayError,
  ReplayMismatch
} from "../Errors.js"
import * as EventStream from "../EventStream.js"
import * as internal from "../../binding/internal/testing/inMemory.js"
import { Step } from "../../binding/internal/testing/kitTypes.js"
import type { Control, Options, RecordedAnswer, ReplayOptions } from "../../binding/internal/testing/kitTypes.js"
import { ActionSessionId, type CreateSessionRequest, SessionId } from "../Session.js"
import type * as SessionEvent from "../SessionEvent.js"

export type {
  /**
   * An answer the application gave, with the request it answered.
   *
   * @since 0.1.0
   * @category models
   */
  RecordedAnswer,
  /**
   * What the test can inspect and steer.
   *
   * @since 0.1.0
   * @category models
   */
  Control,
  /**
   * Options of the test layer.
   *
   * @since 0.1.0
   * @category models
   */
  Options,
  /**
   * Options of {@link replay}.
   *
   * @since 0.1.0
   * @category models
   */
  ReplayOptions
} from "../../binding/internal/testing/kitTypes.js"

export {
  /**
   * A step of a script (the type: emit an event, fail the stream with a typed error, wait, wait
   * for the answer to the latest request, or end the connection) and its constructors (the value:
   * `Step.emit`, `Step.fail`, `Step.sleep`, `Step.awaitAnswer`, `Step.end`).
   *
   * @since 0.1.0
   * @category constructors
   */
  Step
} from "../../binding/internal/testing/kitTypes.js"

/**
 * A typical session: started, browser, `actions` actions with thoughts, optionally a request that
 * waits for the answer, and `complete` with `total_cost` of one cent per action.
 *
 * @since 0.1.0
 * @category constructors
 */
export const session = (options: Script.TypicalOptions = {}): ReadonlyArray<Step> =>
  Script.typical(options).map((step) => step._tag === "Emit" ? Step.emit(eventOf(step.event)) : step)

/** An event of the core's typical session, as this edition's. */
const eventOf = (event: Script.TypicalEvent): SessionEvent.SessionEvent => {
  switch (event._tag) {
    case "Started":
      return { ...event, sessionId: SessionId.make(event.sessionId) }
    case "BrowserStarted":
    case "ActionRun":
      return { ...event, action_session_id: ActionSessionId.make(event.action_session_id) }
    case "ThoughtsAndMemories":
      return event
    case "ExternalResourceRequested":
      return {
        ...event,
        action_session_id: ActionSessionId.make(event.action_session_id),
        field_name: Option.fromUndefinedOr(event.field_name)
      }
    case "Complete":
      return {
        ...event,
        total_cost: Option.some(event.total_cost),
        cost_summary: Option.none(),
        session_id: SessionId.make(event.session_id)
      }
  }
}

/**
 * The control of the test layer.
 *
 * @since 0.1.0
 * @category tags
 */
export class AgentSessionsTestControl extends Context.Service<AgentSessionsTestControl, Control>()(
  "effect-agent-session/testing/AgentSessionsTestControl"
) {}

/**
 * The kit's services (scripted or replayed) in a layer, with `Credentials` holding a test key, and
 * the real `AgentSessions` over them (fresh: each kit layer's façade over its own services, as in
 * `NodeAgentSessions`).
 */
const kitLayer = <E>(make: Effect.Effect<internal.Services, E, Scope.Scope | Credentials.Credentials>) => {
  const services = Layer.effectContext(
    Effect.map(make, ({ api, control, eventStream }) =>
      Context.make(AgentApi, api).pipe(
        Context.add(EventStream.EventStream, eventStream),
        Context.add(AgentSessionsTestControl, control)
      ))
  )
  return Layer.provideMerge(Layer.fresh(AgentSessions.layer), Layer.provideMerge(services, Credentials.layer({ apiKey: "test-account-key" })))
}

/**
 * The in-memory `AgentApi`, `EventStream` and `Credentials` (a test key), the real
 * `AgentSessions` over them, and {@link AgentSessionsTestControl} to inspect and steer.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  options: Options = {}
): Layer.Layer<
  AgentSessions.AgentSessions | AgentApi | EventStream.EventStream | Credentials.Credentials | AgentSessionsTestControl
> => kitLayer(internal.makeServices(options, session))

/**
 * The answers the application gave so far.
 *
 * @since 0.1.0
 * @category accessors
 */
export const answers: Effect.Effect<ReadonlyArray<RecordedAnswer>, never, AgentSessionsTestControl> = Effect.flatMap(
  Effect.service(AgentSessionsTestControl),
  (control) => control.answers
)

/**
 * The session ids the application connected to so far, in order.
 *
 * @since 0.1.0
 * @category accessors
 */
export const connections: Effect.Effect<ReadonlyArray<string>, never, AgentSessionsTestControl> = Effect.flatMap(
  Effect.service(AgentSessionsTestControl),
  (control) => control.connections
)

/**
 * The create-session requests the application made so far.
 *
 * @since 0.1.0
 * @category accessors
 */
export const sessionsCreated: Effect.Effect<ReadonlyArray<CreateSessionRequest>, never, AgentSessionsTestControl> =
  Effect.flatMap(Effect.service(AgentSessionsTestControl), (control) => control.sessionsCreated)

/**
 * The onboard requests the application made so far.
 *
 * @since 0.1.0
 * @category accessors
 */
export const agentsOnboarded: Effect.Effect<ReadonlyArray<OnboardRequest>, never, AgentSessionsTestControl> =
  Effect.flatMap(Effect.service(AgentSessionsTestControl), (control) => control.agentsOnboarded)

/**
 * Makes the next create-session call fail with a typed error.
 *
 * @since 0.1.0
 * @category combinators
 */
export const failNextCreate = (error: CreateSessionError): Effect.Effect<void, never, AgentSessionsTestControl> =>
  Effect.flatMap(Effect.service(AgentSessionsTestControl), (control) => control.failNextCreate(error))

/**
 * Makes the next onboard call fail with a typed error.
 *
 * @since 0.1.0
 * @category combinators
 */
export const failNextOnboard = (error: OnboardError): Effect.Effect<void, never, AgentSessionsTestControl> =>
  Effect.flatMap(Effect.service(AgentSessionsTestControl), (control) => control.failNextOnboard(error))

/**
 * Replaces the script of the sessions created from now on.
 *
 * @since 0.1.0
 * @category combinators
 */
export const setScript = (script: ReadonlyArray<Step>): Effect.Effect<void, never, AgentSessionsTestControl> =>
  Effect.flatMap(Effect.service(AgentSessionsTestControl), (control) => control.setScript(script))

/**
 * Whether a value is an error of a replay (`InvalidRecording` or `ReplayMismatch`).
 *
 * @since 0.1.0
 * @category guards
 */
export const isReplayError = (u: unknown): u is ReplayError => u instanceof InvalidRecording || u instanceof ReplayMismatch

/**
 * Runs an effect against a {@link replay} and turns the defect a replay stops with (a
 * `ReplayMismatch`, or an `InvalidRecording` met mid-way) into a typed failure, for a test that
 * asserts on the difference. Other defects stay defects.
 *
 * @example
 * ```ts
 * import { AgentSessions, Answer } from "effect-agent-session-effect4"
 * import { AgentSessionsTest } from "effect-agent-session-effect4/testing"
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
  Effect.catchDefect(self, (defect) => isReplayError(defect) ? Effect.fail(defect) : Effect.die(defect))

/**
 * Replays a recorded session (the Effect 3 edition's `Recording.layer`, or
 * `effect-agent-session run --record`: one format for both editions) through the real
 * `AgentSessions` façade, without sockets: `createSession` answers what was recorded, and every
 * connection of the session is this edition's real event channel engine fed the recorded frames
 * of that connection, each after its recorded delay on the `Clock` (virtual time under the
 * `TestClock`: fork the program, advance the clock past the recording's length in steps, join
 * it: Effect 4's `TestClock.adjust` lets the program run once before it wakes the sleeps due, so
 * one call can come before the program reaches its first sleep), and
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
 * - {@link answers}, {@link sessionsCreated} and {@link connections} report what the
 *   application did, as with {@link layer}; `setScript` has no effect on a replay.
 *
 * @example
 * ```ts
 * import { AgentSessions } from "effect-agent-session-effect4"
 * import { AgentSessionsTest } from "effect-agent-session-effect4/testing"
 * import * as Effect from "effect/Effect"
 * import * as Fiber from "effect/Fiber"
 * import { TestClock } from "effect/testing"
 *
 * const test = Effect.gen(function*() {
 *   const fiber = yield* Effect.forkChild(
 *     AgentSessions.run({ start_url: "https://example.com", max_actions: 5, goal: "Read the title" })
 *   )
 *   for (let second = 0; second < 600; second++) yield* TestClock.adjust("1 second")
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
> => kitLayer(internal.makeReplay(path, options, session))
