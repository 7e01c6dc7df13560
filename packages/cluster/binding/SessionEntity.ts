/**
 * A session of the service as an `@effect/cluster` entity, keyed by the service's session id.
 *
 * Protocol:
 * - `Start { session, maxActions, agent }` (persisted): run a session the caller has just created
 *   at the service. `Attach` (persisted): the same for a session created elsewhere. Both are
 *   keyed by the session id: a retried or redelivered one joins the run already under way, and
 *   neither creates anything at the service, so no second paid session can come of them. The
 *   reply (a {@link Status}) comes once the session's channel is attached. The run is the
 *   runner's, not the entity's: it lasts until the session ends, and the resumer of whichever
 *   runner owns the session's shard runs it again from the log when its runner dies or gives the
 *   shard away; the entity is a front for commands, active only while one is handled.
 * - `Events { fromSeq }`: the session's events from a sequence number: the log first, then live,
 *   with no gap and no duplicate at the seam (the live part is read from the log too).
 * - `Respond { request, answer }` (persisted): the answer is recorded in the log, then handed
 *   to the channel; a runner that takes the session over sends recorded answers its log shows
 *   unanswered.
 * - `Status`, `Close`, and `Resume` (runs the session again if it does not run; a runner's resumer
 *   does the same for the sessions of the shards it gains, with no message).
 *
 * Written once for both cluster editions: the Effect 4 edition's entity has the same type, messages
 * and schemas, bound to Effect 4's `effect/cluster` (the two lines' runners do not share a cluster).
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import {
  AgentApi,
  AgentSessions,
  ClusterSchema,
  type DurationInput,
  Entity,
  EntityId,
  Errors,
  type EventStream,
  intAtLeast,
  literals,
  Rpc,
  Session,
  SessionEvent,
  scopedDiscardLayer,
  Sharding,
  ShardingConfig,
  union,
  unwrapScopedLayer
} from "../src/internal/line.js"
import * as EventLog from "./EventLog.js"
import { defaultInterval as defaultAnswerCheckInterval, makeAnswerWatch } from "./internal/answerWatch.js"
import * as internal from "./internal/entity.js"
import { gate } from "./internal/gate.js"
import { resumer } from "./internal/resumer.js"
import { makeTicker } from "./internal/ticker.js"
import { makeUnreleased, renewer, writerName } from "./internal/writer.js"

/**
 * The outcome of a session that completed, derived from its log.
 *
 * @since 0.1.0
 * @category models
 */
export const OutcomeSummary = Schema.Struct({
  response: Schema.String,
  type: SessionEvent.ResponseType,
  totalCost: Schema.OptionFromNullOr(Schema.Number),
  actions: Schema.Int,
  maxActions: Schema.Int
})

/**
 * @since 0.1.0
 * @category models
 */
export interface OutcomeSummary extends Schema.Schema.Type<typeof OutcomeSummary> {}

/**
 * A session's status: where its run stands (`unknown` before any `Start`/`Attach` reached it,
 * `running`, or how it ended), the connection state of the runner holding it, the requests
 * waiting for an answer, the actions used, the last sequence number, and the outcome once
 * complete.
 *
 * @since 0.1.0
 * @category models
 */
export const Status = Schema.Struct({
  sessionId: Schema.String,
  run: literals(["unknown", "running", "complete", "ended", "closed"]),
  /** The `ConnectionState` tag on the runner holding the session (`None` when no runner holds it). */
  connection: Schema.OptionFromNullOr(Schema.String),
  /** `host:port` of the runner holding the session. */
  runner: Schema.OptionFromNullOr(Schema.String),
  pending: Schema.Array(SessionEvent.ExternalResourceRequested),
  actions: Schema.Int,
  maxActions: Schema.Int,
  lastSeq: Schema.Int,
  outcome: Schema.OptionFromNullOr(OutcomeSummary),
  endReason: Schema.OptionFromNullOr(Schema.String)
})

/**
 * @since 0.1.0
 * @category models
 */
export interface Status extends Schema.Schema.Type<typeof Status> {}

const runPayload = {
  session: Session.SessionInfo,
  maxActions: intAtLeast(1),
  agent: Schema.OptionFromNullOr(Schema.String)
}

/**
 * `Start`: run a session created by the caller (persisted, keyed by the session id).
 *
 * @since 0.1.0
 * @category models
 */
export const Start = Rpc.make("Start", {
  payload: runPayload,
  success: Status,
  error: EventLog.EventLogError,
  primaryKey: (payload) => `start/${payload.session.session_id}`
}).annotate(ClusterSchema.Persisted, true)

/**
 * `Attach`: run a session created elsewhere (persisted, keyed by the session id).
 *
 * @since 0.1.0
 * @category models
 */
export const Attach = Rpc.make("Attach", {
  payload: runPayload,
  success: Status,
  error: EventLog.EventLogError,
  primaryKey: (payload) => `attach/${payload.session.session_id}`
}).annotate(ClusterSchema.Persisted, true)

/**
 * `Events { fromSeq }`: the log from `fromSeq` (1 for all), then live, ending after the run ends.
 *
 * @since 0.1.0
 * @category models
 */
export const Events = Rpc.make("Events", {
  payload: { fromSeq: intAtLeast(1) },
  success: EventLog.LoggedEvent,
  error: EventLog.EventLogError,
  stream: true
})

/**
 * `Respond { request, answer }`: answer a pending request (persisted; the first answer to a
 * request is recorded in the log, a second one fails with `RequestNotPending`).
 *
 * @since 0.1.0
 * @category models
 */
export const Respond = Rpc.make("Respond", {
  payload: { request: SessionEvent.ExternalResourceRequested, answer: EventLog.Answer },
  error: union([Errors.RequestNotPending, EventLog.EventLogError])
}).annotate(ClusterSchema.Persisted, true)

/**
 * `Status`: the session's {@link Status}.
 *
 * @since 0.1.0
 * @category models
 */
export const GetStatus = Rpc.make("Status", { success: Status, error: EventLog.EventLogError })

/**
 * `Close`: close the session's channel and end its run (`closed`); the service's session itself
 * is not stopped (the service has no such operation).
 *
 * @since 0.1.0
 * @category models
 */
export const Close = Rpc.make("Close", { success: Status, error: EventLog.EventLogError }).annotate(
  ClusterSchema.Persisted,
  true
)

/**
 * `Resume`: run the session again if its run has not ended and it does not run on the runner that
 * owns it (the resumer does the same with no message, see {@link layer}); the reply comes once it runs.
 *
 * @since 0.1.0
 * @category models
 */
export const Resume = Rpc.make("Resume", { success: Status, error: EventLog.EventLogError })

/**
 * The entity: type `AgentSession`, keyed by the service's session id.
 *
 * @since 0.1.0
 * @category models
 */
export const SessionEntity = Entity.make("AgentSession", [Start, Attach, Events, Respond, GetStatus, Close, Resume])

/**
 * Options of the entity's layer.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** Options of every session's channel. */
  readonly connect?: Omit<EventStream.ConnectOptions, "agent" | "pendingRequests"> | undefined
  /**
   * Idle time before an entity with no command under way is passivated (the session's run and its
   * log stay: the run is the runner's). Default 1 minute.
   */
  readonly maxIdleTime?: DurationInput | undefined
  /**
   * How often each runner's resumer looks at the shards it owns: it hands over the runs of the
   * shards it lost, and runs the sessions of the shards it gained whose run has not ended and that
   * neither run nor start on this runner, so that a session whose runner gave its shard away
   * (rebalancing) or died runs again on the new owner. A subscriber (`Events`), or a `Start`,
   * `Attach` or `Resume`, that reaches the new owner first takes the session over itself. Default 250 ms (a look reads
   * nothing from the store unless shards were gained).
   */
  readonly resumeInterval?: DurationInput | undefined
  /**
   * How often each runner reads the log's answers for the sessions it holds that wait for an
   * answer it has not seen, and hands those it finds to their channels: an answer recorded by a
   * runner that still believed it held the session (frozen past failure detection, its shard
   * moved meanwhile) reaches the session within two intervals. One read per interval for all
   * such sessions of the runner (those waiting less than an interval are not read for); none
   * while no session waits. Default 2 seconds.
   */
  readonly answerCheckInterval?: DurationInput | undefined
}

/**
 * Registers the entity with the runner's `Sharding`: this process runs sessions. With it come the
 * runner's sessions (each session that runs here, held by the runner, not by its entity), and the
 * runner's resumer: every `resumeInterval` it hands over the runs of the shards this runner lost
 * and runs the unended sessions of the shards it gained, except those that run or start here
 * already, so that a session whose shard moved (its runner died, or rebalancing between live
 * runners) runs again on the new owner; a subscriber, or a `Start`, `Attach` or `Resume`, that
 * reaches the new owner before the resumer takes the session over at once. And the runner's answer watch: every
 * `answerCheckInterval` it reads the answers recorded for the sessions it holds that wait for one
 * they have not been given. When the runner stops, every session that runs on it is handed over.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  options: Options = {}
): Layer.Layer<never, never, Sharding.Sharding | ShardingConfig.ShardingConfig | AgentSessions.AgentSessions | AgentApi.AgentApi | EventLog.EventLog> =>
  unwrapScopedLayer(Effect.gen(function*() {
    const ticker = yield* makeTicker
    const answers = yield* makeAnswerWatch(options.answerCheckInterval ?? defaultAnswerCheckInterval)
    const sharding = yield* Sharding.Sharding
    // The name this runner's runs claim the logs they write by (one writer per log).
    const config = yield* ShardingConfig.ShardingConfig
    const runnerName = Option.match(config.runnerAddress, { onNone: () => "client", onSome: (a) => `${a.host}:${a.port}` })
    const writer = writerName(runnerName)
    const log = yield* EventLog.EventLog
    // Shown alive for as long as the runner is: its claims hold while it lives, however long it
    // stalls (a lock of its name on a connection of its own, on PostgreSQL).
    yield* log.live(writer)
    // The runner's sessions, which the entity's commands and the resumer share.
    const runs = new internal.Runs({
      options,
      starting: gate(internal.startsAtOnce),
      answers,
      runnerWriter: writer,
      runnerName,
      unreleased: makeUnreleased(),
      log,
      sessions: yield* AgentSessions.AgentSessions,
      api: yield* AgentApi.AgentApi,
      shardOf: (sessionId) => sharding.getShardId(EntityId.make(sessionId), "default").id
    })
    // The runner stops: every session that runs here is handed over (its channel drained, its
    // events persisted, its log released), after the resumer and the renewer have stopped.
    yield* Effect.addFinalizer(() => runs.handOverAll())
    return Layer.mergeAll(
      SessionEntity.toLayer(internal.make(runs, ticker), {
        concurrency: "unbounded",
        maxIdleTime: options.maxIdleTime
      }),
      scopedDiscardLayer(Effect.forkScoped(resumer(options, runs))),
      scopedDiscardLayer(Effect.forkScoped(renewer(writer, runs, runs.unreleased)))
    )
  }))
