/**
 * The façade most users call: create a session, watch its events, answer its requests, and get
 * its outcome, with the action budget guard and an explicit end for a session that stops
 * before `complete`.
 *
 * The declarations of the public module `AgentSessions`, written once for both editions:
 * each edition's `src/AgentSessions.ts` is its entry point and re-exports them.
 *
 * @since 0.1.0
 */
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import type * as Stream from "effect/Stream"
import type * as SubscriptionRef from "effect/SubscriptionRef"
import { Session as CoreSession } from "effect-agent-session-core"
import type * as AgentModule from "../src/Agent.js"
import type { AgentApi } from "../src/AgentApi.js"
import type * as Answer from "../src/Answer.js"
import type * as Credentials from "../src/Credentials.js"
import type {
  ActionBudgetExceeded,
  InsecureTransport,
  OnboardError,
  RespondError,
  RunError,
  RunningSessionError,
  StartError
} from "../src/Errors.js"
import type * as EventStream from "../src/EventStream.js"
import * as internal from "./internal/agentSessions.js"
import { type DurationInput, service, ServiceTag } from "../src/internal/line.js"
import * as SessionGuard from "./internal/sessionGuard.js"
import type * as Session from "../src/Session.js"
import type * as SessionEvent from "../src/SessionEvent.js"

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
  /** `complete.type`. */
  readonly type: SessionEvent.ResponseType
  /** The cost, from `total_cost` or the observed `cost_summary`. */
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
  /** With `onBudgetExceeded: "report"`, the overrun that was seen. */
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
   * overrun in the outcome.
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
  readonly pendingWarningAfter?: DurationInput | undefined
  /**
   * The `Idempotency-Key` of the create request (default: a fresh random one per call). Pass the
   * `idempotencyKey` of an `OutcomeUnknown` to ask a service that honours the key for the session
   * it may already have created (docs/reliability.md).
   */
  readonly idempotencyKey?: string | undefined
}

/**
 * A request of the agent waiting for an answer (`RunningSession.pending`).
 * @since 0.1.0
 * @category models
 */
export interface PendingRequest {
  readonly request: SessionEvent.ExternalResourceRequested
  /** When it arrived (epoch milliseconds of the Effect `Clock`). */
  readonly since: number
}

/**
 * The default of `pendingWarningAfter`: 30 s.
 * @since 0.1.0
 * @category constructors
 */
export const defaultPendingWarningAfter: Duration.Duration = SessionGuard.defaultPendingWarningAfter

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
   * mode), with `SessionEndedWithoutComplete` when the channel ends before `complete`,
   * or with the channel's own error (`EventStreamError`).
   */
  readonly events: Stream.Stream<SessionEvent.SessionEvent, RunningSessionError>
  /**
   * Runs `f` on each batch of the events that arrived together, in the calling fiber, until they
   * end (it then succeeds) or fail (with their error, or `f`'s): `events` run batch by batch,
   * the same events and errors, without a stream's own machinery, for a fiber that runs many
   * sessions (a cluster runner takes thousands over at once). The events are consumed once, by
   * this or by `events`.
   */
  readonly forEachBatch: <X, E, R>(
    f: (batch: ReadonlyArray<SessionEvent.SessionEvent>) => Effect.Effect<X, E, R>
  ) => Effect.Effect<void, RunningSessionError | E, R>
  readonly respond: (
    request: SessionEvent.ExternalResourceRequested,
    answer: Answer.Answer
  ) => Effect.Effect<void, RespondError>
  readonly state: SubscriptionRef.SubscriptionRef<EventStream.ConnectionState>
  /** Returns once the connection has first opened, or ended without opening (`EventStream.Connection.opened`). */
  readonly opened: Effect.Effect<void>
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
  /**
   * Closes the connection without losing what the service sent (`EventStream.Connection.drain`):
   * every event the service sent before it saw the close arrives on `events`, which then end.
   * Returns once the connection has ended; keep consuming `events` meanwhile.
   */
  readonly drain: Effect.Effect<void>
}

/**
 * Options of {@link Service.run}: a handler for the agent's requests, and an optional observer
 * of every event.
 *
 * @since 0.1.0
 * @category models
 */
export interface RunOptions<E, R> extends StartOptions {
  /** Answers each `external_resource_requested`. Without it, requests are denied (each with a warning log). */
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
export class AgentSessions extends ServiceTag<AgentSessions, Service>()("effect-agent-session/AgentSessions") {}

/**
 * How many events `Outcome.events` keeps by default: the last 100.
 *
 * @since 0.1.0
 * @category constructors
 */
export const defaultKeepEvents: number = CoreSession.defaultKeepEvents

/**
 * Builds the façade over `AgentApi`, `EventStream` and `Credentials`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<Service, never, AgentApi | EventStream.EventStream | Credentials.Credentials> = Effect
  .map(internal.make, AgentSessions.of)

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
 * (without it, requests are denied, with a warning log), guards the action budget, and succeeds with the
 * {@link Outcome} once `complete` arrives. A channel that ends before `complete` fails with
 * `SessionEndedWithoutComplete`.
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
  Effect.flatMap(service(AgentSessions), (sessions) => sessions.run(request, options))

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
  Effect.flatMap(service(AgentSessions), (sessions) => sessions.start(request, options))

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
  Effect.flatMap(service(AgentSessions), (sessions) => sessions.attach(session, maxActions, options))

/**
 * Onboards an agent with the account key (`POST /agent/onboard`). The agent's own key, when the
 * response carries one, is remembered by `Credentials`: pass the agent (or its id) as `agent` to
 * `run` / `start` to act with it.
 *
 * @since 0.1.0
 * @category accessors
 */
export const onboard = (
  request: AgentModule.OnboardInput
): Effect.Effect<AgentModule.Agent, OnboardError, AgentSessions> =>
  Effect.flatMap(service(AgentSessions), (sessions) => sessions.onboard(request))
