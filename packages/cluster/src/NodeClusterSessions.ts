/**
 * The cluster over Node: runners that talk over `NodeClusterSocket` with their storage (the
 * cluster's messages, shard locks and runners; the sessions' event log) in PostgreSQL.
 *
 * - {@link layerRunner}: this process runs sessions (and can call the cluster too).
 * - {@link layerClient}: this process only calls the cluster (a web tier, a command line).
 *
 * Both need what `AgentSessions` needs (`NodeAgentSessions.layer` or `layerConfig`).
 *
 * @example
 * ```ts
 * import { NodeClusterSessions } from "effect-agent-session-cluster"
 * import { NodeAgentSessions } from "effect-agent-session"
 * import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
 * import * as Layer from "effect/Layer"
 *
 * // The database URL from CLUSTER_DATABASE_URL (or `databaseUrl`).
 * const RunnerLive = NodeClusterSessions.layerRunner({
 *   host: "10.0.0.12",
 *   port: 34431
 * }).pipe(Layer.provide(NodeAgentSessions.layerConfig()))
 *
 * // Layer.launch(RunnerLive).pipe(NodeRuntime.runMain)
 * ```
 *
 * @since 0.1.0
 */
import type * as MessageStorage from "@effect/cluster/MessageStorage"
import { RunnerAddress } from "@effect/cluster/RunnerAddress"
import type * as Runners from "@effect/cluster/Runners"
import type * as RunnerStorage from "@effect/cluster/RunnerStorage"
import type * as Sharding from "@effect/cluster/Sharding"
import * as ShardingConfig from "@effect/cluster/ShardingConfig"
import * as SocketRunner from "@effect/cluster/SocketRunner"
import * as SqlMessageStorage from "@effect/cluster/SqlMessageStorage"
import * as SqlRunnerStorage from "@effect/cluster/SqlRunnerStorage"
import * as NodeClusterSocket from "@effect/platform-node/NodeClusterSocket"
import type * as SocketServer from "@effect/platform/SocketServer"
import * as RpcSerialization from "@effect/rpc/RpcSerialization"
import * as SqlClient from "@effect/sql/SqlClient"
import type * as SqlConnection from "@effect/sql/SqlConnection"
import { SqlError } from "@effect/sql/SqlError"
import * as Cause from "effect/Cause"
import type * as ConfigError from "effect/ConfigError"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type { AgentApi } from "effect-agent-session/AgentApi"
import type { AgentSessions } from "effect-agent-session/AgentSessions"
import type { ClusterSecretError } from "./ClusterErrors.js"
import * as ClusterSessions from "./ClusterSessions.js"
import * as EventLog from "./EventLog.js"
import type { Auth } from "../binding/internal/membership.js"
import { checkListen, membership } from "../binding/internal/membership.js"
import { pg } from "../binding/internal/startupLock.js"
import { type ClientOptions, defaultDetection, defaultShardingConfig, type RunnerOptions } from "../binding/NodeClusterSessions.js"
import * as AuthSocket from "./internal/authSocket.js"
import { socketSharding } from "../binding/internal/socketSharding.js"
import * as SessionEntity from "./SessionEntity.js"

export * from "../binding/NodeClusterSessions.js"

/**
 * A reserved connection whose queries run one at a time, each to its end. `SqlRunnerStorage`
 * keeps one connection for its shard locks and gives up waiting on a slow lock operation (its
 * deadline) while the query still runs; its next operation then sent a second query on the same
 * `pg` client while the first was executing (pg: "Calling client.query() when the client is
 * already executing a query", seen after a failover). Here the next query waits for the first.
 */
const oneQueryAtATime = (connection: SqlConnection.Connection): SqlConnection.Connection => {
  const turn = Effect.unsafeMakeSemaphore(1)
  const serial = <A, E>(effect: Effect.Effect<A, E>): Effect.Effect<A, E> =>
    turn.withPermits(1)(Effect.uninterruptible(effect))
  return {
    execute: (sql, params, transformRows) => serial(connection.execute(sql, params, transformRows)),
    executeRaw: (sql, params) => serial(connection.executeRaw(sql, params)),
    executeValues: (sql, params) => serial(connection.executeValues(sql, params)),
    executeUnprepared: (sql, params, transformRows) => serial(connection.executeUnprepared(sql, params, transformRows)),
    executeStream: (sql, params, transformRows) => connection.executeStream(sql, params, transformRows)
  }
}

/** The client with {@link oneQueryAtATime} on every reserved connection (transactions keep their own). */
const serialReserve = (client: SqlClient.SqlClient): SqlClient.SqlClient => {
  const wrapped: SqlClient.SqlClient = Object.assign(
    ((...args: Parameters<SqlClient.SqlClient>) => client(...args)) as SqlClient.SqlClient,
    client,
    {
      reserve: Effect.map(client.reserve, oneQueryAtATime),
      withoutTransforms: () => serialReserve(client.withoutTransforms())
    }
  )
  return Object.assign(wrapped, { safe: wrapped })
}

/**
 * The cluster's own storage (messages, runners, shard locks), tables created under the start-up
 * lock. `SqlMessageStorage` turns a failed migration into a defect: it is a storage failure, typed
 * here as the `SqlError` it is.
 */
const clusterStorage: Layer.Layer<
  MessageStorage.MessageStorage | RunnerStorage.RunnerStorage,
  SqlError,
  SqlClient.SqlClient | ShardingConfig.ShardingConfig
> = Layer.merge(SqlMessageStorage.layer, SqlRunnerStorage.layer).pipe(
  Layer.provide(Layer.effect(SqlClient.SqlClient, Effect.map(SqlClient.SqlClient, serialReserve))),
  Layer.catchAllCause((cause) =>
    Cause.isInterruptedOnly(cause)
      ? Layer.failCause(cause as Cause.Cause<never>)
      : Layer.fail(
        Option.match(Cause.failureOption(cause), {
          onSome: (error) => error,
          onNone: () => new SqlError({ message: Cause.pretty(cause).split("\n")[0] ?? "storage failed", cause })
        })
      )
  )
)

/**
 * A runner: sessions run here; the façade is available too.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerRunner = (
  options: RunnerOptions
): Layer.Layer<
  ClusterSessions.ClusterSessions | Sharding.Sharding | Runners.Runners | MessageStorage.MessageStorage | EventLog.EventLog,
  SqlError | EventLog.EventLogError | SocketServer.SocketServerError | ConfigError.ConfigError | ClusterSecretError,
  AgentSessions | AgentApi
> =>
  Layer.unwrapEffect(Effect.gen(function*() {
    const auth = yield* membership(options)
    yield* checkListen(auth, options.listenHost ?? options.host)
    const config = ShardingConfig.layerFromEnv({
      ...defaultShardingConfig,
      runnerAddress: Option.some(RunnerAddress.make({ host: options.host, port: options.port })),
      runnerListenAddress: options.listenHost === undefined
        ? Option.none()
        : Option.some(RunnerAddress.make({ host: options.listenHost, port: options.port })),
      ...options.shardingConfig
    })
    const sharding = socketSharding({ ...defaultDetection, ...options.detection }, auth)
    return ClusterSessions.layer(options).pipe(
      Layer.provideMerge(SessionEntity.layer(options.entity)),
      Layer.provideMerge(sharding),
      Layer.provideMerge(pg(options, Layer.merge(clusterStorage, EventLog.layerSql(options.log)))),
      Layer.provide(config),
      Layer.provide(RpcSerialization.layerMsgPack)
    )
  }))

/**
 * A client-only process: calls the cluster (start, watch, answer), runs no session.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerClient = (
  options: ClientOptions = {}
): Layer.Layer<
  ClusterSessions.ClusterSessions | Sharding.Sharding | Runners.Runners | MessageStorage.MessageStorage,
  SqlError | ConfigError.ConfigError | ClusterSecretError,
  AgentApi
> =>
  Layer.unwrapEffect(Effect.map(membership(options), (auth) =>
    ClusterSessions.layer(options).pipe(
      Layer.provideMerge(SocketRunner.layerClientOnly.pipe(Layer.provide(clientProtocol(auth)))),
      Layer.provideMerge(pg(options, clusterStorage)),
      Layer.provide(ShardingConfig.layerFromEnv({ ...defaultShardingConfig, ...options.shardingConfig })),
      Layer.provide(RpcSerialization.layerMsgPack)
    )))

/** The dialing side: `NodeClusterSocket`'s when there is neither a secret nor TLS. */
const clientProtocol = (auth: Auth) =>
  auth.secrets.length === 0 && auth.tls === undefined
    ? NodeClusterSocket.layerClientProtocol
    : AuthSocket.layerClientProtocol(auth)
