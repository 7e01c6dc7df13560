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
 * This file joins them: the connection's fiber (the loop), the consumer's stream, `close`, and
 * the end. One fiber per open connection: the loop, waiting for its attempt to end; frames go
 * from the socket's callback through the core straight into the buffer the consumer reads;
 * time-outs are entries of the shared timer; an answer writer exists only while answers are
 * written (src/internal/README.md says which rule lives where).
 */
import * as Cause from "effect/Cause"
import * as Channel from "effect/Channel"
import * as Chunk from "effect/Chunk"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberRef from "effect/FiberRef"
import * as HashMap from "effect/HashMap"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
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
import { inSession } from "../../../binding/internal/orphan.js"
import { respond, writer } from "../../../binding/internal/channel/answers.js"
import * as Attempt from "../../../binding/internal/channel/attempt.js"
import { EventBuffer } from "../../../binding/internal/channel/buffer.js"
import * as Deadlines from "../../../binding/internal/channel/deadlines.js"
import { type Final, makeLoop } from "./loop.js"
import { type AttemptHooks, Shell } from "../../../binding/internal/channel/shell.js"
import type { Settings } from "../../../binding/internal/channel/settings.js"
import * as Spans from "../../../binding/internal/channel/spans.js"
import { fromCore, StateCell } from "../../../binding/internal/channel/state.js"
import type { Transport } from "../../../binding/internal/channel/transport.js"

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
  if (Cause.isInterruptedOnly(exit.cause)) return closedByCaller
  const defect = Cause.dieOption(exit.cause)
  return { reason: "failed", exit: Exit.die(Option.isSome(defect) ? defect.value : Cause.squash(exit.cause)) }
}

/** Builds a connection in the current scope. Nothing is opened until `events` is consumed. */
export const makeEngine = (
  options: EngineOptions
): Effect.Effect<Engine, never, Scope.Scope | Credentials.Credentials> =>
  Effect.gen(function*() {
    const { dialect, sessionId, settings } = options
    const credentials = yield* Credentials.Credentials
    const scope = yield* Effect.scope
    const clock = yield* Effect.clock
    const decode = Wire.makeDecoder(options.framing ?? dialect.framing, {
      maxFrameSize: settings.maxFrameSize,
      strict: settings.strict
    })
    const buffer = new EventBuffer<SessionEvent.SessionEvent, EventStreamError>()
    const shell = new Shell(sessionId, settings, buffer, decode, clock, options.deadlines ?? Deadlines.make(), writer)
    const core = shell.connection
    /** The connection's fiber, once started. */
    let runner: Fiber.RuntimeFiber<void> | undefined = undefined

    const state = new StateCell()
    const setState = (value: EventStream.ConnectionState) => state.set(value)

    const loop = makeLoop({
      sessionId,
      settings,
      connection: core,
      setState,
      clock,
      attempt: Effect.suspend(() => runAttempt)
    })

    /** Waits until the attempt has opened or ended (`ended`: until it has ended). */
    const settled = (attempt: AttemptHooks, ended: boolean): Effect.Effect<void> =>
      Effect.async<void>((resume) => {
        if (attempt.whenSettled(ended, () => resume(Effect.void))) resume(Effect.void)
      })

    // One attempt run to its end in the connection's fiber: started, open (an attempt that opened
    // is open for the loop even if it has ended already: its state and count), ended, released,
    // and the core's decision.
    const runAttempt = Effect.flatMap(
      Attempt.start(shell, options, credentials),
      (started) =>
        typeof started === "number"
          ? Attempt.decided(shell, started)
          : Effect.zipRight(
            Effect.zipRight(
              settled(started, false),
              Effect.suspend(() => (started.opened ? loop.opened(core.lastOpen) : Effect.void))
            ),
            Effect.flatMap(settled(started, true), () => Attempt.end(shell, started))
          )
    )

    // Uninterruptible: once finished, `state` must reach Closed and the buffer must end, even when
    // `close` interrupts the runner while it is ending by itself (else `events` hangs).
    const finish = (final: Final): Effect.Effect<void> =>
      Effect.uninterruptible(Effect.suspend(() => {
        // The core clears its ledger and deadlines; what was accepted and not delivered comes back.
        const finished = shell.finish(final.reason)
        if (finished === undefined) return Effect.void
        return Effect.all([
          setState(fromCore(core.state)),
          finished.warning === undefined ? Effect.void : Effect.logWarning(finished.warning),
          Effect.logDebug(ConnectionShell.closedLog(final.reason)),
          // The session's id, and whether it may still be running, on every error.
          Effect.sync(() => {
            if (Exit.isSuccess(final.exit)) buffer.end()
            else buffer.fail(Cause.map(final.exit.cause, (error) => inSession(error, sessionId)))
          })
        ], { discard: true })
      }))

    // The connection's fiber. Its log annotation and span are set on the fiber itself (it runs
    // nothing else), not wrapped around it: a wrapper stays on the stack while the connection is
    // open (src/internal/README.md, "One connection"). One frame for the ending.
    const connected: Effect.Effect<void> = Effect.flatMap(
      Spans.make("EventStream.connection", { sessionId, url: options.printableUrl }),
      (span) =>
        Effect.zipRight(
          Effect.zipRight(
            FiberRef.update(FiberRef.currentLogAnnotations, HashMap.set<string, unknown>("sessionId", sessionId)),
            span === undefined ? Effect.void : FiberRef.update(FiberRef.currentContext, Context.add(Tracer.ParentSpan, span))
          ).pipe(
            // What the core asks from a socket's callback runs with the connection's fiber's runtime.
            Effect.zipRight(Effect.flatMap(Effect.runtime<never>(), (runtime) => Effect.sync(() => {
              shell.context = runtime
            })))
          ),
          Effect.onExit(loop.run, (exit) =>
            Effect.zipRight(
              shell.current === undefined ? Effect.void : Attempt.release(shell.current, Exit.asVoid(exit)),
              Effect.zipRight(finish(finalOf(exit)), Effect.sync(() => Spans.end(span, clock, exit)))
            ))
        )
    )

    // Closed between the fork and the fiber's start: nothing to run.
    const run = Effect.suspend(() => (core.isFinished ? Effect.void : connected))

    const start = Effect.suspend(() => {
      if (!shell.start()) return Effect.void
      return Effect.forkIn(run, scope).pipe(Effect.tap((fiber) => {
        runner = fiber
      }))
    })

    // Every event buffered (waiting for one when there is none), or `undefined` once they ended.
    const take: Effect.Effect<Chunk.Chunk<SessionEvent.SessionEvent> | undefined, EventStreamError> = Effect.suspend(
      () => {
        const taken = buffer.takeAll()
        if (taken !== undefined) return Effect.succeed(Chunk.unsafeFromNonEmptyArray(taken))
        const finished = buffer.finished
        if (finished !== undefined) return finished._tag === "Done" ? Effect.succeed(undefined) : Effect.failCause(finished.cause)
        return buffer.waitThen(take)
      }
    )

    // The consumer's side: the buffer read chunk by chunk, with the connection started on the
    // first pull and each chunk counted out of the buffer. One channel, no `Stream.unwrap` (which
    // adds a flattening executor per consumer).
    const pull: Channel.Channel<Chunk.Chunk<SessionEvent.SessionEvent>, unknown, EventStreamError, unknown, void, unknown> =
      Channel.flatMap(Channel.fromEffect(take), (chunk) => {
        if (chunk === undefined) return Channel.void
        shell.taken(chunk.length)
        // Metrics: one update per chunk and event tag, not per frame.
        return Channel.zipRight(Channel.zipRight(Channel.fromEffect(Metrics.recordEvents(chunk)), Channel.write(chunk)), pull)
      })
    const events: Stream.Stream<SessionEvent.SessionEvent, EventStreamError> = Stream.fromChannel(
      Channel.zipRight(Channel.fromEffect(start), pull)
    )

    const close: Effect.Effect<void> = Effect.suspend(() => {
      if (runner === undefined) {
        shell.started = true
        return finish(closedByCaller)
      }
      return Effect.asVoid(Fiber.interrupt(runner))
    })

    // The core makes the attempt under way the last (`ConnectionShell.drainAttempt`): the
    // connection's fiber ends once the service's close answering ours has ended it. Where it
    // cannot be drained (not open, a transport that cannot), it is `close`.
    const drain: Effect.Effect<void> = Effect.suspend(() => {
      return runner !== undefined && shell.drainAttempt() ? Effect.asVoid(Fiber.await(runner)) : close
    })

    yield* Effect.addFinalizer(() => close)

    const connection: EventStream.Connection = {
      sessionId,
      events,
      get state() {
        return state.subscriptionRef
      },
      respond: (request, answer) => respond(shell, dialect, request, answer),
      close,
      drain
    }
    return {
      connection,
      buffered: () => core.buffered,
      peakBuffered: () => core.peakBuffered,
      skipped: () => core.skipped,
      ledger: () => core.ledgerSize()
    }
  })
