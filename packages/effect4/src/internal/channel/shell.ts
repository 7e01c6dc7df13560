/**
 * The Effect shell of one connection around the protocol core's `Connection`, which owns every
 * piece of the connection's state and decides: this module acts. {@link Shell} is the core's
 * `Port` (events into the consumer's `Queue`, pause and resume on the current transport, the
 * answer writer forked in the attempt's scope, deadlines on the service's shared timer, skipped
 * frames logged); {@link AttemptHooks} is what one attempt's transport calls (frames decoded here,
 * with the SDK's schemas, and handed to the core), and how the connection's fiber waits for the
 * attempt to open and to end.
 *
 * Synchronous per frame, classes rather than closures: a frame goes from the socket's callback
 * through the decoder and the core into the `Queue` without an Effect.
 */
import type * as Cause from "effect/Cause"
import type * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Queue from "effect/Queue"
import type * as Redacted from "effect/Redacted"
import * as Result from "effect/Result"
import type * as Scope from "effect/Scope"
import { Connection, Ledger, Replay, Session, Sse } from "effect-agent-session-core"
import { type ConnectTimeout, type EventStreamError, type FrameError, FrameTooLarge, truncateRaw } from "../../Errors.js"
import * as SessionEvent from "../../SessionEvent.js"
import type * as Wire from "../../Wire.js"
import type * as Deadlines from "./deadlines.js"
import { scrubFrameError } from "./scrub.js"
import type { Settings } from "./settings.js"
import type { AttemptOutcome, Hooks, Io } from "./transport.js"

/** The key a request is answered by. */
export const keyOf = (request: SessionEvent.ExternalResourceRequested): string =>
  Ledger.requestKey(request.action_session_id, SessionEvent.resourceTypeRaw(request.resource_type))

/** An event's wire name (an unknown event's own): what the core tells its kind by. */
export const wireNameOf = (event: SessionEvent.SessionEvent): string =>
  event._tag === "Unrecognized" ? event.event : SessionEvent.wireNames[event._tag]

/** What each event is, for the protocol core (and the test kit's scripted channel). */
export const classifier: Connection.Classifier<SessionEvent.SessionEvent, EventStreamError, ConnectTimeout> = {
  kind: (event) => Session.kindOf(wireNameOf(event)),
  requestKey: (event) => event._tag === "ExternalResourceRequested" ? keyOf(event) : "",
  message: (error) => error.message,
  // An `action_run` that does not decode: chargeable, never skipped.
  chargeable: (error) => error._tag === "EventDecodeError" && Session.kindOf(error.event) === "chargeable"
}

/** The queue the consumer reads: the events, then the end (`Cause.Done`) or the failure. */
export type EventQueue = Queue.Queue<SessionEvent.SessionEvent, EventStreamError | Cause.Done>

/** One connection's shell: the core's `Port`. */
export class Shell implements Connection.Port<SessionEvent.SessionEvent, EventStreamError> {
  readonly connection: Connection.Connection<SessionEvent.SessionEvent, EventStreamError, ConnectTimeout>
  /** The current attempt (a transport of an earlier one may still talk: it is ignored). */
  current: AttemptHooks | undefined = undefined
  /**
   * The running attempt's context (logger, annotations, span, Clock), for what the core asks
   * from a socket's callback.
   */
  context: Context.Context<never> | undefined = undefined
  started = false
  runner: Fiber.Fiber<unknown, unknown> | undefined = undefined

  constructor(
    readonly sessionId: string,
    readonly settings: Settings,
    readonly queue: EventQueue,
    readonly decode: Wire.FrameDecoder,
    readonly clock: Clock.Clock,
    readonly deadlines: Deadlines.Deadlines,
    /** The answer writer of an attempt, forked by `write`. */
    private readonly writer: (shell: Shell, attempt: AttemptHooks) => Effect.Effect<void>
  ) {
    this.connection = new Connection.Connection({
      bufferSize: settings.bufferSize,
      answerBufferSize: settings.answerBufferSize,
      idleTimeoutMillis: Duration.toMillis(settings.idleTimeout),
      endOnError: settings.endOnError,
      failOnFrameError: settings.failOnFrameError,
      pendingRequests: settings.pendingRequests.map(keyOf),
      replaysOnReconnect: settings.dropReplays,
      replayHoldMillis: Duration.toMillis(settings.replayHold)
    }, classifier, this)
  }

  /** Runs an effect in the background with the running attempt's context. */
  private fork<A, E>(effect: Effect.Effect<A, E>): Fiber.Fiber<A, E> | undefined {
    return this.context === undefined ? undefined : Effect.runForkWith(this.context)(effect)
  }

  // --- Port ---
  deliver(event: SessionEvent.SessionEvent): void {
    Queue.offerUnsafe(this.queue, event)
  }
  pause(): void {
    this.current?.io?.pause()
  }
  resume(): void {
    this.current?.io?.resume()
  }
  abort(): void {
    this.current?.io?.abort()
  }
  write(): void {
    const attempt = this.current
    if (attempt === undefined) return
    // Interruptible between answers whatever the caller is (each write is not); gone with the attempt.
    const fiber = this.fork(Effect.interruptible(this.writer(this, attempt)))
    if (fiber !== undefined) Fiber.runIn(fiber, attempt.scope)
  }
  skipped(error: EventStreamError, count: number): void {
    const raw = "raw" in error ? truncateRaw(error.raw) : ""
    this.fork(
      Effect.logWarning(`Skipped a frame: ${error.message}`).pipe(
        Effect.annotateLogs({ frameError: error._tag, skipped: count, raw })
      )
    )
  }
  forgot(count: number, total: number): void {
    this.fork(
      Effect.logWarning(
        `${count} unanswered request(s) forgotten: more than ${Ledger.MAX_REQUESTS} wait for an answer (respond to them fails with RequestNotPending)`
      ).pipe(Effect.annotateLogs({ forgotten: total }))
    )
  }
  wake(): void {
    this.current?.wake()
  }
  schedule(at: number, check: Deadlines.Check): Deadlines.Entry {
    return this.deadlines.scheduleUnsafe(at, check, this.context ?? Context.empty())
  }

  /** The time on the connection's Clock (ms). */
  now(): number {
    return this.clock.currentTimeMillisUnsafe()
  }
}

/**
 * One attempt: the hooks its transport calls, and how the connection's fiber waits for it to
 * open and to end (a callback, not a `Deferred`).
 */
export class AttemptHooks implements Hooks {
  io: Io | undefined = undefined
  /** The transport opened (even if the attempt ended since). */
  opened = false
  private waiter: (() => void) | undefined = undefined

  constructor(
    readonly shell: Shell,
    readonly id: number,
    readonly key: Redacted.Redacted<string>,
    readonly scope: Scope.Closeable
  ) {}

  get deadlines(): Deadlines.Deadlines {
    return this.shell.deadlines
  }

  private get isCurrent(): boolean {
    return this.shell.current === this
  }

  /** Whether the connection still takes what this attempt's transport reports. */
  get live(): boolean {
    return this.isCurrent && this.shell.connection.takes(this.id)
  }

  /** Waits until the attempt has opened or ended (`ended`: until it has ended). */
  wait(ended: boolean): Effect.Effect<void> {
    return Effect.callback<void>((resume) => {
      const ready = () => this.shell.connection.settled(this.id, ended)
      if (ready()) return resume(Effect.void)
      this.waiter = () => {
        if (!ready()) return
        this.waiter = undefined
        resume(Effect.void)
      }
    })
  }

  /** The core says the attempt opened or ended. */
  wake(): void {
    this.waiter?.()
  }

  // --- Hooks ---
  attach(io: Io): void {
    this.io = io
    this.shell.connection.transportCreated(this.id)
  }
  open(): void {
    if (this.shell.connection.phase(this.id) !== "connecting") return
    this.opened = true
    this.shell.connection.opened(this.id, this.shell.now())
  }
  frame(data: string | Uint8Array): void {
    if (!this.isCurrent) return
    this.accept(this.shell.decode(data), Replay.frameKey(data))
  }
  /**
   * Server-Sent Events: the engine is built with the `event-data` framing for them, and the same
   * decoder reads the `{event,data}` frame rebuilt from the SSE event.
   */
  namedEvent(name: string, data: string): void {
    if (!this.isCurrent) return
    const text = Sse.eventFrame(name, data)
    this.accept(this.shell.decode(text), text)
  }
  tooLarge(size: number): void {
    if (!this.isCurrent) return
    this.accept(Result.fail(new FrameTooLarge({ size, limit: this.shell.settings.maxFrameSize })), undefined)
  }
  alive(): void {
    this.shell.connection.alive(this.id, this.shell.now())
  }
  end(outcome: AttemptOutcome | Exit.Exit<AttemptOutcome>): void {
    const ending: AttemptOutcome = !Exit.isExit(outcome)
      ? outcome
      : Exit.isSuccess(outcome)
      ? outcome.value
      : { _tag: "Defect", defect: outcome.cause }
    this.shell.connection.closed(this.id, ending)
  }

  private accept(result: Result.Result<SessionEvent.SessionEvent, FrameError>, print: string | undefined): void {
    const { connection } = this.shell
    const now = this.shell.now()
    if (Result.isSuccess(result)) return connection.frameArrived(this.id, now, result.success, print)
    connection.frameFailed(this.id, now, scrubFrameError(result.failure, this.key))
  }
}
