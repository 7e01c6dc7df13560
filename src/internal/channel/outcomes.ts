/**
 * How a WebSocket's end maps to the attempt's outcome: an `error` event (an open failure before
 * `open`, a read failure after) or a `close` event with its code. The semantics are the
 * platform `Socket`'s with `closeCodeIsError: (code) => code !== 1000`.
 */
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import type * as Redacted from "effect/Redacted"
import { FrameTooLarge, HandshakeRejected, MalformedFrame, Superseded } from "../../Errors.js"
import type { Settings } from "./settings.js"
import {
  type AttemptOutcome,
  describeCause,
  End,
  Fatal,
  rejectionCloseCodes,
  rejectionStatuses,
  Retry,
  scrub,
  SUPERSEDED_CLOSE_CODE
} from "./transport.js"
import { maxPayloadOf, rejectionFromError, rejectionOf } from "./upgrade.js"

/** The `code` of a `ws` error (in an `ErrorEvent`'s `error`), if any. */
const wsErrorCode = (cause: unknown): string | undefined => {
  const error = Predicate.hasProperty(cause, "error") ? cause.error : cause
  return Predicate.hasProperty(error, "code") && typeof error.code === "string" ? error.code : undefined
}

/** `ws` refused a message over `maxPayload` (it then closes with 1009). */
const isPayloadTooLarge = (cause: unknown): boolean =>
  wsErrorCode(cause) === "WS_ERR_UNSUPPORTED_MESSAGE_LENGTH" ||
  describeCause(cause).includes("Max payload size exceeded")

/** How an `error` event ends the attempt: before `open` an open failure, after it a read failure. */
export const errorOutcome = (
  cause: unknown,
  opened: boolean,
  ws: globalThis.WebSocket,
  key: Redacted.Redacted<string>,
  settings: Settings
): AttemptOutcome => {
  if (opened) {
    // A frame over `maxPayload`: refused while read, never retried (the service would send it
    // again). Its exact size is unknown: it is at least one byte over what the socket accepted.
    if (isPayloadTooLarge(cause)) {
      return Fatal(new FrameTooLarge({ size: maxPayloadOf(settings) + 1, limit: settings.maxFrameSize }), "failed")
    }
    // A text frame that is not UTF-8: the socket is closed by `ws` (1007); a frame error.
    if (wsErrorCode(cause) === "WS_ERR_INVALID_UTF8") {
      return Fatal(new MalformedFrame({ raw: "", message: "a text frame that is not valid UTF-8" }), "failed")
    }
    return Retry(`read failed: ${scrub(describeCause(cause), key)}`)
  }
  const rejection = Option.orElse(rejectionOf(ws), () => rejectionFromError(cause))
  if (Option.isSome(rejection)) {
    const { reason, status } = rejection.value
    if (rejectionStatuses.has(status)) {
      return Fatal(new HandshakeRejected({ code: status, reason: scrub(reason, key) }), "handshake-rejected")
    }
    return Retry(`upgrade refused with HTTP ${status}`)
  }
  return Retry(`open failed: ${scrub(describeCause(cause), key)}`)
}

/** How a `close` event ends the attempt. */
export const closeOutcome = (code: number, closeReason: string, key: Redacted.Redacted<string>): AttemptOutcome => {
  // A clean close: the service ended the session (after `complete`, the engine ended it first).
  if (code === 1000) return End("closed-by-service")
  const reason = scrub(closeReason, key)
  if (rejectionCloseCodes.has(code)) {
    return Fatal(new HandshakeRejected({ code, reason }), "handshake-rejected")
  }
  // A newer connection to the session took it over (issue 20 item 2): reconnecting would take
  // it back, and the two watchers would supersede each other in turn.
  if (code === SUPERSEDED_CLOSE_CODE) return Fatal(new Superseded({ reason }), "superseded")
  return Retry(`closed with code ${code}${reason.length > 0 ? `: ${reason}` : ""}`)
}

export const closeCodeOf = (event: Event): { readonly code: number; readonly reason: string } => ({
  code: Predicate.hasProperty(event, "code") && typeof event.code === "number" ? event.code : 1006,
  reason: Predicate.hasProperty(event, "reason") && typeof event.reason === "string" ? event.reason : ""
})
