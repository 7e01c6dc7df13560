/**
 * One connection of the event channel, as a state machine without I/O: the one owner of the
 * connection's state and of its current attempt's. Its inputs are method calls named for what
 * happened (an attempt began, the transport opened, a frame arrived, the consumer took events, an
 * answer was given or written, a deadline passed, the transport ended); its outputs are what the
 * shell must do, asked of the shell's {@link Port} as they are decided (deliver this event, pause
 * or resume reading, drop the transport, write the queued answers, set a deadline, wake the loop)
 * and, at the end of an attempt, the decision {@link Connection.attemptEnded} returns (end with
 * this reason, or retry on which schedule).
 *
 * The shell owns the sockets, the fibers, the schedules (when to try again), the decoding of
 * frames into events, the errors, spans, logs and metrics. Events and errors are the shell's own
 * values (`E`, `F`): the connection only asks the shell's {@link Classifier} what an event is.
 *
 * The rules it keeps, by input:
 * - **Frames** (`frameArrived`, `frameFailed`): a frame of an attempt that is not the current one
 *   is ignored; every frame resets the idle clock; keep-alives are delivered but are not progress;
 *   after a reconnect, the first events may repeat the last ones delivered (`Replay`): where the
 *   service is known to replay (`replaysOnReconnect`), they are held until the run is decided
 *   (by a frame, a keep-alive, a frame error, the attempt's end, or `replayHoldMillis` after the
 *   open) and a proven replay is dropped, unless it is a request asked again after its answer went
 *   through; elsewhere everything is delivered and the repeat only decides whether the attempt made
 *   progress. A new event is progress (the reconnect schedule restarts after the attempt) and
 *   confirms the answers written before it (`Ledger`); `complete` ends the connection, an `error`
 *   event too with `endOnError`; reading pauses while the buffer is full (`Flow`). A frame error
 *   ends the connection (`failOnFrameError`, or always for a chargeable event, which skipping would
 *   hide from the budget) or is skipped and counted.
 * - **Answers** (`answer`, `nextAnswer`, `answerWritten`, `answerFailed`): accepted only for a
 *   pending request and while the outbox has room; written in order while the attempt is open,
 *   one writer at a time; an answer that cannot be written on a socket already closing waits
 *   {@link CLOSING_GRACE_MILLIS} for the close, then the attempt is given up; a refused one makes
 *   its request pending again; answers written and not confirmed when the connection drops are
 *   written again first after the reconnect.
 * - **Deadlines**: an open attempt's idle time-out (not while reading is paused by a full buffer);
 *   every deadline of an attempt is cleared when the attempt ends.
 * - **Attempts** (`begin`, `opened`, `attemptEnded`, `retrying`, `gaveUp`): one at a time; the
 *   first schedule (`first-connect`) while the connection has never been open, the reconnect
 *   schedule once it has; a connection that never opened and used a whole connect time-out is
 *   not tried again; the count of reconnects, the downtime of the last gap, the attempts of the
 *   current bout (since the last progress) and the last error.
 * - **The end** (`finish`): what was accepted and not delivered (a clean end confirms what was
 *   written first); nothing of the last attempt is kept.
 *
 * @since 0.1.0
 */
import type { Check, Entry } from "./Deadlines.js"
import { Flow } from "./Flow.js"
import { Ledger, type QueuedAnswer, type Refusal, type UnsentAnswer } from "./Ledger.js"
import { HOLD, Replay } from "./Replay.js"

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
  /** The service closed the channel with 1000 before `complete`: the session ended (U17). */
  | "closed-by-service"
  /** An `error` event arrived with `endOnError` set (U17). */
  | "error-event"
  /** The reconnect schedule gave up. */
  | "connection-lost"
  /** The service refused the credentials (U08, U12). */
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
 * - `Defect`: the transport failed unexpectedly (a bug): the connection ends, `failed`.
 *
 * @since 0.1.0
 * @category models
 */
export type Ending<F, R = F> =
  | { readonly _tag: "End"; readonly reason: CloseReason }
  | { readonly _tag: "Fatal"; readonly error: F; readonly reason: CloseReason }
  | { readonly _tag: "Retry"; readonly error: R | string; readonly connectTimeout?: boolean | undefined }
  | { readonly _tag: "Defect"; readonly defect: unknown }

/**
 * What an event is, for the protocol.
 * - `keep-alive`: proves the socket, not progress (`heartbeat`, `connected`);
 * - `request`: the agent asks for a resource (answered by its key);
 * - `complete`: the session is over;
 * - `error`: an error event (it ends the connection with `endOnError`);
 * - `event`: any other event.
 *
 * @since 0.1.0
 * @category models
 */
export type EventKind = "keep-alive" | "request" | "complete" | "error" | "event"

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
 * What the connection asks the shell to do, as it decides it. Every method is synchronous: the
 * shell starts its asynchronous work (a writer fiber, a timer) and returns.
 *
 * @since 0.1.0
 * @category models
 */
export interface Port<E, F> {
  /** Hands an event to the consumer, in arrival order. */
  readonly deliver: (event: E) => void
  /** Stops reading the current attempt's transport (back-pressure). */
  readonly pause: () => void
  /** Reads again. */
  readonly resume: () => void
  /** Drops the current attempt's transport at once (idle time-out). */
  readonly abort: () => void
  /** Starts writing the queued answers on the current attempt (see {@link Connection.nextAnswer}). */
  readonly write: () => void
  /** A frame error was skipped (`failOnFrameError: false`); `count` so far on this connection. */
  readonly skipped: (error: F, count: number) => void
  /**
   * The answer ledger forgot `count` unanswered requests to keep its bound (`total` so far): an
   * answer to one is refused. Worth a warning.
   */
  readonly forgot: (count: number, total: number) => void
  /** The current attempt opened or ended: the shell's loop may go on. */
  readonly wake: () => void
  /** Sets a deadline: `check` runs once the time reaches `at` (ms), then whenever it asks again. */
  readonly schedule: (at: number, check: Check) => Entry
}

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
 * - `Finish`: the connection is over; `error` is the attempt's fatal error, `defect` a transport's bug;
 * - `Retry`: try again after the schedule (`first-connect` while never open, else `reconnect`),
 *   restarted first when `reset` (the attempt made progress); `giveUp`: do not try again (a
 *   connection never open that used a whole connect time-out); `resent`: answers written before
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
 * An attempt's phase, as {@link Connection.phase} reports it for the shell's loop.
 *
 * @since 0.1.0
 * @category models
 */
export type Phase = "connecting" | "open" | "ended" | "stale"

/**
 * Milliseconds as Effect's `Duration.format` writes them (`1m 30s`, `250ms`).
 */
const formatMillis = (millis: number): string => {
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

/**
 * One connection.
 *
 * @example
 * ```ts
 * import { Connection } from "effect-agent-session-core"
 *
 * type Event = { readonly type: string }
 * const delivered: Array<Event> = []
 * const connection = new Connection.Connection<Event, Error>(
 *   { bufferSize: 16, answerBufferSize: 4, idleTimeoutMillis: 60_000, endOnError: false, failOnFrameError: true },
 *   {
 *     kind: (event) => event.type === "complete" ? "complete" : event.type === "heartbeat" ? "keep-alive" : "event",
 *     requestKey: () => "",
 *     message: (error) => error.message,
 *     chargeable: () => false
 *   },
 *   {
 *     deliver: (event) => delivered.push(event),
 *     pause: () => {}, resume: () => {}, abort: () => {}, write: () => {}, skipped: () => {}, forgot: () => {},
 *     wake: () => {},
 *     schedule: () => ({ cancel: () => {} })
 *   }
 * )
 * const attempt = connection.begin(0)   // the shell opens a socket for attempt 1
 * connection.opened(attempt, 5)         // ... it opened
 * connection.frameArrived(attempt, 6, { type: "complete" }, undefined)
 * connection.attemptEnded(attempt, 7)   // { _tag: "Finish", reason: "complete", ... }
 * connection.finish("complete")         // nothing unsent
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export class Connection<E, F, R = F> {
  private readonly flow: Flow
  private readonly replay = new Replay()
  private readonly ledger: Ledger
  private finished = false
  private skippedCount = 0

  // Across attempts (the loop's bookkeeping).
  private everOpen = false
  private reconnects = 0
  private downSince: number | undefined = undefined
  private bout = 0
  private retries = 0
  private lastError = ""
  private openReport: OpenReport = { reconnects: 0, downtimeMillis: undefined, reopened: false }

  // The current attempt.
  private attempt = 0
  private opened_ = false
  private ended = false
  private progressed = false
  private writing = false
  private lastFrameAt = 0
  private ending: Ending<F, R> | undefined = undefined
  private entries: Array<Entry> = []
  /**
   * Frames of a possible replay held back (only where the service is known to replay), in
   * arrival order, keep-alives among them; their prints beside them. At most `REPLAY_WINDOW`.
   */
  private held: Array<E> = []
  private heldPrints: Array<string | undefined> = []
  private readonly idleCheck: Check = (now) => this.idle(now)
  private readonly replayCheck: Check = () => {
    if (!this.ended) this.settleReplay()
    return undefined
  }

  constructor(
    private readonly options: Options,
    private readonly classifier: Classifier<E, F, R>,
    private readonly port: Port<E, F>
  ) {
    this.flow = new Flow(options.bufferSize)
    this.ledger = new Ledger(options.pendingRequests ?? [])
  }

  // ---------------------------------------------------------------------------
  // What the shell reads
  // ---------------------------------------------------------------------------

  /** Events delivered and not yet taken by the consumer. */
  get buffered(): number {
    return this.flow.held
  }

  /** The most events ever held for the consumer. */
  get peakBuffered(): number {
    return this.flow.peak
  }

  /** Frame errors skipped so far. */
  get skipped(): number {
    return this.skippedCount
  }

  /** The answer ledger's size: requests remembered, the characters of their keys, the pending ones forgotten. */
  ledgerSize(): { readonly requests: number; readonly keyChars: number; readonly forgotten: number } {
    let keyChars = 0
    for (const key of this.ledger.requests.keys()) keyChars += key.length
    return { requests: this.ledger.requests.size, keyChars, forgotten: this.ledger.forgotten }
  }

  /** Whether the connection is over ({@link Connection.finish}). */
  get isFinished(): boolean {
    return this.finished
  }

  /** The attempts of the current bout, the current one included (1 for a fresh bout). */
  get attemptNumber(): number {
    return this.bout
  }

  /** What the last open reported. */
  get lastOpen(): OpenReport {
    return this.openReport
  }

  /** The phase of an attempt: `stale` when it is not the current one. */
  phase(attempt: number): Phase {
    if (attempt !== this.attempt || this.finished) return "stale"
    return this.ended ? "ended" : this.opened_ ? "open" : "connecting"
  }

  /** How an attempt ended, once it has. */
  endingOf(attempt: number): Ending<F, R> | undefined {
    return attempt === this.attempt ? this.ending : undefined
  }

  // ---------------------------------------------------------------------------
  // Attempts
  // ---------------------------------------------------------------------------

  /**
   * A new attempt begins (the shell then opens its transport): returns its id, which every input
   * of the attempt names. Reading is on again; the events it starts with may be a replay.
   */
  begin(now: number): number {
    this.clearDeadlines()
    this.attempt += 1
    this.bout += 1
    this.opened_ = false
    this.ended = false
    this.progressed = false
    this.writing = false
    this.lastFrameAt = now
    this.ending = undefined
    this.held = []
    this.heldPrints = []
    this.flow.reset()
    this.replay.reopened()
    return this.attempt
  }

  /** The attempt's transport exists (it may not be open yet): reading pauses if the buffer is full. */
  transportCreated(attempt: number): void {
    if (attempt !== this.attempt || this.ended) return
    if (this.flow.shouldPause()) this.port.pause()
  }

  /**
   * The attempt's transport opened (and sent the handshake): counted open (a reopening counts a
   * reconnect), the idle time-out armed, the queued answers written.
   */
  opened(attempt: number, now: number): void {
    if (attempt !== this.attempt || this.ended || this.opened_ || this.finished) return
    this.opened_ = true
    this.lastFrameAt = now
    // A transport paused while it was connecting may not have stopped reading: pause it again.
    if (this.flow.paused) this.port.pause()
    else if (this.flow.shouldPause()) this.port.pause()
    const reopened = this.everOpen
    if (reopened) this.reconnects += 1
    this.everOpen = true
    this.openReport = {
      reconnects: this.reconnects,
      downtimeMillis: this.downSince === undefined ? undefined : now - this.downSince,
      reopened
    }
    this.downSince = undefined
    this.entries.push(this.port.schedule(now + this.options.idleTimeoutMillis, this.idleCheck))
    // A service known to replay: frames that may be a replay are held at most `replayHoldMillis`.
    if (this.options.replaysOnReconnect === true && this.replay.active) {
      this.entries.push(
        this.port.schedule(now + (this.options.replayHoldMillis ?? defaults.replayHoldMillis), this.replayCheck)
      )
    }
    this.startWriting()
    this.port.wake()
  }

  /** The attempt's transport ended, as it says (the first ending of an attempt wins). */
  closed(attempt: number, ending: Ending<F, R>): void {
    if (attempt !== this.attempt) return
    this.end(ending)
  }

  /**
   * After the attempt ended (and the shell closed its transport): end the connection, or retry.
   * A drop requeues the answers written and not confirmed; a normal end confirms them.
   */
  attemptEnded(attempt: number, now: number): Next<F, R> {
    const ending: Ending<F, R> = attempt === this.attempt && this.ending !== undefined
      ? this.ending
      : { _tag: "Defect", defect: new Error("the attempt has not ended") }
    const replayDropped = this.replay.takeDropped()
    switch (ending._tag) {
      case "End":
        this.ledger.confirm()
        return { _tag: "Finish", reason: ending.reason, replayDropped }
      case "Fatal":
        return { _tag: "Finish", reason: ending.reason, error: ending.error, replayDropped }
      case "Defect":
        return { _tag: "Finish", reason: "failed", defect: ending.defect, replayDropped }
      case "Retry":
        break
    }
    const resent = this.ledger.requeue()
    if (this.opened_) this.downSince = now
    this.lastError = typeof ending.error === "string" ? ending.error : this.classifier.message(ending.error)
    const base = { resent, lastError: this.lastError, error: ending.error, replayDropped }
    if (!this.everOpen) {
      return {
        _tag: "Retry",
        schedule: "first-connect",
        reset: false,
        giveUp: ending.connectTimeout === true,
        attempts: this.bout,
        ...base
      }
    }
    const reset = this.progressed
    if (reset) {
      // It delivered new events: a fresh bout, a fresh schedule.
      this.bout = 1
      this.retries = 0
    }
    return { _tag: "Retry", schedule: "reconnect", reset, giveUp: false, attempts: this.bout, ...base }
  }

  /** The reconnect schedule decided to try again: the retry's number in this bout, and why. */
  retrying(): { readonly attempt: number; readonly lastError: string } {
    this.retries += 1
    return { attempt: this.retries, lastError: this.lastError }
  }

  /** The schedule gave up: the connection is lost (never connected when it never opened). */
  gaveUp(): { readonly neverOpen: boolean; readonly attempts: number; readonly lastError: string } {
    return { neverOpen: !this.everOpen, attempts: this.bout, lastError: this.lastError }
  }

  /**
   * The connection is over, for `reason`: the answers accepted and not delivered (a clean end
   * confirms what was written first: the close came after it on the wire). Nothing of the last
   * attempt is kept; every deadline is cleared. Once only: `undefined` afterwards.
   */
  finish(reason: CloseReason): ReadonlyArray<UnsentAnswer> | undefined {
    if (this.finished) return undefined
    // Frames held as a possible replay are decided (delivered or dropped), not lost.
    if (!this.ended) this.settleReplay()
    this.finished = true
    this.clearDeadlines()
    this.ended = true
    const clean = reason !== "connection-lost" && reason !== "failed" && reason !== "handshake-rejected" &&
      reason !== "superseded"
    return this.ledger.close(clean)
  }

  // ---------------------------------------------------------------------------
  // Frames
  // ---------------------------------------------------------------------------

  /** An event arrived on an attempt (`print`: its identity for replay detection, if it has one). */
  frameArrived(attempt: number, now: number, event: E, print: string | undefined): void {
    if (attempt !== this.attempt || this.ended) return
    this.lastFrameAt = now
    const kind = this.classifier.kind(event)
    // Keep-alives prove the socket, not progress: never part of a replay.
    if (kind === "keep-alive") {
      // A keep-alive ends a replay burst: what was held is decided first (arrival order is kept).
      if (this.held.length > 0) this.settleReplay()
      return this.deliver(event, kind)
    }
    if (!this.replay.active) return this.progress(event, kind, print)
    const seen = this.replay.seen + 1
    const verdict = this.replay.next(print)
    if (this.options.replaysOnReconnect !== true) {
      // The service is not known to replay: everything is delivered, as it comes. The phase only
      // says whether the attempt made progress: a frame beyond the repeat of the delivered tail.
      if (verdict >= 0 && seen > verdict) this.madeProgress()
      this.replay.delivered(print)
      return this.deliver(event, kind)
    }
    if (verdict === HOLD) {
      this.held.push(event)
      this.heldPrints.push(print)
      return
    }
    this.release(verdict, event, print)
  }

  /** A frame of an attempt could not be read (malformed, undecodable, too large). */
  frameFailed(attempt: number, now: number, error: F): void {
    if (attempt !== this.attempt || this.ended) return
    this.lastFrameAt = now
    // A frame error ends a replay phase (a replay is a run of events): what was held goes first.
    if (this.replay.active) this.settleReplay()
    if (this.ended) return
    // A chargeable event is never skipped: it would be hidden from the budget.
    if (this.options.failOnFrameError || this.classifier.chargeable(error)) {
      return this.end({ _tag: "Fatal", error, reason: "failed" })
    }
    this.skippedCount += 1
    this.port.skipped(error, this.skippedCount)
  }

  /** Bytes arrived that carry no event (an SSE comment): the connection is not idle. */
  alive(attempt: number, now: number): void {
    if (attempt === this.attempt && !this.ended) this.lastFrameAt = now
  }

  /** The consumer took `count` events: reading resumes once the buffer is down to half. */
  taken(count: number, now: number): void {
    if (this.flow.taken(count) && this.attempt !== 0 && !this.ended) {
      this.lastFrameAt = now
      this.port.resume()
    }
  }

  // ---------------------------------------------------------------------------
  // Answers
  // ---------------------------------------------------------------------------

  /**
   * An answer was given: queued (and written at once when the attempt is open), or why not
   * (`channel-closed` once the connection is over).
   */
  answer(answer: QueuedAnswer): Refusal | "channel-closed" | undefined {
    if (this.finished) return "channel-closed"
    const refusal = this.ledger.queue(answer, this.options.answerBufferSize)
    if (refusal !== undefined) return refusal
    this.startWriting()
    return undefined
  }

  /**
   * The answer the shell's writer writes next on the attempt, if any (none once the attempt is
   * over): the writer stops when there is none.
   */
  nextAnswer(attempt: number): QueuedAnswer | undefined {
    const head = attempt === this.attempt && this.opened_ && !this.ended ? this.ledger.head() : undefined
    if (head === undefined && attempt === this.attempt) this.writing = false
    return head
  }

  /** The answer given by `nextAnswer` was written: acknowledged by the service, or handed to the socket. */
  answerWritten(attempt: number, how: "confirmed" | "written"): void {
    if (attempt === this.attempt) this.ledger.wrote(how)
  }

  /**
   * The answer given by `nextAnswer` was not written. `refused`: the service refused it (its
   * request is pending again) and the writer goes on; `stop`: the answer stays queued for the
   * next attempt and the writer stops (this attempt is over, or will be once its closing socket
   * reports its close).
   */
  answerFailed(attempt: number, now: number, failure: WriteFailure): "refused" | "stop" {
    if (attempt !== this.attempt) return "stop"
    if (!failure.retry && failure.closing !== true) {
      this.ledger.refused()
      return "refused"
    }
    this.writing = false
    const ending: Ending<F, R> = { _tag: "Retry", error: `answer not written: ${failure.message}` }
    if (failure.closing === true) {
      // The socket's close (1000 ends, else a reconnect) decides; should none come within the
      // grace period, the attempt is given up as a drop.
      this.entries.push(this.port.schedule(now + CLOSING_GRACE_MILLIS, () => {
        this.end(ending)
        return undefined
      }))
    } else {
      this.end(ending)
    }
    return "stop"
  }

  // ---------------------------------------------------------------------------
  // Internals
  // ---------------------------------------------------------------------------

  /**
   * The replay phase ends without a frame that decides it (a keep-alive or a frame error came,
   * the hold time is over, or the attempt is ending): the replay is what matched a whole tail so far.
   */
  private settleReplay(): void {
    if (!this.replay.active) return
    const seen = this.replay.seen
    const replayed = this.replay.settle()
    if (this.options.replaysOnReconnect !== true) {
      if (seen > replayed) this.madeProgress()
      return
    }
    this.release(replayed, undefined, undefined)
  }

  /**
   * The phase was decided: of the held events (and `last`, the one that decided it), the first
   * `replayed` that are not keep-alives are the replay (dropped, unless asked again), the rest are
   * delivered, in arrival order.
   */
  private release(replayed: number, last: E | undefined, lastPrint: string | undefined): void {
    const held = this.held
    const prints = this.heldPrints
    this.held = []
    this.heldPrints = []
    if (last !== undefined) {
      held.push(last)
      prints.push(lastPrint)
    }
    let index = 0
    for (let i = 0; i < held.length; i++) {
      const event = held[i]!
      const kind = this.classifier.kind(event)
      if (kind === "keep-alive") {
        this.deliver(event, kind)
      } else if (index++ < replayed) {
        // A request asked again after its answer went through is new to the caller (pending
        // again); it is already in the delivered window at its place.
        if (kind === "request" && this.ledger.isAnswered(this.classifier.requestKey(event))) {
          this.progressed = true
          this.deliver(event, kind)
        } else {
          this.replay.drop()
        }
      } else {
        this.progress(event, kind, prints[i])
      }
      // Delivering `complete` (or an `error` with `endOnError`) ended the attempt.
      if (this.ended) return
    }
  }

  /** A new event: remembered for replay detection, progress, and delivered. */
  private progress(event: E, kind: EventKind, print: string | undefined): void {
    this.replay.delivered(print)
    this.madeProgress()
    this.deliver(event, kind)
  }

  /** The attempt delivered a new event: the reconnect bout restarts; answers written got through. */
  private madeProgress(): void {
    this.progressed = true
    // The service went on talking after the answers were written: they got through.
    if (this.ledger.hasUnconfirmed) this.ledger.confirm()
  }

  /** Hands an event to the shell (and ends the attempt on `complete`, or an `error` with `endOnError`). */
  private deliver(event: E, kind: EventKind): void {
    if (kind === "request") {
      // Pending in the ledger, which forgets the oldest past its bound.
      const forgotten = this.ledger.forgotten
      this.ledger.received(this.classifier.requestKey(event))
      if (this.ledger.forgotten !== forgotten) this.port.forgot(this.ledger.forgotten - forgotten, this.ledger.forgotten)
    }
    this.port.deliver(event)
    if (this.flow.received()) this.port.pause()
    if (kind === "complete") return this.end({ _tag: "End", reason: "complete" })
    if (kind === "error" && this.options.endOnError) return this.end({ _tag: "End", reason: "error-event" })
  }

  private startWriting(): void {
    if (this.attempt === 0 || !this.opened_ || this.ended || this.writing || this.ledger.head() === undefined) return
    this.writing = true
    this.port.write()
  }

  /** The idle deadline: when to look again, or the attempt dropped. */
  private idle(now: number): number | undefined {
    if (this.ended) return undefined
    const idle = this.options.idleTimeoutMillis
    // A paused transport reads nothing: that is not the service's silence.
    if (this.flow.paused) return now + idle
    const left = this.lastFrameAt + idle - now
    if (left > 0) return now + left
    this.port.abort()
    this.end({ _tag: "Retry", error: `no frame for ${formatMillis(idle)} (idle time-out)` })
    return undefined
  }

  private end(ending: Ending<F, R>): void {
    if (this.ended) return
    // Frames held as a possible replay are decided before the end (delivering `complete` ends it).
    this.settleReplay()
    if (this.ended) return
    this.ended = true
    this.ending = ending
    this.clearDeadlines()
    this.port.wake()
  }

  private clearDeadlines(): void {
    if (this.entries.length === 0) return
    for (const entry of this.entries) entry.cancel()
    this.entries = []
  }
}
