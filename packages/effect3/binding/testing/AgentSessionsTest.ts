/**
 * Test your own application without a network: in-memory `AgentApi`, `EventStream` and
 * `Credentials` driven by a script of events, under the real `AgentSessions` façade. No sockets;
 * `sleep` steps follow the `TestClock`.
 *
 * The declarations of the public module `AgentSessionsTest` written once for both editions (but
 * the replay's, whose documentation differs by edition): each edition's
 * `src/testing/AgentSessionsTest.ts` is its entry point and re-exports them.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { Script } from "effect-agent-session-shell"
import type { OnboardRequest } from "../../src/Agent.js"
import type { AgentApi } from "../../src/AgentApi.js"
import type * as AgentSessions from "../../src/AgentSessions.js"
import type * as Credentials from "../../src/Credentials.js"
import { type CreateSessionError, InvalidRecording, type OnboardError, type ReplayError, ReplayMismatch } from "../../src/Errors.js"
import type * as EventStream from "../../src/EventStream.js"
import { optionFromNullable, service } from "../../src/internal/line.js"
import { ActionSessionId, type CreateSessionRequest, SessionId } from "../../src/Session.js"
import type * as SessionEvent from "../../src/SessionEvent.js"
import * as internal from "../internal/testing/inMemory.js"
import { AgentSessionsTestControl, Step } from "../internal/testing/kitTypes.js"
import type { Options, RecordedAnswer } from "../internal/testing/kitTypes.js"

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
} from "../internal/testing/kitTypes.js"

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
} from "../internal/testing/kitTypes.js"

export {
  /**
   * The control of the test layer.
   *
   * @since 0.1.0
   * @category tags
   */
  AgentSessionsTestControl
} from "../internal/testing/kitTypes.js"

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
        field_name: optionFromNullable(event.field_name)
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
> => internal.kitLayer(internal.makeServices(options, session))

/**
 * The answers the application gave so far.
 *
 * @since 0.1.0
 * @category accessors
 */
export const answers: Effect.Effect<ReadonlyArray<RecordedAnswer>, never, AgentSessionsTestControl> = Effect.flatMap(
  service(AgentSessionsTestControl),
  (control) => control.answers
)

/**
 * The session ids the application connected to so far, in order.
 *
 * @since 0.1.0
 * @category accessors
 */
export const connections: Effect.Effect<ReadonlyArray<string>, never, AgentSessionsTestControl> = Effect.flatMap(
  service(AgentSessionsTestControl),
  (control) => control.connections
)

/**
 * The create-session requests the application made so far.
 *
 * @since 0.1.0
 * @category accessors
 */
export const sessionsCreated: Effect.Effect<ReadonlyArray<CreateSessionRequest>, never, AgentSessionsTestControl> =
  Effect.flatMap(service(AgentSessionsTestControl), (control) => control.sessionsCreated)

/**
 * The onboard requests the application made so far.
 *
 * @since 0.1.0
 * @category accessors
 */
export const agentsOnboarded: Effect.Effect<ReadonlyArray<OnboardRequest>, never, AgentSessionsTestControl> =
  Effect.flatMap(service(AgentSessionsTestControl), (control) => control.agentsOnboarded)

/**
 * Makes the next create-session call fail with a typed error.
 *
 * @since 0.1.0
 * @category combinators
 */
export const failNextCreate = (error: CreateSessionError): Effect.Effect<void, never, AgentSessionsTestControl> =>
  Effect.flatMap(service(AgentSessionsTestControl), (control) => control.failNextCreate(error))

/**
 * Makes the next onboard call fail with a typed error.
 *
 * @since 0.1.0
 * @category combinators
 */
export const failNextOnboard = (error: OnboardError): Effect.Effect<void, never, AgentSessionsTestControl> =>
  Effect.flatMap(service(AgentSessionsTestControl), (control) => control.failNextOnboard(error))

/**
 * Replaces the script of the sessions created from now on.
 *
 * @since 0.1.0
 * @category combinators
 */
export const setScript = (script: ReadonlyArray<Step>): Effect.Effect<void, never, AgentSessionsTestControl> =>
  Effect.flatMap(service(AgentSessionsTestControl), (control) => control.setScript(script))

/**
 * Whether a value is an error of a replay (`InvalidRecording` or `ReplayMismatch`).
 *
 * @since 0.1.0
 * @category guards
 */
export const isReplayError = (u: unknown): u is ReplayError => u instanceof InvalidRecording || u instanceof ReplayMismatch
