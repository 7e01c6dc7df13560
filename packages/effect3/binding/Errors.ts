/**
 * Every failure a caller of the SDK can meet, as `Schema.TaggedError` classes, and the named
 * unions of each operation's error channel.
 *
 * The declarations of the public module `Errors` written once for both editions: each edition's
 * `src/Errors.ts` is its entry point, re-exports them, and adds the union of every error of the
 * edition (`AgentSessionError`, its `Schema` and guard) with the errors only that edition has.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import type * as Types from "effect/Types"
import { Failures, Secrets } from "effect-agent-session-core"
import { fieldsOf, type FieldsOf } from "../src/internal/errorFields.js"
// From `lineSchema.js`, not `line.js`: `line.js` imports the edition's schema helpers, which import
// `Errors`, so these must be there while this module loads, whichever module is loaded first.
import { FiniteNumber, optionFromOptionalKey } from "../src/internal/lineSchema.js"
import * as SdkErrors from "./internal/sdkError.js"

/**
 * The `Symbol.for` key that marks every error of this SDK.
 *
 * @since 0.1.0
 * @category guards
 */
export const TypeId: unique symbol = Symbol.for("effect-agent-session/AgentSessionError")

/**
 * @since 0.1.0
 * @category guards
 */
export type TypeId = typeof TypeId

/**
 * Cuts raw text to the first 4 KiB kept on errors (`body` of HTTP errors, `raw` of frame errors),
 * never splitting a surrogate pair.
 *
 * @since 0.1.0
 * @category constructors
 */
export const truncateRaw: (text: string) => string = Secrets.truncateRaw

/**
 * Replaces every occurrence of each secret in `text` by `<redacted>`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const redactSecrets: (text: string, secrets: ReadonlyArray<string>) => string = Secrets.redactSecrets

/** The base of an error class of the SDK (see `SdkErrors.SdkError`). */
const SdkError = SdkErrors.SdkError(TypeId)

/**
 * The fields every HTTP status error carries.
 *
 * @since 0.1.0
 * @category models
 */
export const HttpErrorFields = {
  /** The HTTP status code. */
  status: FiniteNumber,
  /** The message, from `error`, `message`, `error_message`, `error_description` or the text body. */
  message: Schema.String,
  /** The first 4 KiB of the raw response body. */
  body: Schema.String,
  /** The value of the `x-request-id` (or `request-id`) response header, when present. */
  requestId: optionFromOptionalKey(Schema.String),
  /** The operation that failed, such as `AgentApi.createSession`. */
  operation: Schema.String
}

/**
 * The session an error happened to, on every error met after the session was created:
 * its id, and whether it may still be running (and paid for) at the service, so the caller can
 * `attach` to it again or stop it. Absent on errors met before a session existed.
 * @since 0.1.0
 * @category models
 */
export const SessionContext: Types.Mutable<FieldsOf<typeof Failures.sessionContextFields>> = fieldsOf(
  Failures.sessionContextFields
)

/**
 * The orphan notice of an error, when the session it happened to may still be running:
 * `session <id> may still be running at the service; reattach with: effect-agent-session attach <id>`.
 * @since 0.1.0
 * @category accessors
 */
export const orphanNotice: (error: unknown) => string | undefined = Failures.orphanNotice

// ---------------------------------------------------------------------------
// Caller input and credentials
// ---------------------------------------------------------------------------

/**
 * The caller's input did not pass validation; nothing was sent.
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidRequest extends SdkError<InvalidRequest>()("InvalidRequest") {}

/**
 * No API key was configured for an operation; nothing was sent.
 *
 * @since 0.1.0
 * @category errors
 */
export class MissingCredentials extends SdkError<MissingCredentials>()("MissingCredentials") {}

/**
 * An operation needed the agent's own key, and the onboard response carried none.
 *
 * @since 0.1.0
 * @category errors
 */
export class MissingAgentKey extends SdkError<MissingAgentKey>()("MissingAgentKey") {}

// ---------------------------------------------------------------------------
// HTTP
// ---------------------------------------------------------------------------

/**
 * 400 or 422: the service refused the request body. Not retried.
 *
 * @since 0.1.0
 * @category errors
 */
export class BadRequest extends SdkError<BadRequest>()("BadRequest") {}

/**
 * 401: the key is missing or invalid. Not retried.
 *
 * @example
 * ```ts
 * import { Errors } from "effect-agent-session"
 *
 * // As a test builds it: the fields that matter; status 401, an empty body, no request id.
 * const refused = new Errors.Unauthorized({ operation: "AgentApi.createSession" })
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class Unauthorized extends SdkError<Unauthorized>()("Unauthorized") {}

/**
 * 403: the key is valid but not allowed to do this. Not retried.
 *
 * @since 0.1.0
 * @category errors
 */
export class Forbidden extends SdkError<Forbidden>()("Forbidden") {}

/**
 * 404: the path or resource does not exist (often a dialect mismatch). Not retried.
 *
 * @since 0.1.0
 * @category errors
 */
export class NotFound extends SdkError<NotFound>()("NotFound") {}

/**
 * 409: a conflict, such as an agent name already taken. Not retried.
 *
 * @since 0.1.0
 * @category errors
 */
export class Conflict extends SdkError<Conflict>()("Conflict") {}

/**
 * 413: the request body is larger than the service accepts. Not retried.
 *
 * @since 0.1.0
 * @category errors
 */
export class PayloadTooLarge extends SdkError<PayloadTooLarge>()("PayloadTooLarge") {}

/**
 * 429: rate limited. Retried by the schedule, honouring `retryAfter`.
 *
 * @since 0.1.0
 * @category errors
 */
export class RateLimited extends SdkError<RateLimited>()("RateLimited") {}

/**
 * 5xx: the service failed. Retried by the schedule.
 *
 * @since 0.1.0
 * @category errors
 */
export class ServerError extends SdkError<ServerError>()("ServerError") {}

/**
 * Any other non-2xx status. Not retried, except 408 (Request Timeout).
 *
 * @since 0.1.0
 * @category errors
 */
export class UnexpectedStatus extends SdkError<UnexpectedStatus>()("UnexpectedStatus") {}

/**
 * The request never got a response: connection refused, reset, DNS. Retried by the schedule.
 *
 * @since 0.1.0
 * @category errors
 */
export class TransportError extends SdkError<TransportError>()("TransportError") {}

/**
 * No response within the request time-out (default 30 s). Retried by the schedule.
 *
 * @since 0.1.0
 * @category errors
 */
export class RequestTimeout extends SdkError<RequestTimeout>()("RequestTimeout") {}

/**
 * A 2xx response whose body does not match the expected shape. Not retried.
 *
 * @since 0.1.0
 * @category errors
 */
export class ResponseDecodeError extends SdkError<ResponseDecodeError>()("ResponseDecodeError") {}

/**
 * A creating request (`createSession`, `onboard`) may have reached the service and acted, and
 * its answer was lost: a time-out after the request was written, a connection reset, a 500, 502
 * or 504. The SDK does not send it again under the default create policy (a second session
 * would be paid for twice); the session (or agent) may exist. Send the same request again with
 * this `idempotencyKey` only when the service honours `Idempotency-Key`.
 * @since 0.1.0
 * @category errors
 */
export class OutcomeUnknown extends SdkError<OutcomeUnknown>()("OutcomeUnknown") {}

/**
 * A response body larger than the largest accepted (`maxResponseSize`, default 4 MiB), refused
 * while it was read: nothing past the limit was kept. Not retried.
 *
 * @since 0.1.0
 * @category errors
 */
export class ResponseTooLarge extends SdkError<ResponseTooLarge>()("ResponseTooLarge") {}

// ---------------------------------------------------------------------------
// Event channel
// ---------------------------------------------------------------------------

/**
 * A frame that is not JSON, or has no event name. The frame is reported, not dropped.
 *
 * @since 0.1.0
 * @category errors
 */
export class MalformedFrame extends SdkError<MalformedFrame>()("MalformedFrame") {}

/**
 * A frame with a known event name whose payload does not match its schema.
 *
 * @since 0.1.0
 * @category errors
 */
export class EventDecodeError extends SdkError<EventDecodeError>()("EventDecodeError") {}

/**
 * A frame larger than the largest accepted (default 1 MiB).
 *
 * @since 0.1.0
 * @category errors
 */
export class FrameTooLarge extends SdkError<FrameTooLarge>()("FrameTooLarge") {}

/**
 * An event name the SDK does not know, in strict mode only; otherwise it is the `Unrecognized` event.
 *
 * @since 0.1.0
 * @category errors
 */
export class UnknownEvent extends SdkError<UnknownEvent>()("UnknownEvent") {}

/**
 * The service refused the connection payload: HTTP 400, 401, 403, 404 or 410 at the upgrade (or
 * on the SSE `GET`), or a close code 1008, 4001, 4003, 4401 or 4403. Not retried.
 *
 * @since 0.1.0
 * @category errors
 */
export class HandshakeRejected extends SdkError<HandshakeRejected>()("HandshakeRejected") {}

/**
 * The service closed the connection because a newer connection to the same session superseded it
 * (close code 4000, "superseded": another watcher, such as an `attach` while a `run` still
 * watches, or another process, opened the session's event channel). Not retried: reconnecting
 * would take the session back from the newer watcher, which would be superseded in turn. The session goes on at the service, watched by the newer connection.
 *
 * @since 0.1.0
 * @category errors
 */
export class Superseded extends SdkError<Superseded>()("Superseded") {}

/**
 * The connection did not open within the connect time-out (default 10 s).
 *
 * @since 0.1.0
 * @category errors
 */
export class ConnectTimeout extends SdkError<ConnectTimeout>()("ConnectTimeout") {}

/**
 * The reconnect schedule was exhausted: the event stream fails with this.
 *
 * @since 0.1.0
 * @category errors
 */
export class ConnectionLost extends SdkError<ConnectionLost>()("ConnectionLost") {}

/**
 * The consumer of a connection's events fell `limit` events behind on a socket that cannot pause
 * its reading (a runtime's standard WHATWG `WebSocket`, as `FetchAgentSessions` uses): rather
 * than buffer without bound, or drop events, the connection is closed and its events fail with
 * this error after the events received before it. Never retried: a reconnect would lose what the
 * service sends meanwhile. On a socket that can pause (the `ws` package's, `NodeAgentSessions`)
 * reading pauses instead and this error never occurs.
 *
 * @example
 * ```ts
 * import { Errors } from "effect-agent-session"
 *
 * const error = new Errors.BufferOverflow({ limit: 2048 })
 * error.message // names the limit and how to avoid it
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class BufferOverflow extends SdkError<BufferOverflow>()("BufferOverflow") {}

/**
 * The event channel never opened: the first connection was refused, unresolvable, rejected at
 * the upgrade with a status that is not a refusal of the key, or did not open in time, and the
 * short first-connect retry (`firstConnect`, a few seconds by default) did not help. The reconnect
 * schedule only governs a channel that has been open, or one that `resumes` (then this is the
 * end of `reconnect`, connect time-outs retried).
 * @since 0.1.0
 * @category errors
 */
export class NeverConnected extends SdkError<NeverConnected>()("NeverConnected") {}

/**
 * A plain `ws://` or `http://` address to a host that is not loopback, without `allowInsecure`.
 *
 * @since 0.1.0
 * @category errors
 */
export class InsecureTransport extends SdkError<InsecureTransport>()("InsecureTransport") {}

/**
 * `respond` was called for a request this connection never received, or already answered, or
 * after the connection closed.
 *
 * @since 0.1.0
 * @category errors
 */
export class RequestNotPending extends SdkError<RequestNotPending>()("RequestNotPending") {}

/**
 * Too many answers are waiting for the connection to reopen (default bound 64).
 *
 * @since 0.1.0
 * @category errors
 */
export class AnswerBufferFull extends SdkError<AnswerBufferFull>()("AnswerBufferFull") {}

/**
 * A `complete` response of type `JSON` could not be parsed.
 *
 * @since 0.1.0
 * @category errors
 */
export class ResponseParseError extends SdkError<ResponseParseError>()("ResponseParseError") {}

// ---------------------------------------------------------------------------
// Session façade
// ---------------------------------------------------------------------------

/**
 * More `action_run` events arrived than the session's `max_actions`.
 *
 * @since 0.1.0
 * @category errors
 */
export class ActionBudgetExceeded extends SdkError<ActionBudgetExceeded>()("ActionBudgetExceeded") {}

/**
 * The event channel ended before `complete` without an error of its own (closed with 1000, by
 * `close`, or after an `error` event with `endOnError`), or the consumer of `events` stopped
 * before `complete`.
 *
 * @since 0.1.0
 * @category errors
 */
export class SessionEndedWithoutComplete extends SdkError<SessionEndedWithoutComplete>()("SessionEndedWithoutComplete") {}

// ---------------------------------------------------------------------------
// Recorded sessions
// ---------------------------------------------------------------------------

/**
 * A recording that cannot be replayed: not a recording of this SDK (no header, another format, a
 * newer version), or a line that is not valid (not JSON, a field of the wrong type, longer than
 * the largest line read, the file ends before the session did). It names the file and the line
 * (1-based; 0 when the file itself could not be read).
 * @since 0.1.0
 * @category errors
 */
export class InvalidRecording extends SdkError<InvalidRecording>()("InvalidRecording") {}

/**
 * A replay diverged from its recording: the application answered a request differently (or did
 * not answer it in time), created the session with another request, or opened a connection the
 * recording does not have. The events recorded after that point no longer follow, so the replay
 * stops here, with the difference.
 * @since 0.1.0
 * @category errors
 */
export class ReplayMismatch extends SdkError<ReplayMismatch>()("ReplayMismatch") {}

/**
 * The errors of a replay: the recording is not valid, or the application diverged from it. Only
 * a replay raises them (the test kit's `AgentSessionsTest.replay`, and the simulator's `Replay`
 * where the edition has one).
 * @since 0.1.0
 * @category errors
 */
export type ReplayError = InvalidRecording | ReplayMismatch

// ---------------------------------------------------------------------------
// Unions
// ---------------------------------------------------------------------------

/**
 * The errors of an HTTP status: every HTTP call of `AgentApi` can fail with each of them.
 *
 * @since 0.1.0
 * @category errors
 */
export type HttpStatusError =
  | BadRequest
  | Unauthorized
  | Forbidden
  | NotFound
  | Conflict
  | PayloadTooLarge
  | RateLimited
  | ServerError
  | UnexpectedStatus

/**
 * The errors of `Credentials.keyFor`: no key for the operation. The account key's operations
 * (`onboard`) fail only with `MissingCredentials`.
 *
 * @since 0.1.0
 * @category errors
 */
export type CredentialsError = MissingCredentials | MissingAgentKey

/**
 * The errors of `AgentApi.onboard` (and `AgentSessions.onboard`): the account key only, so no
 * `MissingAgentKey`; and, as for every creating call, no `RequestTimeout`: an attempt that timed
 * out may have created the agent, so the call fails with `OutcomeUnknown`.
 *
 * @since 0.1.0
 * @category errors
 */
export type OnboardError =
  | InvalidRequest
  | MissingCredentials
  | HttpStatusError
  | TransportError
  | ResponseDecodeError
  | ResponseTooLarge
  | OutcomeUnknown

/**
 * The errors of `AgentApi.createSession`: those of {@link OnboardError}, and `MissingAgentKey`
 * (it may use an agent's key).
 *
 * @since 0.1.0
 * @category errors
 */
export type CreateSessionError = OnboardError | MissingAgentKey

/**
 * The errors of `AgentApi.getSession`: not a creating call, so a time-out is `RequestTimeout`
 * (retried) and never `OutcomeUnknown`.
 *
 * @since 0.1.0
 * @category errors
 */
export type GetSessionError =
  | InvalidRequest
  | CredentialsError
  | HttpStatusError
  | TransportError
  | RequestTimeout
  | ResponseDecodeError
  | ResponseTooLarge

/**
 * Every error an operation of `AgentApi` can fail with: {@link OnboardError},
 * {@link CreateSessionError} and {@link GetSessionError} together. The input of the `retry`
 * schedule is one of these (the error of the failed attempt).
 *
 * @since 0.1.0
 * @category errors
 */
export type AgentApiError = OnboardError | CreateSessionError | GetSessionError

/**
 * The errors of one frame: reported in the stream, never thrown, never silently dropped.
 *
 * @since 0.1.0
 * @category errors
 */
export type FrameError = MalformedFrame | EventDecodeError | FrameTooLarge | UnknownEvent

/**
 * Every error the events of a connection (`Connection.events`) can fail with. The service's
 * `events(sessionId)` (connect and read) also fails with `InsecureTransport`. A `ConnectTimeout`
 * never ends the events: it is retried (then `ConnectionLost`), or, before the channel was ever
 * open, `NeverConnected`.
 *
 * @since 0.1.0
 * @category errors
 */
export type EventStreamError =
  | FrameError
  | CredentialsError
  | HandshakeRejected
  | Superseded
  | ConnectionLost
  | NeverConnected
  | BufferOverflow

/**
 * The errors of `respond` (`Connection.respond`, `RunningSession.respond`).
 *
 * @since 0.1.0
 * @category errors
 */
export type RespondError = RequestNotPending | AnswerBufferFull

/**
 * The errors of a running session's `events` and `outcome` (`AgentSessions`): the connection's
 * own ({@link EventStreamError}), and the session's: `ActionBudgetExceeded` (in `"fail"` mode) and
 * `SessionEndedWithoutComplete`.
 *
 * @since 0.1.0
 * @category errors
 */
export type RunningSessionError = EventStreamError | ActionBudgetExceeded | SessionEndedWithoutComplete

/**
 * The errors of `AgentSessions.start`: creating the session ({@link CreateSessionError}) and
 * connecting to it (`InsecureTransport`). `attach` fails only with `InsecureTransport`.
 *
 * @since 0.1.0
 * @category errors
 */
export type StartError = CreateSessionError | InsecureTransport

/**
 * The errors of `AgentSessions.run`, besides those of the caller's own `onRequest` and `onEvent`
 * (passed through unchanged): starting ({@link StartError}), the running session
 * ({@link RunningSessionError}), and answering the agent's requests ({@link RespondError}).
 *
 * @since 0.1.0
 * @category errors
 */
export type RunError = StartError | RunningSessionError | RespondError
