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
 * import { NodeClusterSessions } from "effect-agent-session/cluster"
 * import { NodeAgentSessions } from "effect-agent-session"
 * import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
 * import * as Layer from "effect/Layer"
 *
 * const RunnerLive = NodeClusterSessions.layerRunner({
 *   databaseUrl: "postgres://app@db.internal/sessions",
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
import type * as Sharding from "@effect/cluster/Sharding"
import type * as ShardingConfig from "@effect/cluster/ShardingConfig"
import * as NodeClusterSocket from "@effect/platform-node/NodeClusterSocket"
import type * as SocketServer from "@effect/platform/SocketServer"
import type * as SqlClient from "@effect/sql/SqlClient"
import type * as SqlError from "@effect/sql/SqlError"
import * as PgClient from "@effect/sql-pg/PgClient"
import type * as ConfigError from "effect/ConfigError"
import * as Duration from "effect/Duration"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import type { AgentApi } from "../AgentApi.js"
import type { AgentSessions } from "../AgentSessions.js"
import * as ClusterSessions from "./ClusterSessions.js"
import * as EventLog from "./EventLog.js"
import * as SessionEntity from "./SessionEntity.js"

/**
 * Where the cluster's storage is.
 *
 * @since 0.1.0
 * @category models
 */
export interface DatabaseOptions {
  /** The PostgreSQL URL (`postgres://user:password@host:port/database`); kept `Redacted`. */
  readonly databaseUrl: Redacted.Redacted<string> | string
  /** Connections of this process's pool. Default 10. */
  readonly maxConnections?: number | undefined
}

/**
 * Options of a runner.
 *
 * @since 0.1.0
 * @category models
 */
export interface RunnerOptions extends DatabaseOptions, ClusterSessions.Options {
  /** The address other processes reach this runner at. */
  readonly host: string
  readonly port: number
  /** The address to listen on, when it differs (such as `0.0.0.0`). Default: `host`:`port`. */
  readonly listenHost?: string | undefined
  /** The session entity's options (channel options, idle time). */
  readonly entity?: SessionEntity.Options | undefined
  /** The log's options (retention). */
  readonly log?: EventLog.Options | undefined
  /** `@effect/cluster`'s sharding settings, over {@link defaultShardingConfig}. */
  readonly shardingConfig?: Partial<ShardingConfig.ShardingConfig["Type"]> | undefined
}

/**
 * Options of a client-only process.
 *
 * @since 0.1.0
 * @category models
 */
export interface ClientOptions extends DatabaseOptions, ClusterSessions.Options {
  /** `@effect/cluster`'s sharding settings, over {@link defaultShardingConfig}. */
  readonly shardingConfig?: Partial<ShardingConfig.ShardingConfig["Type"]> | undefined
}

/**
 * The sharding settings this module starts from: a dead runner is noticed within a few seconds
 * (health checks every 2 s, assignments refreshed every 1 s) and unprocessed messages are polled
 * every 2 s, so a session comes back on another runner within seconds (see docs/scale-out.md
 * for the measured figure). Everything else is `@effect/cluster`'s default.
 *
 * @since 0.1.0
 * @category constructors
 */
export const defaultShardingConfig: Partial<ShardingConfig.ShardingConfig["Type"]> = {
  runnerHealthCheckInterval: Duration.seconds(2),
  refreshAssignmentsInterval: Duration.seconds(1),
  entityMessagePollInterval: Duration.seconds(2),
  shardLockRefreshInterval: Duration.seconds(5),
  shardLockExpiration: Duration.seconds(15)
}

const pg = (options: DatabaseOptions): Layer.Layer<PgClient.PgClient | SqlClient.SqlClient, SqlError.SqlError> =>
  PgClient.layer({
    url: typeof options.databaseUrl === "string" ? Redacted.make(options.databaseUrl) : options.databaseUrl,
    maxConnections: options.maxConnections ?? 10
  })

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
  SqlError.SqlError | EventLog.EventLogError | SocketServer.SocketServerError | ConfigError.ConfigError,
  AgentSessions | AgentApi
> =>
  ClusterSessions.layer(options).pipe(
    Layer.provideMerge(SessionEntity.layer(options.entity)),
    Layer.provideMerge(EventLog.layerSql(options.log)),
    Layer.provideMerge(
      NodeClusterSocket.layer({
        storage: "sql",
        shardingConfig: {
          ...defaultShardingConfig,
          runnerAddress: Option.some(RunnerAddress.make({ host: options.host, port: options.port })),
          runnerListenAddress: options.listenHost === undefined
            ? Option.none()
            : Option.some(RunnerAddress.make({ host: options.listenHost, port: options.port })),
          ...options.shardingConfig
        }
      })
    ),
    Layer.provide(pg(options))
  )

/**
 * A client-only process: calls the cluster (start, watch, answer), runs no session.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerClient = (
  options: ClientOptions
): Layer.Layer<
  ClusterSessions.ClusterSessions | Sharding.Sharding | Runners.Runners | MessageStorage.MessageStorage,
  SqlError.SqlError | ConfigError.ConfigError,
  AgentApi
> =>
  ClusterSessions.layer(options).pipe(
    Layer.provideMerge(
      NodeClusterSocket.layer({
        clientOnly: true,
        storage: "sql",
        shardingConfig: { ...defaultShardingConfig, ...options.shardingConfig }
      })
    ),
    Layer.provide(pg(options))
  )
