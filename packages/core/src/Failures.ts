/**
 * The SDK's failures as both editions' error classes carry them (the same tags): the text of
 * each one's `message`, the status and message an HTTP status error has when none is given, the
 * notice of a session that may still be running, and how a failed HTTP attempt is treated (retried,
 * proving the service did not act, counted under which outcome). Each edition declares its error
 * classes with its own `Schema` and calls these from them, so an error reads and behaves the same
 * in both.
 *
 * @since 0.1.0
 */
import type { StatusKind } from "./Http.js"
import { isRetryableStatus, didNotActStatus } from "./Http.js"

// ---------------------------------------------------------------------------
// Messages
// ---------------------------------------------------------------------------

/**
 * The `message` of each error class whose message is derived from its fields, by tag. A duration
 * is given already formatted (each edition formats its own `Duration`).
 *
 * @since 0.1.0
 * @category models
 */
export const messages = {
  MissingCredentials: (e: { readonly operation: string; readonly variable: string }): string =>
    `No API key for ${e.operation}: set ${e.variable} or provide Credentials.layer({ apiKey })`,
  MissingAgentKey: (e: { readonly agentId: string }): string =>
    `Agent ${e.agentId} has no API key: the onboard response did not include one`,
  RequestTimeout: (e: { readonly operation: string; readonly timeout: string }): string =>
    `${e.operation} got no response within ${e.timeout}`,
  OutcomeUnknown: (e: {
    readonly operation: string
    readonly reason: string
    readonly detail: string
    readonly idempotencyKey: string
  }): string =>
    `${e.operation}: the request may have reached the service, so ${
      e.operation.endsWith("onboard") ? "the agent" : "the session"
    } may exist (${e.reason}: ${e.detail}); not sent again (Idempotency-Key ${e.idempotencyKey})`,
  ResponseTooLarge: (e: { readonly operation: string; readonly status: number; readonly limit: number }): string =>
    `${e.operation}: the ${e.status} response is over the limit of ${e.limit} bytes`,
  FrameTooLarge: (e: { readonly size: number; readonly limit: number }): string =>
    `Frame of ${e.size} bytes is over the limit of ${e.limit}`,
  UnknownEvent: (e: { readonly event: string }): string => `Unknown event "${e.event}" (strict mode)`,
  HandshakeRejected: (e: { readonly code: number; readonly reason: string }): string =>
    `Handshake rejected (${e.code})${withReason(e.reason)}`,
  Superseded: (e: { readonly reason: string }): string =>
    `Another connection to the session took over its event channel (close 4000)${withReason(e.reason)}`,
  ConnectTimeout: (e: { readonly timeout: string }): string => `The event channel did not open within ${e.timeout}`,
  ConnectionLost: (e: { readonly attempts: number; readonly lastError: string }): string =>
    `Connection lost after ${e.attempts} attempts: ${e.lastError}`,
  BufferOverflow: (e: { readonly limit: number }): string =>
    `The consumer fell ${e.limit} events behind on a socket that cannot pause its reading (a standard WebSocket): ` +
    `the connection was closed rather than buffer without bound; the events before it were delivered`,
  NeverConnected: (e: { readonly sessionId: string; readonly attempts: number; readonly lastError: string }): string =>
    `The event channel of session ${e.sessionId} never connected (${e.attempts} attempts): ${e.lastError}`,
  InsecureTransport: (e: { readonly url: string }): string =>
    `Refusing to send a key in clear to ${e.url}: use wss/https, or set allowInsecure`,
  RequestNotPending: (e: {
    readonly resourceType: string
    readonly actionSessionId: string
    readonly reason: (typeof notPendingReasons)[number]
  }): string =>
    e.reason === "channel-closed"
      ? `Cannot answer the ${e.resourceType} request of action session ${e.actionSessionId}: the event channel is closed`
      : `No pending ${e.resourceType} request for action session ${e.actionSessionId} (${e.reason})`,
  AnswerBufferFull: (e: { readonly limit: number }): string =>
    `${e.limit} answers are already waiting for the connection to reopen`,
  ActionBudgetExceeded: (e: { readonly sessionId: string; readonly actions: number; readonly maxActions: number }): string =>
    `Session ${e.sessionId} ran ${e.actions} actions, over its budget of ${e.maxActions}`,
  SessionEndedWithoutComplete: (e: { readonly sessionId: string; readonly lastError: string | undefined }): string =>
    `Session ${e.sessionId} ended without complete${e.lastError === undefined ? "" : `: ${e.lastError}`}`,
  InvalidRecording: (e: { readonly path: string; readonly line: number; readonly reason: string }): string =>
    `${e.path}${e.line > 0 ? `:${e.line}` : ""}: ${e.reason}`,
  ReplayMismatch: (e: {
    readonly subject: string
    readonly path: string
    readonly line: number
    readonly difference: string
  }): string => `The ${e.subject} differs from the recording (${e.path}:${e.line}): ${e.difference}`
} as const

/** `: <reason>` when there is one. */
const withReason = (reason: string): string => reason.length > 0 ? `: ${reason}` : ""

/**
 * The status and message an HTTP status error has when the constructor is not given them, by the
 * kind of its status (`Http.statusKind`). `UnexpectedStatus` has no default status: see
 * {@link unexpectedStatusMessage}.
 *
 * @since 0.1.0
 * @category models
 */
export const statusDefaults: {
  readonly [K in Exclude<StatusKind, "unexpected-status">]: { readonly status: number; readonly message: string }
} = {
  "bad-request": { status: 400, message: "the service refused the request" },
  "unauthorized": { status: 401, message: "the key is missing or invalid" },
  "forbidden": { status: 403, message: "the key may not do this" },
  "not-found": { status: 404, message: "not found" },
  "conflict": { status: 409, message: "conflict" },
  "payload-too-large": { status: 413, message: "the request body is too large" },
  "rate-limited": { status: 429, message: "rate limited" },
  "server-error": { status: 500, message: "the service failed" }
}

/**
 * The message of an `UnexpectedStatus` error when none is given.
 *
 * @since 0.1.0
 * @category models
 */
export const unexpectedStatusMessage = "unexpected status"

// ---------------------------------------------------------------------------
// A session that may still be running
// ---------------------------------------------------------------------------

/** Control characters (C0, DEL, C1, bidi controls), escaped as `\u{..}`: never raw to a terminal. */
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g

/**
 * Text with every control character (C0, DEL, C1, bidirectional controls) escaped as `\u{..}`, so
 * that text from the service printed to a terminal cannot move the cursor or reorder the line.
 *
 * @since 0.1.0
 * @category constructors
 */
export const printable = (text: string): string =>
  text.replace(CONTROL, (c) => `\\u{${c.charCodeAt(0).toString(16)}}`)

/**
 * An id as one word of a POSIX shell: bare when made of safe characters, else single-quoted (and
 * {@link printable}).
 *
 * @since 0.1.0
 * @category constructors
 */
export const shellQuoted = (id: string): string =>
  /^[A-Za-z0-9_.:@%+=,/-]+$/.test(id) ? id : `'${printable(id).replace(/'/g, "'\\''")}'`

/**
 * The orphan notice of an error, when the session it happened to may still be running (its
 * `sessionId` a string and `mayStillBeRunning` true):
 * `session <id> may still be running at the service; reattach with: effect-agent-session attach <id>`,
 * the id printable and quoted for a shell. Anything else has none.
 *
 * @since 0.1.0
 * @category accessors
 */
export const orphanNotice = (error: unknown): string | undefined => {
  if (typeof error !== "object" || error === null || !("sessionId" in error) || !("mayStillBeRunning" in error)) {
    return undefined
  }
  const { mayStillBeRunning, sessionId } = error
  return typeof sessionId === "string" && mayStillBeRunning === true
    ? `session ${printable(sessionId)} may still be running at the service; reattach with: effect-agent-session attach ${
      shellQuoted(sessionId)
    }`
    : undefined
}

/**
 * Whether a session may still be running after an error of its event channel ended the caller's
 * watch of it: yes, unless the upgrade (or the SSE `GET`) was refused with a status that says
 * there is no such session (400, 404, 410).
 *
 * @since 0.1.0
 * @category accessors
 */
export const mayStillBeRunning = (error: { readonly _tag: string; readonly code?: number }): boolean =>
  !(error._tag === "HandshakeRejected" && (error.code === 400 || error.code === 404 || error.code === 410))

// ---------------------------------------------------------------------------
// Failed HTTP attempts
// ---------------------------------------------------------------------------

/**
 * What the rules below read of an error: its tag, and the HTTP status of a status error.
 *
 * @since 0.1.0
 * @category models
 */
export interface Failure {
  readonly _tag: string
}

const statusOf = (error: Failure): number | undefined =>
  "status" in error && typeof error.status === "number" ? error.status : undefined

/** The tags of the status errors whose status decides (the others are never retried). */
const STATUS_DECIDES: ReadonlySet<string> = new Set(["RateLimited", "ServerError", "UnexpectedStatus"])

/**
 * Whether a failed attempt is worth sending again: a transport failure, a
 * time-out, and a 408, 429 or 5xx status (`Http.isRetryableStatus`).
 *
 * @since 0.1.0
 * @category guards
 */
export const isRetryable = (error: Failure): boolean => {
  if (error._tag === "TransportError" || error._tag === "RequestTimeout") return true
  const status = statusOf(error)
  return STATUS_DECIDES.has(error._tag) && status !== undefined && isRetryableStatus(status)
}

/**
 * Marks the hidden property of a request that provably never left; a `Symbol.for` key, so both
 * editions (and copies of the core) read the same mark.
 */
const NotSent: unique symbol = Symbol.for("effect-agent-session/internal/AgentApi/NotSent")

/**
 * Marks a `TransportError` as a request that provably never left when `notSent` (the `notSent` of
 * `Http.transportFailure`), for {@link didNotAct} and the rules below to read when not told. A
 * hidden property, not a field: it is not part of the error's data, and the runtime may hand the
 * error on wrapped in a proxy, which a `WeakSet` would not recognise. Returns the error.
 *
 * @since 0.1.0
 * @category constructors
 */
export const withNotSent = <E extends object>(error: E, notSent: boolean): E => {
  if (notSent) Object.defineProperty(error, NotSent, { value: true, enumerable: false })
  return error
}

/** Whether an error was marked by {@link withNotSent}. */
const markedNotSent = (error: Failure): boolean => NotSent in error && (error as { [NotSent]?: unknown })[NotSent] === true

/**
 * Whether the service cannot have acted on a failed attempt: a transport failure of a request
 * that provably never left (`notSent`; when not given, the mark of {@link withNotSent}), or a
 * status that says it did not act (`Http.didNotActStatus`: 429, 503, 408). Everything else that is
 * retryable (a time-out, a reset, 500, 502, 504) may have created what was asked.
 *
 * @since 0.1.0
 * @category guards
 */
export const didNotAct = (error: Failure, notSent: boolean = markedNotSent(error)): boolean => {
  if (error._tag === "TransportError") return notSent
  const status = statusOf(error)
  return STATUS_DECIDES.has(error._tag) && status !== undefined && didNotActStatus(status)
}

/**
 * Whether a failed attempt of a creating call (`onboard`, `createSession`) may have created
 * something: it is retryable, and the service may have acted on it ({@link didNotAct}).
 *
 * @since 0.1.0
 * @category guards
 */
export const mayHaveActed = (error: Failure, notSent: boolean = markedNotSent(error)): boolean =>
  isRetryable(error) && !didNotAct(error, notSent)

/**
 * Which failed attempts of a creating call are sent again (the create policy, docs/reliability.md):
 * `"safe"` (the default), only those the service cannot have acted on; `"idempotent"`, every
 * retryable one (with the same `Idempotency-Key`).
 *
 * @since 0.1.0
 * @category models
 */
export type CreatePolicy = "safe" | "idempotent"

/**
 * Whether a failed attempt of a creating call may be sent again under the create policy.
 *
 * @since 0.1.0
 * @category guards
 */
export const mayResend = (policy: CreatePolicy, error: Failure, notSent: boolean = markedNotSent(error)): boolean =>
  policy === "idempotent" ? isRetryable(error) : didNotAct(error, notSent)

/**
 * The outcome of an HTTP attempt as metrics count it: the status of a response, or what happened
 * instead (no response, no answer in time, a body that does not decode or is too large).
 *
 * @since 0.1.0
 * @category models
 */
export type HttpOutcome = number | "transport" | "timeout" | "decode"

/**
 * The outcome of a failed attempt: `transport`, `timeout`, `decode`, or the status of a status
 * error; `undefined` for a failure before any request was sent (invalid input, no key) and for
 * `OutcomeUnknown` (it sums attempts already counted).
 *
 * @since 0.1.0
 * @category constructors
 */
export const httpOutcome = (error: Failure): HttpOutcome | undefined => {
  switch (error._tag) {
    case "TransportError":
      return "transport"
    case "RequestTimeout":
      return "timeout"
    case "ResponseDecodeError":
    case "ResponseTooLarge":
      return "decode"
    default:
      return statusOf(error)
  }
}

/**
 * The fields of `OutcomeUnknown` for a creating call whose last attempt may have acted: the
 * operation, the `Idempotency-Key` to send it again with, the attempts made, and the last
 * attempt's error (its tag and message).
 *
 * @since 0.1.0
 * @category constructors
 */
export const outcomeUnknown = (options: {
  /** The operation of `AgentApi`, such as `createSession`. */
  readonly operation: string
  readonly idempotencyKey: string
  readonly attempts: number
  readonly error: { readonly _tag: string; readonly message: string }
}): {
  readonly operation: string
  readonly idempotencyKey: string
  readonly attempts: number
  readonly reason: string
  readonly detail: string
} => ({
  operation: `AgentApi.${options.operation}`,
  idempotencyKey: options.idempotencyKey,
  attempts: options.attempts,
  reason: options.error._tag,
  detail: options.error.message
})

/**
 * Why an answer was refused (`RequestNotPending`): no such request arrived on this
 * connection, it was answered already, or the event channel is closed.
 *
 * @since 0.1.0
 * @category models
 */
export const notPendingReasons = ["never-received", "already-answered", "channel-closed"] as const

/**
 * The error log of an answer the service refused (its `POST` answered with a status that is
 * neither success nor retryable): the request is pending again.
 *
 * @since 0.1.0
 * @category constructors
 */
export const answerRefusedLog = (message: string): string =>
  `The service refused an answer (${message}): the request is pending again`
