/**
 * The Effect shell of one connection: the Effect 3 side of the core's `ConnectionShell` (which
 * feeds the connection its inputs and does what it decides) and `Attempt` (what one attempt's
 * transport calls). This module binds them: events into the consumer's `Mailbox`, the answer writer forked in the
 * attempt's scope, deadlines on the service's shared timer, warnings logged with the running
 * attempt's runtime, frames decoded with the SDK's schemas, and the connection's fiber waiting for
 * the attempt to open and to end.
 *
 * Synchronous per frame, classes rather than closures: a frame goes from the socket's callback
 * through the decoder and the core into the `Mailbox` without an Effect (src/internal/README.md, "One
 * connection").
 */
import type * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type * as Fiber from "effect/Fiber"
import type * as Mailbox from "effect/Mailbox"
import * as Redacted from "effect/Redacted"
import * as Runtime from "effect/Runtime"
import type * as Scope from "effect/Scope"
import type { Connection } from "effect-agent-session-core"
import { ConnectionSettings, ConnectionShell } from "effect-agent-session-core/shell"
import {
  type ConnectTimeout,
  EventDecodeError,
  type EventStreamError,
  type FrameError,
  FrameTooLarge,
  MalformedFrame,
  UnknownEvent
} from "../../Errors.js"
import type * as SessionEvent from "../../SessionEvent.js"
import type * as Wire from "../../Wire.js"
import type * as Deadlines from "../../../binding/internal/channel/deadlines.js"
import type { Settings } from "../../../binding/internal/channel/settings.js"
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

/** One connection's shell. */
export class Shell extends ConnectionShell.ConnectionShell<SessionEvent.SessionEvent, EventStreamError, ConnectTimeout, Io> {
  declare current: AttemptHooks | undefined
  /** The running attempt's runtime (logger, annotations, Clock), for what the core asks from a callback. */
  runtime: Runtime.Runtime<never> | undefined = undefined
  runner: Fiber.RuntimeFiber<unknown> | undefined = undefined

  constructor(
    readonly sessionId: string,
    readonly settings: Settings,
    readonly mailbox: Mailbox.Mailbox<SessionEvent.SessionEvent, EventStreamError>,
    readonly decode: Wire.FrameDecoder,
    readonly clock: Clock.Clock,
    readonly deadlines: Deadlines.Deadlines,
    /** The answer writer of an attempt, forked by `write`. */
    private readonly writer: (attempt: AttemptHooks) => Effect.Effect<void>
  ) {
    super(ConnectionSettings.connectionOptions(settings, Duration.toMillis), classifier)
  }

  deliver(event: SessionEvent.SessionEvent): void {
    this.mailbox.unsafeOffer(event)
  }
  write(): void {
    const attempt = this.current
    if (attempt === undefined || this.runtime === undefined) return
    // Interruptible between answers whatever the caller is (each write is not); gone with the attempt.
    Runtime.runFork(this.runtime)(Effect.interruptible(this.writer(attempt)), { scope: attempt.scope })
  }
  schedule(at: number, check: Deadlines.Check): Deadlines.Entry {
    return this.deadlines.scheduleUnsafe(at, check, this.runtime ?? Runtime.defaultRuntime)
  }
  now(): number {
    return this.clock.unsafeCurrentTimeMillis()
  }
  protected warn(message: string, annotations: Record<string, unknown>): void {
    if (this.runtime === undefined) return
    Runtime.runFork(this.runtime)(Effect.annotateLogs(Effect.logWarning(message), annotations))
  }
}

/** One attempt: the hooks its transport calls, with its key, its scope and the SDK's decoder. */
export class AttemptHooks
  extends ConnectionShell.Attempt<SessionEvent.SessionEvent, EventStreamError, ConnectTimeout, Io, FrameError>
  implements Hooks
{
  constructor(
    override readonly shell: Shell,
    id: number,
    readonly key: Redacted.Redacted<string>,
    readonly scope: Scope.CloseableScope
  ) {
    super(shell, id)
  }

  get deadlines(): Deadlines.Deadlines {
    return this.shell.deadlines
  }

  /** Waits until the attempt has opened or ended (`ended`: until it has ended). */
  wait(ended: boolean): Effect.Effect<void> {
    return Effect.async<void>((resume) => {
      if (this.whenSettled(ended, () => resume(Effect.void))) resume(Effect.void)
    })
  }

  protected read(data: string | Uint8Array, print: string | undefined): void {
    const result = this.shell.decode(data)
    if (Either.isRight(result)) this.event(result.right, print)
    else this.failed(result.left)
  }
  protected readNamed(name: string, data: string, print: string): void {
    const result = this.shell.decode.named(name, data)
    if (Either.isRight(result)) this.event(result.right, print)
    else this.failed(result.left)
  }
  protected frameTooLarge(size: number): FrameError {
    return new FrameTooLarge({ size, limit: this.shell.settings.maxFrameSize })
  }
  protected scrub(error: FrameError): FrameError {
    return ConnectionShell.scrubFrameError(error, Redacted.value(this.key), frameErrors)
  }
}
