/**
 * The event channel's engine: one `Connection` over a transport, an Effect shell around the
 * protocol core's `Connection` (packages/core), which owns the connection's state and decides:
 *
 * | part | file |
 * | --- | --- |
 * | the connection's actions done: events out, pause/resume, writer, its deadline; one attempt's hooks | `shell.ts` |
 * | one attempt | `attempt.ts` |
 * | the connection loop: attempts, schedules, state | `loop.ts` |
 * | answers out | `answers.ts` |
 * | the events waiting for the consumer | `buffer.ts` |
 * | the shared timer (idle and connect time-outs) | `deadlines.ts` |
 * | what a transport and the engine owe each other | `transport.ts`; WebSocket `socket.ts`, SSE `../sse.ts` |
 *
 * This file joins them: the loop's start, the consumer's pull, `close`, `drain`, the end. No fiber
 * of the connection's own while it is open: frames go from the socket's callback through the core
 * straight into the buffer the consumer pulls (`buffer.ts`); time-outs are entries of the shared
 * timer; the loop's steps (an attempt's start and end, the sleep before a retry) and the answer
 * writer each run in a short-lived fiber, only while they have something to do.
 */
import type * as Arr from "effect/Array"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Scope from "effect/Scope"
import type * as Stream from "effect/Stream"
import type * as SubscriptionRef from "effect/SubscriptionRef"
import type * as Tracer from "effect/Tracer"
import { ConnectionShell } from "effect-agent-session-shell"
import * as Credentials from "../../../src/Credentials.js"
import type * as Dialect from "../../../src/Dialect.js"
import type { EventStreamError } from "../../../src/Errors.js"
import type * as EventStream from "../../../src/EventStream.js"
import type * as SessionEvent from "../../../src/SessionEvent.js"
import * as Wire from "../../../src/Wire.js"
import {
  fiberSetUp,
  forkDaemon,
  interruptExit,
  type Pull,
  pullDone,
  pullFailCause,
  type PullFiber,
  streamFromPull,
  withFiber
} from "../../../src/internal/line.js"
import { countEvents } from "../../../src/internal/metrics.js"
import { inSession } from "../orphan.js"
import { respond, writer } from "./answers.js"
import * as Attempt from "./attempt.js"
import { EventBuffer } from "./buffer.js"
import * as Deadlines from "./deadlines.js"
import { closedByCaller, type Final, Loop } from "./loop.js"
import { Shell } from "./shell.js"
import type { Settings } from "./settings.js"
import * as Spans from "./spans.js"
import { fromCore, StateCell } from "./state.js"
import type { Transport } from "./transport.js"

/** Everything a connection needs besides its transport. */
export interface EngineOptions {
  readonly sessionId: string
  readonly settings: Settings
  readonly dialect: Dialect.Dialect
  readonly agent: Credentials.AgentKeyRef | string | undefined
  /** The address for logs and spans, without any key. */
  readonly printableUrl: string
  readonly transport: Transport
  /** The framing of the frames the transport hands over (default: the dialect's). */
  readonly framing?: Dialect.Framing | undefined
  /** The service's shared timer (default: one of the connection's own). */
  readonly deadlines?: Deadlines.Deadlines | undefined
}

/** A connection and the engine's internals that tests observe. */
export interface Engine {
  readonly connection: EventStream.Connection
  /** Frames received and not yet taken by the consumer. */
  readonly buffered: () => number
  /** The largest `buffered` seen. */
  readonly peakBuffered: () => number
  /** Frames skipped with a warning (`failOnFrameError: false`). */
  readonly skipped: () => number
  /** The answer ledger's size: requests remembered and the characters of their keys. */
  readonly ledger: () => { readonly requests: number; readonly keyChars: number; readonly forgotten: number }
}

/**
 * The frame decoders, shared by every connection of the same framing and bounds (a decoder holds
 * no state: one per connection would be heap per open connection for nothing). Bounded: past a
 * few distinct settings, a connection makes its own.
 */
const decoders = new Map<string, Wire.FrameDecoder>()
const MAX_DECODERS = 16

const decoderFor = (framing: Dialect.Framing, settings: Settings): Wire.FrameDecoder => {
  const key = `${framing} ${settings.maxFrameSize} ${settings.strict}`
  let decoder = decoders.get(key)
  if (decoder === undefined) {
    decoder = Wire.makeDecoder(framing, { maxFrameSize: settings.maxFrameSize, strict: settings.strict })
    if (decoders.size < MAX_DECODERS) decoders.set(key, decoder)
  }
  return decoder
}

/** A chunk of events, as a pull gives them. */
export type Chunk = Arr.NonEmptyReadonlyArray<SessionEvent.SessionEvent>

/**
 * What a consumer of a connection's events does with what its pull finds, in the same pull (no
 * layer of its own): a session's guard that pulls the connection directly
 * (`binding/internal/sessionGuard.ts`) reads each chunk, stops at the budget and judges the end; a
 * plain consumer ({@link passOn}) passes them on.
 */
export interface Consumer<E> {
  /** Before each pull: what the pull does instead (the budget stopped the session), or nothing. */
  readonly stopped: () => Pull<never, E> | undefined
  /** A chunk taken (counted out of the buffer, its metrics recorded). */
  readonly chunk: (chunk: Chunk) => Pull<Chunk, E>
  /** The events failed, after every event before the failure. */
  readonly failed: (cause: Cause.Cause<EventStreamError>) => Pull<never, E>
  /** The events ended, after every event. */
  readonly ended: () => Pull<never, E>
}

/** The consumer of `Connection.events`: the events as they are, then the end or the failure. */
const passOn: Consumer<EventStreamError> = {
  stopped: () => undefined,
  chunk: (chunk) => Effect.succeed(chunk),
  failed: pullFailCause,
  ended: pullDone
}

/**
 * One connection: the public `Connection` and what runs it, one object with its methods on the
 * prototype (a connection holds its fields, not a closure per operation). `events`, `respond`
 * and `drain` are made when first read (a guard over the connection pulls it directly and reads
 * neither events nor respond; few connections are drained).
 */
export class EngineConnection implements EventStream.Connection {
  readonly close: Effect.Effect<void>
  private readonly stateCell = new StateCell()
  private readonly loop: Loop
  /** The `EventStream.connection` span, from the loop's start to the connection's end. */
  private span: Tracer.Span | undefined = undefined
  private eventsMade: Stream.Stream<SessionEvent.SessionEvent, EventStreamError> | undefined = undefined
  private respondMade: EventStream.Connection["respond"] | undefined = undefined
  private drainMade: Effect.Effect<void> | undefined = undefined

  constructor(
    readonly sessionId: string,
    readonly shell: Shell,
    private readonly options: EngineOptions,
    credentials: Credentials.Service
  ) {
    this.loop = new Loop(shell, options, credentials, this)
    this.close = Effect.suspend(() => this.closeNow())
  }

  /** The events, pulled by {@link EngineConnection.pull} as they are (the pull is the stream's own). */
  get events(): Stream.Stream<SessionEvent.SessionEvent, EventStreamError> {
    return this.eventsMade ??= streamFromPull(this.pull(passOn))
  }

  /** Ends the connection without losing what the service sent (see `EventStream.Connection.drain`). */
  get drain(): Effect.Effect<void> {
    return this.drainMade ??= Effect.suspend(() => this.drainNow())
  }

  /** Answers a request (bound: it may be taken off the connection). */
  get respond(): EventStream.Connection["respond"] {
    return this.respondMade ??= (request, answer) => respond(this.shell, this.options.dialect, request, answer)
  }

  /**
   * A pull of the events for `consumer`: each takes every event buffered (waiting for one when
   * there is none), counts them out of the buffer and in the metrics of the pulling fiber's
   * context, and hands them to the consumer; the first starts the connection. A guard over the
   * connection (`AgentSessions`) pulls it directly.
   */
  pull<E>(consumer: Consumer<E>): Pull<Chunk, E> {
    const pull: Pull<Chunk, E> = withFiber((fiber) => this.step(consumer, pull, fiber))
    return pull
  }

  private step<E>(consumer: Consumer<E>, again: Pull<Chunk, E>, fiber: PullFiber): Pull<Chunk, E> {
    const stopped = consumer.stopped()
    if (stopped !== undefined) return stopped
    const { shell } = this
    if (!shell.started) return Effect.andThen(this.start(), again)
    const { buffer } = shell
    const chunk = buffer.takeAll()
    if (chunk !== undefined) {
      shell.taken(chunk.length)
      // Metrics: one update per chunk and event tag, not per frame, and no Effect of their own.
      countEvents(chunk, fiber)
      return consumer.chunk(chunk)
    }
    const finished = buffer.finished
    if (finished !== undefined) return finished._tag === "Done" ? consumer.ended() : consumer.failed(finished.cause)
    return buffer.waitThen(again)
  }

  /** The connection's state, a `SubscriptionRef` made when first read. */
  get state(): SubscriptionRef.SubscriptionRef<EventStream.ConnectionState> {
    return this.stateCell.subscriptionRef
  }

  /** Returns once the connection has opened, or ended without opening (see `EventStream.Connection.opened`). */
  get opened(): Effect.Effect<void> {
    return this.stateCell.opened()
  }

  /** Sets the connection's state (for the loop). */
  setState(value: EventStream.ConnectionState): Effect.Effect<void> {
    return this.stateCell.set(value)
  }

  /**
   * The connection's end: the running attempt released with `exit` (what the loop came to),
   * the core told, the state `Closed`, the buffer ended, the span ended. Uninterruptible: once
   * finished, `state` must reach Closed and the buffer must end, even when `close` interrupts a
   * step while the connection ends by itself (else `events` hangs).
   */
  end(final: Final, exit: Exit.Exit<unknown, unknown>): Effect.Effect<void> {
    return Effect.uninterruptible(Effect.suspend(() => {
      const { shell } = this
      const current = shell.current
      return Effect.andThen(
        current === undefined ? Effect.void : Attempt.release(current, exit),
        Effect.andThen(
          this.finish(final),
          Effect.sync(() => {
            Spans.end(this.span, shell.clock, exit)
            this.span = undefined
          })
        )
      )
    }))
  }

  /** The core told the connection is over, and what follows from it (once). */
  private finish(final: Final): Effect.Effect<void> {
    return Effect.suspend(() => {
      const { shell } = this
      // The core clears its ledger and deadlines; what was accepted and not delivered comes back.
      const finished = shell.finish(final.reason)
      if (finished === undefined) return Effect.void
      // No step runs after the end.
      shell.context = undefined
      // Closed is published before the consumer sees the end: a consumer whose events end or fail
      // reads the final state.
      return Effect.all([
        this.stateCell.set(fromCore(shell.connection.state)),
        Effect.sync(() => {
          // The session's id, and whether it may still be running, on every error.
          if (Exit.isSuccess(final.exit)) shell.buffer.end()
          else shell.buffer.fail(Cause.map(final.exit.cause, (error) => inSession(error, this.sessionId)))
        }),
        finished.warning === undefined ? Effect.void : Effect.logWarning(finished.warning),
        Effect.logDebug(ConnectionShell.closedLog(final.reason))
      ], { discard: true })
    })
  }

  /**
   * The loop's first step, in the fiber the consumer's first pull forks: the connection's log
   * annotation and span are set on the fiber itself (its context is every later step's). Closed
   * between the fork and the fiber's start: nothing to run.
   */
  private run(): Effect.Effect<void> {
    if (this.shell.connection.isFinished) return Effect.void
    const { sessionId } = this
    return Effect.flatMap(
      Spans.make("EventStream.connection", { sessionId, url: this.options.printableUrl }),
      (span) => {
        this.span = span
        return Effect.flatMap(fiberSetUp(sessionId, span), (context) => this.loop.first(context))
      }
    )
  }

  /** The consumer's first pull starts the loop (once, and not when the connection was closed first). */
  private start(): Effect.Effect<void> {
    if (!this.shell.start()) return Effect.void
    return Effect.map(forkDaemon(Effect.suspend(() => this.run())), (fiber) => this.loop.track(fiber))
  }

  /**
   * Interrupts the step running, if any (none while the attempt is connecting or open), then
   * ends the connection as closed by its caller.
   */
  private closeNow(): Effect.Effect<void> {
    this.shell.started = true
    const running = this.loop.running
    return Effect.andThen(
      running === undefined ? Effect.void : Fiber.interrupt(running),
      withFiber((fiber) => this.end(closedByCaller, interruptExit(fiber)))
    )
  }

  /**
   * The core makes the open attempt the last (`ConnectionShell.drainAttempt`): the connection
   * ends once the service's close answering ours (or the drain's grace) has ended that attempt,
   * which the loop does as for any attempt's end. Where it cannot be drained (not open, a
   * transport that cannot), it is `close`.
   */
  private drainNow(): Effect.Effect<void> {
    return this.shell.drainAttempt() ? this.stateCell.closed() : this.closeNow()
  }
}

/**
 * Builds a connection in the current scope with the keys of `credentials`. Nothing is opened
 * until `events` is consumed.
 */
export const makeEngineWith = (
  credentials: Credentials.Service,
  options: EngineOptions
): Effect.Effect<Engine, never, Scope.Scope> =>
  Effect.flatMap(Effect.scope, (scope) =>
    Effect.clockWith((clock) => {
      const { dialect, sessionId, settings } = options
      const decode = decoderFor(options.framing ?? dialect.framing, settings)
      const shell = new Shell(sessionId, settings, new EventBuffer(), decode, clock, options.deadlines ?? Deadlines.make(), writer)
      const connection = new EngineConnection(sessionId, shell, options, credentials)
      const core = shell.connection
      const engine: Engine = {
        connection,
        buffered: () => core.buffered,
        peakBuffered: () => core.peakBuffered,
        skipped: () => core.skipped,
        ledger: () => core.ledgerSize()
      }
      // On the scope itself: `Effect.addFinalizer` would keep the whole context of the call (its span
      // among it) for as long as the connection is open.
      return Effect.as(Scope.addFinalizer(scope, connection.close), engine)
    }))

/** {@link makeEngineWith} with the context's `Credentials`. */
export const makeEngine = (
  options: EngineOptions
): Effect.Effect<Engine, never, Scope.Scope | Credentials.Credentials> =>
  Effect.gen(function*() {
    return yield* makeEngineWith(yield* Credentials.Credentials, options)
  })
