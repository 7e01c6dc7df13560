/**
 * One connection of the event channel, as a state machine without I/O: the one owner of the
 * connection's state and of its current attempt's. Its inputs are method calls named for what
 * happened (an attempt began, the transport opened, a frame arrived, the consumer took events, an
 * answer was given or written, time passed, the transport ended); its outputs are returned, never
 * called back: what the shell must do, polled after each input ({@link Connection.poll}: deliver
 * this event, pause or resume reading, drop the transport, write the queued answers, wake the
 * loop), when it must next tell the time ({@link Connection.nextDeadline}, then
 * {@link Connection.timeout}), and, at the end of an attempt, the decision
 * {@link Connection.attemptEnded} returns (end with this reason, or retry on which schedule). No
 * input calls the shell, so none can re-enter the connection: the shape of h11's
 * `receive_data`/`next_event` and quinn-proto's `handle_timeout`/`poll_timeout`/`poll`.
 *
 * The shell owns the sockets, the fibers, the schedules, the decoding of frames into events, the
 * errors, spans, logs and metrics. Events and errors are the shell's own values (`E`, `F`, `R`):
 * the connection only asks the shell's {@link Classifier} what an event is. The rules it keeps,
 * input by input, are listed in the package's README ("How a shell drives a connection") and in
 * each method's documentation.
 *
 * @since 0.1.0
 */
import { Flow } from "./Flow.js"
import {
  type Action,
  type Classifier,
  CLOSING_GRACE_MILLIS,
  type CloseReason,
  defaults,
  DRAIN_GRACE_MILLIS,
  type Ending,
  type State,
  type EventKind,
  formatMillis,
  type Next,
  type OpenReport,
  type Options,
  type Phase,
  type WriteFailure
} from "./internal/connection.js"
import { Attempts } from "./internal/attempts.js"
import { Intake } from "./internal/intake.js"
import { Ledger, type QueuedAnswer, type Refusal, type UnsentAnswer } from "./Ledger.js"

export {
  /**
   * How long a socket found closing may take to report its close before the attempt is given up.
   *
   * @since 0.1.0
   */
  CLOSING_GRACE_MILLIS,
  /**
   * The defaults of a connection's options, and of the shell's.
   *
   * @since 0.1.0
   */
  defaults,
  /**
   * Whether the public state may go from one value to another: `Connecting -> Open ->
   * Reconnecting{attempt} -> Open ... -> Closed`, `Closed` final.
   *
   * @since 0.1.0
   * @category guards
   */
  follows,
  /**
   * A count option: a finite number >= 1 (rounded down), else the fallback.
   *
   * @since 0.1.0
   */
  positiveInt
} from "./internal/connection.js"
export type {
  Action,
  Classifier,
  CloseReason,
  Ending,
  EventKind,
  Next,
  OpenReport,
  Options,
  Phase,
  State,
  WriteFailure
} from "./internal/connection.js"

/** The states most connections publish, one object each for every connection (states are read, never changed). */
const connecting: State = Object.freeze({ _tag: "Connecting" })
const openedOnce: State = Object.freeze({ _tag: "Open", reconnects: 0, downtimeMillis: undefined })

/**
 * One connection.
 *
 * @example
 * ```ts
 * import { Connection } from "effect-agent-session-core"
 *
 * type Event = { readonly type: string }
 * const connection = new Connection.Connection<Event, Error>(
 *   { bufferSize: 16, answerBufferSize: 4, idleTimeoutMillis: 60_000, endOnError: false, failOnFrameError: true },
 *   {
 *     kind: (event) => event.type === "complete" ? "complete" : event.type === "heartbeat" ? "keep-alive" : "event",
 *     requestKey: () => "",
 *     message: (error) => error.message,
 *     chargeable: () => false
 *   }
 * )
 * const attempt = connection.begin(0)   // the shell opens a socket for attempt 1
 * connection.opened(attempt, 5)         // ... it opened
 * connection.poll()                     // { _tag: "Wake" }: the loop may go on
 * connection.nextDeadline()             // 60_005: the idle time-out, unless a frame comes
 * connection.frameArrived(attempt, 6, { type: "complete" }, undefined)
 * connection.poll()                     // { _tag: "Deliver", event: { type: "complete" } }
 * connection.poll()                     // { _tag: "Wake" }: the attempt ended
 * connection.poll()                     // undefined: nothing more to do
 * connection.attemptEnded(attempt, 7)   // { _tag: "Finish", reason: "complete", ... }
 * connection.finish("complete")         // nothing unsent
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export class Connection<E, F, R = F> extends Intake<E> {
  private readonly flow: Flow
  private readonly ledger: Ledger
  private finished = false
  private skippedCount = 0
  private published: State = connecting

  /** Across attempts: reconnects, downtime, the bout since the last progress, the last error. */
  private readonly attempts = new Attempts()

  // The current attempt.
  private attempt = 0
  private opened_ = false
  private ended = false
  private progressed = false
  private writing = false
  private lastFrameAt = 0
  private ending: Ending<F, R> | undefined = undefined
  /** The caller asked for the current attempt to be the last ({@link Connection.drain}). */
  private draining = false

  // The current attempt's deadlines (ms): the idle check, the end of a replay's hold, the end of
  // a closing socket's grace (and how the attempt ends then). The idle check is not moved by each
  // frame: when it comes due it looks at the last frame and says when to look again.
  private idleAt: number | undefined = undefined
  private holdAt: number | undefined = undefined
  private graceAt: number | undefined = undefined
  private graceEnding: Ending<F, R> | undefined = undefined

  /**
   * What the shell must do, in the order decided: `actions[head]` to `actions[tail - 1]`. The
   * array is kept (emptied slot by slot, not reallocated), so a frame costs no array growth.
   */
  private readonly actions: Array<Action<E, F> | undefined> = []
  private head = 0
  private tail = 0

  constructor(
    private readonly options: Options,
    private readonly classifier: Classifier<E, F, R>
  ) {
    super(options.replaysOnReconnect === true)
    this.flow = new Flow(options.bufferSize)
    this.ledger = new Ledger(options.pendingRequests ?? [])
  }

  // ---------------------------------------------------------------------------
  // What the shell must do
  // ---------------------------------------------------------------------------

  /**
   * The next thing the shell must do, as decided by the inputs so far, or `undefined` when there is
   * none. The shell polls after each input until `undefined`, and does each in turn.
   */
  poll(): Action<E, F> | undefined {
    if (this.head === this.tail) return undefined
    const action = this.actions[this.head]
    // The slot lets go of its event.
    this.actions[this.head] = undefined
    this.head += 1
    if (this.head === this.tail) {
      this.head = 0
      this.tail = 0
    }
    return action
  }

  /**
   * When the shell must next call {@link Connection.timeout} (ms on the shell's clock), or
   * `undefined` when no deadline is set. It changes only on an open, a closing socket, the end of
   * an attempt and a timeout, not with each frame.
   */
  nextDeadline(): number | undefined {
    let next = this.idleAt
    if (this.holdAt !== undefined && (next === undefined || this.holdAt < next)) next = this.holdAt
    if (this.graceAt !== undefined && (next === undefined || this.graceAt < next)) next = this.graceAt
    return next
  }

  /**
   * The time is `now`: the deadlines due act (a replay's hold ends, a closing socket's grace is
   * over, an idle attempt is dropped), and the later ones stay ({@link Connection.nextDeadline}).
   */
  timeout(now: number): void {
    if (this.holdAt !== undefined && this.holdAt <= now) {
      this.holdAt = undefined
      if (!this.ended) this.settleReplay()
    }
    if (this.graceAt !== undefined && this.graceAt <= now) {
      const ending = this.graceEnding
      this.graceAt = undefined
      this.graceEnding = undefined
      if (ending !== undefined) this.end(ending)
    }
    if (this.idleAt !== undefined && this.idleAt <= now) this.idleAt = this.idle(now)
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
    return this.attempts.bout
  }

  /** What the last open reported. */
  get lastOpen(): OpenReport {
    return this.attempts.lastOpen
  }

  /** The public state last decided: `Connecting` at first ({@link State}). */
  get state(): State {
    return this.published
  }

  /** The phase of an attempt: `stale` when it is not the current one. */
  phase(attempt: number): Phase {
    if (attempt !== this.attempt || this.finished) return "stale"
    return this.ended ? "ended" : this.opened_ ? "open" : "connecting"
  }

  /** Whether what an attempt's transport reports is still taken: it is current and has not ended. */
  takes(attempt: number): boolean {
    const phase = this.phase(attempt)
    return phase !== "ended" && phase !== "stale"
  }

  /**
   * Whether a wait on an attempt is over: it has ended (or is no longer current), or, unless
   * `untilEnded`, it has opened.
   */
  settled(attempt: number, untilEnded: boolean): boolean {
    return !this.takes(attempt) || (!untilEnded && this.phase(attempt) === "open")
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
    this.attempts.began()
    this.opened_ = false
    this.ended = false
    this.progressed = false
    this.writing = false
    this.lastFrameAt = now
    this.ending = undefined
    this.flow.reset()
    this.reopenIntake()
    return this.attempt
  }

  /**
   * The attempt's transport exists (it may not be open yet): reading pauses if the buffer is full.
   * A transport that cannot pause (`pausable: false`) is bounded instead: a frame that finds
   * `Flow.overflowLimit(bufferSize)` events waiting ends the attempt (`Overflow`, never retried),
   * after every event before it; the frames after it are not taken.
   */
  transportCreated(attempt: number, pausable = true): void {
    if (attempt !== this.attempt || this.ended) return
    if (!pausable) this.flow.unpausable()
    if (this.flow.shouldPause()) this.push(PAUSE)
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
    if (this.flow.paused) this.push(PAUSE)
    else if (this.flow.shouldPause()) this.push(PAUSE)
    this.attempts.opened(now)
    this.idleAt = now + this.options.idleTimeoutMillis
    // A service known to replay: frames that may be a replay are held at most `replayHoldMillis`.
    if (this.options.replaysOnReconnect === true && this.replay.active) {
      this.holdAt = now + (this.options.replayHoldMillis ?? defaults.replayHoldMillis)
    }
    this.startWriting()
    this.push(WAKE)
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
    // A drained attempt is the last: the service's close answering the caller's, or a drop, ends
    // the connection as the caller's close. An end the service decided itself stays what it is.
    if (this.draining && (ending._tag === "Retry" || (ending._tag === "End" && ending.reason === "closed-by-service"))) {
      if (ending._tag === "End") this.ledger.confirm()
      return { _tag: "Finish", reason: "closed-by-caller", replayDropped }
    }
    switch (ending._tag) {
      case "End":
        this.ledger.confirm()
        return { _tag: "Finish", reason: ending.reason, replayDropped }
      case "Fatal":
        return { _tag: "Finish", reason: ending.reason, error: ending.error, replayDropped }
      case "Defect":
        return { _tag: "Finish", reason: "failed", defect: ending.defect, replayDropped }
      case "Overflow":
        return { _tag: "Finish", reason: "failed", overflow: ending.limit, replayDropped }
      case "Retry":
        break
    }
    const resent = this.ledger.requeue()
    const lastError = typeof ending.error === "string" ? ending.error : this.classifier.message(ending.error)
    // It delivered new events: a fresh bout, a fresh schedule.
    const reset = this.attempts.dropped(now, this.opened_, lastError, this.progressed)
    // A connection that resumes one watched before is retried like a dropped one from the start.
    const reconnecting = this.attempts.everOpen || this.options.resumes === true
    return {
      _tag: "Retry",
      schedule: reconnecting ? "reconnect" : "first-connect",
      reset,
      // A new connection never open that used a whole connect time-out is not tried again.
      giveUp: !reconnecting && ending.connectTimeout === true,
      attempts: this.attempts.bout,
      resent,
      lastError,
      error: ending.error,
      replayDropped
    }
  }

  /**
   * The caller asks for the open attempt to be the last, read until the service's close answers
   * the close the shell sends on it (so that every frame sent before that close is delivered);
   * the connection then finishes as the caller's close ({@link Connection.attemptEnded}). Should
   * no close come within 10 s, the attempt is ended then. False when the attempt is not open
   * (connecting, ended, or the connection finished): the shell closes instead.
   */
  drain(attempt: number, now: number): boolean {
    if (attempt !== this.attempt || !this.opened_ || this.ended || this.finished) return false
    this.draining = true
    if (this.graceAt === undefined || this.graceAt > now + DRAIN_GRACE_MILLIS) {
      this.graceAt = now + DRAIN_GRACE_MILLIS
      this.graceEnding = { _tag: "Retry", error: "no close answered the drain" }
    }
    return true
  }

  /** The reconnect schedule decided to try again: the retry's number in this bout, and why. */
  retrying(): { readonly attempt: number; readonly lastError: string } {
    return this.attempts.retrying()
  }

  /**
   * The shell saw its current attempt open (even one that has ended since): the `Open` state to
   * publish, with the last open's counts. `undefined` (nothing to publish) before any open, or
   * once finished.
   */
  publishOpen(): State | undefined {
    if (this.finished || !this.attempts.everOpen) return undefined
    const { downtimeMillis, reconnects } = this.attempts.lastOpen
    this.published = reconnects === 0 && downtimeMillis === undefined
      ? openedOnce
      : { _tag: "Open", reconnects, downtimeMillis }
    return this.published
  }

  /**
   * The reconnect schedule decided to try again: the retry counted ({@link Connection.retrying})
   * and the `Reconnecting` state to publish. `undefined` (nothing counted, nothing to publish)
   * once finished.
   */
  publishReconnecting(): State | undefined {
    if (this.finished) return undefined
    this.published = { _tag: "Reconnecting", ...this.retrying() }
    return this.published
  }

  /** The schedule gave up: the connection is lost (never connected when it never opened). */
  gaveUp(): { readonly neverOpen: boolean; readonly attempts: number; readonly lastError: string } {
    return { neverOpen: !this.attempts.everOpen, attempts: this.attempts.bout, lastError: this.attempts.lastError }
  }

  /**
   * The connection is over, for `reason`: the answers accepted and not delivered (a clean end
   * confirms what was written first: the close came after it on the wire). Nothing of the last
   * attempt is kept; every deadline is cleared. The public state is `Closed` from then on
   * ({@link Connection.state}, to publish). Once only: `undefined` afterwards.
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
    const unsent = this.ledger.close(clean)
    this.published = unsent.length === 0 ? { _tag: "Closed", reason } : { _tag: "Closed", reason, unsent }
    return unsent
  }

  // ---------------------------------------------------------------------------
  // Frames
  // ---------------------------------------------------------------------------

  /** An event arrived on an attempt (`print`: its identity for replay detection, if it has one). */
  frameArrived(attempt: number, now: number, event: E, print: string | undefined): void {
    if (attempt !== this.attempt || this.ended) return
    if (this.flow.overflows()) return this.overflow()
    this.lastFrameAt = now
    const kind = this.classifier.kind(event)
    // Keep-alives prove the socket, not progress.
    if (kind === "keep-alive") return this.keepAlive(event, kind)
    this.intake(event, kind, print)
  }

  /** A frame of an attempt could not be read (malformed, undecodable, too large). */
  frameFailed(attempt: number, now: number, error: F): void {
    if (attempt !== this.attempt || this.ended) return
    if (this.flow.overflows()) return this.overflow()
    this.lastFrameAt = now
    // A frame error ends a replay phase (a replay is a run of events): what was held goes first.
    if (this.replay.active) this.settleReplay()
    if (this.ended) return
    // A chargeable event is never skipped: it would be hidden from the budget.
    if (this.options.failOnFrameError || this.classifier.chargeable(error)) {
      return this.end({ _tag: "Fatal", error, reason: "failed" })
    }
    this.skippedCount += 1
    this.push({ _tag: "Skipped", error, count: this.skippedCount })
  }

  /** Bytes arrived that carry no event (an SSE comment): the connection is not idle. */
  alive(attempt: number, now: number): void {
    if (attempt === this.attempt && !this.ended) this.lastFrameAt = now
  }

  /** The consumer took `count` events: reading resumes once the buffer is down to half. */
  taken(count: number, now: number): void {
    if (this.flow.taken(count) && this.attempt !== 0 && !this.ended) {
      this.lastFrameAt = now
      this.push(RESUME)
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
    if (this.ended) return "stop"
    const ending: Ending<F, R> = { _tag: "Retry", error: `answer not written: ${failure.message}` }
    if (failure.closing === true) {
      // The socket's close (1000 ends, else a reconnect) decides; should none come within the
      // grace period, the attempt is given up as a drop. A later failed write does not extend it.
      if (this.graceAt === undefined) {
        this.graceAt = now + CLOSING_GRACE_MILLIS
        this.graceEnding = ending
      }
    } else {
      this.end(ending)
    }
    return "stop"
  }

  // ---------------------------------------------------------------------------
  // Internals
  // ---------------------------------------------------------------------------

  // --- Intake: what the intake of a reconnect's events asks of the connection ---
  protected kindOf(event: E): EventKind {
    return this.classifier.kind(event)
  }
  protected isAnswered(event: E): boolean {
    return this.ledger.isAnswered(this.classifier.requestKey(event))
  }
  protected deliverAskedAgain(event: E, kind: EventKind): void {
    this.progressed = true
    this.deliver(event, kind)
  }
  protected hasEnded(): boolean {
    return this.ended
  }

  /** The attempt delivered a new event: the reconnect bout restarts; answers written got through. */
  protected madeProgress(): void {
    this.progressed = true
    // The service went on talking after the answers were written: they got through.
    if (this.ledger.hasUnconfirmed) this.ledger.confirm()
  }

  /** Hands an event to the shell (and ends the attempt on `complete`, or an `error` with `endOnError`). */
  protected deliver(event: E, kind: EventKind): void {
    if (kind === "request") {
      // Pending in the ledger, which forgets the oldest past its bound.
      const forgotten = this.ledger.forgotten
      this.ledger.received(this.classifier.requestKey(event))
      if (this.ledger.forgotten !== forgotten) {
        this.push({ _tag: "Forgot", count: this.ledger.forgotten - forgotten, total: this.ledger.forgotten })
      }
    }
    this.push({ _tag: "Deliver", event })
    if (this.flow.received()) this.push(PAUSE)
    if (kind === "complete") return this.end({ _tag: "End", reason: "complete" })
    if (kind === "error" && this.options.endOnError) return this.end({ _tag: "End", reason: "error-event" })
  }

  private startWriting(): void {
    if (this.attempt === 0 || !this.opened_ || this.ended || this.writing || this.ledger.head() === undefined) return
    this.writing = true
    this.push(WRITE)
  }

  /** A frame found the buffer of a transport that cannot pause at its limit: the attempt ends. */
  private overflow(): void {
    this.end({ _tag: "Overflow", limit: this.flow.limit })
  }

  /** The idle deadline: when to look again, or the attempt dropped. */
  private idle(now: number): number | undefined {
    if (this.ended) return undefined
    const idle = this.options.idleTimeoutMillis
    // A paused transport reads nothing: that is not the service's silence.
    if (this.flow.paused) return now + idle
    const left = this.lastFrameAt + idle - now
    if (left > 0) return now + left
    this.push(ABORT)
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
    this.push(WAKE)
  }

  private push(action: Action<E, F>): void {
    this.actions[this.tail] = action
    this.tail += 1
  }

  private clearDeadlines(): void {
    this.idleAt = undefined
    this.holdAt = undefined
    this.graceAt = undefined
    this.graceEnding = undefined
  }
}

// The actions without a payload: one object each.
const PAUSE: Action<never, never> = { _tag: "Pause" }
const RESUME: Action<never, never> = { _tag: "Resume" }
const ABORT: Action<never, never> = { _tag: "Abort" }
const WRITE: Action<never, never> = { _tag: "Write" }
const WAKE: Action<never, never> = { _tag: "Wake" }
