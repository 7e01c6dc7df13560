/**
 * How an attempt of the event channel ends, read from what the transport reports: a WebSocket
 * close code, a refused upgrade's HTTP status, a socket error; which of them end the connection
 * for good (a clean close, refused credentials) and which are retried. The editions
 * build their typed errors from the verdicts.
 *
 * The semantics are those of a platform socket with `closeCodeIsError: (code) => code !== 1000`:
 * 1006, an abrupt drop, is an error to reconnect from.
 *
 * @since 0.1.0
 */
import { scrubChannelText } from "./Secrets.js"

/**
 * The close code of a connection superseded by a newer one to the same session (the simulator's,
 * and the observed service's `4000 superseded`): never retried, or the two watchers would take
 * the session from each other in turn.
 *
 * @since 0.1.0
 * @category models
 */
export const SUPERSEDED_CLOSE_CODE = 4000

/**
 * The close codes that mean "your credentials were refused": never retried.
 *
 * @since 0.1.0
 * @category models
 */
export const rejectionCloseCodes: ReadonlySet<number> = new Set([1008, 4001, 4003, 4401, 4403])

/**
 * The HTTP statuses of a refused upgrade (or SSE `GET`) that are final: the credentials (401,
 * 403) or the session (400, 404, 410: no such session, or the wrong path for this dialect) were
 * refused. Retrying cannot help.
 *
 * @since 0.1.0
 * @category models
 */
export const rejectionStatuses: ReadonlySet<number> = new Set([400, 401, 403, 404, 410])

/**
 * What a close says: the service ended the session (1000), refused the credentials, a newer
 * connection took the session over (4000), or the connection dropped (with the text to report,
 * its reason scrubbed by the caller).
 *
 * @since 0.1.0
 * @category models
 */
export type CloseVerdict =
  | { readonly _tag: "Ended" }
  | { readonly _tag: "Rejected" }
  | { readonly _tag: "Superseded" }
  | { readonly _tag: "Dropped"; readonly message: string }

/**
 * The verdict of a close with its code and (scrubbed) reason.
 *
 * @since 0.1.0
 * @category constructors
 */
export const classifyClose = (code: number, reason: string): CloseVerdict => {
  // A clean close: the service ended the session (after `complete`, the connection ended it first).
  if (code === 1000) return { _tag: "Ended" }
  if (rejectionCloseCodes.has(code)) return { _tag: "Rejected" }
  if (code === SUPERSEDED_CLOSE_CODE) return { _tag: "Superseded" }
  return { _tag: "Dropped", message: `closed with code ${code}${reason.length > 0 ? `: ${reason}` : ""}` }
}

const has = <K extends string>(value: unknown, key: K): value is { readonly [k in K]: unknown } =>
  typeof value === "object" && value !== null && key in value

/**
 * The code and reason of a close event; 1006 (abnormal) when it carries none.
 *
 * @since 0.1.0
 * @category constructors
 */
export const closeCodeOf = (event: unknown): { readonly code: number; readonly reason: string } => ({
  code: has(event, "code") && typeof event.code === "number" ? event.code : 1006,
  reason: has(event, "reason") && typeof event.reason === "string" ? event.reason : ""
})

/**
 * A short readable description of a failure cause: its message, an error event's error message,
 * an event's type, or the value.
 *
 * @since 0.1.0
 * @category constructors
 */
export const describeCause = (cause: unknown): string => {
  if (has(cause, "message") && typeof cause.message === "string" && cause.message.length > 0) return cause.message
  if (has(cause, "error") && has(cause.error, "message")) return String(cause.error.message)
  if (has(cause, "type") && typeof cause.type === "string") return `${cause.type} event`
  return String(cause)
}

/** The `code` of a `ws` error (in an `ErrorEvent`'s `error`), if any. */
const wsErrorCode = (cause: unknown): string | undefined => {
  const error = has(cause, "error") ? cause.error : cause
  return has(error, "code") && typeof error.code === "string" ? error.code : undefined
}

/**
 * What a socket's `error` event means: before `open` the connection failed to open (`open-failed`);
 * after it, a message over the size bound (`too-large`: `ws` closes with 1009), a text frame that
 * is not UTF-8 (`invalid-utf8`: `ws` closes with 1007), or a read failure to reconnect from.
 *
 * @since 0.1.0
 * @category constructors
 */
export const socketErrorKind = (
  cause: unknown,
  opened: boolean
): "open-failed" | "too-large" | "invalid-utf8" | "read-failed" => {
  if (!opened) return "open-failed"
  const code = wsErrorCode(cause)
  if (code === "WS_ERR_UNSUPPORTED_MESSAGE_LENGTH" || describeCause(cause).includes("Max payload size exceeded")) {
    return "too-large"
  }
  return code === "WS_ERR_INVALID_UTF8" ? "invalid-utf8" : "read-failed"
}

const UNEXPECTED_RESPONSE = /Unexpected server response: (\d{3})/

/**
 * The HTTP status of a refused upgrade found in an open error (`ws` reports `Unexpected server
 * response: 401` when no one handles `unexpected-response`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const upgradeRefusal = (cause: unknown): { readonly status: number; readonly reason: string } | undefined => {
  const match = UNEXPECTED_RESPONSE.exec(describeCause(cause))
  return match?.[1] === undefined ? undefined : { status: Number(match[1]), reason: match[0] }
}

/**
 * The largest frame read only to be skipped (with `failOnFrameError: false`): 16 MiB.
 *
 * @since 0.1.0
 * @category models
 */
export const SKIPPABLE_FRAME_SIZE = 16 * 1024 * 1024

/**
 * The largest message a socket reads: `maxFrameSize`. With `failOnFrameError: false` a frame over
 * it is read to be skipped, up to {@link SKIPPABLE_FRAME_SIZE} (or `maxFrameSize` when larger);
 * past that the stream fails all the same.
 *
 * @since 0.1.0
 * @category constructors
 */
export const maxPayload = (maxFrameSize: number, failOnFrameError: boolean): number =>
  failOnFrameError ? maxFrameSize : Math.max(maxFrameSize, SKIPPABLE_FRAME_SIZE)

// ---------------------------------------------------------------------------
// Why an attempt is retried: the texts of both editions (a recording reads them back)
// ---------------------------------------------------------------------------

/**
 * An attempt that failed to open (the socket or the `GET` never answered, or failed before
 * `open`): `open failed: ` and the cause, without the key or a key-bearing query parameter.
 *
 * @since 0.1.0
 * @category constructors
 */
export const openFailed = (cause: unknown, key: string): string =>
  `open failed: ${scrubChannelText(describeCause(cause), key)}`

/**
 * An attempt whose reading failed after `open`: `read failed: ` and the cause, scrubbed.
 *
 * @since 0.1.0
 * @category constructors
 */
export const readFailed = (cause: unknown, key: string): string =>
  `read failed: ${scrubChannelText(describeCause(cause), key)}`

/**
 * An SSE stream that ended before `complete`: it is reopened, as an EventSource would.
 *
 * @since 0.1.0
 * @category models
 */
export const STREAM_ENDED = "the event stream ended"

/**
 * A write to a socket that is closing or closed: how it ended (1000 or a drop) decides, when it
 * arrives.
 *
 * @since 0.1.0
 * @category models
 */
export const SOCKET_NOT_OPEN = "the socket is not open"

/**
 * A text frame the socket refused as not UTF-8 (`ws` closes with 1007).
 *
 * @since 0.1.0
 * @category models
 */
export const INVALID_UTF8 = "a text frame that is not valid UTF-8"

/**
 * What an HTTP status refusing to open the channel means (the WebSocket upgrade or the SSE
 * `GET`): one of {@link rejectionStatuses} rejects the credentials or the session for good;
 * any other is retried, with `upgrade refused with HTTP 503` (or `event stream refused ...`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const classifyRefusal = (
  status: number,
  what: "upgrade" | "event stream"
): { readonly _tag: "Rejected" } | { readonly _tag: "Refused"; readonly message: string } =>
  rejectionStatuses.has(status) ? { _tag: "Rejected" } : { _tag: "Refused", message: `${what} refused with HTTP ${status}` }

/**
 * Whether a server may send this close code (RFC 6455, 7.4: 1000 to 1003, 1007 to 1014, and 3000
 * to 4999). 1004 is reserved; 1005, 1006 and 1015 are only ever reported, never sent (`ws` throws
 * on them, as on any other).
 *
 * @since 0.1.0
 * @category guards
 */
export const canSendCloseCode = (code: number): boolean =>
  Number.isInteger(code) &&
  ((code >= 1000 && code <= 1003) || (code >= 1007 && code <= 1014) || (code >= 3000 && code <= 4999))
