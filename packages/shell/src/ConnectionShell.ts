/**
 * The shell of one connection around the core's `Connection`, written once for every edition: what
 * feeds the connection its inputs and does what it decides ({@link ConnectionShell}: after each
 * input it polls the connection's actions and does them, and keeps one entry on the edition's timer
 * at the connection's next deadline) and what one attempt's transport calls ({@link Attempt}:
 * attached, open, a frame, a named SSE event, a frame too large, bytes without an event, the end).
 * Both are abstract classes: an edition extends them with what only it can do (hand an event to
 * its consumer's queue, fork the answer writer, log a warning, set a deadline on its timer, read
 * its clock, decode a frame with its schemas, build its errors) and this module decides the rest.
 * Classes, not closures: their methods are shared by every connection.
 *
 * Synchronous per frame: a frame goes from the transport's callback through the edition's decoder
 * and the core into the edition's queue, with no allocation of its own.
 *
 * @since 0.1.0
 */
import { Connection, Events, Ledger, Replay, Secrets, Session, type Frame } from "effect-agent-session-core"
import type { Check, Entry } from "./Deadlines.js"

/**
 * A request as every edition's `ExternalResourceRequested` event carries it: what it is answered by.
 *
 * @since 0.1.0
 * @category models
 */
export interface Request {
  readonly _tag: "ExternalResourceRequested"
  readonly action_session_id: string
  /** A known resource type, or an unknown one kept with its wire text. */
  readonly resource_type: string | { readonly raw: string }
}

/**
 * An event as every edition's `SessionEvent` is shaped: a known event by its tag, a request with
 * its ids, an unknown event with its own wire name.
 *
 * @since 0.1.0
 * @category models
 */
export type Event =
  | { readonly _tag: Exclude<Events.KnownTag, "ExternalResourceRequested"> }
  | Request
  | { readonly _tag: "Unrecognized"; readonly event: string }

/**
 * An error of an edition's connection, as the shell reads it: its tag and its message (and the
 * raw text or the event name some carry).
 *
 * @since 0.1.0
 * @category models
 */
export interface Failure {
  readonly _tag: string
  readonly message: string
}

/**
 * The key a request is answered by (`Ledger.requestKey`).
 *
 * @since 0.1.0
 * @category accessors
 */
export const keyOf = (request: Request): string =>
  Ledger.requestKey(
    request.action_session_id,
    typeof request.resource_type === "string" ? request.resource_type : request.resource_type.raw
  )

/**
 * An event's wire name (an unknown event's own): what the core tells its kind by.
 *
 * @since 0.1.0
 * @category accessors
 */
export const wireNameOf = (event: Event): string =>
  event._tag === "Unrecognized" ? event.event : Events.wireNames[event._tag]

/**
 * An optional field as every edition's `Option` is shaped.
 *
 * @since 0.1.0
 * @category models
 */
export type OptionLike<A> = { readonly _tag: "None" } | { readonly _tag: "Some"; readonly value: A }

/**
 * A `complete` event as every edition's `Complete` carries its cost.
 *
 * @since 0.1.0
 * @category models
 */
export interface Complete {
  readonly _tag: "Complete"
  readonly total_cost: OptionLike<number>
  readonly cost_summary: OptionLike<{ readonly [key: string]: unknown }>
}

/**
 * An event as the session's rules read it: an {@link Event}, an `error` event with its text.
 *
 * @since 0.1.0
 * @category models
 */
export type WatchedEvent = Event | { readonly _tag: "AgentError"; readonly error: string }

const valueOf = <A>(option: OptionLike<A>): A | undefined => option._tag === "Some" ? option.value : undefined

/**
 * What each event is, for the core's `Session.Watched` (the budget, the outcome, the pending
 * requests), over every edition's events: the editions' running sessions and the cluster's
 * sessions fold with it.
 *
 * @since 0.1.0
 * @category models
 */
export const sessionClassifier: Session.Classifier<WatchedEvent, Request, Complete & WatchedEvent> = {
  wireName: wireNameOf,
  actionSessionId: (request) => request.action_session_id,
  resourceType: (request) => Events.rawOf(request.resource_type),
  errorText: (event) => event._tag === "AgentError" && "error" in event ? event.error : "",
  cost: (complete) => Events.totalCost(valueOf(complete.total_cost), valueOf(complete.cost_summary))
}

/**
 * What each event and error is, for the core's `Connection`, over every edition's events and
 * errors (and the test kits' scripted channels).
 *
 * @since 0.1.0
 * @category models
 */
export const classifier: Connection.Classifier<Event, Failure, Failure> = {
  kind: (event) => Session.kindOf(wireNameOf(event)),
  requestKey: (event) => event._tag === "ExternalResourceRequested" ? keyOf(event) : "",
  message: (error) => error.message,
  // An `action_run` that does not decode: chargeable, never skipped.
  chargeable: (error) =>
    error._tag === "EventDecodeError" && "event" in error && typeof error.event === "string" &&
    Session.kindOf(error.event) === "chargeable"
}

/**
 * What an attempt's open transport lets the shell do with its reading (the edition's `Io` has
 * these, and the answer's `send`).
 *
 * @since 0.1.0
 * @category models
 */
export interface Reader {
  /** Stops reading (back-pressure). */
  readonly pause: () => void
  /** Reads again. */
  readonly resume: () => void
  /** Drops the connection at once (idle time-out). */
  readonly abort: () => void
  /**
   * Sends the close and reads on until the service's close ends the attempt; false when the
   * transport cannot (then nothing was sent). Absent on transports that never can.
   */
  readonly drain?: (() => boolean) | undefined
}

/** A frame error's raw text, bounded, for a log (empty for one without). */
const rawOf = (error: Failure): string =>
  "raw" in error && typeof error.raw === "string" ? Secrets.truncateRaw(error.raw) : ""

/**
 * The warning logged when the ledger forgets unanswered requests to keep its bound.
 *
 * @since 0.1.0
 * @category accessors
 */
export const forgottenWarning = (count: number): string =>
  `${count} unanswered request(s) forgotten: more than ${Ledger.MAX_REQUESTS} wait for an answer (respond to them fails with RequestNotPending)`

/**
 * What the connection's loop logs (at debug level) as an attempt opens.
 *
 * @since 0.1.0
 * @category accessors
 */
export const openedLog = (report: Connection.OpenReport): string =>
  report.reconnects === 0 ? "Event channel open" : "Event channel reopened"

/**
 * What the connection's loop logs (at info level) as an attempt ended and is retried, unless the
 * schedule gives up: the last error, said as "not open yet" for a connection never open.
 *
 * @since 0.1.0
 * @category accessors
 */
export const retryLog = <F, R>(next: Extract<Connection.Next<F, R>, { readonly _tag: "Retry" }>): string =>
  next.schedule === "first-connect"
    ? `Event channel not open yet: ${next.lastError}`
    : `Event channel attempt ended: ${next.lastError}`

/**
 * What the connection's loop logs (at info level) when answers written just before a drop will be
 * sent again.
 *
 * @since 0.1.0
 * @category accessors
 */
export const resentLog = (count: number): string =>
  `${count} answer(s) written just before the drop will be sent again`

/**
 * What an attempt logs (at debug level) when it dropped events as a replay.
 *
 * @since 0.1.0
 * @category accessors
 */
export const replayDroppedLog = (count: number): string =>
  `${count} event(s) sent again after the reconnect were dropped (a replay)`

/**
 * What the connection logs (at debug level) as it closes.
 *
 * @since 0.1.0
 * @category accessors
 */
export const closedLog = (reason: Connection.CloseReason): string => `Event channel closed: ${reason}`

/**
 * A connection that finished: the fields of its `Closed` state, and the warning to log (answers
 * accepted and not delivered).
 *
 * @since 0.1.0
 * @category models
 */
export interface Finished {
  readonly closed: { readonly reason: Connection.CloseReason; readonly unsent?: ReadonlyArray<Ledger.UnsentAnswer> }
  readonly warning: string | undefined
}

/**
 * One connection's shell: the connection it owns, the inputs it feeds it, and what it does of the
 * connection's decisions. The edition's class extends it with its consumer's queue, its answer
 * writer, its timer, its clock and its logger.
 *
 * @example
 * ```ts
 * import { ConnectionShell, type Deadlines } from "effect-agent-session-shell"
 *
 * type Event = ConnectionShell.Event
 * type Failure = ConnectionShell.Failure
 *
 * class Shell extends ConnectionShell.ConnectionShell<Event, Failure> {
 *   readonly events: Array<Event> = []
 *   deliver(event: Event): void {
 *     this.events.push(event)
 *   }
 *   write(): void {}
 *   schedule(_at: number, _check: Deadlines.Check): Deadlines.Entry {
 *     return { cancel: () => {} }
 *   }
 *   now(): number {
 *     return Date.now()
 *   }
 *   protected warn(message: string): void {
 *     console.warn(message)
 *   }
 * }
 *
 * class Attempt extends ConnectionShell.Attempt<Event, Failure> {
 *   protected read(data: string | Uint8Array, print: string | undefined): void {
 *     if (typeof data === "string") this.event(JSON.parse(data), print)
 *   }
 *   protected readNamed(name: string, data: string, print: string): void {
 *     this.event({ ...JSON.parse(data || "{}"), _tag: name }, print)
 *   }
 *   protected frameTooLarge(size: number): Failure {
 *     return { _tag: "FrameTooLarge", message: `a frame of ${size} bytes` }
 *   }
 *   protected scrub(error: Failure): Failure {
 *     return error
 *   }
 * }
 *
 * const shell = new Shell(
 *   { bufferSize: 16, answerBufferSize: 4, idleTimeoutMillis: 60_000, endOnError: false, failOnFrameError: true },
 *   ConnectionShell.classifier
 * )
 * const attempt = new Attempt(shell, shell.begin())
 * shell.current = attempt
 * attempt.open()
 * attempt.frame(`{"_tag":"Started"}`) // shell.events: [{ _tag: "Started" }]
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export abstract class ConnectionShell<E, F extends Failure, R = F, I extends Reader = Reader> {
  readonly connection: Connection.Connection<E, F, R>
  /** The current attempt (a transport of an earlier one may still talk: it is ignored). */
  current: Attempt<E, F, R, I> | undefined = undefined
  /** The connection was started (or closed before it started). */
  started = false
  /** The entry on the edition's timer, at the connection's next deadline (`armedAt`). */
  private deadline: Entry | undefined = undefined
  private armedAt: number | undefined = undefined
  /** Running the timer's check (which reschedules its own entry). */
  private checking = false
  /** The timer's check: the connection is told the time, its actions done, its next deadline returned. */
  private readonly check: Check = (now) => {
    // The timer ends this entry when the check throws (a defect): until it returns, none is armed,
    // so that the next input arms a fresh one.
    const entry = this.deadline
    this.deadline = undefined
    this.armedAt = undefined
    this.checking = true
    try {
      this.connection.timeout(now)
      this.drain()
    } finally {
      this.checking = false
    }
    const next = this.connection.nextDeadline()
    this.armedAt = next
    this.deadline = next === undefined ? undefined : entry
    return next
  }

  constructor(options: Connection.Options, classifier: Connection.Classifier<E, F, R>) {
    this.connection = new Connection.Connection(options, classifier)
  }

  // --- What the edition does ---
  /** Hands an event to the consumer's queue. */
  abstract deliver(event: E): void
  /** Forks the answer writer of the current attempt, in the attempt's scope. */
  abstract write(): void
  /** Sets a deadline on the service's shared timer. */
  abstract schedule(at: number, check: Check): Entry
  /** The time on the connection's clock (ms). */
  abstract now(): number
  /** Logs a warning with its annotations, from a transport's callback. */
  protected abstract warn(message: string, annotations: Record<string, unknown>): void

  // --- The connection's decisions ---
  /**
   * Does what the connection decided, in order, until nothing is left; then moves the timer's
   * entry to the connection's next deadline (when that changed). Called after every input. An
   * action may make its transport report at once (a resumed socket hands over the frames it held):
   * that input's own drain goes on down the same queue, so its `Pause` is done before the
   * transport reads on, and the order stays the order decided.
   */
  drain(): void {
    for (let action = this.connection.poll(); action !== undefined; action = this.connection.poll()) {
      this.act(action)
    }
    if (!this.checking) this.rearm()
  }

  /**
   * The caller asks for the open attempt to be the last, read until the service's close answers
   * the close its transport sends ({@link Connection.drain}): the connection then finishes as the
   * caller's close, with every frame sent before that close delivered. False when it cannot be
   * drained (no open attempt, a transport that cannot): the caller closes instead.
   */
  drainAttempt(): boolean {
    const attempt = this.current
    const io = attempt?.io
    if (attempt === undefined || io?.drain === undefined || !this.connection.drain(attempt.id, this.now())) return false
    if (!io.drain()) return false
    this.drain()
    return true
  }

  private act(action: Connection.Action<E, F>): void {
    switch (action._tag) {
      case "Deliver":
        return this.deliver(action.event)
      case "Pause":
        return this.current?.io?.pause()
      case "Resume":
        return this.current?.io?.resume()
      case "Abort":
        return this.current?.io?.abort()
      case "Write":
        return this.write()
      case "Skipped": {
        const { count, error } = action
        return this.warn(`Skipped a frame: ${error.message}`, { frameError: error._tag, skipped: count, raw: rawOf(error) })
      }
      case "Forgot":
        return this.warn(forgottenWarning(action.count), { forgotten: action.total })
      case "Wake":
        return this.current?.wake()
    }
  }

  /** One timer entry per connection, at its next deadline: moved only when that changes. */
  private rearm(): void {
    const at = this.connection.nextDeadline()
    if (at === this.armedAt) return
    this.deadline?.cancel()
    this.armedAt = at
    this.deadline = at === undefined ? undefined : this.schedule(at, this.check)
  }

  // --- The inputs the edition's loop and consumer give ---
  /** A new attempt begins (`Connection.begin`): its id. The last attempt's deadlines are gone. */
  begin(): number {
    const id = this.connection.begin(this.now())
    this.drain()
    return id
  }

  /** An attempt ended before its transport existed (`Connection.closed`): its key could not be read. */
  closed(attempt: number, ending: Connection.Ending<F, R>): void {
    this.connection.closed(attempt, ending)
    this.drain()
  }

  /** The consumer took `count` events (`Connection.taken`): reading may resume. */
  taken(count: number): void {
    this.connection.taken(count, this.now())
    this.drain()
  }

  /**
   * An answer to `request` was given (`frame`: as written on the wire): queued, and written at once
   * when the attempt is open, or why not (`Connection.answer`).
   */
  answer(request: Request, frame: string, data: Frame.AnswerData): Ledger.Refusal | "channel-closed" | undefined {
    const refusal = this.connection.answer({ key: keyOf(request), frame, data })
    this.drain()
    return refusal
  }

  /**
   * The connection is over, for `reason` (`Connection.finish`): what its `Closed` state says, and
   * the warning to log when answers were not sent. Nothing of the last attempt (its key among it)
   * is kept, and its timer entry is gone. Once only: `undefined` afterwards.
   */
  finish(reason: Connection.CloseReason): Finished | undefined {
    const unsent = this.connection.finish(reason)
    // Frames held as a possible replay were decided: delivered first.
    this.drain()
    if (unsent === undefined) return undefined
    this.current = undefined
    if (unsent.length === 0) return { closed: { reason }, warning: undefined }
    return {
      closed: { reason, unsent },
      warning: `${unsent.length} answer(s) not sent (or not confirmed): the event channel closed (${reason})`
    }
  }

  /**
   * The consumer's first pull: whether to start the connection's fiber (once, and not when the
   * connection was closed first).
   */
  start(): boolean {
    if (this.started) return false
    this.started = true
    return !this.connection.isFinished
  }
}

/**
 * One attempt: the hooks its transport calls, and how the connection's fiber learns that it
 * opened or ended (a callback, not a promise). The edition's class extends it with the attempt's
 * key and scope, its decoder and its errors (`FE`: its frame errors).
 *
 * @since 0.1.0
 * @category models
 */
export abstract class Attempt<E, F extends Failure, R = F, I extends Reader = Reader, FE extends F = F> {
  io: I | undefined = undefined
  /** The transport opened (even if the attempt ended since). */
  opened = false
  private resumer: (() => void) | undefined = undefined
  private untilEnded = false

  constructor(readonly shell: ConnectionShell<E, F, R, I>, readonly id: number) {}

  /** Decodes one frame of the attempt and hands it on: {@link Attempt.event} or {@link Attempt.failed}. */
  protected abstract read(data: string | Uint8Array, print: string | undefined): void
  /** Decodes one named event (Server-Sent Events) and hands the result to `event` or `failed`. */
  protected abstract readNamed(name: string, data: string, print: string): void
  /** The error of an event larger than the limit, discarded while it was read (`size` bytes). */
  protected abstract frameTooLarge(size: number): FE
  /** A frame error without the attempt's key, should the service echo it ({@link scrubFrameError}). */
  protected abstract scrub(error: FE): FE

  private get isCurrent(): boolean {
    return this.shell.current === this
  }

  /** Whether the connection still takes what this attempt's transport reports. */
  get live(): boolean {
    return this.isCurrent && this.shell.connection.takes(this.id)
  }

  /**
   * Calls `resume` once the attempt has opened or ended (`ended`: once it has ended). Returns
   * true, without keeping `resume`, when it has already.
   */
  whenSettled(ended: boolean, resume: () => void): boolean {
    if (this.shell.connection.settled(this.id, ended)) return true
    this.untilEnded = ended
    this.resumer = resume
    return false
  }

  /** The core says the attempt opened or ended. */
  wake(): void {
    const resume = this.resumer
    if (resume === undefined || !this.shell.connection.settled(this.id, this.untilEnded)) return
    this.resumer = undefined
    resume()
  }

  // --- What the transport calls ---
  /**
   * The connection exists (before it opens): frames may be paused from then on. A transport that
   * cannot pause (`pausable: false`) is bounded by the connection instead (`Connection.transportCreated`).
   */
  attach(io: I, pausable = true): void {
    this.io = io
    this.shell.connection.transportCreated(this.id, pausable)
    this.shell.drain()
  }
  /** The transport opened (and sent the handshake). */
  open(): void {
    if (this.shell.connection.phase(this.id) !== "connecting") return
    this.opened = true
    this.shell.connection.opened(this.id, this.shell.now())
    this.shell.drain()
  }
  /** One raw frame of the dialect's framing. */
  frame(data: string | Uint8Array): void {
    if (!this.isCurrent) return
    this.read(data, Replay.frameKey(data))
  }
  /**
   * One Server-Sent Event, its name apart from its data: the edition's decoder reads it as the
   * `event-data` frame it stands for (`FrameReader.named`), without that frame being built.
   */
  namedEvent(name: string, data: string): void {
    if (!this.isCurrent) return
    // Its identity for replay detection: the name (quoted, so it ends unambiguously), then the data.
    this.readNamed(name, data, JSON.stringify(name) + data)
  }
  /** An event larger than the limit, discarded while it was read (Server-Sent Events). */
  tooLarge(size: number): void {
    if (!this.isCurrent) return
    this.failed(this.frameTooLarge(size))
  }
  /** Bytes arrived that carry no event (an SSE comment): the connection is not idle. */
  alive(): void {
    this.shell.connection.alive(this.id, this.shell.now())
  }
  /** How the attempt ended (the first call wins). */
  end(ending: Connection.Ending<F, R>): void {
    this.shell.closed(this.id, ending)
  }

  // --- What the edition's decoder calls ---
  /** A frame of the attempt decoded into an event (`print`: its identity for replay detection). */
  event(event: E, print: string | undefined): void {
    this.shell.connection.frameArrived(this.id, this.shell.now(), event, print)
    this.shell.drain()
  }
  /** A frame of the attempt that could not be read: handed on without the key. */
  failed(error: FE): void {
    this.shell.connection.frameFailed(this.id, this.shell.now(), this.scrub(error))
    this.shell.drain()
  }

  // --- What the edition's answer writer calls ---
  /**
   * The answer to write next on this attempt, or none: the writer stops (there is none, the
   * attempt is over, or its transport is not attached).
   */
  nextAnswer(): Ledger.QueuedAnswer | undefined {
    const next = this.shell.connection.nextAnswer(this.id)
    return this.io === undefined ? undefined : next
  }
  /** The answer was written: acknowledged by the service, or handed to the socket. */
  answerWritten(how: "confirmed" | "written"): void {
    this.shell.connection.answerWritten(this.id, how)
  }
  /**
   * The answer was not written: whether the writer goes on (the service refused it, which is worth
   * an error log: `Failures.answerRefusedLog`) or stops (the answer waits for the next attempt).
   */
  answerFailed(failure: Connection.WriteFailure): boolean {
    const refused = this.shell.connection.answerFailed(this.id, this.shell.now(), failure) === "refused"
    this.shell.drain()
    return refused
  }
}

/**
 * A frame error as every edition builds it.
 *
 * @since 0.1.0
 * @category models
 */
export type FrameFailure =
  | { readonly _tag: "FrameTooLarge" }
  | { readonly _tag: "MalformedFrame"; readonly raw: string; readonly message: string }
  | { readonly _tag: "EventDecodeError"; readonly event: string; readonly raw: string; readonly message: string }
  | { readonly _tag: "UnknownEvent"; readonly event: string; readonly raw: string }

/**
 * How an edition builds again the frame errors that carry the service's text.
 *
 * @since 0.1.0
 * @category models
 */
export interface FrameErrors<F> {
  readonly MalformedFrame: (fields: { readonly raw: string; readonly message: string }) => F
  readonly EventDecodeError: (
    fields: { readonly event: string; readonly raw: string; readonly message: string }
  ) => F
  readonly UnknownEvent: (fields: { readonly event: string; readonly raw: string }) => F
}

/**
 * A frame error without the key (`Secrets.redactFields` over the fields that carry the service's
 * text): the same error when the key is not in it, else one built again by `make`.
 *
 * @since 0.1.0
 * @category combinators
 */
export const scrubFrameError = <F extends FrameFailure>(error: F, key: string, make: FrameErrors<F>): F => {
  switch (error._tag) {
    case "FrameTooLarge":
      return error
    case "MalformedFrame": {
      const fields = Secrets.redactFields({ raw: error.raw, message: error.message }, key)
      return fields === undefined ? error : make.MalformedFrame(fields)
    }
    case "EventDecodeError": {
      const fields = Secrets.redactFields({ raw: error.raw, message: error.message }, key)
      return fields === undefined ? error : make.EventDecodeError({ event: error.event, ...fields })
    }
    case "UnknownEvent": {
      const fields = Secrets.redactFields({ event: error.event, raw: error.raw }, key)
      return fields === undefined ? error : make.UnknownEvent(fields)
    }
  }
}
