/**
 * The façade most users call: create a session, watch its events, answer its requests, and get
 * its outcome, with the action budget guard (U20) and an explicit end for a session that stops
 * before `complete` (U17).
 *
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Chunk from "effect/Chunk"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import type * as AgentModule from "./Agent.js"
import { AgentApi } from "./AgentApi.js"
import * as Answer from "./Answer.js"
import * as Credentials from "./Credentials.js"
import {
  ActionBudgetExceeded,
  type AgentApiError,
  type AgentSessionError,
  type InsecureTransport,
  isAgentSessionError,
  type RespondError,
  SessionEndedWithoutComplete
} from "./Errors.js"
import * as EventStream from "./EventStream.js"
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
   * is paid for meanwhile. Default 30 s.
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
   * or with the channel's own error.
   */
  readonly events: Stream.Stream<SessionEvent.SessionEvent, AgentSessionError>
  readonly respond: (
    request: SessionEvent.ExternalResourceRequested,
    answer: Answer.Answer
  ) => Effect.Effect<void, RespondError>
  readonly state: SubscriptionRef.SubscriptionRef<EventStream.ConnectionState>
  /**
   * The agent's requests waiting for an answer, in arrival order: one is added when it arrives
   * on `events`, and removed once `respond` accepted its answer (or when the events end). The
   * agent waits meanwhile; one waiting longer than `pendingWarningAfter` (default 30 s) is also
   * reported with a warning log.
   */
  readonly pending: SubscriptionRef.SubscriptionRef<ReadonlyArray<PendingRequest>>
  readonly outcome: Effect.Effect<Outcome, AgentSessionError>
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
  readonly onboard: (request: AgentModule.OnboardInput) => Effect.Effect<AgentModule.Agent, AgentApiError>
  /** Creates a session; then connects, subscribe-then-connect. Scoped: the connection closes with the scope. */
  readonly start: (
    request: Session.CreateSessionInput,
    options?: StartOptions
  ) => Effect.Effect<RunningSession, AgentApiError | InsecureTransport, Scope.Scope>
  /** Watches a session that already exists (created elsewhere), with the same guards. */
  readonly attach: (
    session: Session.SessionInfo,
    maxActions: number,
    options?: StartOptions
  ) => Effect.Effect<RunningSession, InsecureTransport, Scope.Scope>
  /** A whole session in one Effect: create, watch, answer with `onRequest`, and the outcome. */
  readonly run: <E = never, R = never>(
    request: Session.CreateSessionInput,
    options?: RunOptions<E, R>
  ) => Effect.Effect<Outcome, AgentSessionError | E, R>
}

/**
 * The session façade.
 *
 * @since 0.1.0
 * @category tags
 */
export class AgentSessions extends Context.Tag("effect-agent-session/AgentSessions")<AgentSessions, Service>() {}

const validateCreate = validate(Session.CreateSessionRequest, "CreateSessionRequest")

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
    const outcome = yield* Deferred.make<Outcome, AgentSessionError>()
    const consumed = yield* Ref.make(false)

    // --- pending requests (issue 13 item 4) ---
    const scope = yield* Effect.scope
    const pending = yield* SubscriptionRef.make<ReadonlyArray<PendingRequest>>([])
    const warnAfter = Duration.decode(options.pendingWarningAfter ?? defaultPendingWarningAfter)
    const sameRequest = (a: SessionEvent.ExternalResourceRequested, b: SessionEvent.ExternalResourceRequested) =>
      a.action_session_id === b.action_session_id &&
      SessionEvent.resourceTypeRaw(a.resource_type) === SessionEvent.resourceTypeRaw(b.resource_type)
    const stillPending = (entry: PendingRequest) =>
      Effect.map(SubscriptionRef.get(pending), (all) => all.includes(entry))
    const warnIfStillPending = (entry: PendingRequest): Effect.Effect<void> =>
      Effect.sleep(warnAfter).pipe(
        Effect.zipRight(stillPending(entry)),
        Effect.flatMap((waiting) =>
          waiting
            ? Effect.flatMap(Effect.clockWith((clock) => clock.currentTimeMillis), (now) =>
              Effect.logWarning(
                `The agent has waited ${Duration.format(Duration.millis(now - entry.since))} for an answer to its ${
                  SessionEvent.resourceTypeRaw(entry.request.resource_type)
                } request: answer it with respond (RunningSession.pending lists it)`
              ).pipe(
                Effect.annotateLogs({
                  sessionId,
                  resourceType: SessionEvent.resourceTypeRaw(entry.request.resource_type),
                  waitedMs: now - entry.since
                })
              ))
            : Effect.void
        )
      )
    const arrived = (request: SessionEvent.ExternalResourceRequested) =>
      Effect.gen(function*() {
        const since = yield* Effect.clockWith((clock) => clock.currentTimeMillis)
        const entry: PendingRequest = { request, since }
        yield* SubscriptionRef.update(pending, (all) => [...all.filter((p) => !sameRequest(p.request, request)), entry])
        yield* Effect.forkIn(warnIfStillPending(entry), scope)
      })
    const answered = (request: SessionEvent.ExternalResourceRequested) =>
      SubscriptionRef.update(pending, (all) => all.filter((p) => !sameRequest(p.request, request)))

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

    // The outcome completes as soon as `complete` is seen (so awaiting it never depends on when
    // the consumer's scope closes); otherwise when the events end, with their failure, or with
    // SessionEndedWithoutComplete (U17). The exit seen here is also the consumer's: its own
    // failure (not an AgentSessionError) or interruption is not passed on to whoever awaits the
    // outcome; for them the events ended without `complete`. Defects stay defects.
    const finish = (exit: Exit.Exit<unknown, unknown>) => {
      const endedWithoutComplete = Effect.suspend(() =>
        Option.match(tally.complete, {
          onNone: () => Effect.fail(new SessionEndedWithoutComplete({ sessionId, lastError: tally.lastError, mayStillBeRunning: true })),
          onSome: (complete) => Effect.succeed(outcomeOf(complete))
        })
      )
      return Deferred.complete(
        outcome,
        Exit.matchEffect(exit, {
          onFailure: (cause): Effect.Effect<Outcome, AgentSessionError> =>
            Option.match(Cause.dieOption(cause), {
              onSome: Effect.die,
              onNone: () =>
                Option.match(Option.filter(Cause.failureOption(cause), isAgentSessionError), {
                  onNone: () => endedWithoutComplete,
                  onSome: Effect.fail
                })
            }),
          onSuccess: () => endedWithoutComplete
        })
      )
    }

    // Counting and recording run per chunk, synchronously: no Effect per event.
    let failure: ActionBudgetExceeded | undefined
    let failureEvent: SessionEvent.SessionEvent | undefined
    const guarded: Stream.Stream<SessionEvent.SessionEvent, AgentSessionError> = connection.events.pipe(
      Stream.mapChunks((chunk) => {
        const out: Array<SessionEvent.SessionEvent> = []
        for (const event of chunk) {
          out.push(event)
          if (keep > 0) {
            tally.events.push(event)
            // A bounded tail: the oldest half is dropped at twice the bound (amortized O(1)).
            if (tally.events.length >= 2 * keep) tally.events.splice(0, tally.events.length - keep)
          }
          switch (event._tag) {
            case "ActionRun": {
              tally.actions += 1
              if (tally.actions > maxActions) {
                // The connection is closed: the session may go on at the service (issue 13).
                const overrun = new ActionBudgetExceeded({
                  sessionId,
                  maxActions,
                  actions: tally.actions,
                  mayStillBeRunning: mode === "fail"
                })
                if (Option.isNone(tally.overrun)) tally.overrun = Option.some(overrun)
                if (mode === "fail") {
                  failure = overrun
                  failureEvent = event
                  return Chunk.unsafeFromArray(out)
                }
              }
              break
            }
            case "AgentError":
              tally.lastError = Option.some(event.error)
              break
            case "Complete":
              tally.complete = Option.some(event)
              Deferred.unsafeDone(outcome, Exit.succeed(outcomeOf(event)))
              break
          }
        }
        return Chunk.unsafeFromArray(out)
      }),
      Stream.takeUntil((event) => event === failureEvent),
      // Only chunks that carry a request pay for an Effect.
      Stream.mapChunksEffect((chunk) =>
        Chunk.some(chunk, (event) => event._tag === "ExternalResourceRequested")
          ? Effect.as(
            Effect.forEach(
              Chunk.filter(chunk, (event): event is SessionEvent.ExternalResourceRequested =>
                event._tag === "ExternalResourceRequested"),
              arrived,
              { discard: true }
            ),
            chunk
          )
          : Effect.succeed(chunk)
      ),
      Stream.concat(
        Stream.suspend((): Stream.Stream<never, AgentSessionError> => {
          if (failure !== undefined) {
            return Stream.fromEffect(Effect.zipRight(connection.close, Effect.fail(failure)))
          }
          return Option.isNone(tally.complete)
            ? Stream.fail(new SessionEndedWithoutComplete({ sessionId, lastError: tally.lastError, mayStillBeRunning: true }))
            : Stream.empty
        })
      ),
      Stream.ensuringWith((exit) => Effect.zipRight(SubscriptionRef.set(pending, []), finish(Exit.asVoid(exit)))),
      Stream.withSpan("AgentSessions.events", { attributes: { sessionId } })
    )

    const events: Stream.Stream<SessionEvent.SessionEvent, AgentSessionError> = Stream.unwrap(
      Effect.map(
        Ref.getAndSet(consumed, true),
        (already) => already ? Stream.dieMessage("RunningSession.events can be consumed once") : guarded
      )
    )

    const awaitOutcome: Effect.Effect<Outcome, AgentSessionError> = Effect.flatMap(
      Ref.getAndSet(consumed, true),
      (already) =>
        already
          ? Deferred.await(outcome)
          : Effect.zipRight(Effect.ignore(Stream.runDrain(guarded)), Deferred.await(outcome))
    )

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

    const run: Service["run"] = (request, options = {}) =>
      Effect.scoped(
        Effect.gen(function*() {
          const running = yield* start(request, options)
          const onRequest = options.onRequest
          const onEvent = options.onEvent
          yield* Stream.runForEach(running.events, (event) => {
            const observe = onEvent === undefined ? Effect.void : onEvent(event)
            if (event._tag !== "ExternalResourceRequested") return observe
            return Effect.zipRight(
              observe,
              Effect.flatMap(
                onRequest === undefined
                  ? Effect.as(
                    Effect.logWarning("No onRequest handler: denying the agent's request").pipe(
                      Effect.annotateLogs({ resourceType: SessionEvent.resourceTypeRaw(event.resource_type) })
                    ),
                    Answer.deny()
                  )
                  : onRequest(event),
                (answer) => running.respond(event, answer)
              )
            )
          })
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
): Effect.Effect<Outcome, AgentSessionError | E, R | AgentSessions> =>
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
): Effect.Effect<RunningSession, AgentApiError | InsecureTransport, Scope.Scope | AgentSessions> =>
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
): Effect.Effect<AgentModule.Agent, AgentApiError, AgentSessions> =>
  Effect.flatMap(AgentSessions, (sessions) => sessions.onboard(request))
