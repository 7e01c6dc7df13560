/**
 * The SDK's failures as both editions' error classes carry them (the same tags): the fields of
 * each one ({@link errorFields}, plain data), the text of its `message`, the status and message an
 * HTTP status error has when none is given, the notice of a session that may still be running, and
 * how a failed HTTP attempt is treated (retried, proving the service did not act, counted under
 * which outcome). Each edition binds the table to its own `Schema` in one builder, so an error has
 * the same fields and reads and behaves the same in both.
 *
 * @since 0.1.0
 */
import { printable, shellQuoted } from "./internal/text.js"
import type { StatusKind } from "./Http.js"
import { isRetryableStatus, didNotActStatus } from "./Http.js"
import { ENV_API_KEY } from "./Keys.js"

// ---------------------------------------------------------------------------
// Messages
// ---------------------------------------------------------------------------

/**
 * The `message` of each error class whose message is derived from its fields ({@link errorFields}),
 * by tag; the others have a `message` field. A duration is given already formatted (each edition
 * formats its own `Duration`), an `Option` as its value or `undefined` ({@link View}).
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
  // The difference before the recording's place: a WebSocket close reason (123 bytes) carries the
  // message to the client cut, and the path is the replaying machine's, of any length.
  ReplayMismatch: (e: {
    readonly subject: string
    readonly path: string
    readonly line: number
    readonly difference: string
  }): string => `The ${e.subject} differs from the recording: ${e.difference} (${e.path}:${e.line})`
} as const satisfies { readonly [Tag in ErrorTag]?: (error: View<Tag>) => string }

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

// ---------------------------------------------------------------------------
// The fields of each error
// ---------------------------------------------------------------------------

/**
 * One field of an error class, as plain data each edition binds to its own `Schema`:
 * - `type`: what it holds: text, a number, a boolean, a duration (each edition's `Duration`,
 *   encoded as JSON), or one of a list of strings;
 * - `default`: the value the constructor fills in when the field is not given (a duration in
 *   milliseconds); decoding still requires it;
 * - `absent`: a field that may be missing: `"undefined"`, held as an own property `undefined`
 *   (and left out of the encoded form); `"option-key"`, an `Option`, none unless given, encoded as
 *   an optional key; `"option-null"`, an `Option`, none unless given, encoded as `null`.
 *
 * @since 0.1.0
 * @category models
 */
export interface Field {
  readonly type: "string" | "number" | "boolean" | "duration" | readonly [string, ...Array<string>]
  readonly default?: string | number
  readonly absent?: "undefined" | "option-key" | "option-null"
}

/**
 * The fields of one error class, in the order they are encoded.
 *
 * @since 0.1.0
 * @category models
 */
export type Fields = { readonly [name: string]: Field }

const text = { type: "string" } as const
const number = { type: "number" } as const
const textOr = <const D extends string>(value: D) => ({ type: "string", default: value }) as const
const numberOr = <const D extends number>(value: D) => ({ type: "number", default: value }) as const
const durationOr = <const D extends number>(millis: D) => ({ type: "duration", default: millis }) as const

/**
 * The session an error happened to, on every error met after the session was created: its id,
 * and whether it may still be running (and paid for) at the service. Absent on errors met before
 * a session existed.
 *
 * @since 0.1.0
 * @category models
 */
export const sessionContextFields = {
  /** The session the error happened to, when one had been created. */
  sessionId: { type: "string", absent: "undefined" },
  /** Whether the session may still be running at the service (reattach with its id). */
  mayStillBeRunning: { type: "boolean", absent: "undefined" }
} as const satisfies Fields

/** The fields of an HTTP status error after `status` and `message`: no body, no request id by default. */
const httpDetail = {
  /** The first 4 KiB of the raw response body (default empty). */
  body: textOr(""),
  /** The value of the `x-request-id` (or `request-id`) response header, when present (default none). */
  requestId: { type: "string", absent: "option-key" },
  /** The operation that failed, such as `AgentApi.createSession`. */
  operation: text
} as const

/** The fields of an HTTP status error, with the status and message of its kind by default. */
const httpStatus = <K extends keyof typeof statusDefaults>(kind: K) =>
  ({
    /** The HTTP status code (default: the status of the class). */
    status: numberOr(statusDefaults[kind].status),
    /** The message, from `error`, `message`, `error_message`, `error_description` or the text body. */
    message: textOr(statusDefaults[kind].message),
    ...httpDetail
  }) as const

/** `retryAfter` of a 429 or 5xx: none unless given. */
const retryAfter = { type: "duration", absent: "option-null" } as const

/**
 * The fields of every error class, by tag: what each holds, which the constructor fills in, and
 * how an absent one is held. Both editions build their classes from this table (the Effect 4
 * edition has no `RecordingFailed`).
 *
 * @since 0.1.0
 * @category models
 */
export const errorFields = {
  InvalidRequest: {
    /** What was being validated, such as `CreateSessionRequest`. */
    subject: text,
    /** A readable list of the problems found. */
    message: text
  },
  MissingCredentials: {
    ...sessionContextFields,
    /** The operation that needed a key. */
    operation: text,
    /** The environment variable that would provide it (default `AGENT_SESSION_API_KEY`, `Credentials.ENV_API_KEY`). */
    variable: textOr(ENV_API_KEY)
  },
  MissingAgentKey: { ...sessionContextFields, agentId: text },
  BadRequest: httpStatus("bad-request"),
  Unauthorized: httpStatus("unauthorized"),
  Forbidden: httpStatus("forbidden"),
  NotFound: httpStatus("not-found"),
  Conflict: httpStatus("conflict"),
  PayloadTooLarge: httpStatus("payload-too-large"),
  RateLimited: {
    ...httpStatus("rate-limited"),
    /** From `retry-after-ms` or `Retry-After` (seconds or an HTTP date), when present. */
    retryAfter
  },
  ServerError: {
    ...httpStatus("server-error"),
    /** From `Retry-After` on a 503, when present. */
    retryAfter
  },
  UnexpectedStatus: {
    /** The HTTP status code. */
    status: number,
    /** The message (default `unexpected status`). */
    message: textOr(unexpectedStatusMessage),
    ...httpDetail
  },
  TransportError: {
    operation: text,
    /** What the transport said, with any key removed. */
    message: text
  },
  RequestTimeout: {
    operation: text,
    /** The time-out of the attempt (default 30 s, `AgentApi.defaultTimeout`). */
    timeout: durationOr(30_000)
  },
  ResponseDecodeError: {
    operation: text,
    /** The 2xx status (default 200). */
    status: numberOr(200),
    message: text,
    /** The first 4 KiB of the raw body (default empty). */
    body: textOr("")
  },
  OutcomeUnknown: {
    /** The operation, such as `AgentApi.createSession`. */
    operation: text,
    /** The `Idempotency-Key` header every attempt of the call carried. */
    idempotencyKey: text,
    /** How many attempts were sent (default 1). */
    attempts: numberOr(1),
    /** The tag of the last attempt's error, such as `RequestTimeout` or `ServerError`. */
    reason: text,
    /** The last attempt's error message, keys removed (default empty). */
    detail: textOr("")
  },
  ResponseTooLarge: {
    operation: text,
    /** The HTTP status of the response (default 200). */
    status: numberOr(200),
    /** The bytes read (or announced by `content-length`) when it was refused: over `limit`. */
    size: number,
    /** The limit in bytes. */
    limit: number
  },
  MalformedFrame: {
    ...sessionContextFields,
    /** The first 4 KiB of the frame (default empty). */
    raw: textOr(""),
    message: text
  },
  EventDecodeError: {
    ...sessionContextFields,
    /** The wire event name. */
    event: text,
    /** The first 4 KiB of the frame (default empty). */
    raw: textOr(""),
    message: text
  },
  FrameTooLarge: {
    ...sessionContextFields,
    /**
     * The size of the frame in bytes (UTF-16 code units for text frames); for a frame refused
     * while it was read (never read whole), the size read when it went over the limit.
     */
    size: number,
    limit: number
  },
  UnknownEvent: {
    ...sessionContextFields,
    event: text,
    /** The first 4 KiB of the frame (default empty). */
    raw: textOr("")
  },
  HandshakeRejected: {
    ...sessionContextFields,
    /** The HTTP status or WebSocket close code. */
    code: number,
    /** The status text or close reason, keys scrubbed (default empty). */
    reason: textOr("")
  },
  Superseded: {
    ...sessionContextFields,
    /** The close reason the service gave, keys scrubbed (default empty). */
    reason: textOr("")
  },
  ConnectTimeout: {
    ...sessionContextFields,
    /** The connect time-out (default 10 s). */
    timeout: durationOr(10_000)
  },
  ConnectionLost: {
    ...sessionContextFields,
    /**
     * How many connection attempts failed in a row at the end: since the last attempt that
     * delivered an event (keep-alives do not count), that dropped attempt included.
     */
    attempts: number,
    /** What ended the last attempt. */
    lastError: text
  },
  BufferOverflow: {
    ...sessionContextFields,
    /** How many events were waiting for the consumer (twice the connection's `bufferSize`). */
    limit: number
  },
  NeverConnected: {
    mayStillBeRunning: sessionContextFields.mayStillBeRunning,
    /** The session the channel was for. */
    sessionId: text,
    /** How many connection attempts were made. */
    attempts: number,
    /** What ended the last attempt (an open failure, a time-out, a status). */
    lastError: text
  },
  InsecureTransport: {
    /** The address, without its query string. */
    url: text
  },
  RequestNotPending: {
    resourceType: text,
    actionSessionId: text,
    /**
     * `never-received`: no such request arrived on this connection; `already-answered`: it was
     * answered; `channel-closed`: the connection is closed, nothing can be sent any more.
     */
    reason: { type: notPendingReasons }
  },
  AnswerBufferFull: {
    /** The `answerBufferSize` (default 64). */
    limit: numberOr(64)
  },
  ResponseParseError: { raw: text, message: text },
  ActionBudgetExceeded: {
    mayStillBeRunning: sessionContextFields.mayStillBeRunning,
    sessionId: text,
    maxActions: number,
    actions: number
  },
  SessionEndedWithoutComplete: {
    mayStillBeRunning: sessionContextFields.mayStillBeRunning,
    sessionId: text,
    /** The message of the last `error` event received, if any (default none). */
    lastError: { type: "string", absent: "option-null" }
  },
  RecordingFailed: {
    /** The recording's file. */
    path: text,
    /** What failed, keys removed. */
    message: text,
    /** The records written to the file before it failed. */
    written: number
  },
  InvalidRecording: {
    /** The recording's file. */
    path: text,
    /** The line (1-based) that is wrong; 0 when the file itself could not be read. */
    line: number,
    /** What is wrong with it. */
    reason: text
  },
  ReplayMismatch: {
    /** The recording's file. */
    path: text,
    /** The line (1-based) of the recorded step the application did not follow. */
    line: number,
    /** What differed: `answer`, `create` or `connection`. */
    subject: { type: ["answer", "create", "connection"] },
    /** What the recording has there (JSON, or a description). */
    expected: text,
    /** What the application did (JSON, or a description). */
    actual: text,
    /** The differences, one per line (`field: expected X, got Y`). */
    difference: text
  }
} as const satisfies { readonly [tag: string]: Fields }

/**
 * The tag of an error class of the SDK.
 *
 * @since 0.1.0
 * @category models
 */
export type ErrorTag = keyof typeof errorFields

/**
 * The value of a field as a message reads it: a duration already formatted (each edition formats
 * its own `Duration`), an `Option` as its value or `undefined`.
 *
 * @since 0.1.0
 * @category models
 */
export type Plain<F extends Field> =
  | (F["type"] extends "string" | "duration" ? string
    : F["type"] extends "number" ? number
    : F["type"] extends "boolean" ? boolean
    : F["type"][number])
  | (F extends { readonly absent: string } ? undefined : never)

/**
 * An error's fields as its message reads them ({@link Plain}).
 *
 * @since 0.1.0
 * @category models
 */
export type View<Tag extends ErrorTag> = ViewOf<(typeof errorFields)[Tag]>

type ViewOf<S extends Fields> = { readonly [K in keyof S]: Plain<S[K]> }

/** Whether an error's `message` is derived from its fields ({@link messages}) rather than a field. */
const hasDerivedMessage = (tag: string): tag is keyof typeof messages => Object.hasOwn(messages, tag)

/**
 * How an error of this tag reads its `message` from itself, when the message is derived from its
 * fields ({@link messages}); `undefined` when it has a `message` field. `plain` gives the value of
 * a field as the message reads it ({@link Plain}): each edition formats its own `Duration` and
 * unwraps its own `Option`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const messageOf = (tag: string, plain: (value: unknown) => unknown): ((error: object) => string) | undefined => {
  if (!hasDerivedMessage(tag)) return undefined
  // Each message reads its tag's fields (`messages` is checked against `View` of the table).
  const message = messages[tag] as (view: Readonly<Record<string, unknown>>) => string
  const names = Object.keys(errorFields[tag])
  return (error) => message(Object.fromEntries(names.map((name) => [name, plain(Reflect.get(error, name))])))
}
