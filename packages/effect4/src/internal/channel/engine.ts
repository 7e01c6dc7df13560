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
 * | the shared timer (idle and connect time-outs) | `deadlines.ts` |
 * | what a transport and the engine owe each other | `transport.ts`; WebSocket `socket.ts`, SSE `../sse.ts` |
 *
 * This file joins them: the connection's fiber (the loop), the consumer's stream, `close`, and
 * the end. One fiber per open connection: the loop, waiting for its attempt to end; frames go
 * from the socket's callback through the core straight into the `Queue` the consumer pulls;
 * time-outs are entries of the shared timer; an answer writer exists only while answers are
 * written.
 */
import type * as Arr from "effect/Array"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Queue from "effect/Queue"
import * as References from "effect/References"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as SubscriptionRef from "effect/SubscriptionRef"
import * as Tracer from "effect/Tracer"
import { ConnectionShell } from "effect-agent-session-core/shell"
import type * as Answer from "../../Answer.js"
import * as Credentials from "../../Credentials.js"
import type * as Dialect from "../../Dialect.js"
import type { EventStreamError, RespondError } from "../../Errors.js"
import type * as EventStream from "../../EventStream.js"
import * as Metrics from "../../Metrics.js"
import type * as SessionEvent from "../../SessionEvent.js"
import * as Wire from "../../Wire.js"
import { inSession } from "../orphan.js"
import { respond, writer } from "./answers.js"
import { runAttempt } from "./attempt.js"
import * as Deadlines from "./deadlines.js"
import { type Final, type Loop, makeLoop } from "./loop.js"
import { type EventQueue, Shell } from "./shell.js"
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

const closedByCaller: Final = { reason: "closed-by-caller", exit: Exit.void }

/** How the loop ended: its result, a defect (a bug) as `failed`, or the caller's close. */
const finalOf = (exit: Exit.Exit<Final>): Final => {
  if (Exit.isSuccess(exit)) return exit.value
  if (Cause.hasInterruptsOnly(exit.cause)) return closedByCaller
  return { reason: "failed", exit: Exit.die(Cause.squash(exit.cause)) }
}

/** Sets the connection's log annotation and span on the running fiber itself (not a wrapper). */
const onThisFiber = (sessionId: string, span: Tracer.Span | undefined): Effect.Effect<void> =>
  Effect.withFiber((fiber) => {
    let context = Context.add(fiber.context, References.CurrentLogAnnotations, {
      ...fiber.getRef(References.CurrentLogAnnotations),
      sessionId
    })
    if (span !== undefined) context = Context.add(context, Tracer.ParentSpan, span)
    fiber.setContext(context)
    return Effect.void
  })

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

/**
 * One connection: the public `Connection` and what runs it, one object with its methods on the
 * prototype (a connection holds its fields, not a closure per operation).
 */
export class EngineConnection implements EventStream.Connection {
  readonly events: Stream.Stream<SessionEvent.SessionEvent, EventStreamError>
  /**
   * The consumer's side: the queue pulled chunk by chunk, the connection started on the first
   * pull and each chunk counted out of the buffer. One pull, no `Stream.unwrap`; a guard over the
   * connection (`AgentSessions`) pulls it directly.
   */
  readonly pull: Effect.Effect<Arr.NonEmptyReadonlyArray<SessionEvent.SessionEvent>, EventStreamError | Cause.Done>
  readonly close: Effect.Effect<void>
  private readonly stateCell = new StateCell()
  private readonly loop: Loop
  private readonly take: Effect.Effect<Arr.NonEmptyReadonlyArray<SessionEvent.SessionEvent>, EventStreamError | Cause.Done>

  constructor(
    readonly sessionId: string,
    readonly shell: Shell,
    private readonly options: EngineOptions,
    private readonly credentials: Credentials.Service,
    private readonly scope: Scope.Scope
  ) {
    this.loop = makeLoop({
      sessionId,
      settings: options.settings,
      connection: shell.connection,
      setState: (value) => this.stateCell.set(value),
      clock: shell.clock,
      attempt: Effect.suspend(() => this.attempt())
    })
    this.take = Effect.flatMap(Queue.takeAll(shell.queue), (chunk) => {
      this.shell.taken(chunk.length)
      // Metrics: one update per chunk and event tag, not per frame.
      return Effect.as(Metrics.recordEvents(chunk), chunk)
    })
    this.pull = Effect.suspend(() => (this.shell.started ? this.take : Effect.andThen(this.start(), this.take)))
    this.events = Stream.fromPull(Effect.succeed(this.pull))
    this.close = Effect.suspend(() => this.closeNow())
  }

  /** The connection's state, a `SubscriptionRef` made when first read. */
  get state(): SubscriptionRef.SubscriptionRef<EventStream.ConnectionState> {
    return this.stateCell.subscriptionRef
  }

  /** Answers a request (bound: it may be taken off the connection). */
  readonly respond = (
    request: SessionEvent.ExternalResourceRequested,
    answer: Answer.Answer
  ): Effect.Effect<void, RespondError> => respond(this.shell, this.options.dialect, request, answer)

  private attempt() {
    return runAttempt({
      shell: this.shell,
      printableUrl: this.options.printableUrl,
      credentials: this.credentials,
      agent: this.options.agent,
      transport: this.options.transport,
      opened: this.loop.opened
    })
  }

  /**
   * Uninterruptible: once finished, `state` must reach Closed and the queue must end, even when
   * `close` interrupts the runner while it is ending by itself (else `events` hangs).
   */
  private finish(final: Final): Effect.Effect<void> {
    return Effect.uninterruptible(Effect.suspend(() => {
      const { shell } = this
      // The core clears its ledger and deadlines; what was accepted and not delivered comes back.
      const finished = shell.finish(final.reason)
      if (finished === undefined) return Effect.void
      shell.context = undefined
      // Closed is published before the consumer sees the end, as the Effect 3 edition does: a
      // consumer whose events end or fail reads the final state.
      return Effect.all([
        this.stateCell.set(fromCore(shell.connection.state)),
        Effect.sync(() => {
          // The session's id, and whether it may still be running, on every error.
          if (Exit.isSuccess(final.exit)) Queue.endUnsafe(shell.queue)
          else Queue.failCauseUnsafe(shell.queue, Cause.map(final.exit.cause, (error) => inSession(error, this.sessionId)))
        }),
        finished.warning === undefined ? Effect.void : Effect.logWarning(finished.warning),
        Effect.logDebug(ConnectionShell.closedLog(final.reason))
      ], { discard: true })
    }))
  }

  /**
   * The connection's fiber. Its log annotation and span are set on the fiber itself (it runs
   * nothing else), not wrapped around it: a wrapper stays on the stack while the connection is
   * open. One frame for the ending. Closed between the fork and the fiber's start: nothing to run.
   */
  private run(): Effect.Effect<void> {
    if (this.shell.connection.isFinished) return Effect.void
    const { shell, sessionId } = this
    return Effect.flatMap(
      Spans.make("EventStream.connection", { sessionId, url: this.options.printableUrl }),
      (span) =>
        Effect.andThen(
          onThisFiber(sessionId, span),
          Effect.onExit(this.loop.run, (exit) =>
            Effect.andThen(
              shell.current === undefined ? Effect.void : Scope.close(shell.current.scope, Exit.asVoid(exit)),
              Effect.andThen(this.finish(finalOf(exit)), Effect.sync(() => Spans.end(span, shell.clock, exit)))
            ))
        )
    )
  }

  private start(): Effect.Effect<void> {
    if (!this.shell.start()) return Effect.void
    return Effect.map(Effect.forkIn(Effect.suspend(() => this.run()), this.scope), (fiber) => {
      this.shell.runner = fiber
    })
  }

  private closeNow(): Effect.Effect<void> {
    if (this.shell.runner === undefined) {
      this.shell.started = true
      return this.finish(closedByCaller)
    }
    return Fiber.interrupt(this.shell.runner)
  }
}

/** Builds a connection in the current scope. Nothing is opened until `events` is consumed. */
export const makeEngine = (
  options: EngineOptions
): Effect.Effect<Engine, never, Scope.Scope | Credentials.Credentials> =>
  Effect.gen(function*() {
    const { dialect, sessionId, settings } = options
    const credentials = yield* Credentials.Credentials
    const scope = yield* Effect.scope
    const clock = yield* Effect.clockWith(Effect.succeed)
    const queue: EventQueue = yield* Queue.make<SessionEvent.SessionEvent, EventStreamError | Cause.Done>()
    const decode = decoderFor(options.framing ?? dialect.framing, settings)
    const shell = new Shell(sessionId, settings, queue, decode, clock, options.deadlines ?? Deadlines.make(), writer)
    const connection = new EngineConnection(sessionId, shell, options, credentials, scope)
    // On the scope itself: `Effect.addFinalizer` would keep the whole context of the call (its span
    // among it) for as long as the connection is open.
    yield* Scope.addFinalizer(scope, connection.close)
    const core = shell.connection
    return {
      connection,
      buffered: () => core.buffered,
      peakBuffered: () => core.peakBuffered,
      skipped: () => core.skipped,
      ledger: () => core.ledgerSize()
    }
  })
