/**
 * The recording format's model (`Recording`'s types and constants): what a line of a recorded
 * session is. Re-exported by `Recording`.
 */
import type * as Dialect from "../../Dialect.js"
import type * as Frame from "../../Frame.js"

/**
 * The `format` of the header line.
 *
 * @since 0.1.0
 * @category models
 */
export const FORMAT = "effect-agent-session/recording"

/**
 * The version this SDK writes, and the newest it reads.
 *
 * @since 0.1.0
 * @category models
 */
export const VERSION = 1

/**
 * The event channel's transport a session was recorded over.
 *
 * @since 0.1.0
 * @category models
 */
export type Transport = "websocket" | "sse"

/**
 * An error as an edition's `Errors.AgentSessionError` encodes it (decoded by the shells).
 *
 * @since 0.1.0
 * @category models
 */
export interface EncodedError {
  readonly _tag: string
  readonly [field: string]: unknown
}

/**
 * A JSON object (a create request, a session as the SDK encodes it).
 *
 * @since 0.1.0
 * @category models
 */
export type JsonObject = { readonly [field: string]: unknown }

/**
 * The first line.
 *
 * @since 0.1.0
 * @category models
 */
export interface Header {
  readonly type: "header"
  readonly format: typeof FORMAT
  readonly version: number
  /** The SDK version that wrote it. */
  readonly sdk: string
  /** Every choice of the dialect the session spoke. */
  readonly dialect: Dialect.Dialect
  readonly transport: Transport
  /** The recorded session. */
  readonly sessionId: string
  /** When the recording started (ISO 8601). */
  readonly recordedAt: string
}

/**
 * How one connection (attempt) ended, as the SDK's engine saw it.
 *
 * @since 0.1.0
 * @category models
 */
export type Outcome =
  /** It ended for good, normally (`complete`, `closed-by-service`, `error-event`). */
  | { readonly _tag: "End"; readonly reason: string }
  /** It ended for good with an error (a refused handshake, a frame error). */
  | { readonly _tag: "Fatal"; readonly reason: string; readonly error: EncodedError }
  /** It dropped: `cause` describes how (`closed with code 1006`), or `error` is a typed error (`ConnectTimeout`). */
  | { readonly _tag: "Retry"; readonly cause?: string; readonly error?: EncodedError }
  /** The application closed it (`close`, or the connection's scope closed). */
  | { readonly _tag: "Interrupted" }
  /** The transport died (a bug). */
  | { readonly _tag: "Defect"; readonly message: string }

/**
 * An answer as it went on the wire (the core's `Frame.AnswerData`).
 *
 * @since 0.1.0
 * @category models
 */
export type AnswerData = Frame.AnswerData

/**
 * What became of an answer written.
 *
 * @since 0.1.0
 * @category models
 */
export type AnswerResult = "written" | "confirmed" | { readonly failed: string; readonly retry: boolean }

/**
 * Every line but the header. `t` is milliseconds since the recording started; `conn` counts connections from 1.
 *
 * @since 0.1.0
 * @category models
 */
export type Entry =
  | { readonly type: "create"; readonly t: number; readonly request: JsonObject }
  | { readonly type: "created"; readonly t: number; readonly session: JsonObject }
  | { readonly type: "create-failed"; readonly t: number; readonly error: EncodedError }
  | { readonly type: "connect"; readonly t: number; readonly conn: number }
  | { readonly type: "open"; readonly t: number; readonly conn: number }
  | FrameEntry
  | { readonly type: "too-large"; readonly t: number; readonly conn: number; readonly size: number }
  | { readonly type: "alive"; readonly t: number; readonly conn: number }
  | AnswerEntry
  | CloseEntry
  | EndEntry

/**
 * A frame received: WebSocket text, WebSocket binary (base64), or a Server-Sent Event.
 *
 * @since 0.1.0
 * @category models
 */
export type FrameEntry =
  | { readonly type: "frame"; readonly t: number; readonly conn: number; readonly text: string }
  | { readonly type: "frame"; readonly t: number; readonly conn: number; readonly base64: string }
  | { readonly type: "frame"; readonly t: number; readonly conn: number; readonly event: string; readonly data: string }

/**
 * An answer written.
 *
 * @since 0.1.0
 * @category models
 */
export interface AnswerEntry {
  readonly type: "answer"
  readonly t: number
  readonly conn: number
  readonly data: AnswerData
  readonly result: AnswerResult
}

/**
 * A connection ended.
 *
 * @since 0.1.0
 * @category models
 */
export interface CloseEntry {
  readonly type: "close"
  readonly t: number
  readonly conn: number
  /** Whether it had opened. */
  readonly opened: boolean
  readonly outcome: Outcome
}

/**
 * The event channel closed for good: the session's end, as `EventStream.ConnectionState.Closed` said.
 *
 * @since 0.1.0
 * @category models
 */
export interface EndEntry {
  readonly type: "end"
  readonly t: number
  readonly reason: string
  /** The error the events failed with, if any. */
  readonly error?: EncodedError
  /** Answers accepted but not delivered when it closed. */
  readonly unsent?: ReadonlyArray<{ readonly resourceType: string; readonly actionSessionId: string }>
}

/**
 * Any line.
 *
 * @since 0.1.0
 * @category models
 */
export type Line = Header | Entry

/**
 * A parse: the value, or why not.
 *
 * @since 0.1.0
 * @category models
 */
export type Parsed<A> = { readonly ok: true; readonly value: A } | { readonly ok: false; readonly reason: string }
