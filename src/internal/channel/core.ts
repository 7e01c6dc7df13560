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
import { frameKey, Replay } from "./replay.js"
import { scrubFrameError } from "./scrub.js"
import type { Settings } from "./settings.js"
import { type AttemptOutcome, End, Fatal, type Hooks, type Io } from "./transport.js"

/** The key a request is answered by. */
export const keyOf = (request: SessionEvent.ExternalResourceRequested): string =>
  Ledger.requestKey(request.action_session_id, SessionEvent.resourceTypeRaw(request.resource_type))

const isKeepAlive = (event: SessionEvent.SessionEvent): boolean =>
  event._tag === "Heartbeat" || event._tag === "Connected"

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
      const error = scrubFrameError(result.left, attempt.key)
      if (this.settings.failOnFrameError) return attempt.end(Fatal(error, "failed"))
      return this.skip(error)
    }
    const event = result.right
    // Progress is a new event (issue 12 defect 10); keep-alives prove the socket, not progress.
    if (!isKeepAlive(event)) {
      // (No closure per frame: `admit`, spelled out.)
      if (this.replay.replayed(print) && !this.askedAgain(event)) return this.replay.drop()
      this.replay.delivered(print)
      attempt.gotFrame = true
      // The service went on talking after the answers were written: they got through.
      if (Ledger.hasUnconfirmed(this.ledger)) this.ledger = Ledger.confirm(this.ledger)
    }
    if (event._tag === "ExternalResourceRequested") this.ledger = Ledger.received(this.ledger, keyOf(event))
    this.mailbox.unsafeOffer(event)
    if (this.flow.received()) attempt.io?.pause()
    if (event._tag === "Complete") return attempt.end(End("complete"))
    if (event._tag === "AgentError" && this.settings.endOnError) return attempt.end(End("error-event"))
  }

  /** A request asked again after its answer went through: new to the caller, even in a replay. */
  private askedAgain(event: SessionEvent.SessionEvent): boolean {
    return event._tag === "ExternalResourceRequested" && Ledger.isAnswered(this.ledger, keyOf(event))
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
