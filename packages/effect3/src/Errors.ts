/**
 * Every failure a caller of the SDK can meet, as `Schema.TaggedError` classes. Each operation's
 * error channel is the exact union of what it can fail with, built from the named unions here
 * ({@link OnboardError}, {@link CreateSessionError}, {@link EventStreamError}, {@link RespondError},
 * {@link RunError}, ...; docs/errors.md has the table). {@link AgentSessionError} is the union of
 * all of them, with one guard, {@link isAgentSessionError}, and a `Schema` that encodes any of
 * them to JSON and back. The constructors need only the fields that matter: the rest (no body,
 * no request id, the status of the class) are filled in.
 *
 * No error carries an API key: messages and bodies pass through {@link redactSecrets} where a
 * secret could appear, and no error keeps a request object or headers.
 *
 * @since 0.1.0
 */
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import { Failures } from "effect-agent-session-core"
import {
  type AgentApiError,
  type ConnectTimeout,
  type ReplayError,
  type ResponseParseError,
  type RunError,
  TypeId
} from "../binding/Errors.js"
import { errorClasses } from "../binding/internal/errorClasses.js"
import * as SdkErrors from "../binding/internal/sdkError.js"

export * from "../binding/Errors.js"

/** The base of an error class of the SDK (see `SdkErrors.SdkError`). */
const SdkError = SdkErrors.SdkError(TypeId)

// ---------------------------------------------------------------------------
// Recorded sessions: `Recording` writes them
// ---------------------------------------------------------------------------

/**
 * A recording could not be written: its file could not be opened or written, or the writer fell
 * more than `bufferSize` bytes behind the session. The session itself went on: the recording
 * stops, and `Recorder.flush` (and the layer, when the file cannot be opened) fails with this.
 * @since 0.1.0
 * @category errors
 */
export class RecordingFailed extends SdkError<RecordingFailed>()("RecordingFailed") {}

// ---------------------------------------------------------------------------
// Every error of this edition
// ---------------------------------------------------------------------------

/**
 * Every error class of this SDK: the errors of every operation, `ConnectTimeout` (the input
 * of the reconnect schedule) and `ResponseParseError` (of `SessionEvent.parseJsonResponse`). The
 * cluster edition's own errors are in `effect-agent-session-cluster` (`ClusterErrors`).
 *
 * @since 0.1.0
 * @category errors
 */
export type AgentSessionError =
  | AgentApiError
  | RunError
  | ConnectTimeout
  | ResponseParseError
  | RecordingFailed
  | ReplayError

/**
 * Every error class, by tag: for documentation, exhaustive tests and `Schema` encoding.
 *
 * @since 0.1.0
 * @category errors
 */
export const AgentSessionError = Schema.Union(...errorClasses, RecordingFailed)

/**
 * Whether a value is one of this SDK's errors.
 *
 * @example
 * ```ts
 * import { Errors } from "effect-agent-session"
 * import { Duration } from "effect"
 *
 * Errors.isAgentSessionError(new Errors.ConnectTimeout({ timeout: Duration.seconds(10) })) // true
 * ```
 *
 * @since 0.1.0
 * @category guards
 */
export const isAgentSessionError = (u: unknown): u is AgentSessionError => Predicate.hasProperty(u, TypeId)

/**
 * Whether an error is worth retrying by the HTTP schedule: transport errors,
 * time-outs, 408, 429 and 5xx.
 *
 * @since 0.1.0
 * @category guards
 */
export const isRetryable: (error: AgentSessionError) => boolean = Failures.isRetryable
