/**
 * The types of the test kit (`AgentSessionsTest`'s `Step`, `RecordedAnswer`, `Control`,
 * `Options` and `ReplayOptions`) and the tag of its control, written below the in-memory services
 * and the scripted channel that use them so that every import runs one way. Re-exported by
 * `AgentSessionsTest`.
 */
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import { type KitReplay, type KitScript, Script } from "effect-agent-session-shell"
import type { OnboardRequest } from "../../../src/Agent.js"
import type * as Answer from "../../../src/Answer.js"
import type { CreateSessionError, EventStreamError, OnboardError } from "../../../src/Errors.js"
import type { CreateSessionRequest } from "../../../src/Session.js"
import type * as SessionEvent from "../../../src/SessionEvent.js"
import { durationOf, type DurationInput, ServiceTag } from "../../../src/internal/line.js"

/**
 * One step of a script: emit an event, fail the stream with a typed error, wait (virtual time
 * under `TestClock`), wait for the answer to the latest request, or end the connection.
 *
 * @since 0.1.0
 * @category models
 */
export type Step = Script.Step<SessionEvent.SessionEvent, EventStreamError, Duration.Duration>

/**
 * Step constructors.
 *
 * @since 0.1.0
 * @category constructors
 */
export const Step: Script.Steps<SessionEvent.SessionEvent, EventStreamError, Duration.Duration> & {
  /** Waits, on the `TestClock` in tests. */
  readonly sleep: (duration: DurationInput) => Step
} = {
  ...Script.steps(),
  sleep: (duration) => ({ _tag: "Sleep", duration: durationOf(duration) })
}

/**
 * An answer the application gave, with the request it answered (the core's `KitScript.RecordedAnswer`).
 *
 * @since 0.1.0
 * @category models
 */
export type RecordedAnswer = KitScript.RecordedAnswer<SessionEvent.ExternalResourceRequested, Answer.Answer>

/**
 * What the test can inspect and steer.
 *
 * @since 0.1.0
 * @category models
 */
export interface Control {
  /** Every answer the application gave, in order. */
  readonly answers: Effect.Effect<ReadonlyArray<RecordedAnswer>>
  /** The connections opened, by session id. */
  readonly connections: Effect.Effect<ReadonlyArray<string>>
  /** Every create-session request the application made (validated). */
  readonly sessionsCreated: Effect.Effect<ReadonlyArray<CreateSessionRequest>>
  /** Every onboard request the application made (validated). */
  readonly agentsOnboarded: Effect.Effect<ReadonlyArray<OnboardRequest>>
  /** Makes the next create-session call fail with this error (one `createSession` can fail with). */
  readonly failNextCreate: (error: CreateSessionError) => Effect.Effect<void>
  /** Makes the next onboard call fail with this error (one `onboard` can fail with). */
  readonly failNextOnboard: (error: OnboardError) => Effect.Effect<void>
  /** The script of the sessions created from now on. */
  readonly script: Effect.Effect<ReadonlyArray<Step>>
  /** Replaces the script of the sessions created from now on. */
  readonly setScript: (script: ReadonlyArray<Step>) => Effect.Effect<void>
}

/**
 * The control of the test layer.
 *
 * @since 0.1.0
 * @category tags
 */
export class AgentSessionsTestControl extends ServiceTag<AgentSessionsTestControl, Control>()(
  "effect-agent-session/testing/AgentSessionsTestControl"
) {}

/**
 * Options of the test layer (the core's `KitScript.Options`): the script every session follows
 * (default `AgentSessionsTest.session()`), the session id given to created sessions (default
 * `"test-session"`, then `"test-session-2"`, ...).
 *
 * @since 0.1.0
 * @category models
 */
export type Options = KitScript.Options<Step>

/**
 * Options of `AgentSessionsTest.replay` (the core's `KitReplay.KitOptions`): the answer timeout
 * (virtual time, default 30 s), the `redact` the recording was made with, the longest line read.
 *
 * @since 0.1.0
 * @category models
 */
export type ReplayOptions = KitReplay.KitOptions<DurationInput>

/** The scripted world of a test layer (the core's `Script.World`): its script, requests, errors and answers. */
export type World = Script.World<{
  readonly step: Step
  readonly onboard: OnboardRequest
  readonly create: CreateSessionRequest
  readonly onboardError: OnboardError
  readonly createError: CreateSessionError
  readonly answer: RecordedAnswer
}>
