/**
 * What a transport (WebSocket: `webSocket.ts`; Server-Sent Events: `../sse.ts`) and the engine
 * owe each other for one attempt. The engine hands the transport its {@link Hooks}; the
 * transport starts the attempt in the attempt's scope, calls `attach` as soon as the connection
 * exists, `open` once it is open, `frame` (or `namedEvent`) per frame, and `end` once with how it
 * ended. The engine closes the attempt's scope when the attempt is over, whoever ended it.
 */
import * as Predicate from "effect/Predicate"
import * as Redacted from "effect/Redacted"
import type * as Effect from "effect/Effect"
import type * as Exit from "effect/Exit"
import type * as Scope from "effect/Scope"
import type { EventStreamError } from "../../Errors.js"
import { redactSecrets } from "../../Errors.js"
import type * as EventStream from "../../EventStream.js"
import * as Wire from "../../Wire.js"
import type { Deadlines } from "./deadlines.js"

/** How one attempt ended. */
export type AttemptOutcome =
  /** The connection ended for good, normally. */
  | { readonly _tag: "End"; readonly reason: EventStream.CloseReason }
  /** The connection ended for good with an error that retrying cannot fix. */
  | { readonly _tag: "Fatal"; readonly error: EventStreamError; readonly reason: EventStream.CloseReason }
  /** The attempt failed or dropped: the schedule decides whether to try again. */
  | { readonly _tag: "Retry"; readonly error: EventStream.AttemptError }

/** @internal */
export const End = (reason: EventStream.CloseReason): AttemptOutcome => ({ _tag: "End", reason })
/** @internal */
export const Fatal = (error: EventStreamError, reason: EventStream.CloseReason): AttemptOutcome => ({
  _tag: "Fatal",
  error,
  reason
})
/** @internal */
export const Retry = (error: EventStream.AttemptError): AttemptOutcome => ({ _tag: "Retry", error })

/** Why an answer was not delivered. */
export interface SendFailure {
  readonly retry: boolean
  readonly message: string
  /**
   * The connection is already closing: the answer stays queued and the transport's own outcome
   * (a clean 1000 end, or a drop to reconnect from) decides what happens, not this write.
   */
  readonly closing?: boolean | undefined
}

/** What an open transport lets the engine do. */
export interface Io {
  /**
   * Writes one answer: `"confirmed"` when the service acknowledged it (an HTTP 2xx), `"written"`
   * when it was handed to an open socket (confirmed later by a frame, else sent again after a
   * reconnect). A failure with `retry` keeps it queued and reopens the connection; without,
   * the service refused it: the request is pending again.
   */
  readonly send: (frame: string, data: Wire.AnswerData) => Effect.Effect<"confirmed" | "written", SendFailure>
  /** Stops reading (back-pressure); frames already received may still arrive. */
  readonly pause: () => void
  /** Reads again. */
  readonly resume: () => void
  /** Drops the connection at once (idle time-out). */
  readonly abort: () => void
}

/** What the engine gives a transport for one attempt. */
export interface Hooks {
  /** The key, read afresh for this attempt. */
  readonly key: Redacted.Redacted<string>
  /** The shared timer, for the transport's own time-outs (the connect time-out). */
  readonly deadlines: Deadlines
  /** To call as soon as the connection exists (before it opens): frames may be paused from then on. */
  readonly attach: (io: Io) => void
  /** To call once open (and the handshake sent). */
  readonly open: () => void
  /** One raw frame of the dialect's framing. */
  readonly frame: (data: string | Uint8Array) => void
  /** One named event with its JSON payload text (Server-Sent Events). */
  readonly namedEvent: (name: string, data: string) => void
  /** An event larger than the limit, discarded while it was being read (Server-Sent Events). */
  readonly tooLarge: (size: number) => void
  /** Bytes arrived that carry no event (an SSE comment): the connection is not idle. */
  readonly alive: () => void
  /** How the attempt ended (the first call wins); a failed `Exit` is a defect of the transport. */
  readonly end: (outcome: AttemptOutcome | Exit.Exit<AttemptOutcome>) => void
}

/**
 * Starts one attempt in the given scope and returns once it is started (it must not wait for
 * the attempt to end: the engine's one fiber waits for `hooks.end`). Closing the scope closes
 * the connection.
 */
export type Transport = (hooks: Hooks) => Effect.Effect<void, never, Scope.Scope>

/**
 * The close code of a connection superseded by a newer one to the same session (the simulator's,
 * and the observed service's `4000 superseded`): `Superseded`, never retried (issue 20 item 2).
 */
export const SUPERSEDED_CLOSE_CODE = 4000

/** The close codes that mean "your credentials were refused" (U08, U12): never retried. */
export const rejectionCloseCodes: ReadonlySet<number> = new Set([1008, 4001, 4003, 4401, 4403])

/**
 * The HTTP statuses of a refused upgrade that are final: the credentials (401, 403) or the
 * session (400, 404, 410: no such session, or the wrong path for this dialect) were refused.
 * Retrying cannot help, so they fail at once with `HandshakeRejected`.
 */
export const rejectionStatuses: ReadonlySet<number> = new Set([400, 401, 403, 404, 410])

/** A short readable description of a failure cause (a message, an error event, or the value). */
export const describeCause = (cause: unknown): string => {
  if (Predicate.hasProperty(cause, "message") && typeof cause.message === "string" && cause.message.length > 0) {
    return cause.message
  }
  if (Predicate.hasProperty(cause, "error") && Predicate.hasProperty(cause.error, "message")) {
    return String(cause.error.message)
  }
  if (Predicate.hasProperty(cause, "type") && typeof cause.type === "string") return `${cause.type} event`
  return String(cause)
}

/** Text safe to keep: no key, no key-bearing query parameter. */
export const scrub = (text: string, key: Redacted.Redacted<string>): string =>
  Wire.redactUrl(redactSecrets(text, [Redacted.value(key)]))
