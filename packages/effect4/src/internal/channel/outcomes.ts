/**
 * How a WebSocket's end maps to the attempt's outcome: an `error` event (an open failure before
 * `open`, a read failure after) or a `close` event with its code. The verdicts are the protocol
 * core's (`Close`); this module builds the SDK's errors from them, their texts scrubbed of the key.
 */
import type * as Redacted from "effect/Redacted"
import { Close } from "effect-agent-session-core"
import { FrameTooLarge, HandshakeRejected, MalformedFrame, Superseded } from "../../Errors.js"
import type { Settings } from "./settings.js"
import { type AttemptOutcome, End, Fatal, Retry, scrub } from "./transport.js"
import { maxPayloadOf, rejectionOf } from "./upgrade.js"

/** How an `error` event ends the attempt: before `open` an open failure, after it a read failure. */
export const errorOutcome = (
  cause: unknown,
  opened: boolean,
  ws: object,
  key: Redacted.Redacted<string>,
  settings: Settings
): AttemptOutcome => {
  switch (Close.socketErrorKind(cause, opened)) {
    case "too-large":
      // Refused while read, never retried (the service would send it again). Its exact size is
      // unknown: it is at least one byte over what the socket accepted.
      return Fatal(new FrameTooLarge({ size: maxPayloadOf(settings) + 1, limit: settings.maxFrameSize }), "failed")
    case "invalid-utf8":
      return Fatal(new MalformedFrame({ raw: "", message: "a text frame that is not valid UTF-8" }), "failed")
    case "read-failed":
      return Retry(`read failed: ${scrub(Close.describeCause(cause), key)}`)
    case "open-failed":
      break
  }
  const rejection = rejectionOf(ws, cause)
  if (rejection !== undefined) {
    const { reason, status } = rejection
    if (Close.rejectionStatuses.has(status)) {
      return Fatal(new HandshakeRejected({ code: status, reason: scrub(reason, key) }), "handshake-rejected")
    }
    return Retry(`upgrade refused with HTTP ${status}`)
  }
  return Retry(`open failed: ${scrub(Close.describeCause(cause), key)}`)
}

/** How a `close` event ends the attempt. */
export const closeOutcome = (code: number, closeReason: string, key: Redacted.Redacted<string>): AttemptOutcome => {
  const reason = scrub(closeReason, key)
  const verdict = Close.classifyClose(code, reason)
  switch (verdict._tag) {
    case "Ended":
      return End("closed-by-service")
    case "Rejected":
      return Fatal(new HandshakeRejected({ code, reason }), "handshake-rejected")
    case "Superseded":
      // A newer connection took the session over: reconnecting would take it back.
      return Fatal(new Superseded({ reason }), "superseded")
    case "Dropped":
      return Retry(verdict.message)
  }
}
