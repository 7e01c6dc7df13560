/**
 * The façade most users call: create a session, watch its events, answer its requests, and get
 * its outcome, with the action budget guard (U20) and an explicit end for a session that stops
 * before `complete` (U17).
 *
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Channel from "effect/Channel"
import * as Chunk from "effect/Chunk"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberRef from "effect/FiberRef"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import * as Sink from "effect/Sink"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as Tracer from "effect/Tracer"
import type * as AgentModule from "./Agent.js"
import { AgentApi } from "./AgentApi.js"
import * as Answer from "./Answer.js"
import * as Credentials from "./Credentials.js"
import {
  ActionBudgetExceeded,
  type EventStreamError,
  type InsecureTransport,
  type OnboardError,
  type RespondError,
  type RunError,
  type RunningSessionError,
  SessionEndedWithoutComplete,
  type StartError
} from "./Errors.js"
import * as EventStream from "./EventStream.js"
import { MAX_REQUESTS as MAX_PENDING } from "./internal/channel/ledger.js"
import { validate } from "./internal/schema.js"
import * as Session from "./Session.js"
import * as SessionEvent from "./SessionEvent.js"

/**
 * How a finished session ended.
 *
 * @since 0.1.0
 * @category models
 */
export interface Outcome {
  readonly sessionId: Session.SessionId
  /** `complete.response`. */
  readonly response: string
  /** `complete.type` (U13). */
  readonly type: SessionEvent.ResponseType
  /** The cost, from `total_cost` or the observed `cost_summary` (U14). */
  readonly totalCost: Option.Option<number>
  /** The `action_run` events seen (chargeable). */
  readonly actions: number
  /** The `max_actions` the session was created with. */
  readonly maxActions: number
  /**
   * The events kept, in arrival order: by default the last 100 (`keepEvents` sets how many:
   * `true` every event, `false` none).
   */
  readonly events: ReadonlyArray<SessionEvent.SessionEvent>
  /** The `complete` event itself. */
  readonly complete: SessionEvent.Complete
  /** With `onBudgetExceeded: "report"`, the overrun that was seen (U20). */
  readonly budgetExceeded: Option.Option<ActionBudgetExceeded>
}

/**
 * Options of {@link Service.start} and {@link Service.run}.
 *
 * @since 0.1.0
 * @category models
 */
export interface StartOptions extends EventStream.ConnectOptions {
  /**
   * Past `max_actions` `action_run` events: `"fail"` (default) fails the run with
   * `ActionBudgetExceeded` and closes the connection; `"report"` keeps going and records the
   * overrun in the outcome (U20).
   */
  readonly onBudgetExceeded?: "fail" | "report" | undefined
  /**
   * Which events `Outcome.events` keeps: a number `n` keeps the last `n` events, `true` every
   * event (memory grows with the session: up to `maxFrameSize` per event), `false` none.
   * Default {@link defaultKeepEvents} (the last 100).
   */
  readonly keepEvents?: boolean | number | undefined
  /**
   * A request of the agent that waits longer than this for an answer is reported with a warning
   * log (its resource type and how long it has waited): the agent is blocked, and the session
   * is paid for meanwhile. Default 30 s; `Duration.infinity` turns the warning off. The warning
   * takes one timer fiber per session, only while a request waits for it.
   */
  readonly pendingWarningAfter?: Duration.DurationInput | undefined
  /**
   * The `Idempotency-Key` of the create request (default: a fresh random one per call). Pass the
   * `idempotencyKey` of an `OutcomeUnknown` to ask a service that honours the key for the session
   * it may already have created (docs/reliability.md).
   */
  readonly idempotencyKey?: string | undefined
}

/**
 * A request of the agent waiting for an answer (`RunningSession.pending`).
 * @since 0.2.0
 * @category models
 */
export interface PendingRequest {
  readonly request: SessionEvent.ExternalResourceRequested
  /** When it arrived (epoch milliseconds of the Effect `Clock`). */
  readonly since: number
}

/**
 * The default of `pendingWarningAfter`: 30 s.
 * @since 0.2.0
 * @category constructors
 */
export const defaultPendingWarningAfter: Duration.Duration = Duration.seconds(30)

/**
 * A session that is running: its events, the way to answer, its state and its outcome.
 *
 * `events` can be consumed once. `outcome` completes with `complete`: when nobody consumes
 * `events`, awaiting `outcome` consumes them itself. When the consumer of `events` stops before
 * `complete` (it fails with its own error, is interrupted, or takes fewer events), `outcome`
 * fails with `SessionEndedWithoutComplete`.
 *
 * @since 0.1.0
 * @category models
 */
export interface RunningSession {
  readonly session: Session.SessionInfo
  /**
   * The events with the budget guard applied. Fails with `ActionBudgetExceeded` (in `"fail"`
   * mode), with `SessionEndedWithoutComplete` when the channel ends before `complete` (U17),
   * or with the channel's own error (`EventStreamError`).
   */
  readonly events: Stream.Stream<SessionEvent.SessionEvent, RunningSessionError>
  readonly respond: (
    request: SessionEvent.ExternalResourceRequested,
    answer: Answer.Answer
  ) => Effect.Effect<void, RespondError>
  readonly state: SubscriptionRef.SubscriptionRef<EventStream.ConnectionState>
  /**
   * The agent's requests waiting for an answer, in arrival order: one is added when it arrives
   * on `events`, and removed once `respond` accepted its answer (or when the events end). The
   * agent waits meanwhile; one waiting longer than `pendingWarningAfter` (default 30 s) is also
   * reported with a warning log. At most 1,024 are listed: past that the oldest go, as the
   * connection forgets them (answering one fails with `RequestNotPending`).
   */
  readonly pending: SubscriptionRef.SubscriptionRef<ReadonlyArray<PendingRequest>>
  /**
   * The outcome, once `complete` arrived; else the error the events failed with, or
   * `SessionEndedWithoutComplete` (also when the consumer of `events` stopped before `complete`,
   * whatever its own error: that one stays the consumer's).
   */
  readonly outcome: Effect.Effect<Outcome, RunningSessionError>
  /** Closes the connection (code 1000); the session's events end. */
  readonly close: Effect.Effect<void>
}

/**
 * Options of {@link Service.run}: a handler for the agent's requests, and an optional observer
 * of every event.
 *
 * @since 0.1.0
 * @category models
 */
export interface RunOptions<E, R> extends StartOptions {
  /** Answers each `external_resource_requested` (U15, U16). Without it, requests are denied (each with a warning log). */
  readonly onRequest?: ((request: SessionEvent.ExternalResourceRequested) => Effect.Effect<Answer.Answer, E, R>) | undefined
  /** Called with every event as it arrives, before requests are answered. */
  readonly onEvent?: ((event: SessionEvent.SessionEvent) => Effect.Effect<void, E, R>) | undefined
}

/**
 * The operations of the façade: `onboard`, `start`, `attach` and `run`.
 *
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /** Onboards an agent (account key); its key is remembered by `Credentials`. */
  readonly onboard: (request: AgentModule.OnboardInput) => Effect.Effect<AgentModule.Agent, OnboardError>
  /**
   * Creates a session; then connects, subscribe-then-connect. Scoped: the connection closes with
   * the scope. Nothing is read before `events` (or `outcome`) is consumed, so it fails only with
   * the create's errors and `InsecureTransport`.
   */
  readonly start: (
    request: Session.CreateSessionInput,
    options?: StartOptions
  ) => Effect.Effect<RunningSession, StartError, Scope.Scope>
  /** Watches a session that already exists (created elsewhere), with the same guards. */
  readonly attach: (
    session: Session.SessionInfo,
    maxActions: number,
    options?: StartOptions
  ) => Effect.Effect<RunningSession, InsecureTransport, Scope.Scope>
  /**
   * A whole session in one Effect: create, watch, answer with `onRequest`, and the outcome. Fails
   * with a {@link RunError}, or with the error of `onRequest` / `onEvent` (`E`) as it is.
   */
  readonly run: <E = never, R = never>(
    request: Session.CreateSessionInput,
    options?: RunOptions<E, R>
  ) => Effect.Effect<Outcome, RunError | E, R>
}

/**
 * The session façade.
 *
 * @since 0.1.0
 * @category tags
 */
export class AgentSessions extends Context.Tag("effect-agent-session/AgentSessions")<AgentSessions, Service>() {}

const validateCreate = validate(Session.CreateSessionRequest, "CreateSessionRequest")

const isRequest = (event: SessionEvent.SessionEvent): boolean => event._tag === "ExternalResourceRequested"

/**
 * How many events `Outcome.events` keeps by default: the last 100.
 *
 * @since 0.1.0
 * @category constructors
 */
export const defaultKeepEvents = 100

const keptEvents = (option: boolean | number | undefined): number =>
  option === undefined
    ? defaultKeepEvents
    : option === true
    ? Number.POSITIVE_INFINITY
    : option === false
    ? 0
    : Number.isFinite(option)
    ? Math.max(0, Math.floor(option))
    : option > 0
    ? Number.POSITIVE_INFINITY
    : 0

interface Tally {
  actions: number
  complete: Option.Option<SessionEvent.Complete>
  lastError: Option.Option<string>
  overrun: Option.Option<ActionBudgetExceeded>
  readonly events: Array<SessionEvent.SessionEvent>
}

/**
 * The agent's requests waiting for an answer (issue 13 item 4), and the warning for one that
 * waits past `warnAfter`. One timer fiber per session, and only while a request waits for its
 * warning: it sleeps until the earliest warning is due, and ends (or is interrupted) once no
 * request is left to warn about. An idle session has none.
 */
const pendingWarnings = (
  pending: SubscriptionRef.SubscriptionRef<ReadonlyArray<PendingRequest>>,
  sessionId: Session.SessionId,
  warnAfter: Duration.Duration,
  scope: Scope.Scope
) => {
  const warnAfterMillis = Duration.toMillis(warnAfter)
  // `pending`'s value, kept in step by `update`, so that the timer decides in one synchronous step.
  let waiting: ReadonlyArray<PendingRequest> = []
  const warned = new WeakSet<PendingRequest>()
  interface Timer {
    fiber: Fiber.RuntimeFiber<void> | undefined
  }
  let timer: Timer | undefined

  const update = (f: (all: ReadonlyArray<PendingRequest>) => ReadonlyArray<PendingRequest>) =>
    SubscriptionRef.update(pending, (all) => {
      waiting = f(all)
      return waiting
    })
  const sameRequest = (a: SessionEvent.ExternalResourceRequested, b: SessionEvent.ExternalResourceRequested) =>
    a.action_session_id === b.action_session_id &&
    SessionEvent.resourceTypeRaw(a.resource_type) === SessionEvent.resourceTypeRaw(b.resource_type)

  const warn = (entry: PendingRequest, now: number) => {
    const resourceType = SessionEvent.resourceTypeRaw(entry.request.resource_type)
    return Effect.logWarning(
      `The agent has waited ${
        Duration.format(Duration.millis(now - entry.since))
      } for an answer to its ${resourceType} request: answer it with respond (RunningSession.pending lists it)`
    ).pipe(Effect.annotateLogs({ sessionId, resourceType, waitedMs: now - entry.since }))
  }
  // Sleeps until the earliest warning not given yet is due, gives it if its request still
  // waits, and so on; ends when none is left (or when another timer replaced this one).
  const watch = (self: Timer): Effect.Effect<void> =>
    Effect.suspend(() => {
      if (timer !== self) return Effect.void
      let next: PendingRequest | undefined
      for (const entry of waiting) {
        if (!warned.has(entry) && (next === undefined || entry.since < next.since)) next = entry
      }
      if (next === undefined) {
        timer = undefined
        return Effect.void
      }
      const entry = next
      return Effect.flatMap(Clock.currentTimeMillis, (now) => {
        const due = entry.since + warnAfterMillis - now
        if (due > 0) return Effect.zipRight(Effect.sleep(Duration.millis(due)), watch(self))
        warned.add(entry)
        return Effect.zipRight(warn(entry, now), watch(self))
      })
    })
  const startTimer = Effect.suspend(() => {
    if (timer !== undefined || !Number.isFinite(warnAfterMillis)) return Effect.void
    const self: Timer = { fiber: undefined }
    timer = self
    return Effect.map(Effect.forkIn(watch(self), scope), (fiber) => {
      self.fiber = fiber
    })
  })
  // No request left to warn about: the timer is not needed any more.
  const stopTimer = (always: boolean) =>
    Effect.suspend(() => {
      const current = timer
      if (current === undefined || (!always && waiting.some((entry) => !warned.has(entry)))) return Effect.void
      timer = undefined
      return current.fiber === undefined ? Effect.void : Fiber.interrupt(current.fiber)
    })

  /** Requests that arrived (in one chunk, in order): each replaces an earlier one of the same key. */
  const arrived = (requests: ReadonlyArray<SessionEvent.ExternalResourceRequested>) =>
    Effect.flatMap(Clock.currentTimeMillis, (since) =>
      Effect.zipRight(
        update((all) => {
          let next = all
          for (const request of requests) {
            next = [...next.filter((p) => !sameRequest(p.request, request)), { request, since }]
          }
          // Bounded as the connection's answer ledger is (issue 20 item 3): the oldest go first,
          // as the ledger forgets them (answering one fails with RequestNotPending).
          return next.length > MAX_PENDING ? next.slice(next.length - MAX_PENDING) : next
        }),
        startTimer
      ))
  /** A request answered (its answer accepted by `respond`). */
  const answered = (request: SessionEvent.ExternalResourceRequested) =>
    Effect.zipRight(update((all) => all.filter((p) => !sameRequest(p.request, request))), stopTimer(false))
  /** The events ended: nothing waits any more. */
  const cleared = Effect.zipRight(update(() => []), stopTimer(true))
  return { arrived, answered, cleared }
}

const guard = (
  connection: EventStream.Connection,
  sessionId: Session.SessionId,
  maxActions: number,
  options: StartOptions
) =>
  Effect.gen(function*() {
    const mode = options.onBudgetExceeded ?? "fail"
    const keep = keptEvents(options.keepEvents)
    const tally: Tally = {
      actions: 0,
      complete: Option.none(),
      lastError: Option.none(),
      overrun: Option.none(),
      events: []
    }
    const outcome = yield* Deferred.make<Outcome, RunningSessionError>()
    const scope = yield* Effect.scope
    const pending = yield* SubscriptionRef.make<ReadonlyArray<PendingRequest>>([])
    const { answered, arrived, cleared } = pendingWarnings(
      pending,
      sessionId,
      Duration.decode(options.pendingWarningAfter ?? defaultPendingWarningAfter),
      scope
    )

    const outcomeOf = (complete: SessionEvent.Complete): Outcome => ({
      sessionId,
      response: complete.response,
      type: complete.type,
      totalCost: SessionEvent.totalCost(complete),
      actions: tally.actions,
      maxActions,
      events: tally.events.length > keep ? tally.events.slice(-keep) : tally.events,
      complete,
      budgetExceeded: tally.overrun
    })
    const endedWithoutComplete = () =>
      new SessionEndedWithoutComplete({ sessionId, lastError: tally.lastError, mayStillBeRunning: true })

    // The error the events themselves failed with: the connection's, the overrun, or the end
    // without `complete`. It is what `outcome` fails with.
    let failedWith: RunningSessionError | undefined

    // The outcome completes as soon as `complete` is seen (so awaiting it never depends on when
    // the consumer's scope closes); otherwise when the events end, with their failure, or with
    // SessionEndedWithoutComplete (U17). The exit seen here is also the consumer's: its own
    // failure (whatever its type) or interruption is not passed on to whoever awaits the
    // outcome; for them the events ended without `complete`. Defects stay defects.
    const finish = (exit: Exit.Exit<unknown, unknown>) => {
      const withoutComplete = Effect.suspend(() =>
        Option.match(tally.complete, {
          onNone: () => Effect.fail(endedWithoutComplete()),
          onSome: (complete) => Effect.succeed(outcomeOf(complete))
        })
      )
      return Deferred.complete(
        outcome,
        Exit.matchEffect(exit, {
          onFailure: (cause): Effect.Effect<Outcome, RunningSessionError> =>
            Option.match(Cause.dieOption(cause), {
              onSome: Effect.die,
              onNone: () => failedWith === undefined ? withoutComplete : Effect.fail(failedWith)
            }),
          onSuccess: () => withoutComplete
        })
      )
    }

    // The guard is one channel stage between the connection's events and the consumer: one
    // synchronous pass per chunk counts, records and checks the events, and passes the chunk on
    // as it came (no copy, no Effect), unless it carries a request (registered in `pending`
    // before the chunk is delivered) or the overrun (the chunk is cut after it, and nothing after
    // it is pulled). The events' own end is judged once they are closed (so the connection sees
    // its own exit, not the guard's): the overrun closes the connection and fails; an end before
    // `complete` is SessionEndedWithoutComplete (U17).
    type Guard = Channel.Channel<
      Chunk.Chunk<SessionEvent.SessionEvent>,
      Chunk.Chunk<SessionEvent.SessionEvent>,
      EventStreamError,
      EventStreamError,
      void,
      unknown
    >
    let overrun: ActionBudgetExceeded | undefined
    const onChunk = (chunk: Chunk.Chunk<SessionEvent.SessionEvent>): Guard => {
      let requests: Array<SessionEvent.ExternalResourceRequested> | undefined
      let delivered = 0
      for (const event of chunk) {
        delivered += 1
        if (keep > 0) {
          tally.events.push(event)
          // A bounded tail: the oldest half is dropped at twice the bound (amortized O(1)).
          if (tally.events.length >= 2 * keep) tally.events.splice(0, tally.events.length - keep)
        }
        if (event._tag === "ActionRun") {
          tally.actions += 1
          if (tally.actions > maxActions) {
            // The connection is closed: the session may go on at the service (issue 13).
            const exceeded = new ActionBudgetExceeded({
              sessionId,
              maxActions,
              actions: tally.actions,
              mayStillBeRunning: mode === "fail"
            })
            if (Option.isNone(tally.overrun)) tally.overrun = Option.some(exceeded)
            if (mode === "fail") {
              overrun = exceeded
              break
            }
          }
        } else if (event._tag === "ExternalResourceRequested") {
          ;(requests ??= []).push(event)
        } else if (event._tag === "AgentError") {
          tally.lastError = Option.some(event.error)
        } else if (event._tag === "Complete") {
          tally.complete = Option.some(event)
          Deferred.unsafeDone(outcome, Exit.succeed(outcomeOf(event)))
        }
      }
      if (delivered === 0) return guard
      const written: Guard = overrun === undefined
        ? Channel.flatMap(Channel.write(chunk), again)
        : Channel.write(delivered === chunk.length ? chunk : Chunk.take(chunk, delivered))
      return requests === undefined ? written : Channel.zipRight(Channel.fromEffect(arrived(requests)), written)
    }
    const onFailure = (cause: Cause.Cause<EventStreamError>): Guard => {
      failedWith = Option.getOrUndefined(Cause.failureOption(cause))
      return Channel.failCause(cause)
    }
    const onDone = (): Guard => Channel.void
    const guard: Guard = Channel.readWithCause({ onInput: onChunk, onFailure, onDone })
    const again = (): Guard => guard
    const ending = Channel.suspend((): Channel.Channel<never, unknown, RunningSessionError, unknown, void, unknown> => {
      if (overrun !== undefined) {
        failedWith = overrun
        return Channel.fromEffect(Effect.zipRight(connection.close, Effect.fail(overrun)))
      }
      if (Option.isSome(tally.complete)) return Channel.void
      failedWith = endedWithoutComplete()
      return Channel.fail(failedWith)
    })

    // The span "AgentSessions.events", made once per stream. It is the parent of what the
    // connection starts when its events are first pulled (its own span), as with
    // `Stream.withSpan`. But `Stream.withSpan` provides the span to every effect the events run:
    // an `Effect.provide` per pulled chunk, measured at about 7 us of the 7.3 us the façade added
    // per one-event chunk (2-core machine, under load; bench/facade.ts). So the span is made the
    // pulling fiber's parent span for the first pull only (in `FiberRef.currentContext`, where
    // `Effect.provide` itself puts it), and that change alone is undone before the first chunk is
    // handled (or when the stream closes first). Measured against the other way to scope it to
    // the first pull (`Channel.toPull` with `Effect.withParentSpan` on the first pull), this saves
    // about 1 us per pulled chunk. When the consumer wraps the events in a provide of its own
    // (`Stream.withSpan`, `Stream.provideService`), the first pull runs in that context and the
    // connection's span nests under the consumer's span instead.
    const underSpanOnFirstPull = (span: Tracer.Span): Channel.Channel<
      Chunk.Chunk<SessionEvent.SessionEvent>,
      unknown,
      EventStreamError,
      unknown,
      void,
      unknown
    > =>
      Channel.flatMap(
        Channel.fromEffect(
          FiberRef.modify(
            FiberRef.currentContext,
            (context) => [Context.getOption(context, Tracer.ParentSpan), Context.add(context, Tracer.ParentSpan, span)]
          )
        ),
        (parent) => {
          let restored = false
          // Only its own change: the parent span back, if the span is still the fiber's parent.
          const restore = Effect.suspend(() => {
            if (restored) return Effect.void
            restored = true
            return FiberRef.update(FiberRef.currentContext, (context) =>
              Option.getOrUndefined(Context.getOption(context, Tracer.ParentSpan)) !== span
                ? context
                : Option.match(parent, {
                  onNone: () => Context.omit(Tracer.ParentSpan)(context),
                  onSome: (previous) => Context.add(context, Tracer.ParentSpan, previous)
                }))
          })
          const first: Guard = Channel.readWithCause({
            onInput: (chunk: Chunk.Chunk<SessionEvent.SessionEvent>): Guard =>
              Channel.zipRight(Channel.fromEffect(restore), onChunk(chunk)),
            onFailure: (cause: Cause.Cause<EventStreamError>): Guard =>
              Channel.zipRight(Channel.fromEffect(restore), onFailure(cause)),
            onDone: (): Guard => Channel.fromEffect(restore)
          })
          return Channel.ensuring(Channel.pipeTo(Stream.toChannel(connection.events), first), restore)
        }
      )

    // The span lives as long as the stream and ends with its exit; the outcome is settled (and
    // `pending` emptied) after the connection's events are closed. No operator here forks a
    // fiber or adds a queue: an idle session costs the consumer's fibers and nothing more.
    const guarded: Stream.Stream<SessionEvent.SessionEvent, RunningSessionError> = Stream.fromChannel(
      Channel.acquireUseRelease(
        Effect.flatMap(Scope.make(), (scope) =>
          Effect.map(
            Scope.extend(Effect.makeSpanScoped("AgentSessions.events", { attributes: { sessionId } }), scope),
            (span) => ({ scope, span })
          )),
        ({ span }) =>
          Channel.zipRight(underSpanOnFirstPull(span), ending).pipe(
            Channel.ensuringWith((exit) => Effect.zipRight(cleared, finish(exit)))
          ),
        ({ scope }, exit) => Scope.close(scope, exit)
      )
    )

    let consumed = false
    const events: Stream.Stream<SessionEvent.SessionEvent, RunningSessionError> = Stream.suspend(() => {
      if (consumed) return Stream.dieMessage("RunningSession.events can be consumed once")
      consumed = true
      return guarded
    })

    const awaitOutcome: Effect.Effect<Outcome, RunningSessionError> = Effect.suspend(() => {
      if (consumed) return Deferred.await(outcome)
      consumed = true
      return Effect.zipRight(Effect.ignore(Stream.runDrain(guarded)), Deferred.await(outcome))
    })

    return { events, outcome: awaitOutcome, pending, answered }
  })

/**
 * Builds the façade over `AgentApi`, `EventStream` and `Credentials`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<Service, never, AgentApi | EventStream.EventStream | Credentials.Credentials> = Effect
  .gen(function*() {
    const api = yield* AgentApi
    const eventStream = yield* EventStream.EventStream
    // Required so that one layer wires the façade with the keys its services use.
    yield* Credentials.Credentials

    const attach: Service["attach"] = (session, maxActions, options = {}) =>
      Effect.gen(function*() {
        const connection = yield* eventStream.connect(session.session_id, options)
        const { answered, events, outcome, pending } = yield* guard(connection, session.session_id, maxActions, options)
        return {
          session,
          events,
          respond: (request, answer) => Effect.tap(connection.respond(request, answer), () => answered(request)),
          state: connection.state,
          pending,
          outcome,
          close: connection.close
        } satisfies RunningSession
      }).pipe(Effect.annotateLogs({ sessionId: session.session_id }))

    const start: Service["start"] = (request, options = {}) =>
      Effect.gen(function*() {
        const valid = yield* validateCreate(request)
        const session = yield* api.createSession(request, {
          agent: options.agent,
          ...(options.idempotencyKey === undefined ? {} : { idempotencyKey: options.idempotencyKey })
        })
        return yield* attach(session, valid.max_actions, options)
      }).pipe(Effect.withSpan("AgentSessions.start"))

    const run: Service["run"] = <E, R>(request: Session.CreateSessionInput, options: RunOptions<E, R> = {}) =>
      Effect.scoped(
        Effect.gen(function*() {
          const running = yield* start(request, options)
          const onRequest = options.onRequest
          const onEvent = options.onEvent
          const answer = (asked: SessionEvent.ExternalResourceRequested) =>
            Effect.flatMap(
              onRequest === undefined
                ? Effect.as(
                  Effect.logWarning("No onRequest handler: denying the agent's request").pipe(
                    Effect.annotateLogs({ resourceType: SessionEvent.resourceTypeRaw(asked.resource_type) })
                  ),
                  Answer.deny()
                )
                : onRequest(asked),
              (given) => running.respond(asked, given)
            )
          const handle = (event: SessionEvent.SessionEvent): Effect.Effect<void, RespondError | E, R> => {
            const observe = onEvent === undefined ? Effect.void : onEvent(event)
            return event._tag === "ExternalResourceRequested" ? Effect.zipRight(observe, answer(event)) : observe
          }
          // Per chunk: without `onEvent`, a chunk with no request costs no Effect at all (as
          // `Stream.runDrain`; `Stream.runForEachChunk` would run one per chunk).
          type Consume = Channel.Channel<never, Chunk.Chunk<SessionEvent.SessionEvent>, RespondError | E, never, void, unknown, R>
          const consume: Consume = Channel.readWith({
            onInput: (chunk: Chunk.Chunk<SessionEvent.SessionEvent>): Consume =>
              onEvent === undefined && !Chunk.some(chunk, isRequest)
                ? consume
                : Channel.zipRight(Channel.fromEffect(Effect.forEach(chunk, handle, { discard: true })), consume),
            onFailure: (error: never): Consume => Channel.fail(error),
            onDone: (): Consume => Channel.void
          })
          yield* Stream.run(running.events, Sink.fromChannel(consume))
          return yield* running.outcome
        })
      ).pipe(Effect.withSpan("AgentSessions.run"))

    return AgentSessions.of({
      // AgentApi.onboard remembers the agent's key in Credentials (U11).
      onboard: api.onboard,
      start,
      attach,
      run
    })
  })

/**
 * The façade as a layer, over the three services it needs.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<AgentSessions, never, AgentApi | EventStream.EventStream | Credentials.Credentials> =
  Layer.effect(AgentSessions, make)

/**
 * Runs a whole session in one Effect: creates it, connects (subscribe-then-connect), calls
 * `onEvent` with every event, answers each `external_resource_requested` with `onRequest`
 * (without it, requests are denied, with a warning log), guards the action budget (U20), and succeeds with the
 * {@link Outcome} once `complete` arrives. A channel that ends before `complete` fails with
 * `SessionEndedWithoutComplete` (U17).
 *
 * @example
 * ```ts
 * import { AgentSessions, Answer, NodeAgentSessions } from "effect-agent-session"
 * import * as Console from "effect/Console"
 * import * as Effect from "effect/Effect"
 *
 * const program = AgentSessions.run(
 *   { start_url: "https://example.com", max_actions: 10, goal: "Find the opening hours" },
 *   {
 *     onEvent: (event) => Console.log(event._tag),
 *     onRequest: (request) =>
 *       Effect.succeed(request.resource_type === "request_user_input" ? Answer.grant("jane@example.com") : Answer.grant())
 *   }
 * ).pipe(
 *   Effect.tap((outcome) => Console.log(outcome.response, outcome.totalCost)),
 *   Effect.provide(NodeAgentSessions.layerConfig())
 * )
 * ```
 *
 * @since 0.1.0
 * @category accessors
 */
export const run = <E = never, R = never>(
  request: Session.CreateSessionInput,
  options?: RunOptions<E, R>
): Effect.Effect<Outcome, RunError | E, R | AgentSessions> =>
  Effect.flatMap(AgentSessions, (sessions) => sessions.run(request, options))

/**
 * Creates a session and connects to its events, in the current scope (the connection closes with
 * it): a {@link RunningSession} to consume `events` from, answer with `respond`, observe through
 * `state`, and await the `outcome` of. Each `external_resource_requested` blocks the agent until
 * it is answered with `respond` (as below); `pending` lists the requests still waiting, and one
 * waiting past `pendingWarningAfter` (default 30 s) is reported with a warning log.
 *
 * @example
 * ```ts
 * import { AgentSessions, Answer, SessionEvent } from "effect-agent-session"
 * import * as Effect from "effect/Effect"
 * import * as Stream from "effect/Stream"
 *
 * const program = Effect.scoped(
 *   Effect.gen(function*() {
 *     const running = yield* AgentSessions.start({
 *       start_url: "https://example.com",
 *       max_actions: 10,
 *       goal: "Fill in the contact form"
 *     })
 *     yield* running.events.pipe(
 *       Stream.filter(SessionEvent.$is("ExternalResourceRequested")),
 *       Stream.runForEach((request) => running.respond(request, Answer.grant("jane@example.com")))
 *     )
 *     return yield* running.outcome
 *   })
 * )
 * ```
 *
 * @since 0.1.0
 * @category accessors
 */
export const start = (
  request: Session.CreateSessionInput,
  options?: StartOptions
): Effect.Effect<RunningSession, StartError, Scope.Scope | AgentSessions> =>
  Effect.flatMap(AgentSessions, (sessions) => sessions.start(request, options))

/**
 * Watches a session created elsewhere (its `max_actions` given), with the same guards as
 * {@link start}.
 *
 * @since 0.1.0
 * @category accessors
 */
export const attach = (
  session: Session.SessionInfo,
  maxActions: number,
  options?: StartOptions
): Effect.Effect<RunningSession, InsecureTransport, Scope.Scope | AgentSessions> =>
  Effect.flatMap(AgentSessions, (sessions) => sessions.attach(session, maxActions, options))

/**
 * Onboards an agent with the account key (`POST /agent/onboard`). The agent's own key, when the
 * response carries one, is remembered by `Credentials`: pass the agent (or its id) as `agent` to
 * `run` / `start` to act with it (U11).
 *
 * @since 0.1.0
 * @category accessors
 */
export const onboard = (
  request: AgentModule.OnboardInput
): Effect.Effect<AgentModule.Agent, OnboardError, AgentSessions> =>
  Effect.flatMap(AgentSessions, (sessions) => sessions.onboard(request))
