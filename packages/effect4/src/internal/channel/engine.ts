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
import * as Tracer from "effect/Tracer"
import { ConnectionShell } from "effect-agent-session-core/shell"
import * as Credentials from "../../Credentials.js"
import type * as Dialect from "../../Dialect.js"
import type { EventStreamError } from "../../Errors.js"
import type * as EventStream from "../../EventStream.js"
import * as Metrics from "../../Metrics.js"
import type * as SessionEvent from "../../SessionEvent.js"
import * as Wire from "../../Wire.js"
import { inSession } from "../orphan.js"
import { respond, writer } from "./answers.js"
import { runAttempt } from "./attempt.js"
import * as Deadlines from "./deadlines.js"
import { type Final, makeLoop } from "./loop.js"
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
    const decode = Wire.makeDecoder(options.framing ?? dialect.framing, {
      maxFrameSize: settings.maxFrameSize,
      strict: settings.strict
    })
    const shell = new Shell(sessionId, settings, queue, decode, clock, options.deadlines ?? Deadlines.make(), writer)
    const core = shell.connection

    const state = new StateCell()
    const setState = (value: EventStream.ConnectionState) => state.set(value)

    const loop = makeLoop({
      sessionId,
      settings,
      connection: core,
      setState,
      clock,
      attempt: Effect.suspend(() =>
        runAttempt({
          shell,
          printableUrl: options.printableUrl,
          credentials,
          agent: options.agent,
          transport: options.transport,
          opened: loop.opened
        })
      )
    })

    // Uninterruptible: once finished, `state` must reach Closed and the queue must end, even when
    // `close` interrupts the runner while it is ending by itself (else `events` hangs).
    const finish = (final: Final): Effect.Effect<void> =>
      Effect.uninterruptible(Effect.suspend(() => {
        // The core clears its ledger and deadlines; what was accepted and not delivered comes back.
        const finished = shell.finish(final.reason)
        if (finished === undefined) return Effect.void
        shell.context = undefined
        // Closed is published before the consumer sees the end, as the Effect 3 edition does: a
        // consumer whose events end or fail reads the final state.
        return Effect.all([
          setState(fromCore(core.state)),
          Effect.sync(() => {
            // The session's id, and whether it may still be running, on every error.
            if (Exit.isSuccess(final.exit)) Queue.endUnsafe(queue)
            else Queue.failCauseUnsafe(queue, Cause.map(final.exit.cause, (error) => inSession(error, sessionId)))
          }),
          finished.warning === undefined ? Effect.void : Effect.logWarning(finished.warning),
          Effect.logDebug(ConnectionShell.closedLog(final.reason))
        ], { discard: true })
      }))

    // The connection's fiber. Its log annotation and span are set on the fiber itself (it runs
    // nothing else), not wrapped around it: a wrapper stays on the stack while the connection is
    // open. One frame for the ending.
    const connected: Effect.Effect<void> = Effect.flatMap(
      Spans.make("EventStream.connection", { sessionId, url: options.printableUrl }),
      (span) =>
        Effect.andThen(
          onThisFiber(sessionId, span),
          Effect.onExit(loop.run, (exit) =>
            Effect.andThen(
              shell.current === undefined ? Effect.void : Scope.close(shell.current.scope, Exit.asVoid(exit)),
              Effect.andThen(finish(finalOf(exit)), Effect.sync(() => Spans.end(span, clock, exit)))
            ))
        )
    )

    // Closed between the fork and the fiber's start: nothing to run.
    const run = Effect.suspend(() => (core.isFinished ? Effect.void : connected))

    const start = Effect.suspend(() => {
      if (!shell.start()) return Effect.void
      return Effect.map(Effect.forkIn(run, scope), (fiber) => {
        shell.runner = fiber
      })
    })

    // The consumer's side: the queue pulled chunk by chunk, the connection started on the first
    // pull and each chunk counted out of the buffer. One pull, no `Stream.unwrap`.
    const take: Effect.Effect<Arr.NonEmptyReadonlyArray<SessionEvent.SessionEvent>, EventStreamError | Cause.Done> = Effect
      .flatMap(Queue.takeAll(queue), (chunk) => {
        shell.taken(chunk.length)
        // Metrics: one update per chunk and event tag, not per frame.
        return Effect.as(Metrics.recordEvents(chunk), chunk)
      })
    const pull = Effect.suspend(() => (shell.started ? take : Effect.andThen(start, take)))
    const events: Stream.Stream<SessionEvent.SessionEvent, EventStreamError> = Stream.fromPull(
      Effect.succeed(pull)
    )

    const close: Effect.Effect<void> = Effect.suspend(() => {
      if (shell.runner === undefined) {
        shell.started = true
        return finish(closedByCaller)
      }
      return Fiber.interrupt(shell.runner)
    })

    yield* Effect.addFinalizer(() => close)

    const connection: EventStream.Connection = {
      sessionId,
      events,
      get state() {
        return state.subscriptionRef
      },
      respond: (request, answer) => respond(shell, dialect, request, answer),
      close
    }
    return {
      connection,
      buffered: () => core.buffered,
      peakBuffered: () => core.peakBuffered,
      skipped: () => core.skipped,
      ledger: () => core.ledgerSize()
    }
  })
