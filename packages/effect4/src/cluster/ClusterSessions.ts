/**
 * The cluster's session façade, mirroring `AgentSessions` (`start`, `attach`, `events`,
 * `respond`, `status`, `outcome`, `close`): an application moves from one process to a cluster by
 * swapping a layer. The same operations as the Effect 3 cluster edition's façade, on Effect 4's
 * `effect/cluster`.
 *
 * - `start` creates the session at the service (once: `AgentApi.createSession`) from the calling
 *   process, then sends the persisted `Start` to the session's entity.
 * - `events(sessionId, fromSeq)` reads the session's log then follows it live, from whichever
 *   runner holds the session; a stream cut off resumes from the next sequence number.
 * - `respond` reaches the session wherever it runs; the answer is persisted first.
 *
 * @example
 * ```ts
 * import { ClusterSessions } from "effect-agent-session-effect4/cluster"
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
import * as MessageStorage from "effect/cluster/MessageStorage"
import * as RunnerHealth from "effect/cluster/RunnerHealth"
import * as Runners from "effect/cluster/Runners"
import * as RunnerStorage from "effect/cluster/RunnerStorage"
import * as Sharding from "effect/cluster/Sharding"
import * as ShardingConfig from "effect/cluster/ShardingConfig"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import type * as Stream from "effect/Stream"
import type { AgentApi } from "../AgentApi.js"
import type * as AgentSessions from "../AgentSessions.js"
import type * as Answer from "../Answer.js"
import type { CreateSessionError, RequestNotPending, SessionEndedWithoutComplete } from "../Errors.js"
import type * as Session from "../Session.js"
import type * as SessionEvent from "../SessionEvent.js"
import * as ClusterErrors from "./ClusterErrors.js"
import * as EventLog from "./EventLog.js"
import * as internal from "./internal/clusterSessions.js"
import * as SessionEntity from "./SessionEntity.js"

/**
 * The cluster could not carry a call after the retries of {@link Options.retry}
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
 * What `outcome` fails with: the run ended without `complete` (`ended` with its reason, or
 * `closed`), no such session, or the cluster unavailable.
 *
 * @since 0.1.0
 * @category errors
 */
export type OutcomeError = SessionEndedWithoutComplete | SessionNotFound | ClusterUnavailable

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
  ) => Effect.Effect<Session.SessionInfo, CreateSessionError | ClusterUnavailable>
  /** Hands a session created elsewhere to the cluster (persisted `Attach`). */
  readonly attach: (
    session: Session.SessionInfo,
    maxActions: number,
    options?: { readonly agent?: string | undefined }
  ) => Effect.Effect<void, SessionNotFound | ClusterUnavailable>
  /**
   * The session's log from `fromSeq` (default 1), then live, until its run ends. A session the
   * cluster does not know within `notFoundAfter` fails with `SessionNotFound`.
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
  ) => Effect.Effect<void, RequestNotPending | SessionNotFound | ClusterUnavailable>
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
export class ClusterSessions extends Context.Service<ClusterSessions, Service>()(
  "effect-agent-session/cluster/ClusterSessions"
) {}

/**
 * Options of the façade.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** How calls to the cluster are retried while it cannot carry them. Default: every 200 ms, for up to 2 minutes. */
  readonly retry?: Schedule.Schedule<unknown, unknown> | undefined
  /** How long `events` and `outcome` wait for a session the cluster has no record of. Default 30 s. */
  readonly notFoundAfter?: Duration.Input | undefined
  /** How long one attempt of a call may wait inside the engine before it is retried. Default 10 s. */
  readonly attemptTimeout?: Duration.Input | undefined
}

/**
 * The default retry of cluster calls: every 200 ms, for up to 2 minutes.
 *
 * @since 0.1.0
 * @category constructors
 */
export const defaultRetry: Schedule.Schedule<unknown, unknown> = Schedule.spaced(Duration.millis(200)).pipe(
  Schedule.upTo({ duration: Duration.minutes(2) })
)

/**
 * Builds the façade over `Sharding` (any process of the cluster) and `AgentApi` (for `start`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: (options?: Options) => Effect.Effect<Service, never, Sharding.Sharding | AgentApi> = (options = {}) =>
  internal.make({
    retry: options.retry ?? defaultRetry,
    notFoundAfter: options.notFoundAfter ?? Duration.seconds(30),
    attemptTimeout: options.attemptTimeout ?? Duration.seconds(10)
  })

/**
 * The façade as a layer.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options?: Options): Layer.Layer<ClusterSessions, never, Sharding.Sharding | AgentApi> =>
  Layer.effect(ClusterSessions, make(options))

/**
 * Options of {@link layerEmbedded}.
 *
 * @since 0.1.0
 * @category models
 */
export interface EmbeddedOptions extends Options, SessionEntity.Options {
  /** Settings of the single runner's `Sharding`. Default: `entityTerminationTimeout` of 1 second. */
  readonly shardingConfig?: Partial<ShardingConfig.ShardingConfig["Service"]> | undefined
}

/**
 * The embedded default for one machine: the session entity on a single runner with in-memory
 * message storage and an in-memory log (no database), and the façade (the pieces of
 * `effect/cluster`'s `TestRunner`, with their settings open). Needs what `AgentSessions` needs
 * (`NodeAgentSessions.layer` provides it). Nothing survives the process.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerEmbedded = (
  options: EmbeddedOptions = {}
): Layer.Layer<
  ClusterSessions | Sharding.Sharding | Runners.Runners | MessageStorage.MessageStorage | EventLog.EventLog,
  never,
  AgentSessions.AgentSessions | AgentApi
> =>
  layer(options).pipe(
    Layer.provideMerge(SessionEntity.layer(options)),
    Layer.provideMerge(EventLog.layerMemory),
    Layer.provideMerge(
      Sharding.layer.pipe(
        Layer.provideMerge(Runners.layerNoop),
        Layer.provideMerge(MessageStorage.layerMemory),
        Layer.provide([RunnerStorage.layerMemory, RunnerHealth.layerNoop])
      )
    ),
    Layer.provide(ShardingConfig.layer({ entityTerminationTimeout: Duration.seconds(1), ...options.shardingConfig }))
  )
