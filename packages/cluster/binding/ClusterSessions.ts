/**
 * The cluster's session façade, mirroring `AgentSessions` (`start`, `attach`, `events`,
 * `respond`, `outcome`): an application moves from one process to a cluster by swapping a layer.
 *
 * - `start` creates the session at the service (once: `AgentApi.createSession`) from the calling
 *   process, then sends the persisted `Start` to the session's entity; from then on the session
 *   belongs to the cluster and survives the death of any one runner.
 * - `events(sessionId, fromSeq)` reads the session's log then follows it live, from whichever
 *   runner holds the session; when that runner dies the stream resumes, from the next sequence
 *   number, on the runner that takes the session over: no gap, no duplicate.
 * - `respond` reaches the session wherever it runs; the answer is persisted first.
 *
 * Written once for both cluster editions (the Effect 4 edition's `ClusterSessions` is the same text
 * bound to Effect 4); each edition adds its embedded single-runner layer.
 *
 * @example
 * ```ts
 * import { ClusterSessions } from "effect-agent-session-cluster"
 * import * as Effect from "effect/Effect"
 * import * as Stream from "effect/Stream"
 *
 * const program = Effect.gen(function*() {
 *   const sessions = yield* ClusterSessions.ClusterSessions
 *   const session = yield* sessions.start({ start_url: "https://example.com", max_actions: 5, goal: "Find the price" })
 *   yield* sessions.events(session.session_id).pipe(Stream.runForEach((logged) => Effect.log(logged.seq, logged.event._tag)))
 *   return yield* sessions.outcome(session.session_id)
 * })
 * ```
 *
 * @since 0.1.0
 */
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import type * as Stream from "effect/Stream"
import * as EventLog from "../src/EventLog.js"
import {
  type AgentApi,
  type AgentSessions,
  type Answer,
  type DurationInput,
  type Errors,
  MessageStorage,
  RunnerHealth,
  Runners,
  RunnerStorage,
  type Session,
  type SessionEvent,
  Sharding,
  ShardingConfig,
  type ShardingSettings,
  ServiceTag,
  type SqlClient,
  type SqlError,
  sqlMessageStorage,
  sqlRunnerStorage,
  upTo
} from "../src/internal/line.js"
import * as SessionEntityLayer from "../src/SessionEntity.js"
import * as ClusterErrors from "./ClusterErrors.js"
import * as internal from "./internal/clusterSessions.js"
import type * as SessionEntity from "./SessionEntity.js"

/**
 * The cluster could not carry a message (no runner for the shard yet, the runner's mailbox is
 * full, its storage failed), after the retries of {@link Options.retry}; or the log failed
 * (`ClusterErrors.ClusterUnavailable`).
 *
 * @since 0.1.0
 * @category errors
 */
export const ClusterUnavailable = ClusterErrors.ClusterUnavailable

/**
 * The type of {@link ClusterUnavailable}.
 *
 * @since 0.1.0
 * @category errors
 */
export type ClusterUnavailable = ClusterErrors.ClusterUnavailable

/**
 * No session has this id in the cluster (`ClusterErrors.SessionNotFound`).
 *
 * @since 0.1.0
 * @category errors
 */
export const SessionNotFound = ClusterErrors.SessionNotFound

/**
 * The type of {@link SessionNotFound}.
 *
 * @since 0.1.0
 * @category errors
 */
export type SessionNotFound = ClusterErrors.SessionNotFound

/**
 * A session's run ended without `complete` (`ended` with its reason, or `closed`).
 *
 * @since 0.1.0
 * @category errors
 */
export type OutcomeError = Errors.SessionEndedWithoutComplete | SessionNotFound | ClusterUnavailable

/**
 * The operations of the cluster façade.
 *
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /** Creates the session at the service, then hands it to the cluster (persisted `Start`). */
  readonly start: (
    request: Session.CreateSessionInput,
    options?: { readonly agent?: string | undefined }
  ) => Effect.Effect<Session.SessionInfo, Errors.CreateSessionError | ClusterUnavailable>
  /** Hands a session created elsewhere to the cluster (persisted `Attach`). */
  readonly attach: (
    session: Session.SessionInfo,
    maxActions: number,
    options?: { readonly agent?: string | undefined }
  ) => Effect.Effect<void, SessionNotFound | ClusterUnavailable>
  /**
   * The session's log from `fromSeq` (default 1), then live, until its run ends; resumes across
   * runner failures. A session the cluster does not know within `notFoundAfter` fails with
   * `SessionNotFound`.
   */
  readonly events: (
    sessionId: string,
    fromSeq?: number
  ) => Stream.Stream<EventLog.LoggedEvent, SessionNotFound | ClusterUnavailable>
  /**
   * Answers a pending request of the session, wherever it runs: `RequestNotPending` when the
   * session has no such request waiting (never received, or answered already with another answer).
   */
  readonly respond: (
    sessionId: string,
    request: SessionEvent.ExternalResourceRequested,
    answer: Answer.Answer
  ) => Effect.Effect<void, Errors.RequestNotPending | SessionNotFound | ClusterUnavailable>
  /** The session's status (`run: "unknown"` when the cluster has no record of it). */
  readonly status: (sessionId: string) => Effect.Effect<SessionEntity.Status, SessionNotFound | ClusterUnavailable>
  /** Waits for the run to end: the outcome when it completed, else `SessionEndedWithoutComplete`. */
  readonly outcome: (sessionId: string) => Effect.Effect<SessionEntity.OutcomeSummary, OutcomeError>
  /**
   * Closes the session's channel and ends its run. A session the cluster does not know yet is
   * recorded as closed: a `Start` that reaches it afterwards does not run it.
   */
  readonly close: (sessionId: string) => Effect.Effect<SessionEntity.Status, SessionNotFound | ClusterUnavailable>
}

/**
 * The cluster façade.
 *
 * @since 0.1.0
 * @category tags
 */
export class ClusterSessions extends ServiceTag<ClusterSessions, Service>()("effect-agent-session/cluster/ClusterSessions") {}

/**
 * Options of the façade.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /**
   * How calls to the cluster are retried while it cannot carry them (a runner died and its
   * shards have not moved yet). Default: every 200 ms, for up to 2 minutes.
   */
  readonly retry?: Schedule.Schedule<unknown, unknown> | undefined
  /**
   * How long `events` and `outcome` wait for a session the cluster has no record of (a `Start`
   * sent a moment ago may not have reached its entity yet: seconds on a loaded runner) before
   * `SessionNotFound`. Default 30 s.
   */
  readonly notFoundAfter?: DurationInput | undefined
  /**
   * How long one attempt of a call (`start`'s hand-over, `status`, `respond`, `close`) may wait
   * inside the engine (for a runner to own the session's shard) before it counts as failed and
   * is retried on {@link Options.retry}. Default 10 s.
   */
  readonly attemptTimeout?: DurationInput | undefined
}

/**
 * The default retry of cluster calls: every 200 ms, for up to 2 minutes.
 *
 * @since 0.1.0
 * @category constructors
 */
export const defaultRetry: Schedule.Schedule<unknown, unknown> = Schedule.spaced("200 millis").pipe(upTo("2 minutes"))

/**
 * Builds the façade over `Sharding` (any process of the cluster, runner or client only) and
 * `AgentApi` (for `start`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: (options?: Options) => Effect.Effect<Service, never, Sharding.Sharding | AgentApi.AgentApi> = (options = {}) =>
  internal.make({
    retry: options.retry ?? defaultRetry,
    notFoundAfter: options.notFoundAfter ?? "30 seconds",
    attemptTimeout: options.attemptTimeout ?? "10 seconds"
  })

/**
 * The façade as a layer.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options?: Options): Layer.Layer<ClusterSessions, never, Sharding.Sharding | AgentApi.AgentApi> =>
  Layer.effect(ClusterSessions, make(options))

/**
 * Options of {@link layerEmbedded}.
 *
 * @since 0.1.0
 * @category models
 */
export interface EmbeddedOptions extends Options, SessionEntityLayer.Options, EventLog.Options {
  /**
   * Settings of the single runner's `Sharding`. Default: `entityTerminationTimeout` of 1 second
   * (in memory, nothing survives the process: waiting longer at shutdown gains nothing).
   */
  readonly shardingConfig?: Partial<ShardingSettings> | undefined
}

/**
 * The session entity on a single runner (every shard, no runner-to-runner transport) over the
 * given log and the cluster's message and runner storage, and the façade: `layerEmbedded` and
 * `layerSingleSql`.
 */
const singleRunner = <M, EM, RM, ER, RR, EL, RL>(
  options: EmbeddedOptions,
  storage: {
    readonly log: Layer.Layer<EventLog.EventLog, EL, RL>
    readonly messages: Layer.Layer<M, EM, RM>
    readonly runners: Layer.Layer<RunnerStorage.RunnerStorage, ER, RR>
    readonly entityTerminationTimeout: DurationInput
  }
) =>
  layer(options).pipe(
    Layer.provideMerge(SessionEntityLayer.layer(options)),
    Layer.provideMerge(storage.log),
    Layer.provideMerge(
      Sharding.layer.pipe(
        Layer.provideMerge(Runners.layerNoop),
        Layer.provideMerge(storage.messages),
        Layer.provide([storage.runners, RunnerHealth.layerNoop])
      )
    ),
    Layer.provide(
      ShardingConfig.layer({ entityTerminationTimeout: storage.entityTerminationTimeout, ...options.shardingConfig })
    )
  )

/**
 * The embedded default for one machine: the session entity on a single runner with in-memory
 * message storage and an in-memory log (no database), and the façade (the pieces of
 * the cluster's `TestRunner`, with their settings open). Needs what `AgentSessions` needs
 * (`NodeAgentSessions.layer` provides it). Nothing survives the process.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerEmbedded = (
  options: EmbeddedOptions = {}
): Layer.Layer<
  | ClusterSessions
  | Sharding.Sharding
  | Runners.Runners
  | MessageStorage.MessageStorage
  | MessageStorage.MemoryDriver
  | EventLog.EventLog,
  never,
  AgentSessions.AgentSessions | AgentApi.AgentApi
> =>
  singleRunner(options, {
    log: EventLog.layerMemory(options),
    messages: MessageStorage.layerMemory,
    runners: RunnerStorage.layerMemory,
    entityTerminationTimeout: "1 second"
  })

/**
 * The session entity on a single runner whose storage is PostgreSQL: the cluster's SQL message
 * and runner storage (tables `cluster_*`) and the SQL event log (`EventLog.layerSql`), and the
 * façade. One process runs every shard (no runner-to-runner transport); what it ran survives it:
 * a process started again on the same database takes its sessions over from the log. Needs a
 * `SqlClient` on PostgreSQL (`@effect/sql-pg`'s `PgClient.layer`) and what `AgentSessions` needs.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerSingleSql = (
  options: EmbeddedOptions = {}
): Layer.Layer<
  ClusterSessions | Sharding.Sharding | Runners.Runners | MessageStorage.MessageStorage | EventLog.EventLog,
  SqlError | EventLog.EventLogError,
  AgentSessions.AgentSessions | AgentApi.AgentApi | SqlClient.SqlClient
> =>
  singleRunner(options, {
    log: EventLog.layerSql(options),
    messages: sqlMessageStorage,
    runners: sqlRunnerStorage,
    entityTerminationTimeout: "5 seconds"
  })
