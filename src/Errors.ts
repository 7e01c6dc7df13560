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
import * as Duration from "effect/Duration"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import { Failures, Keys, Secrets } from "effect-agent-session-core"

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

/**
 * The `Duration` of a count of nanoseconds, as it was made. A zero count comes only from
 * `Duration.millis` of less than half a nanosecond, which Effect keeps as zero nanoseconds, a
 * value that hashes apart from `Duration.zero`: it is made again the same way.
 */
const fromNanos = (nanos: bigint): Duration.Duration =>
  nanos === BigInt(0) ? Duration.millis(Number.MIN_VALUE) : Duration.nanos(nanos)

/**
 * A `Duration` whose encoded form is JSON and keeps the way it was made (Effect keeps whole
 * milliseconds as such, and anything else in nanoseconds), so that it decodes to a `Duration`
 * equal to the original (`Equal.equals`, whose hash tells the two apart):
 * `{ millis: <number> }`, `{ nanos: "<integer>" }` or `"Infinity"`.
 */
const JsonDuration = Schema.transform(
  Schema.Union(
    Schema.Struct({ millis: Schema.JsonNumber.pipe(Schema.nonNegative()) }),
    Schema.Struct({ nanos: Schema.String.pipe(Schema.pattern(/^\d{1,400}$/)) }),
    Schema.Literal("Infinity")
  ),
  // Generated durations include fractional milliseconds, as a jittered wait or a time-out can be.
  Schema.DurationFromSelf.annotations({
    arbitrary: () => (fc) =>
      fc.oneof(
        fc.constant(Duration.infinity),
        fc.bigInt({ min: BigInt(0) }).map(Duration.nanos),
        fc.double({ min: 0, max: 1e15, noNaN: true }).map(Duration.millis)
      )
  }),
  {
    strict: true,
    decode: (encoded) =>
      encoded === "Infinity"
        ? Duration.infinity
        : "millis" in encoded
        ? Duration.millis(encoded.millis)
        : fromNanos(BigInt(encoded.nanos)),
    encode: (duration) => {
      const value = duration.value
      switch (value._tag) {
        case "Infinity":
          return "Infinity" as const
        case "Millis":
          return { millis: value.millis }
        case "Nanos":
          return { nanos: String(value.nanos) }
      }
    }
  }
)

/**
 * A field the constructor fills in when it is not given (decoding still requires it): errors are
 * built in tests from the fields that matter, and the SDK's own errors keep every field.
 */
const defaulted = <A, I>(schema: Schema.Schema<A, I>, value: () => A) =>
  Schema.propertySignature(schema).pipe(Schema.withConstructorDefault(value))

/**
 * An optional field that an error always holds as an own property, `undefined` when absent:
 * given as `undefined` or not given, the error is the same, and equal to itself decoded from
 * JSON (which drops `undefined`).
 */
const optionalField = <A, I>(schema: Schema.Schema<A, I>) =>
  Schema.optional(schema).pipe(Schema.withConstructorDefault((): A | undefined => undefined))

const RequestId = Schema.optionalWith(Schema.String, { as: "Option", exact: true })

/** The fields of an HTTP status error after `status` and `message`: no body, no request id by default. */
const httpDetailFields = {
  body: defaulted(Schema.String, () => ""),
  requestId: RequestId.pipe(Schema.withConstructorDefault(() => Option.none<string>())),
  operation: Schema.String
}

/** The fields of an HTTP status error, with the status and message of its kind by default. */
const httpStatusFields = (kind: keyof typeof Failures.statusDefaults) => {
  const { message, status } = Failures.statusDefaults[kind]
  return {
    status: defaulted(Schema.JsonNumber, () => status),
    message: defaulted(Schema.String, () => message),
    ...httpDetailFields
  }
}

/** `retryAfter` of a 429 or 5xx: none unless given. */
const RetryAfter = Schema.OptionFromNullOr(JsonDuration).pipe(
  Schema.propertySignature,
  Schema.withConstructorDefault(() => Option.none<Duration.Duration>())
)

/**
 * The fields every HTTP status error carries.
 *
 * @since 0.1.0
 * @category models
 */
export const HttpErrorFields = {
  /** The HTTP status code. */
  status: Schema.JsonNumber,
  /** The message, from `error`, `message`, `error_message`, `error_description` or the text body. */
  message: Schema.String,
  /** The first 4 KiB of the raw response body. */
  body: Schema.String,
  /** The value of the `x-request-id` (or `request-id`) response header, when present. */
  requestId: RequestId,
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
export const SessionContext = {
  /** The session the error happened to, when one had been created. */
  sessionId: optionalField(Schema.String),
  /** Whether the session may still be running at the service (reattach with its id). */
  mayStillBeRunning: optionalField(Schema.Boolean)
}

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
export class InvalidRequest extends Schema.TaggedError<InvalidRequest>("effect-agent-session/InvalidRequest")(
  "InvalidRequest",
  {
    /** What was being validated, such as `CreateSessionRequest`. */
    subject: Schema.String,
    /** A readable list of the problems found. */
    message: Schema.String
  }
) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
}

/**
 * No API key was configured for an operation; nothing was sent.
 *
 * @since 0.1.0
 * @category errors
 */
export class MissingCredentials
  extends Schema.TaggedError<MissingCredentials>("effect-agent-session/MissingCredentials")("MissingCredentials", {
    ...SessionContext,
    /** The operation that needed a key. */
    operation: Schema.String,
    /** The environment variable that would provide it (default `AGENT_SESSION_API_KEY`, `Credentials.ENV_API_KEY`). */
    variable: defaulted(Schema.String, () => Keys.ENV_API_KEY)
  })
{
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
  override get message(): string {
    return Failures.messages.MissingCredentials(this)
  }
}

/**
 * An operation needed the agent's own key, and the onboard response carried none.
 *
 * @since 0.1.0
 * @category errors
 */
export class MissingAgentKey
  extends Schema.TaggedError<MissingAgentKey>("effect-agent-session/MissingAgentKey")("MissingAgentKey", {
    ...SessionContext,
    agentId: Schema.String
  })
{
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
  override get message(): string {
    return Failures.messages.MissingAgentKey(this)
  }
}

// ---------------------------------------------------------------------------
// HTTP
// ---------------------------------------------------------------------------

/**
 * 400 or 422: the service refused the request body. Not retried.
 *
 * @since 0.1.0
 * @category errors
 */
export class BadRequest extends Schema.TaggedError<BadRequest>("effect-agent-session/BadRequest")(
  "BadRequest",
  httpStatusFields("bad-request")
) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
}

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
export class Unauthorized extends Schema.TaggedError<Unauthorized>("effect-agent-session/Unauthorized")(
  "Unauthorized",
  httpStatusFields("unauthorized")
) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
}

/**
 * 403: the key is valid but not allowed to do this. Not retried.
 *
 * @since 0.1.0
 * @category errors
 */
export class Forbidden extends Schema.TaggedError<Forbidden>("effect-agent-session/Forbidden")(
  "Forbidden",
  httpStatusFields("forbidden")
) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
}

/**
 * 404: the path or resource does not exist (often a dialect mismatch). Not retried.
 *
 * @since 0.1.0
 * @category errors
 */
export class NotFound extends Schema.TaggedError<NotFound>("effect-agent-session/NotFound")(
  "NotFound",
  httpStatusFields("not-found")
) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
}

/**
 * 409: a conflict, such as an agent name already taken. Not retried.
 *
 * @since 0.1.0
 * @category errors
 */
export class Conflict extends Schema.TaggedError<Conflict>("effect-agent-session/Conflict")(
  "Conflict",
  httpStatusFields("conflict")
) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
}

/**
 * 413: the request body is larger than the service accepts. Not retried.
 *
 * @since 0.1.0
 * @category errors
 */
export class PayloadTooLarge extends Schema.TaggedError<PayloadTooLarge>("effect-agent-session/PayloadTooLarge")(
  "PayloadTooLarge",
  httpStatusFields("payload-too-large")
) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
}

/**
 * 429: rate limited. Retried by the schedule, honouring `retryAfter`.
 *
 * @since 0.1.0
 * @category errors
 */
export class RateLimited extends Schema.TaggedError<RateLimited>("effect-agent-session/RateLimited")(
  "RateLimited",
  {
    ...httpStatusFields("rate-limited"),
    /** From `retry-after-ms` or `Retry-After` (seconds or an HTTP date), when present. */
    retryAfter: RetryAfter
  }
) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
}

/**
 * 5xx: the service failed. Retried by the schedule.
 *
 * @since 0.1.0
 * @category errors
 */
export class ServerError extends Schema.TaggedError<ServerError>("effect-agent-session/ServerError")(
  "ServerError",
  {
    ...httpStatusFields("server-error"),
    /** From `Retry-After` on a 503, when present. */
    retryAfter: RetryAfter
  }
) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
}

/**
 * Any other non-2xx status. Not retried, except 408 (Request Timeout).
 *
 * @since 0.1.0
 * @category errors
 */
export class UnexpectedStatus extends Schema.TaggedError<UnexpectedStatus>("effect-agent-session/UnexpectedStatus")(
  "UnexpectedStatus",
  { status: Schema.JsonNumber, message: defaulted(Schema.String, () => Failures.unexpectedStatusMessage), ...httpDetailFields }
) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
}

/**
 * The request never got a response: connection refused, reset, DNS. Retried by the schedule.
 *
 * @since 0.1.0
 * @category errors
 */
export class TransportError extends Schema.TaggedError<TransportError>("effect-agent-session/TransportError")(
  "TransportError",
  {
    operation: Schema.String,
    /** What the transport said, with any key removed. */
    message: Schema.String
  }
) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
}

/**
 * No response within the request time-out (default 30 s). Retried by the schedule.
 *
 * @since 0.1.0
 * @category errors
 */
export class RequestTimeout extends Schema.TaggedError<RequestTimeout>("effect-agent-session/RequestTimeout")(
  "RequestTimeout",
  {
    operation: Schema.String,
    /** The time-out of the attempt (default 30 s, `AgentApi.defaultTimeout`). */
    timeout: defaulted(JsonDuration, () => Duration.seconds(30))
  }
) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
  override get message(): string {
    return Failures.messages.RequestTimeout({ operation: this.operation, timeout: Duration.format(this.timeout) })
  }
}

/**
 * A 2xx response whose body does not match the expected shape. Not retried.
 *
 * @since 0.1.0
 * @category errors
 */
export class ResponseDecodeError
  extends Schema.TaggedError<ResponseDecodeError>("effect-agent-session/ResponseDecodeError")("ResponseDecodeError", {
    operation: Schema.String,
    /** The 2xx status (default 200). */
    status: defaulted(Schema.JsonNumber, () => 200),
    message: Schema.String,
    /** The first 4 KiB of the raw body (default empty). */
    body: defaulted(Schema.String, () => "")
  })
{
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
}

/**
 * A creating request (`createSession`, `onboard`) may have reached the service and acted, and
 * its answer was lost: a time-out after the request was written, a connection reset, a 500, 502
 * or 504. The SDK does not send it again under the default create policy (a second session
 * would be paid for twice); the session (or agent) may exist. Send the same request again with
 * this `idempotencyKey` only when the service honours `Idempotency-Key`.
 * @since 0.1.0
 * @category errors
 */
export class OutcomeUnknown extends Schema.TaggedError<OutcomeUnknown>("effect-agent-session/OutcomeUnknown")(
  "OutcomeUnknown",
  {
    /** The operation, such as `AgentApi.createSession`. */
    operation: Schema.String,
    /** The `Idempotency-Key` header every attempt of the call carried. */
    idempotencyKey: Schema.String,
    /** How many attempts were sent (default 1). */
    attempts: defaulted(Schema.JsonNumber, () => 1),
    /** The tag of the last attempt's error, such as `RequestTimeout` or `ServerError`. */
    reason: Schema.String,
    /** The last attempt's error message, keys removed (default empty). */
    detail: defaulted(Schema.String, () => "")
  }
) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
  override get message(): string {
    return Failures.messages.OutcomeUnknown(this)
  }
}

/**
 * A response body larger than the largest accepted (`maxResponseSize`, default 4 MiB), refused
 * while it was read: nothing past the limit was kept. Not retried.
 *
 * @since 0.1.0
 * @category errors
 */
export class ResponseTooLarge
  extends Schema.TaggedError<ResponseTooLarge>("effect-agent-session/ResponseTooLarge")("ResponseTooLarge", {
    operation: Schema.String,
    /** The HTTP status of the response (default 200). */
    status: defaulted(Schema.JsonNumber, () => 200),
    /** The bytes read (or announced by `content-length`) when it was refused: over `limit`. */
    size: Schema.JsonNumber,
    /** The limit in bytes. */
    limit: Schema.JsonNumber
  })
{
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
  override get message(): string {
    return Failures.messages.ResponseTooLarge(this)
  }
}

// ---------------------------------------------------------------------------
// Event channel
// ---------------------------------------------------------------------------

/**
 * A frame that is not JSON, or has no event name. The frame is reported, not dropped.
 *
 * @since 0.1.0
 * @category errors
 */
export class MalformedFrame extends Schema.TaggedError<MalformedFrame>("effect-agent-session/MalformedFrame")(
  "MalformedFrame",
  {
    ...SessionContext,
    /** The first 4 KiB of the frame (default empty). */
    raw: defaulted(Schema.String, () => ""),
    message: Schema.String
  }
) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
}

/**
 * A frame with a known event name whose payload does not match its schema.
 *
 * @since 0.1.0
 * @category errors
 */
export class EventDecodeError extends Schema.TaggedError<EventDecodeError>("effect-agent-session/EventDecodeError")(
  "EventDecodeError",
  {
    ...SessionContext,
    /** The wire event name. */
    event: Schema.String,
    /** The first 4 KiB of the frame (default empty). */
    raw: defaulted(Schema.String, () => ""),
    message: Schema.String
  }
) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
}

/**
 * A frame larger than the largest accepted (default 1 MiB).
 *
 * @since 0.1.0
 * @category errors
 */
export class FrameTooLarge extends Schema.TaggedError<FrameTooLarge>("effect-agent-session/FrameTooLarge")(
  "FrameTooLarge",
  {
    ...SessionContext,
    /**
     * The size of the frame in bytes (UTF-16 code units for text frames); for a frame refused
     * while it was read (never read whole), the size read when it went over the limit.
     */
    size: Schema.JsonNumber,
    limit: Schema.JsonNumber
  }
) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
  override get message(): string {
    return Failures.messages.FrameTooLarge(this)
  }
}

/**
 * An event name the SDK does not know, in strict mode only; otherwise it is the `Unrecognized` event.
 *
 * @since 0.1.0
 * @category errors
 */
export class UnknownEvent extends Schema.TaggedError<UnknownEvent>("effect-agent-session/UnknownEvent")(
  "UnknownEvent",
  {
    ...SessionContext,
    event: Schema.String,
    /** The first 4 KiB of the frame (default empty). */
    raw: defaulted(Schema.String, () => "")
  }
) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
  override get message(): string {
    return Failures.messages.UnknownEvent(this)
  }
}

/**
 * The service refused the connection payload: HTTP 400, 401, 403, 404 or 410 at the upgrade (or
 * on the SSE `GET`), or a close code 1008, 4001, 4003, 4401 or 4403. Not retried.
 *
 * @since 0.1.0
 * @category errors
 */
export class HandshakeRejected extends Schema.TaggedError<HandshakeRejected>("effect-agent-session/HandshakeRejected")(
  "HandshakeRejected",
  {
    ...SessionContext,
    /** The HTTP status or WebSocket close code. */
    code: Schema.JsonNumber,
    /** The status text or close reason, keys scrubbed (default empty). */
    reason: defaulted(Schema.String, () => "")
  }
) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
  override get message(): string {
    return Failures.messages.HandshakeRejected(this)
  }
}

/**
 * The service closed the connection because a newer connection to the same session superseded it
 * (close code 4000, "superseded": another watcher, such as an `attach` while a `run` still
 * watches, or another process, opened the session's event channel). Not retried: reconnecting
 * would take the session back from the newer watcher, which would be superseded in turn. The session goes on at the service, watched by the newer connection.
 *
 * @since 0.1.0
 * @category errors
 */
export class Superseded extends Schema.TaggedError<Superseded>("effect-agent-session/Superseded")(
  "Superseded",
  {
    ...SessionContext,
    /** The close reason the service gave, keys scrubbed (default empty). */
    reason: defaulted(Schema.String, () => "")
  }
) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
  override get message(): string {
    return Failures.messages.Superseded(this)
  }
}

/**
 * The connection did not open within the connect time-out (default 10 s).
 *
 * @since 0.1.0
 * @category errors
 */
export class ConnectTimeout extends Schema.TaggedError<ConnectTimeout>("effect-agent-session/ConnectTimeout")(
  "ConnectTimeout",
  {
    ...SessionContext,
    /** The connect time-out (default 10 s). */
    timeout: defaulted(JsonDuration, () => Duration.seconds(10))
  }
) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
  override get message(): string {
    return Failures.messages.ConnectTimeout({ timeout: Duration.format(this.timeout) })
  }
}

/**
 * The reconnect schedule was exhausted: the event stream fails with this.
 *
 * @since 0.1.0
 * @category errors
 */
export class ConnectionLost extends Schema.TaggedError<ConnectionLost>("effect-agent-session/ConnectionLost")(
  "ConnectionLost",
  {
    ...SessionContext,
    /**
     * How many connection attempts failed in a row at the end: since the last attempt that
     * delivered an event (keep-alives do not count), that dropped attempt included.
     */
    attempts: Schema.JsonNumber,
    /** What ended the last attempt. */
    lastError: Schema.String
  }
) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
  override get message(): string {
    return Failures.messages.ConnectionLost(this)
  }
}

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
export class BufferOverflow extends Schema.TaggedError<BufferOverflow>("effect-agent-session/BufferOverflow")(
  "BufferOverflow",
  {
    ...SessionContext,
    /** How many events were waiting for the consumer (twice the connection's `bufferSize`). */
    limit: Schema.JsonNumber
  }
) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
  override get message(): string {
    return Failures.messages.BufferOverflow(this)
  }
}

/**
 * The event channel never opened: the first connection was refused, unresolvable, rejected at
 * the upgrade with a status that is not a refusal of the key, or did not open in time, and the
 * short first-connect retry (`firstConnect`, a few seconds by default) did not help. The reconnect
 * schedule only governs a channel that has been open.
 * @since 0.1.0
 * @category errors
 */
export class NeverConnected extends Schema.TaggedError<NeverConnected>("effect-agent-session/NeverConnected")(
  "NeverConnected",
  {
    mayStillBeRunning: SessionContext.mayStillBeRunning,
    /** The session the channel was for. */
    sessionId: Schema.String,
    /** How many connection attempts were made. */
    attempts: Schema.JsonNumber,
    /** What ended the last attempt (an open failure, a time-out, a status). */
    lastError: Schema.String
  }
) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
  override get message(): string {
    return Failures.messages.NeverConnected(this)
  }
}

/**
 * A plain `ws://` or `http://` address to a host that is not loopback, without `allowInsecure`.
 *
 * @since 0.1.0
 * @category errors
 */
export class InsecureTransport extends Schema.TaggedError<InsecureTransport>("effect-agent-session/InsecureTransport")(
  "InsecureTransport",
  {
    /** The address, without its query string. */
    url: Schema.String
  }
) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
  override get message(): string {
    return Failures.messages.InsecureTransport(this)
  }
}

/**
 * `respond` was called for a request this connection never received, or already answered, or
 * after the connection closed.
 *
 * @since 0.1.0
 * @category errors
 */
export class RequestNotPending extends Schema.TaggedError<RequestNotPending>("effect-agent-session/RequestNotPending")(
  "RequestNotPending",
  {
    resourceType: Schema.String,
    actionSessionId: Schema.String,
    /**
     * `never-received`: no such request arrived on this connection; `already-answered`: it was
     * answered; `channel-closed`: the connection is closed, nothing can be sent any more.
     */
    reason: Schema.Literal(...Failures.notPendingReasons)
  }
) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
  override get message(): string {
    return Failures.messages.RequestNotPending(this)
  }
}

/**
 * Too many answers are waiting for the connection to reopen (default bound 64).
 *
 * @since 0.1.0
 * @category errors
 */
export class AnswerBufferFull extends Schema.TaggedError<AnswerBufferFull>("effect-agent-session/AnswerBufferFull")(
  "AnswerBufferFull",
  {
    /** The `answerBufferSize` (default 64). */
    limit: defaulted(Schema.JsonNumber, () => 64)
  }
) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
  override get message(): string {
    return Failures.messages.AnswerBufferFull(this)
  }
}

/**
 * A `complete` response of type `JSON` could not be parsed.
 *
 * @since 0.1.0
 * @category errors
 */
export class ResponseParseError extends Schema.TaggedError<ResponseParseError>("effect-agent-session/ResponseParseError")(
  "ResponseParseError",
  {
    raw: Schema.String,
    message: Schema.String
  }
) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
}

// ---------------------------------------------------------------------------
// Session façade
// ---------------------------------------------------------------------------

/**
 * More `action_run` events arrived than the session's `max_actions`.
 *
 * @since 0.1.0
 * @category errors
 */
export class ActionBudgetExceeded
  extends Schema.TaggedError<ActionBudgetExceeded>("effect-agent-session/ActionBudgetExceeded")("ActionBudgetExceeded", {
    mayStillBeRunning: SessionContext.mayStillBeRunning,
    sessionId: Schema.String,
    maxActions: Schema.JsonNumber,
    actions: Schema.JsonNumber
  })
{
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
  override get message(): string {
    return Failures.messages.ActionBudgetExceeded(this)
  }
}

/**
 * The event channel ended before `complete` without an error of its own (closed with 1000, by
 * `close`, or after an `error` event with `endOnError`), or the consumer of `events` stopped
 * before `complete`.
 *
 * @since 0.1.0
 * @category errors
 */
export class SessionEndedWithoutComplete
  extends Schema.TaggedError<SessionEndedWithoutComplete>("effect-agent-session/SessionEndedWithoutComplete")(
    "SessionEndedWithoutComplete",
    {
      mayStillBeRunning: SessionContext.mayStillBeRunning,
      sessionId: Schema.String,
      /** The message of the last `error` event received, if any (default none). */
      lastError: Schema.OptionFromNullOr(Schema.String).pipe(
        Schema.propertySignature,
        Schema.withConstructorDefault(() => Option.none<string>())
      )
    }
  )
{
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
  override get message(): string {
    return Failures.messages.SessionEndedWithoutComplete({ sessionId: this.sessionId, lastError: Option.getOrUndefined(this.lastError) })
  }
}

// ---------------------------------------------------------------------------
// Recorded sessions: `Recording`, `AgentSessionsTest.replay`, `Replay` (simulator)
// ---------------------------------------------------------------------------

/**
 * A recording could not be written: its file could not be opened or written, or the writer fell
 * more than `bufferSize` bytes behind the session. The session itself went on: the recording
 * stops, and `Recorder.flush` (and the layer, when the file cannot be opened) fails with this.
 * @since 0.1.0
 * @category errors
 */
export class RecordingFailed extends Schema.TaggedError<RecordingFailed>("effect-agent-session/RecordingFailed")(
  "RecordingFailed",
  {
    /** The recording's file. */
    path: Schema.String,
    /** What failed, keys removed. */
    message: Schema.String,
    /** The records written to the file before it failed. */
    written: Schema.JsonNumber
  }
) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
}

/**
 * A recording that cannot be replayed: not a recording of this SDK (no header, another format, a
 * newer version), or a line that is not valid (not JSON, a field of the wrong type, longer than
 * the largest line read, the file ends before the session did). `line` names it (1-based).
 * @since 0.1.0
 * @category errors
 */
export class InvalidRecording extends Schema.TaggedError<InvalidRecording>("effect-agent-session/InvalidRecording")(
  "InvalidRecording",
  {
    /** The recording's file. */
    path: Schema.String,
    /** The line (1-based) that is wrong; 0 when the file itself could not be read. */
    line: Schema.JsonNumber,
    /** What is wrong with it. */
    reason: Schema.String
  }
) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
  override get message(): string {
    return Failures.messages.InvalidRecording(this)
  }
}

/**
 * A replay diverged from its recording: the application answered a request differently (or did
 * not answer it in time), created the session with another request, or opened a connection the
 * recording does not have. The events recorded after that point no longer follow, so the replay
 * stops here, with the difference.
 * @since 0.1.0
 * @category errors
 */
export class ReplayMismatch extends Schema.TaggedError<ReplayMismatch>("effect-agent-session/ReplayMismatch")(
  "ReplayMismatch",
  {
    /** The recording's file. */
    path: Schema.String,
    /** The line (1-based) of the recorded step the application did not follow. */
    line: Schema.JsonNumber,
    /** What differed: `answer`, `create` or `connection`. */
    subject: Schema.Literal("answer", "create", "connection"),
    /** What the recording has there (JSON, or a description). */
    expected: Schema.String,
    /** What the application did (JSON, or a description). */
    actual: Schema.String,
    /** The differences, one per line (`field: expected X, got Y`). */
    difference: Schema.String
  }
) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
  override get message(): string {
    return Failures.messages.ReplayMismatch(this)
  }
}

/**
 * The errors of a replay: the recording is not valid, or the application diverged from it. Only
 * the replay layers raise them (`AgentSessionsTest.replay`, the simulator's `Replay`); they are
 * part of {@link EventStreamError} because a replayed event stream ends with them.
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

/**
 * Every error class of this SDK: the errors of every operation, `ConnectTimeout` (the input
 * of the reconnect schedule) and `ResponseParseError` (of `SessionEvent.parseJsonResponse`). The
 * cluster edition's own errors are in `effect-agent-session/cluster` (`ClusterErrors`).
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
export const AgentSessionError = Schema.Union(
  InvalidRequest,
  MissingCredentials,
  MissingAgentKey,
  BadRequest,
  Unauthorized,
  Forbidden,
  NotFound,
  Conflict,
  PayloadTooLarge,
  RateLimited,
  ServerError,
  UnexpectedStatus,
  TransportError,
  RequestTimeout,
  ResponseDecodeError,
  OutcomeUnknown,
  ResponseTooLarge,
  MalformedFrame,
  EventDecodeError,
  FrameTooLarge,
  UnknownEvent,
  HandshakeRejected,
  Superseded,
  ConnectTimeout,
  ConnectionLost,
  NeverConnected,
  BufferOverflow,
  InsecureTransport,
  RequestNotPending,
  AnswerBufferFull,
  ResponseParseError,
  ActionBudgetExceeded,
  SessionEndedWithoutComplete,
  RecordingFailed,
  InvalidRecording,
  ReplayMismatch
)

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
