/**
 * The event channel's engine: one `Connection` over a transport, made of the parts beside it:
 *
 * | part | file |
 * | --- | --- |
 * | connection and attempt state, frames in | `core.ts` |
 * | one attempt | `attempt.ts` |
 * | the connection loop: attempts, schedules, state | `loop.ts` |
 * | answers out | `answers.ts`, with the answer ledger `ledger.ts` |
 * | flow control (bounded buffer, pause/resume) | `flow.ts` |
 * | replay detection after a reconnect | `replay.ts` |
 * | the shared timer (idle and connect time-outs) | `deadlines.ts` |
 * | what a transport and the engine owe each other | `transport.ts`; WebSocket `socket.ts`, SSE `../sse.ts` |
 *
 * This file joins them: the connection's fiber (the loop), the consumer's stream, `close`, and
 * the end. One fiber per open connection (issue 15): the loop, waiting for its attempt to end;
 * frames go from the socket's callback straight into the `Mailbox` the consumer reads; time-outs
 * are entries of the shared timer; an answer writer exists only while answers are written.
 */
import * as Cause from "effect/Cause"
import * as Channel from "effect/Channel"
import type * as Chunk from "effect/Chunk"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberRef from "effect/FiberRef"
import * as HashMap from "effect/HashMap"
import * as Mailbox from "effect/Mailbox"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Tracer from "effect/Tracer"
import * as Credentials from "../../Credentials.js"
import type * as Dialect from "../../Dialect.js"
import type { EventStreamError } from "../../Errors.js"
import type * as EventStream from "../../EventStream.js"
import * as Metrics from "../../Metrics.js"
import type * as SessionEvent from "../../SessionEvent.js"
import * as Wire from "../../Wire.js"
import { inSession } from "../orphan.js"
import { respond } from "./answers.js"
import { runAttempt } from "./attempt.js"
import { Core } from "./core.js"
import * as Deadlines from "./deadlines.js"
import * as Ledger from "./ledger.js"
import { type Final, makeLoop } from "./loop.js"
import type { Settings } from "./settings.js"
import * as Spans from "./spans.js"
import { ConnectionState, StateCell } from "./state.js"
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
  /** The answer ledger's size: requests remembered and the characters of their keys (issue 20 item 3). */
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
    const mailbox = yield* Mailbox.make<SessionEvent.SessionEvent, EventStreamError>()
    const decode = Wire.makeDecoder(options.framing ?? dialect.framing, {
      maxFrameSize: settings.maxFrameSize,
      strict: settings.strict
    })
    const core = new Core(sessionId, settings, mailbox, decode, clock, options.deadlines ?? Deadlines.make())

    const state = new StateCell()
    const setState = (value: EventStream.ConnectionState) => state.set(value)

    const loop = makeLoop({
      sessionId,
      printableUrl: options.printableUrl,
      settings,
      setState,
      clock,
      attempt: (number) =>
        runAttempt({
          core,
          printableUrl: options.printableUrl,
          credentials,
          agent: options.agent,
          transport: options.transport,
          opened: loop.opened
        }, number),
      ended: () => {
        core.ledger = Ledger.confirm(core.ledger)
      },
      dropped: () => {
        const count = core.ledger.unconfirmed.length
        core.ledger = Ledger.requeue(core.ledger)
        return count
      }
    })

    // Uninterruptible: once `finished` is set, `state` must reach Closed and the mailbox must end,
    // even when `close` interrupts the runner while it is ending by itself (else `events` hangs).
    const finish = (final: Final): Effect.Effect<void> =>
      Effect.uninterruptible(Effect.suspend(() => {
        if (core.finished) return Effect.void
        core.finished = true
        // Nothing of the last attempt (its key among it) is kept past the end.
        core.current = undefined
        // A clean end: what was written before it was read (the close comes after it on the wire).
        const clean = final.reason !== "connection-lost" && final.reason !== "failed" &&
          final.reason !== "handshake-rejected" && final.reason !== "superseded"
        const unsent = Ledger.unsent(core.ledger, clean)
        core.ledger = Ledger.empty
        return Effect.all([
          setState(ConnectionState.Closed(unsent.length > 0 ? { reason: final.reason, unsent } : { reason: final.reason })),
          unsent.length > 0
            ? Effect.logWarning(
              `${unsent.length} answer(s) not sent (or not confirmed): the event channel closed (${final.reason})`
            )
            : Effect.void,
          Effect.logDebug(`Event channel closed: ${final.reason}`),
          // Issue 13: the session's id, and whether it may still be running, on every error.
          mailbox.done(Exit.mapError(final.exit, (error) => inSession(error, sessionId)))
        ], { discard: true })
      }))

    // The connection's fiber. Its log annotation and span are set on the fiber itself (it runs
    // nothing else), not wrapped around it: a wrapper stays on the stack while the connection is
    // open (measured: `annotateLogs` and `withSpan` around the loop, 3.4 and 5.3 KiB per open
    // connection). One frame for the ending.
    const connected: Effect.Effect<void> = Effect.flatMap(
      Spans.make("EventStream.connection", { sessionId, url: options.printableUrl }),
      (span) =>
        Effect.zipRight(
          Effect.zipRight(
            FiberRef.update(FiberRef.currentLogAnnotations, HashMap.set<string, unknown>("sessionId", sessionId)),
            span === undefined ? Effect.void : FiberRef.update(FiberRef.currentContext, Context.add(Tracer.ParentSpan, span))
          ),
          Effect.onExit(loop.run, (exit) =>
            Effect.zipRight(
              core.current === undefined ? Effect.void : Scope.close(core.current.scope, Exit.asVoid(exit)),
              Effect.zipRight(finish(finalOf(exit)), Effect.sync(() => Spans.end(span, clock, exit)))
            ))
        )
    )

    // Closed between the fork and the fiber's start: nothing to run.
    const run = Effect.suspend(() => (core.finished ? Effect.void : connected))

    const start = Effect.suspend(() => {
      if (core.started) return Effect.void
      core.started = true
      if (core.finished) return Effect.void
      return Effect.forkIn(run, scope).pipe(Effect.tap((fiber) => {
        core.runner = fiber
      }))
    })

    // The consumer's side: the mailbox read chunk by chunk, as `Mailbox.toStream` does, with the
    // connection started on the first pull and each chunk counted out of the buffer. One channel,
    // no `Stream.unwrap` (which adds a flattening executor per consumer).
    const pull: Channel.Channel<Chunk.Chunk<SessionEvent.SessionEvent>, unknown, EventStreamError, unknown, void, unknown> =
      Channel.flatMap(mailbox.takeAll, ([chunk, done]) => {
        if (chunk.length === 0) return done ? Channel.void : pull
        core.taken(chunk.length)
        // Metrics: one update per chunk and event tag, not per frame.
        const out = Channel.zipRight(Channel.fromEffect(Metrics.recordEvents(chunk)), Channel.write(chunk))
        return done ? out : Channel.zipRight(out, pull)
      })
    const events: Stream.Stream<SessionEvent.SessionEvent, EventStreamError> = Stream.fromChannel(
      Channel.zipRight(Channel.fromEffect(start), pull)
    )

    const close: Effect.Effect<void> = Effect.suspend(() => {
      if (core.runner === undefined) {
        core.started = true
        return finish(closedByCaller)
      }
      return Effect.asVoid(Fiber.interrupt(core.runner))
    })

    yield* Effect.addFinalizer(() => close)

    const connection: EventStream.Connection = {
      sessionId,
      events,
      get state() {
        return state.subscriptionRef
      },
      respond: (request, answer) => respond(core, dialect, request, answer),
      close
    }
    return {
      connection,
      buffered: () => core.flow.held,
      peakBuffered: () => core.flow.peak,
      skipped: () => core.skipped,
      ledger: () => {
        let keyChars = 0
        for (const key of HashMap.keys(core.ledger.requests)) keyChars += key.length
        return { requests: HashMap.size(core.ledger.requests), keyChars, forgotten: core.ledger.forgotten }
      }
    }
  })
