/**
 * What a transport (WebSocket: `socket.ts`; Server-Sent Events: `../sse.ts`) and the engine owe
 * each other for one attempt. The engine hands the transport its {@link Hooks}; the transport
 * starts the attempt, calls `attach` as soon as the connection exists, `open` once it is open,
 * `frame` (or `namedEvent`) per frame, and `end` once with how it ended. When the attempt is over,
 * whoever ended it, the engine stops its answer writer, closes its transport (`Io.close`) and
 * closes its scope, if the transport asked for one (`Hooks.scope`).
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Redacted from "effect/Redacted"
import type * as Scope from "effect/Scope"
import { type Connection, Secrets } from "effect-agent-session-core"
import type { ConnectTimeout, EventStreamError } from "../../../src/Errors.js"
import type * as EventStream from "../../../src/EventStream.js"
import type * as Wire from "../../../src/Wire.js"
import type { Deadlines } from "./deadlines.js"
import type { Settings } from "./settings.js"
import { provideScope } from "../../../src/internal/line.js"

/**
 * How one attempt ended (the protocol core's `Connection.Ending`, with the SDK's errors: a
 * `Retry`'s error is an `EventStream.AttemptError`, a `ConnectTimeout` or a description).
 */
export type AttemptOutcome = Connection.Ending<EventStreamError, ConnectTimeout>

/** The connection ended for good, normally. */
export const End = (reason: EventStream.CloseReason): AttemptOutcome => ({ _tag: "End", reason })

/** The connection ended for good with an error that retrying cannot fix. */
export const Fatal = (error: EventStreamError, reason: EventStream.CloseReason): AttemptOutcome => ({
  _tag: "Fatal",
  error,
  reason
})

/** A transport's attempt that ended by a defect (a bug of the transport). */
export const Defect = (defect: unknown): AttemptOutcome => ({ _tag: "Defect", defect })

/** The outcome of a transport's attempt run as an effect: its value, or a defect. */
export const fromExit = (exit: Exit.Exit<AttemptOutcome>): AttemptOutcome =>
  Exit.isSuccess(exit) ? exit.value : Defect(exit.cause)

/** The attempt failed or dropped: the schedule decides whether to try again. */
export const Retry = (error: EventStream.AttemptError): AttemptOutcome =>
  typeof error !== "string" && error._tag === "ConnectTimeout"
    ? { _tag: "Retry", error, connectTimeout: true }
    : { _tag: "Retry", error }

/** Why an answer was not delivered (the core's `Connection.WriteFailure`). */
export type SendFailure = Connection.WriteFailure

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
  /** Closes the connection as the attempt is over (after its answer writer has stopped). */
  readonly close?: (() => void) | undefined
  /**
   * Asks the service to end the connection (a WebSocket close, code 1000) and reads on until it
   * has (the core's `Reader.drain`). False (nothing done) where the transport cannot: not open,
   * or what arrives once it is closing is dropped (a standard WebSocket). Absent: never can
   * (Server-Sent Events, a replay).
   */
  readonly drain?: (() => boolean) | undefined
}

/** What the engine gives a transport for one attempt. */
export interface Hooks {
  /** The connection's session (a transport is shared by the connections of a service). */
  readonly sessionId: string
  /** The connection's settings. */
  readonly settings: Settings
  /** The key, read afresh for this attempt. */
  readonly key: Redacted.Redacted<string>
  /** The shared timer, for the transport's own time-outs (the connect time-out). */
  readonly deadlines: Deadlines
  /**
   * The attempt's scope, made on the first call, for a transport whose attempt runs in fibers of
   * its own (the SSE body's reader): closed when the attempt is over, its exit the attempt's
   * ending. A transport without one costs the attempt no scope.
   */
  readonly scope: () => Scope.Scope
  /**
   * To call as soon as the connection exists (before it opens): frames may be paused from then on.
   * `pausable: false`: the transport cannot pause, the connection bounds it (`BufferOverflow`).
   */
  readonly attach: (io: Io, pausable?: boolean) => void
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
  readonly end: (outcome: AttemptOutcome) => void
}

/**
 * Starts one attempt and returns once it is started (it must not wait for the attempt to end: no
 * fiber of the engine waits for `hooks.end`).
 */
export type Transport = (hooks: Hooks) => Effect.Effect<void>

/**
 * Starts a transport's attempt in a fiber that lasts as long as the attempt (forked in the
 * attempt's scope, `Hooks.scope`, which it is given) and returns at once.
 */
export const forkAttempt = (hooks: Hooks, attempt: Effect.Effect<void, never, Scope.Scope>): Effect.Effect<void> =>
  Effect.suspend(() => {
    const scope = hooks.scope()
    return attempt.pipe(Effect.forkIn(scope), Effect.asVoid, provideScope(scope))
  })

/** Text safe to keep: no key, no key-bearing query parameter (`Secrets.scrubChannelText`). */
export const scrub = (text: string, key: Redacted.Redacted<string>): string =>
  Secrets.scrubChannelText(text, Redacted.value(key))
