/**
 * The model of a connection (`Connection`'s types, options and defaults), kept apart from the
 * state machine that uses them. Re-exported by `Connection`.
 */
import type { UnsentAnswer } from "../Ledger.js"
import type { Kind } from "../Session.js"

/**
 * Why a connection closed for good.
 *
 * @since 0.1.0
 * @category models
 */
export type CloseReason =
  /** `complete` was received (and delivered). */
  | "complete"
  /** `close` was called, or the connection's scope closed. */
  | "closed-by-caller"
  /** The service closed the channel with 1000 before `complete`: the session ended. */
  | "closed-by-service"
  /** An `error` event arrived with `endOnError` set. */
  | "error-event"
  /** The reconnect schedule gave up. */
  | "connection-lost"
  /** The service refused the credentials. */
  | "handshake-rejected"
  /** A newer connection to the same session took it over: close code 4000 (`Close`). */
  | "superseded"
  /** A frame error (with `failOnFrameError`) or a missing key ended the stream. */
  | "failed"

/**
 * How an attempt ended, as its transport (or the connection itself) says:
 * - `End`: the connection ends for good, normally;
 * - `Fatal`: it ends for good with an error `F` that retrying cannot fix;
 * - `Retry`: the attempt failed or dropped, the schedule decides whether to try again; its error
 *   is a typed `R` (by default the same type as `F`) or a description (`connectTimeout`: it used
 *   a whole connect time-out without opening);
 * - `Defect`: the transport failed unexpectedly (a bug): the connection ends, `failed`;
 * - `Overflow`: decided by the connection itself, never reported by a transport: the consumer fell
 *   `limit` events behind on a transport that cannot pause (`Connection.transportCreated`); the
 *   connection ends, `failed`, and the shell fails it with its own overflow error.
 *
 * @since 0.1.0
 * @category models
 */
export type Ending<F, R = F> =
  | { readonly _tag: "End"; readonly reason: CloseReason }
  | { readonly _tag: "Fatal"; readonly error: F; readonly reason: CloseReason }
  | { readonly _tag: "Retry"; readonly error: R | string; readonly connectTimeout?: boolean | undefined }
  | { readonly _tag: "Defect"; readonly defect: unknown }
  | { readonly _tag: "Overflow"; readonly limit: number }

/**
 * What an event is, for the protocol.
 * - `keep-alive`: proves the socket, not progress (`heartbeat`, `connected`);
 * - `request`: the agent asks for a resource (answered by its key);
 * - `complete`: the session is over;
 * - `error`: an error event (it ends the connection with `endOnError`);
 * - `chargeable`: an event counted against the action budget (`action_run`): to the connection,
 *   any other event;
 * - `event`: any other event.
 *
 * The session's own kinds (`Session.Kind`, by wire name: `Session.kindOf`).
 *
 * @since 0.1.0
 * @category models
 */
export type EventKind = Kind

/**
 * What the connection asks of the shell's events and errors.
 *
 * @since 0.1.0
 * @category models
 */
export interface Classifier<E, F, R = F> {
  /** What an event is. */
  readonly kind: (event: E) => EventKind
  /** The key a request is answered by (`Ledger.requestKey`); asked of `request` events only. */
  readonly requestKey: (event: E) => string
  /** A readable message of an error (for the last error reported while retrying). */
  readonly message: (error: R) => string
  /**
   * Whether a frame error is of an event that counts against the budget (an `action_run` that
   * does not decode): never skipped, whatever `failOnFrameError` says.
   */
  readonly chargeable: (error: F) => boolean
}

/**
 * What the shell must do, as the connection decided it: returned by {@link Connection.poll}, one
 * at a time, in the order decided, after each input.
 * - `Deliver`: hand the event to the consumer, in arrival order;
 * - `Pause`: stop reading the current attempt's transport (back-pressure); `Resume`: read again;
 * - `Abort`: drop the current attempt's transport at once (idle time-out);
 * - `Write`: start writing the queued answers on the current attempt ({@link Connection.nextAnswer});
 * - `Skipped`: a frame error was skipped (`failOnFrameError: false`), `count` so far;
 * - `Forgot`: the answer ledger forgot `count` unanswered requests to keep its bound (`total` so
 *   far): an answer to one is refused. Worth a warning;
 * - `Wake`: the current attempt opened or ended: the shell's loop may go on.
 *
 * @since 0.1.0
 * @category models
 */
export type Action<E, F> =
  | { readonly _tag: "Deliver"; readonly event: E }
  | { readonly _tag: "Pause" }
  | { readonly _tag: "Resume" }
  | { readonly _tag: "Abort" }
  | { readonly _tag: "Write" }
  | { readonly _tag: "Skipped"; readonly error: F; readonly count: number }
  | { readonly _tag: "Forgot"; readonly count: number; readonly total: number }
  | { readonly _tag: "Wake" }

/**
 * The options of a connection that its rules use (the shell keeps the rest: schedules, the connect
 * time-out, the answer time-out, the frame size bound).
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** Events held for a slow consumer before reading pauses (resumes at half). */
  readonly bufferSize: number
  /** Answers accepted and not written yet, at most. */
  readonly answerBufferSize: number
  /** An open attempt with no frame for this long (ms) is dropped and retried. */
  readonly idleTimeoutMillis: number
  /** An `error` event ends the connection. */
  readonly endOnError: boolean
  /** A frame error ends the connection (else it is skipped and counted). */
  readonly failOnFrameError: boolean
  /** Keys of requests received on an earlier connection and still unanswered: answerable. */
  readonly pendingRequests?: Iterable<string> | undefined
  /** The service is known to replay on a reconnect: a proven replay is dropped (`Replay`). */
  readonly replaysOnReconnect?: boolean | undefined
  /** How long after an open (ms) frames that may be a replay are held at most. */
  readonly replayHoldMillis?: number | undefined
  /**
   * The channel continues one watched before (by this process or another: a cluster runner's
   * run): until it first opens, its attempts are retried on the reconnect schedule like a dropped
   * channel's, one that used a whole connect time-out included.
   */
  readonly resumes?: boolean | undefined
}

/**
 * The defaults of a connection's options, and of the shell's: idle time-out 60 s, connect
 * time-out 10 s, answer time-out 10 s, a replay held 1 s at most, a buffer of 1,024 events, 64
 * answers; the reconnect
 * schedule exponential from 250 ms, factor 2, jittered, each wait capped at 10 s, 10 tries; a
 * connection never open is tried 2 more times, 250 ms then 500 ms apart.
 *
 * @since 0.1.0
 * @category models
 */
export const defaults = {
  idleTimeoutMillis: 60_000,
  connectTimeoutMillis: 10_000,
  answerTimeoutMillis: 10_000,
  replayHoldMillis: 1_000,
  bufferSize: 1024,
  answerBufferSize: 64,
  reconnect: { initialMillis: 250, factor: 2, maxDelayMillis: 10_000, retries: 10 },
  firstConnect: { initialMillis: 250, factor: 2, retries: 2 }
} as const

/**
 * A count option: a finite number >= 1 (rounded down), else the fallback.
 *
 * @since 0.1.0
 * @category constructors
 */
export const positiveInt = (value: number | undefined, fallback: number): number =>
  value !== undefined && Number.isFinite(value) && value >= 1 ? Math.floor(value) : fallback

/**
 * How long a socket found closing may take to report its close before the attempt is given up.
 *
 * @since 0.1.0
 * @category models
 */
export const CLOSING_GRACE_MILLIS = 2_000

/**
 * How long a drained attempt waits for the service's close answering the caller's before it is
 * ended as it stands.
 */
export const DRAIN_GRACE_MILLIS = 10_000

/**
 * Why an answer was not written (the shell's transport says).
 *
 * @since 0.1.0
 * @category models
 */
export interface WriteFailure {
  /** Worth writing again on a new connection (else the service refused it). */
  readonly retry: boolean
  readonly message: string
  /** The socket is closing already: its close decides, within {@link CLOSING_GRACE_MILLIS}. */
  readonly closing?: boolean | undefined
}

/**
 * What to do after an attempt ended ({@link Connection.attemptEnded}):
 * - `Finish`: the connection is over; `error` is the attempt's fatal error, `defect` a transport's bug,
 *   `overflow` the limit a consumer fell behind on a transport that cannot pause (the shell builds
 *   its overflow error from it);
 * - `Retry`: try again after the schedule (`first-connect` while never open, else `reconnect`;
 *   `reconnect` from the start for a connection that `resumes`), restarted first when `reset` (the
 *   attempt made progress); `giveUp`: do not try again (a new connection never open that used a
 *   whole connect time-out); `resent`: answers written before
 *   the drop that will be written again; `attempts`: the attempts of this bout so far.
 *
 * @since 0.1.0
 * @category models
 */
export type Next<F, R = F> =
  | {
    readonly _tag: "Finish"
    readonly reason: CloseReason
    readonly error?: F | undefined
    readonly defect?: unknown
    readonly overflow?: number | undefined
    readonly replayDropped: number
  }
  | {
    readonly _tag: "Retry"
    readonly schedule: "first-connect" | "reconnect"
    readonly reset: boolean
    readonly giveUp: boolean
    readonly resent: number
    readonly attempts: number
    readonly lastError: string
    readonly error: R | string
    readonly replayDropped: number
  }

/**
 * What the connection reports when an attempt opens: the reconnects so far, how long the last gap
 * lasted (ms; none for the first open), and whether this open is a reopening.
 *
 * @since 0.1.0
 * @category models
 */
export interface OpenReport {
  readonly reconnects: number
  readonly downtimeMillis: number | undefined
  readonly reopened: boolean
}

/**
 * A connection's public state, as plain data: what a shell publishes (an edition's
 * `ConnectionState`) at each transition, `Connecting -> Open -> Reconnecting{attempt} -> Open ...
 * -> Closed` ({@link follows} says which transitions are allowed).
 * - `Connecting`: not open yet (a connection never open keeps it through its first-connect retries);
 * - `Open`: open; `reconnects` counts the reopenings, `downtimeMillis` is how long the last gap
 *   lasted (none for the first open);
 * - `Reconnecting`: down, and the reconnect schedule decided to try again; `attempt` (from 1) is
 *   the retry's number since the last progress, `lastError` what ended the last attempt;
 * - `Closed`: over for good; `unsent` (only when not empty) lists the answers accepted and not
 *   delivered.
 *
 * @since 0.1.0
 * @category models
 */
export type State =
  | { readonly _tag: "Connecting" }
  | { readonly _tag: "Open"; readonly reconnects: number; readonly downtimeMillis: number | undefined }
  | { readonly _tag: "Reconnecting"; readonly attempt: number; readonly lastError: string }
  | { readonly _tag: "Closed"; readonly reason: CloseReason; readonly unsent?: ReadonlyArray<UnsentAnswer> }

/**
 * Whether the public state may go from `from` to `to`: `Connecting` to `Open`; `Open` to
 * `Reconnecting`; `Reconnecting` to `Open` or to its next retry (`attempt` one more: the count
 * starts again only after progress, which an `Open` comes before); any of them to `Closed`, which
 * is final.
 *
 * @since 0.1.0
 * @category guards
 */
export const follows = (from: State, to: State): boolean => {
  if (from._tag === "Closed") return false
  switch (to._tag) {
    case "Connecting":
      return false
    case "Open":
      return from._tag !== "Open"
    case "Reconnecting":
      return from._tag === "Open" || (from._tag === "Reconnecting" && to.attempt === from.attempt + 1)
    case "Closed":
      return true
  }
}

/**
 * An attempt's phase, as {@link Connection.phase} reports it for the shell's loop.
 *
 * @since 0.1.0
 * @category models
 */
export type Phase = "connecting" | "open" | "ended" | "stale"

/**
 * Milliseconds as Effect's `Duration.format` writes them (`1m 30s`, `250ms`).
 */
export const formatMillis = (millis: number): string => {
  if (millis === Number.POSITIVE_INFINITY) return "Infinity"
  if (millis === 0) return "0"
  const parts: Array<string> = []
  const units: ReadonlyArray<readonly [number, string]> = [[86_400_000, "d"], [3_600_000, "h"], [60_000, "m"], [1000, "s"], [1, "ms"]]
  let rest = Math.floor(millis)
  for (const [size, unit] of units) {
    const count = Math.floor(rest / size)
    if (count > 0) parts.push(`${count}${unit}`)
    rest -= count * size
  }
  return parts.join(" ")
}
