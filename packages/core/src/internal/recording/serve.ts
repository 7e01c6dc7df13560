/**
 * Serving a recording again over a transport (`Recording.frameToEvent`, `eventToFrame`,
 * `serverEndOf`): frames across transports, and a recorded connection's end as a server makes it.
 * Re-exported by `Recording`.
 */
import type * as Dialect from "../../Dialect.js"
import { canSendCloseCode, SKIPPABLE_FRAME_SIZE } from "../../Close.js"
import type { CloseEntry } from "./model.js"
import { isObject, isString, parseJson } from "./json.js"

// ---------------------------------------------------------------------------
// Frames across transports
// ---------------------------------------------------------------------------

/**
 * The event name and payload text of a WebSocket frame in a framing, if it has them.
 *
 * @since 0.1.0
 * @category combinators
 */
export const frameToEvent = (framing: Dialect.Framing, text: string): { readonly event: string; readonly data: string } | undefined => {
  const json = parseJson(text)
  if (!json.ok || !isObject(json.value)) return undefined
  const frame = json.value
  const name = framing === "type-data" ? frame["type"] : frame["event"]
  if (!isString(name)) return undefined
  if (framing === "flat") {
    const { event: _, ...payload } = frame
    return { event: name, data: JSON.stringify(payload) }
  }
  return { event: name, data: JSON.stringify(frame["data"] ?? {}) }
}

/**
 * The WebSocket frame of a Server-Sent Event in a framing (the payload text spliced in as it is).
 *
 * @since 0.1.0
 * @category combinators
 */
export const eventToFrame = (framing: Dialect.Framing, event: string, data: string): string => {
  const payload = data.length === 0 ? "{}" : data
  if (framing === "flat") {
    const json = parseJson(payload)
    if (json.ok && isObject(json.value)) return JSON.stringify({ ...json.value, event })
  }
  return `{${JSON.stringify(framing === "type-data" ? "type" : "event")}:${JSON.stringify(event)},"data":${payload}}`
}

// ---------------------------------------------------------------------------
// Serving a recorded end again
// ---------------------------------------------------------------------------

/**
 * What a server does to end a connection as the recorded one ended.
 *
 * @since 0.1.0
 * @category models
 */
export type ServerEnd =
  /** Refuse the connection with this HTTP status (before it opened). */
  | { readonly _tag: "Refuse"; readonly status: number; readonly reason: string }
  /** Destroy the socket before it opens (an open failure). */
  | { readonly _tag: "Reset" }
  /** Never answer the connection (a connect time-out): the client gives up. */
  | { readonly _tag: "Hang" }
  /** Close a WebSocket with this code (on SSE: end the response). */
  | { readonly _tag: "Close"; readonly code: number; readonly reason: string }
  /** Drop the connection abruptly (1006, a read failure). */
  | { readonly _tag: "Drop" }
  /** Server-Sent Events: end the response. */
  | { readonly _tag: "EndStream" }
  /** The client ended it (complete, an idle time-out, a frame error, its own close): wait for it. */
  | { readonly _tag: "AwaitClient" }
  /** Send a frame larger than the client accepts (it then refuses it). */
  | { readonly _tag: "TooLarge"; readonly size: number }

/**
 * The largest frame a recording may say was too large (a `too-large` line's `size`, a
 * `FrameTooLarge` close's): 16 MiB, the largest a client reads even to skip it
 * (`Close.SKIPPABLE_FRAME_SIZE`). A replay server rebuilds such a frame (padding of that size) so
 * that the client refuses it as it did; a recording claiming more is not valid, rather than a
 * server building what a line of 52 bytes asks.
 *
 * @since 0.1.0
 * @category models
 */
export const MAX_TOO_LARGE_SIZE = SKIPPABLE_FRAME_SIZE

/**
 * Whether a recorded HTTP status can be served again: a final status (an integer from 200 to
 * 599). Node's `writeHead` throws outside 100..999, and a client never ends on an informational
 * status (1xx): it would wait for the next.
 *
 * @since 0.1.0
 * @category guards
 */
export const isFinalStatus = (u: unknown): u is number => Number.isInteger(u) && (u as number) >= 200 && (u as number) <= 599

/**
 * Why a server cannot end a connection this way, if it cannot: a status it cannot write, a close
 * code it may not send, a frame larger than {@link MAX_TOO_LARGE_SIZE}. A recording is refused at
 * such a line when it is read.
 *
 * @since 0.1.0
 * @category combinators
 */
export const serverEndProblem = (end: ServerEnd): string | undefined => {
  switch (end._tag) {
    case "Refuse":
      return isFinalStatus(end.status) ? undefined : `a refusal with status ${end.status}, not a final HTTP status (200 to 599)`
    case "Close":
      // 1005 (no code) is served as a close without one.
      return end.code === 1005 || canSendCloseCode(end.code)
        ? undefined
        : `close code ${end.code} cannot be sent (RFC 6455: 1000 to 1003, 1007 to 1014, 3000 to 4999)`
    case "TooLarge":
      return Number.isSafeInteger(end.size) && end.size >= 1 && end.size <= MAX_TOO_LARGE_SIZE
        ? undefined
        : `a frame too large of ${end.size} bytes, over the most a recording holds (${MAX_TOO_LARGE_SIZE})`
    default:
      return undefined
  }
}

const statusIn = (cause: string): number | undefined => {
  const match = /refused with HTTP (\d{3})\b/.exec(cause)
  return match === null ? undefined : Number(match[1])
}

/**
 * How a server ends a connection so that a client sees what the recorded one saw. The causes
 * are the engines' own descriptions of an attempt's end (`closed with code N`, `... refused with
 * HTTP N`, `open failed`, `read failed`, `the event stream ended`).
 *
 * @since 0.1.0
 * @category combinators
 */
export const serverEndOf = (close: CloseEntry): ServerEnd => {
  const outcome = close.outcome
  switch (outcome._tag) {
    case "Interrupted":
      return { _tag: "AwaitClient" }
    case "Defect":
      return { _tag: "Drop" }
    case "End":
      return outcome.reason === "complete"
        ? { _tag: "Close", code: 1000, reason: "complete" }
        : outcome.reason === "closed-by-service"
        ? { _tag: "Close", code: 1000, reason: "" }
        : { _tag: "AwaitClient" }
    case "Fatal": {
      const error = outcome.error
      if (error._tag === "HandshakeRejected" && typeof error["code"] === "number") {
        const reason = isString(error["reason"]) ? error["reason"] : ""
        return close.opened || error["code"] >= 1000
          ? { _tag: "Close", code: error["code"], reason }
          : { _tag: "Refuse", status: error["code"], reason }
      }
      if (error._tag === "FrameTooLarge" && typeof error["size"] === "number") return { _tag: "TooLarge", size: error["size"] }
      if (error._tag === "Superseded") return { _tag: "Close", code: 4000, reason: isString(error["reason"]) ? error["reason"] : "superseded" }
      return { _tag: "AwaitClient" }
    }
    case "Retry": {
      if (outcome.error !== undefined) return outcome.error._tag === "ConnectTimeout" ? { _tag: "Hang" } : { _tag: "Drop" }
      const cause = outcome.cause ?? ""
      const closed = /^closed with code (\d+)(?:: ([\s\S]*))?$/.exec(cause)
      if (closed !== null) {
        const code = Number(closed[1])
        return code === 1006 || code === 1015 ? { _tag: "Drop" } : { _tag: "Close", code, reason: closed[2] ?? "" }
      }
      const status = statusIn(cause)
      if (status !== undefined) return { _tag: "Refuse", status, reason: cause }
      if (cause.startsWith("open failed")) return { _tag: "Reset" }
      if (cause.startsWith("read failed")) return { _tag: "Drop" }
      if (cause === "the event stream ended") return { _tag: "EndStream" }
      return close.opened ? { _tag: "AwaitClient" } : { _tag: "Reset" }
    }
  }
}
