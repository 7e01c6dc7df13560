/**
 * The state of one connection and of its current attempt, and the frame intake: what the
 * transport's callbacks do, synchronously, per frame.
 *
 * Plain mutable fields, not `Ref`s: they are read and written in the socket's callbacks (one per
 * frame), where an Effect per frame halves throughput (bench/RESULTS.md); JavaScript is single
 * threaded, so no callback runs while the connection's fiber does. Classes, not closures: their
 * methods are shared by every connection (issue 15 measures the heap per open connection).
 */
import type * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import type * as Fiber from "effect/Fiber"
import type * as Mailbox from "effect/Mailbox"
import type * as Redacted from "effect/Redacted"
import * as Runtime from "effect/Runtime"
import type * as Scope from "effect/Scope"
import { type EventStreamError, type FrameError, FrameTooLarge, truncateRaw } from "../../Errors.js"
import * as SessionEvent from "../../SessionEvent.js"
import type * as Wire from "../../Wire.js"
import type * as Deadlines from "./deadlines.js"
import { Flow } from "./flow.js"
import * as Ledger from "./ledger.js"
import { frameKey, HOLD, Replay } from "./replay.js"
import { scrubFrameError } from "./scrub.js"
import type { Settings } from "./settings.js"
import { type AttemptOutcome, End, Fatal, type Hooks, type Io } from "./transport.js"

/** The key a request is answered by. */
export const keyOf = (request: SessionEvent.ExternalResourceRequested): string =>
  Ledger.requestKey(request.action_session_id, SessionEvent.resourceTypeRaw(request.resource_type))

const isKeepAlive = (event: SessionEvent.SessionEvent): boolean =>
  event._tag === "Heartbeat" || event._tag === "Connected"

/** A frame error of an event known to be chargeable: an `action_run` whose payload does not decode. */
const isChargeableFrame = (error: FrameError): boolean =>
  error._tag === "EventDecodeError" && error.event === SessionEvent.wireNames.ActionRun

/** One connection's state, across its attempts. */
export class Core {
  readonly flow: Flow
  readonly replay = new Replay()
  ledger: Ledger.Ledger
  current: Attempt | undefined = undefined
  started = false
  finished = false
  runner: Fiber.RuntimeFiber<unknown> | undefined = undefined
  skipped = 0
  /** The running attempt's runtime (logger, annotations), for a skipped frame's warning. */
  runtime: Runtime.Runtime<never> | undefined = undefined
  /**
   * Frames of a possible replay held back (only when the service is known to replay), in arrival
   * order, keep-alives among them; their prints beside them. At most `REPLAY_WINDOW` events.
   */
  private held: Array<SessionEvent.SessionEvent> = []
  private heldPrints: Array<string | undefined> = []

  constructor(
    readonly sessionId: string,
    readonly settings: Settings,
    readonly mailbox: Mailbox.Mailbox<SessionEvent.SessionEvent, EventStreamError>,
    readonly decode: Wire.FrameDecoder,
    readonly clock: Clock.Clock,
    readonly deadlines: Deadlines.Deadlines
  ) {
    this.flow = new Flow(settings.bufferSize)
    this.ledger = Ledger.fromPending(settings.pendingRequests.map(keyOf))
  }

  /** The consumer took `count` events: reading resumes once the buffer is down to half. */
  taken(count: number): void {
    const attempt = this.current
    if (this.flow.taken(count) && attempt !== undefined && !attempt.ended) {
      attempt.lastFrameAt = this.clock.unsafeCurrentTimeMillis()
      attempt.io?.resume()
    }
  }

  /** One decoded frame of the current attempt (`print`: its identity for replay detection). */
  accept(result: Either.Either<SessionEvent.SessionEvent, FrameError>, print: string | undefined): void {
    const attempt = this.current
    if (attempt === undefined || attempt.ended) return
    attempt.lastFrameAt = this.clock.unsafeCurrentTimeMillis()
    if (Either.isLeft(result)) {
      // A frame error ends a replay phase (a replay is a run of events): what was held goes first.
      if (this.replay.active) this.settleReplay(attempt)
      const error = scrubFrameError(result.left, attempt.key)
      // An `action_run` that does not decode is never skipped: it is chargeable, and a skipped
      // one would be hidden from the budget (issue 20, a sibling of item 1).
      if (this.settings.failOnFrameError || isChargeableFrame(error)) return attempt.end(Fatal(error, "failed"))
      return this.skip(error)
    }
    const event = result.right
    // Keep-alives prove the socket, not progress (issue 12 defect 10): never part of a replay.
    if (isKeepAlive(event)) {
      // A keep-alive ends a replay burst: what was held is decided first (arrival order is kept).
      if (this.held.length > 0) this.settleReplay(attempt)
      return this.deliver(attempt, event)
    }
    if (!this.replay.active) return this.progress(attempt, event, print)
    const seen = this.replay.seen + 1
    const verdict = this.replay.next(print)
    if (!this.settings.dropReplays) {
      // The service is not known to replay: everything is delivered, as it comes. The phase only
      // says whether the attempt made progress: a frame beyond the repeat of the delivered tail.
      if (verdict >= 0 && seen > verdict) this.progressed(attempt)
      this.replay.delivered(print)
      return this.deliver(attempt, event)
    }
    if (verdict === HOLD) {
      this.held.push(event)
      this.heldPrints.push(print)
      return
    }
    this.release(attempt, verdict, event, print)
  }

  /**
   * The replay phase ends without a frame that decides it (a keep-alive or a frame error came,
   * the hold time is over, or the attempt ended): the replay is what matched a whole tail so far.
   */
  settleReplay(attempt: Attempt): void {
    if (!this.replay.active) return
    const seen = this.replay.seen
    const replayed = this.replay.settle()
    if (!this.settings.dropReplays) {
      if (seen > replayed) this.progressed(attempt)
      return
    }
    this.release(attempt, replayed, undefined, undefined)
  }

  /**
   * The phase was decided: of the held events (and `last`, the one that decided it), the first
   * `replayed` that are not keep-alives are the replay (dropped, unless asked again), the rest are
   * delivered, in arrival order.
   */
  private release(
    attempt: Attempt,
    replayed: number,
    last: SessionEvent.SessionEvent | undefined,
    lastPrint: string | undefined
  ): void {
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
      if (isKeepAlive(event)) {
        this.deliver(attempt, event)
      } else if (index++ < replayed) {
        // A request asked again after its answer went through is new to the caller (pending
        // again); it is already in the delivered window at its place.
        if (this.askedAgain(event)) {
          attempt.gotFrame = true
          this.deliver(attempt, event)
        } else {
          this.replay.drop()
        }
      } else {
        this.progress(attempt, event, prints[i])
      }
      // Delivering `complete` (or an `error` with `endOnError`) ended the attempt.
      if (attempt.ended) return
    }
  }

  /** A new event: remembered for replay detection, progress, and delivered. */
  private progress(attempt: Attempt, event: SessionEvent.SessionEvent, print: string | undefined): void {
    this.replay.delivered(print)
    this.progressed(attempt)
    this.deliver(attempt, event)
  }

  /** The attempt delivered a new event: the reconnect bout restarts; answers written got through. */
  private progressed(attempt: Attempt): void {
    attempt.gotFrame = true
    // The service went on talking after the answers were written: they got through.
    if (Ledger.hasUnconfirmed(this.ledger)) this.ledger = Ledger.confirm(this.ledger)
  }

  /** Hands an event to the consumer (and ends the attempt on `complete`, or an `error` with `endOnError`). */
  private deliver(attempt: Attempt, event: SessionEvent.SessionEvent): void {
    if (event._tag === "ExternalResourceRequested") this.request(event)
    this.mailbox.unsafeOffer(event)
    if (this.flow.received()) attempt.io?.pause()
    if (event._tag === "Complete") return attempt.end(End("complete"))
    if (event._tag === "AgentError" && this.settings.endOnError) return attempt.end(End("error-event"))
  }

  /** A request asked again after its answer went through: new to the caller, even in a replay. */
  private askedAgain(event: SessionEvent.SessionEvent): boolean {
    return event._tag === "ExternalResourceRequested" && Ledger.isAnswered(this.ledger, keyOf(event))
  }

  /** A request arrived: pending in the ledger (which forgets the oldest past its bound, with a warning). */
  private request(event: SessionEvent.ExternalResourceRequested): void {
    const forgotten = this.ledger.forgotten
    this.ledger = Ledger.received(this.ledger, keyOf(event))
    if (this.ledger.forgotten === forgotten || this.runtime === undefined) return
    Runtime.runFork(this.runtime)(
      Effect.logWarning(
        `${this.ledger.forgotten - forgotten} unanswered request(s) forgotten: more than ${Ledger.MAX_REQUESTS} wait for an answer (respond to them fails with RequestNotPending)`
      ).pipe(Effect.annotateLogs({ forgotten: this.ledger.forgotten }))
    )
  }

  private skip(error: FrameError): void {
    this.skipped += 1
    const raw = "raw" in error ? truncateRaw(error.raw) : ""
    if (this.runtime === undefined) return
    Runtime.runFork(this.runtime)(
      Effect.logWarning(`Skipped a frame: ${error.message}`).pipe(
        Effect.annotateLogs({ frameError: error._tag, skipped: this.skipped, raw })
      )
    )
  }
}

/**
 * One attempt: the hooks its transport calls, and how the connection's fiber waits for it to
 * open and to end (a callback, not a `Deferred`: 337 bytes less per attempt, measured).
 */
export class Attempt implements Hooks {
  io: Io | undefined = undefined
  opened = false
  ended = false
  gotFrame = false
  writing = false
  lastFrameAt: number
  outcome: AttemptOutcome | Exit.Exit<AttemptOutcome> | undefined = undefined
  readonly entries: Array<Deadlines.Entry> = []
  private waiter: (() => void) | undefined = undefined

  constructor(
    readonly core: Core,
    readonly key: Redacted.Redacted<string>,
    readonly scope: Scope.CloseableScope
  ) {
    this.lastFrameAt = core.clock.unsafeCurrentTimeMillis()
  }

  get deadlines(): Deadlines.Deadlines {
    return this.core.deadlines
  }

  /** Waits until the attempt has opened or ended (`ended`: until it has ended). */
  wait(ended: boolean): Effect.Effect<void> {
    return Effect.async<void>((resume) => {
      const ready = () => this.ended || (!ended && this.opened)
      if (ready()) return resume(Effect.void)
      this.waiter = () => {
        if (!ready()) return
        this.waiter = undefined
        resume(Effect.void)
      }
    })
  }

  /** Pauses the transport when the buffer is full. */
  pauseIfFull(): void {
    if (this.io !== undefined && this.core.flow.shouldPause()) this.io.pause()
  }

  // --- Hooks ---
  attach(io: Io): void {
    this.io = io
    this.pauseIfFull()
  }
  open(): void {
    if (this.ended || this.opened) return
    this.opened = true
    this.lastFrameAt = this.core.clock.unsafeCurrentTimeMillis()
    // A socket paused while it was connecting may not have stopped reading (`ws` ignores
    // `pause()` until open): pause it again now that it is open.
    if (this.core.flow.paused) this.io?.pause()
    this.waiter?.()
  }
  /** Whether this attempt is the connection's current one (a socket of an earlier one may still talk). */
  private get current(): boolean {
    return this.core.current === this
  }
  frame(data: string | Uint8Array): void {
    if (!this.current) return
    this.core.accept(this.core.decode(data), frameKey(data))
  }
  /**
   * Server-Sent Events: the engine is built with the `event-data` framing for them, and the same
   * decoder reads the `{event,data}` frame rebuilt from the SSE event.
   */
  namedEvent(name: string, data: string): void {
    if (!this.current) return
    const text = `{"event":${JSON.stringify(name)},"data":${data.length === 0 ? "{}" : data}}`
    this.core.accept(this.core.decode(text), text)
  }
  tooLarge(size: number): void {
    if (!this.current) return
    this.core.accept(Either.left(new FrameTooLarge({ size, limit: this.core.settings.maxFrameSize })), undefined)
  }
  alive(): void {
    if (!this.ended) this.lastFrameAt = this.core.clock.unsafeCurrentTimeMillis()
  }
  end(outcome: AttemptOutcome | Exit.Exit<AttemptOutcome>): void {
    if (this.ended) return
    // Frames held as a possible replay are decided before the end (delivering `complete` ends it).
    if (this.current) this.core.settleReplay(this)
    if (this.ended) return
    this.ended = true
    this.outcome = outcome
    this.waiter?.()
  }

  /** How it ended (a failed `Exit` is a defect of the transport: it dies here). */
  result(): Effect.Effect<AttemptOutcome> {
    const outcome = this.outcome
    if (outcome === undefined) return Effect.dieMessage("the attempt has not ended")
    return Exit.isExit(outcome) ? outcome : Effect.succeed(outcome)
  }
}
