/**
 * The Effect shell of one connection: the Effect side of the core's `ConnectionShell` (which
 * feeds the connection its inputs and does what it decides) and `Attempt` (what one attempt's
 * transport calls). This module binds them: events into the consumer's buffer, the answer writer
 * forked for the attempt (stopped as it is released), deadlines on the service's shared timer,
 * warnings logged with the connection's context, frames decoded with the SDK's schemas, and the
 * core's notice that the attempt opened or ended, which starts the loop's next step.
 *
 * Synchronous per frame, classes rather than closures: a frame goes from the socket's callback
 * through the decoder and the core into the consumer's buffer without an Effect.
 */
import type * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import type * as Scope from "effect/Scope"
import type * as Tracer from "effect/Tracer"
import type { Connection } from "effect-agent-session-core"
import { ConnectionSettings, ConnectionShell } from "effect-agent-session-shell"
import {
  type ConnectTimeout,
  EventDecodeError,
  type EventStreamError,
  type FrameError,
  FrameTooLarge,
  MalformedFrame,
  UnknownEvent
} from "../../../src/Errors.js"
import type * as SessionEvent from "../../../src/SessionEvent.js"
import type * as Wire from "../../../src/Wire.js"
import type { Settings } from "./settings.js"
import {
  type CloseableScope,
  currentTimeMillis,
  emptyRunContext,
  failureKey,
  fiberDone,
  forkWith,
  isSuccess,
  makeScopeUnsafe,
  type RunContext,
  type RunningFiber,
  successKey
} from "../../../src/internal/line.js"
import type { EventBuffer } from "./buffer.js"
import type * as Deadlines from "./deadlines.js"
import type { Hooks, Io } from "./transport.js"

/** The key a request is answered by. */
export const keyOf: (request: SessionEvent.ExternalResourceRequested) => string = ConnectionShell.keyOf

/** What each event is, for the protocol core (and the test kit's scripted channel). */
export const classifier: Connection.Classifier<SessionEvent.SessionEvent, EventStreamError, ConnectTimeout> =
  ConnectionShell.classifier

/** The frame errors that carry the service's text, built again without the key. */
const frameErrors: ConnectionShell.FrameErrors<FrameError> = {
  MalformedFrame: (fields) => new MalformedFrame(fields),
  EventDecodeError: (fields) => new EventDecodeError(fields),
  UnknownEvent: (fields) => new UnknownEvent(fields)
}

/** The buffer the consumer reads: the events, then the end or the failure. */
export type Events = EventBuffer<SessionEvent.SessionEvent, EventStreamError>

/** One connection's shell. */
export class Shell extends ConnectionShell.ConnectionShell<SessionEvent.SessionEvent, EventStreamError, ConnectTimeout, Io> {
  declare current: AttemptHooks | undefined
  /**
   * The connection's context (logger, annotations, span, Clock), for what the core asks from a
   * socket's callback.
   */
  context: RunContext | undefined = undefined

  constructor(
    readonly sessionId: string,
    readonly settings: Settings,
    readonly buffer: Events,
    readonly decode: Wire.FrameDecoder,
    readonly clock: Clock.Clock,
    readonly deadlines: Deadlines.Deadlines,
    /** The answer writer of an attempt, forked by `write`. */
    private readonly writer: (attempt: AttemptHooks) => Effect.Effect<void>
  ) {
    super(ConnectionSettings.connectionOptions(settings, Duration.toMillis), classifier)
  }

  /** Runs an effect in the background with the connection's context (nothing once it is over). */
  private fork<A, E>(effect: Effect.Effect<A, E>): RunningFiber<A, E> | undefined {
    return this.context === undefined ? undefined : forkWith(this.context)(effect)
  }

  deliver(event: SessionEvent.SessionEvent): void {
    this.buffer.offer(event)
  }
  write(): void {
    const attempt = this.current
    if (attempt === undefined || attempt.released) return
    // Interruptible between answers whatever the caller is (each write is not); stopped as the
    // attempt is released (`attempt.ts`), kept only while it runs.
    const fiber = this.fork(Effect.interruptible(this.writer(attempt)))
    if (fiber === undefined || fiberDone(fiber)) return
    attempt.writer = fiber
    fiber.addObserver(() => {
      if (attempt.writer === fiber) attempt.writer = undefined
    })
  }
  schedule(at: number, check: Deadlines.Check): Deadlines.Entry {
    return this.deadlines.scheduleUnsafe(at, check, this.context ?? emptyRunContext)
  }
  now(): number {
    return currentTimeMillis(this.clock)
  }
  protected warn(message: string, annotations: Record<string, unknown>): void {
    this.fork(Effect.annotateLogs(Effect.logWarning(message), annotations))
  }
}

/**
 * One attempt: the hooks its transport calls, with its key, its span, the SDK's decoder, and what
 * is released at its end (its answer writer, its transport, its scope if one was asked for).
 */
export class AttemptHooks
  extends ConnectionShell.Attempt<SessionEvent.SessionEvent, EventStreamError, ConnectTimeout, Io, FrameError>
  implements Hooks
{
  /** The answer writer, while it runs. */
  writer: RunningFiber<void> | undefined = undefined
  /** The attempt's scope, once a transport asked for it. */
  scoped: CloseableScope | undefined = undefined
  /** Released (`attempt.ts`): nothing more starts on it. */
  released = false

  constructor(
    override readonly shell: Shell,
    id: number,
    readonly key: Redacted.Redacted<string>,
    /** The `EventStream.attempt` span, ended as the attempt is released. */
    readonly span: Tracer.Span | undefined
  ) {
    super(shell, id)
  }

  scope(): Scope.Scope {
    this.scoped ??= makeScopeUnsafe()
    return this.scoped
  }

  get deadlines(): Deadlines.Deadlines {
    return this.shell.deadlines
  }
  get sessionId(): string {
    return this.shell.sessionId
  }
  get settings(): Settings {
    return this.shell.settings
  }

  protected read(data: string | Uint8Array, print: string | undefined): void {
    // The result's value read by key, not through a function: this is every frame's path.
    const result = this.shell.decode(data)
    if (isSuccess(result)) this.event(result[successKey], print)
    else this.failed(result[failureKey])
  }
  protected readNamed(name: string, data: string, print: string): void {
    const result = this.shell.decode.named(name, data)
    if (isSuccess(result)) this.event(result[successKey], print)
    else this.failed(result[failureKey])
  }
  protected frameTooLarge(size: number): FrameError {
    return new FrameTooLarge({ size, limit: this.shell.settings.maxFrameSize })
  }
  protected scrub(error: FrameError): FrameError {
    return ConnectionShell.scrubFrameError(error, Redacted.value(this.key), frameErrors)
  }
}
