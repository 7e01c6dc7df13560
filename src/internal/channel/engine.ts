/**
 * The event channel's engine: one `Connection` over a transport, made of the parts beside it:
 * the connection loop (`loop.ts`: attempts, schedules, state), the answer ledger (`ledger.ts`),
 * flow control (`flow.ts`), replay detection (`replay.ts`) and the shared timer
 * (`deadlines.ts`: idle and connect time-outs). This file joins them: it takes each frame in
 * (synchronously, in the transport's callback), runs each attempt, and ends the connection.
 *
 * One fiber per connection (issue 15): the loop. While an attempt is open it waits for the
 * attempt's end on a `Deferred`; frames go from the socket's callback straight into the
 * `Mailbox` the consumer reads; time-outs are entries of the shared timer; an answer writer
 * exists only while answers are being written.
 *
 * The state is plain mutable variables, not `Ref`s: it is read and written in the transport's
 * synchronous callbacks (one per frame), where an Effect per frame halves throughput
 * (bench/RESULTS.md). JavaScript is single-threaded: no frame callback runs while the fiber runs.
 */
import * as Channel from "effect/Channel"
import type * as Chunk from "effect/Chunk"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import * as FiberRef from "effect/FiberRef"
import * as HashMap from "effect/HashMap"
import * as Mailbox from "effect/Mailbox"
import * as Option from "effect/Option"
import type * as Redacted from "effect/Redacted"
import * as Runtime from "effect/Runtime"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as Tracer from "effect/Tracer"
import type * as Answer from "../../Answer.js"
import * as Credentials from "../../Credentials.js"
import type * as Dialect from "../../Dialect.js"
import {
  AnswerBufferFull,
  type EventStreamError,
  type FrameError,
  FrameTooLarge,
  RequestNotPending,
  type RespondError,
  truncateRaw
} from "../../Errors.js"
import type * as EventStream from "../../EventStream.js"
import * as Metrics from "../../Metrics.js"
import * as SessionEvent from "../../SessionEvent.js"
import * as Wire from "../../Wire.js"
import { inSession } from "../orphan.js"
import * as Deadlines from "./deadlines.js"
import { Flow } from "./flow.js"
import * as Ledger from "./ledger.js"
import { type Attempted, type Final, makeLoop } from "./loop.js"
import { frameKey, Replay } from "./replay.js"
import { scrubFrameError } from "./scrub.js"
import type { Settings } from "./settings.js"
import { ConnectionState } from "./state.js"
import { type AttemptOutcome, End, Fatal, type Hooks, type Io, Retry, type Transport } from "./transport.js"

/** How long a socket found closing may take to report its close before the attempt is dropped. */
const CLOSING_GRACE_MS = 2_000

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
}

/** One attempt's state. */
interface Attempt {
  readonly key: Redacted.Redacted<string>
  /** Done when the attempt opens or ends, whichever first: the loop's first wait. */
  readonly wake: Deferred.Deferred<void>
  readonly outcome: Deferred.Deferred<AttemptOutcome>
  readonly scope: Scope.CloseableScope
  readonly entries: Array<Deadlines.Entry>
  io: Io | undefined
  opened: boolean
  ended: boolean
  gotFrame: boolean
  lastFrameAt: number
  writing: boolean
}

const isKeepAlive = (event: SessionEvent.SessionEvent): boolean =>
  event._tag === "Heartbeat" || event._tag === "Connected"

const keyOf = (request: SessionEvent.ExternalResourceRequested): string =>
  Ledger.requestKey(request.action_session_id, SessionEvent.resourceTypeRaw(request.resource_type))

/** Builds a connection in the current scope. Nothing is opened until `events` is consumed. */
export const makeEngine = (
  options: EngineOptions
): Effect.Effect<Engine, never, Scope.Scope | Credentials.Credentials> =>
  Effect.gen(function*() {
    const { dialect, sessionId, settings } = options
    const credentials = yield* Credentials.Credentials
    const scope = yield* Effect.scope
    const clock = yield* Effect.clock
    // The runtime of the running attempt (its logger, annotations and span), for the rare
    // Effect a frame callback needs (a skipped frame's warning).
    let runtime = yield* Effect.runtime<never>()
    const deadlines = options.deadlines ?? Deadlines.make()
    const state = yield* SubscriptionRef.make<EventStream.ConnectionState>(ConnectionState.Connecting())
    const mailbox = yield* Mailbox.make<SessionEvent.SessionEvent, EventStreamError>()
    const decode = Wire.makeDecoder(options.framing ?? dialect.framing, {
      maxFrameSize: settings.maxFrameSize,
      strict: settings.strict
    })
    const idleMillis = Duration.toMillis(settings.idleTimeout)
    const flow = new Flow(settings.bufferSize)
    const replay = new Replay()
    let ledger = Ledger.fromPending(settings.pendingRequests.map(keyOf))
    let started = false
    let finished = false
    let runner: Fiber.RuntimeFiber<void> | undefined
    let skipped = 0
    let current: Attempt | undefined

    const endAttempt = (attempt: Attempt, outcome: AttemptOutcome | Exit.Exit<AttemptOutcome>): void => {
      if (attempt.ended) return
      attempt.ended = true
      Deferred.unsafeDone(attempt.outcome, Exit.isExit(outcome) ? outcome : Exit.succeed(outcome))
      Deferred.unsafeDone(attempt.wake, Exit.void)
    }

    const pauseIfFull = (attempt: Attempt): void => {
      if (attempt.io !== undefined && flow.shouldPause()) attempt.io.pause()
    }

    /** Runs an Effect a frame callback asked for (rare: a skipped frame's warning). */
    const runAside = (effect: Effect.Effect<void>): void => {
      Runtime.runFork(runtime)(effect)
    }

    const skip = (error: FrameError): void => {
      skipped += 1
      const raw = "raw" in error ? truncateRaw(error.raw) : ""
      runAside(Effect.logWarning(`Skipped a frame: ${error.message}`).pipe(
        Effect.annotateLogs({ frameError: error._tag, skipped, raw })
      ))
    }

    // --- frames in (synchronous: the transport's callback) ---
    const accept = (result: Either.Either<SessionEvent.SessionEvent, FrameError>, print?: string): void => {
      const attempt = current
      if (attempt === undefined || attempt.ended) return
      attempt.lastFrameAt = clock.unsafeCurrentTimeMillis()
      if (Either.isLeft(result)) {
        const error = scrubFrameError(result.left, attempt.key)
        if (settings.failOnFrameError) return endAttempt(attempt, Fatal(error, "failed"))
        return skip(error)
      }
      const event = result.right
      // Progress is a new event (issue 12 defect 10); keep-alives prove the socket, not progress.
      if (!isKeepAlive(event)) {
        const askedAgain = () =>
          event._tag === "ExternalResourceRequested" && Ledger.isAnswered(ledger, keyOf(event))
        if (!replay.admit(print, askedAgain)) return
        attempt.gotFrame = true
        // The service went on talking after the answers were written: they got through.
        if (Ledger.hasUnconfirmed(ledger)) ledger = Ledger.confirm(ledger)
      }
      if (event._tag === "ExternalResourceRequested") ledger = Ledger.received(ledger, keyOf(event))
      mailbox.unsafeOffer(event)
      if (flow.received()) attempt.io?.pause()
      if (event._tag === "Complete") return endAttempt(attempt, End("complete"))
      if (event._tag === "AgentError" && settings.endOnError) return endAttempt(attempt, End("error-event"))
    }

    const taken = (count: number): void => {
      const attempt = current
      if (flow.taken(count) && attempt !== undefined && !attempt.ended) {
        attempt.lastFrameAt = clock.unsafeCurrentTimeMillis()
        attempt.io?.resume()
      }
    }

    // --- answers out ---
    /**
     * Writes the oldest queued answer and records what became of it. Uninterruptible: an answer
     * in flight (an SSE `POST` the service may already have processed) is never abandoned
     * half-way, which would send it twice.
     */
    const writeHead = (attempt: Attempt, io: Io): Effect.Effect<boolean> =>
      Effect.uninterruptible(Effect.gen(function*() {
        const head = Ledger.head(ledger)
        if (head === undefined) return true
        const sent = yield* Effect.either(io.send(head.frame, head.data))
        if (Either.isLeft(sent)) {
          const message = sent.left.message
          if (sent.left.closing === true) {
            // The socket is closing: its close (1000 ends, else reconnect) decides. Should no
            // close event follow within a grace period, the attempt is given up as a drop.
            const entry = yield* deadlines.schedule(clock.unsafeCurrentTimeMillis() + CLOSING_GRACE_MS, () => {
              endAttempt(attempt, Retry(`answer not written: ${message}`))
              return undefined
            })
            attempt.entries.push(entry)
            return false
          }
          if (sent.left.retry) {
            endAttempt(attempt, Retry(`answer not written: ${message}`))
            return false
          }
          ledger = Ledger.refused(ledger)
          yield* Effect.logError(`The service refused an answer (${message}): the request is pending again`)
          return true
        }
        ledger = Ledger.written(ledger, sent.right)
        yield* Metrics.recordAnswer({ _tag: head.data.granted ? "Grant" : "Deny" })
        return true
      }))

    /** Writes queued answers in order while the attempt lasts (claim `writing` before forking). */
    const writer = (attempt: Attempt, io: Io): Effect.Effect<void> =>
      Effect.gen(function*() {
        while (Ledger.head(ledger) !== undefined && !attempt.ended) {
          if (!(yield* writeHead(attempt, io))) break
        }
        attempt.writing = false
      })

    const startWriter = (attempt: Attempt): Effect.Effect<void> => {
      const io = attempt.io
      if (!attempt.opened || attempt.ended || attempt.writing || io === undefined || Ledger.head(ledger) === undefined) {
        return Effect.void
      }
      attempt.writing = true
      return Effect.asVoid(Effect.forkIn(writer(attempt, io), attempt.scope))
    }

    // --- time-outs ---
    const idleCheck = (attempt: Attempt) => (now: number): number | undefined => {
      if (attempt.ended) return undefined
      // A paused socket reads nothing: that is not the service's silence.
      if (flow.paused) return now + idleMillis
      const left = attempt.lastFrameAt + idleMillis - now
      if (left > 0) return now + left
      attempt.io?.abort()
      endAttempt(attempt, Retry(`no frame for ${Duration.format(settings.idleTimeout)} (idle time-out)`))
      return undefined
    }

    // --- one attempt ---
    const attemptOnce = (number: number): Effect.Effect<Attempted> =>
      Effect.gen(function*() {
        // The attempt's span is made and ended by hand, not wrapped around the attempt: a wrapper
        // stays on the fiber's stack for the whole attempt (6 KiB per open connection, measured).
        const span = yield* Effect.makeSpan("EventStream.attempt", {
          attributes: { sessionId, attempt: number, url: options.printableUrl },
          captureStackTrace: false
        })
        const key = yield* Effect.either(credentials.keyFor("connect", options.agent))
        if (Either.isLeft(key)) {
          span.end(clock.unsafeCurrentTimeNanos(), Exit.fail(key.left))
          return { outcome: Fatal(key.left, "failed"), alive: false, opened: false }
        }
        // The attempt's scope is closed by hand when the attempt is over (or by `run`'s exit on
        // interruption), not by `Effect.scoped`, for the same reason as the span.
        const scope = yield* Scope.make()
        const attempt: Attempt = {
          key: key.right,
          wake: Deferred.unsafeMake<void>(FiberId.none),
          outcome: Deferred.unsafeMake<AttemptOutcome>(FiberId.none),
          scope,
          entries: [],
          io: undefined,
          opened: false,
          ended: false,
          gotFrame: false,
          lastFrameAt: clock.unsafeCurrentTimeMillis(),
          writing: false
        }
        current = attempt
        runtime = yield* Effect.runtime<never>()
        flow.reset()
        replay.reopened()
        yield* Scope.addFinalizerExit(scope, (exit) =>
          Effect.sync(() => {
            attempt.ended = true
            for (const entry of attempt.entries) entry.cancel()
            span.end(clock.unsafeCurrentTimeNanos(), exit)
          })
        )
        const hooks: Hooks = {
          key: key.right,
          deadlines,
          attach: (io) => {
            attempt.io = io
            pauseIfFull(attempt)
          },
          open: () => {
            if (attempt.ended || attempt.opened) return
            attempt.opened = true
            attempt.lastFrameAt = clock.unsafeCurrentTimeMillis()
            Deferred.unsafeDone(attempt.wake, Exit.void)
          },
          frame: (data) => accept(decode(data), frameKey(data)),
          // Server-Sent Events: the engine is built with the `event-data` framing for them, and
          // the same decoder reads the `{event,data}` frame rebuilt from the SSE event.
          namedEvent: (name, data) => {
            const text = `{"event":${JSON.stringify(name)},"data":${data.length === 0 ? "{}" : data}}`
            accept(decode(text), text)
          },
          tooLarge: (size) => accept(Either.left(new FrameTooLarge({ size, limit: settings.maxFrameSize }))),
          alive: () => {
            if (!attempt.ended) attempt.lastFrameAt = clock.unsafeCurrentTimeMillis()
          },
          end: (outcome) => endAttempt(attempt, outcome)
        }
        yield* Scope.extend(options.transport(hooks), scope)
        yield* Deferred.await(attempt.wake)
        // An attempt that opened is open for the loop even if it has ended already (opened,
        // delivered and dropped before this fiber woke up): its state, count and schedule.
        if (attempt.opened) yield* loop.opened
        if (attempt.opened && !attempt.ended) {
          pauseIfFull(attempt)
          attempt.entries.push(yield* deadlines.schedule(attempt.lastFrameAt + idleMillis, idleCheck(attempt)))
          yield* startWriter(attempt)
        }
        const outcome = yield* Deferred.await(attempt.outcome)
        yield* Scope.close(scope, Exit.succeed(outcome))
        const dropped = replay.takeDropped()
        if (dropped > 0) {
          yield* Effect.logDebug(`${dropped} event(s) sent again after the reconnect were dropped (a replay)`)
        }
        return { outcome, alive: attempt.gotFrame, opened: attempt.opened }
      })

    const loop = makeLoop({
      sessionId,
      printableUrl: options.printableUrl,
      settings,
      state,
      clock,
      attempt: attemptOnce,
      ended: () => {
        ledger = Ledger.confirm(ledger)
      },
      dropped: () => {
        const count = ledger.unconfirmed.length
        ledger = Ledger.requeue(ledger)
        return count
      }
    })

    // --- the end ---
    // Uninterruptible: once `finished` is set, `state` must reach Closed and the mailbox must end,
    // even when `close` interrupts the runner while it is ending by itself (else `events` hangs).
    const finish = (final: Final): Effect.Effect<void> =>
      Effect.uninterruptible(Effect.suspend(() => {
        if (finished) return Effect.void
        finished = true
        // A clean end: what was written before it was read (the close comes after it on the wire).
        const clean = final.reason !== "connection-lost" && final.reason !== "failed" &&
          final.reason !== "handshake-rejected"
        const unsent = Ledger.unsent(ledger, clean)
        ledger = Ledger.empty
        return Effect.all([
          SubscriptionRef.set(
            state,
            ConnectionState.Closed(unsent.length > 0 ? { reason: final.reason, unsent } : { reason: final.reason })
          ),
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

    const closedByCaller: Final = { reason: "closed-by-caller", exit: Exit.void }

    /** How the loop ended: its result, a defect (a bug) as `failed`, or the caller's close. */
    const finalOf = (exit: Exit.Exit<Final>): Final => {
      if (Exit.isSuccess(exit)) return exit.value
      if (Cause.isInterruptedOnly(exit.cause)) return closedByCaller
      const defect = Cause.dieOption(exit.cause)
      return { reason: "failed", exit: Exit.die(Option.isSome(defect) ? defect.value : Cause.squash(exit.cause)) }
    }

    // The connection's fiber, lean on purpose (issue 15: every wrapper stays on the fiber's stack
    // while the connection is open). Its log annotation and its span are set on the fiber itself
    // (it runs nothing else) rather than wrapped around it: measured, `Effect.annotateLogs`
    // and `Effect.withSpan` around the loop cost 3.4 and 5.3 KiB per open connection. One frame
    // for the ending.
    const run: Effect.Effect<void> = Effect.flatMap(
      Effect.makeSpan("EventStream.connection", {
        attributes: { sessionId, url: options.printableUrl },
        captureStackTrace: false
      }),
      (span) =>
        Effect.zipRight(
          Effect.zipRight(
            FiberRef.update(FiberRef.currentLogAnnotations, HashMap.set<string, unknown>("sessionId", sessionId)),
            FiberRef.update(FiberRef.currentContext, Context.add(Tracer.ParentSpan, span))
          ),
          Effect.onExit(loop.run, (exit) =>
            Effect.zipRight(
              current === undefined ? Effect.void : Scope.close(current.scope, Exit.asVoid(exit)),
              Effect.zipRight(
                finish(finalOf(exit)),
                Effect.sync(() => span.end(clock.unsafeCurrentTimeNanos(), exit))
              )
            ))
        )
    )

    const start = Effect.suspend(() => {
      if (started) return Effect.void
      started = true
      if (finished) return Effect.void
      return Effect.forkIn(run, scope).pipe(Effect.tap((fiber) => {
        runner = fiber
      }))
    })

    // The consumer's side: the mailbox read chunk by chunk, as `Mailbox.toStream` does, with
    // the connection started on the first pull and each chunk counted out of the buffer. One
    // channel, no `Stream.unwrap` (which adds a flattening executor per consumer).
    const pull: Channel.Channel<Chunk.Chunk<SessionEvent.SessionEvent>, unknown, EventStreamError, unknown, void, unknown> =
      Channel.flatMap(mailbox.takeAll, ([chunk, done]) => {
        if (chunk.length === 0) return done ? Channel.void : pull
        taken(chunk.length)
        // Metrics: one update per chunk and event tag, not per frame.
        const out = Channel.zipRight(Channel.fromEffect(Metrics.recordEvents(chunk)), Channel.write(chunk))
        return done ? out : Channel.zipRight(out, pull)
      })
    const events: Stream.Stream<SessionEvent.SessionEvent, EventStreamError> = Stream.fromChannel(
      Channel.zipRight(Channel.fromEffect(start), pull)
    )

    const close: Effect.Effect<void> = Effect.suspend(() => {
      if (runner === undefined) {
        started = true
        return finish(closedByCaller)
      }
      return Effect.asVoid(Fiber.interrupt(runner))
    })

    const respond = (
      request: SessionEvent.ExternalResourceRequested,
      answer: Answer.Answer
    ): Effect.Effect<void, RespondError> =>
      Effect.suspend((): Effect.Effect<void, RespondError> => {
        const resourceType = SessionEvent.resourceTypeRaw(request.resource_type)
        const actionSessionId = request.action_session_id
        // The connection is closed: nothing can be sent any more, whatever was asked (U16).
        if (finished) return Effect.fail(new RequestNotPending({ resourceType, actionSessionId, reason: "channel-closed" }))
        const queued = Ledger.queue(ledger, {
          key: keyOf(request),
          frame: Wire.encodeAnswer(dialect.answerKey, request, answer),
          data: Wire.answerData(request, answer)
        }, settings.answerBufferSize)
        if (Either.isLeft(queued)) {
          return queued.left === "full"
            ? Effect.fail(new AnswerBufferFull({ limit: settings.answerBufferSize }))
            : Effect.fail(new RequestNotPending({ resourceType, actionSessionId, reason: queued.left }))
        }
        ledger = queued.right
        return current === undefined ? Effect.void : startWriter(current)
      })

    yield* Effect.addFinalizer(() => close)

    const connection: EventStream.Connection = { sessionId, events, state, respond, close }
    return {
      connection,
      buffered: () => flow.held,
      peakBuffered: () => flow.peak,
      skipped: () => skipped
    }
  })
