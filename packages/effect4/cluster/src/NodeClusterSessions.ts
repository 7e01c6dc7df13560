/**
 * The cluster over Node on Effect 4: runners that talk over `NodeClusterSocket` (`effect/cluster`'s
 * `SocketRunner`) with their storage (the cluster's messages, shard locks and runners; the
 * sessions' event log) in PostgreSQL.
 *
 * - {@link layerRunner}: this process runs sessions (and can call the cluster too).
 * - {@link layerClient}: this process only calls the cluster (a web tier, a command line).
 *
 * Every connection between the cluster's processes proves a cluster secret (`CLUSTER_SECRET`)
 * before one message is read; a runner listening beyond loopback needs one. Both layers need what
 * `AgentSessions` needs (`NodeAgentSessions.layer` or `layerConfig`). The options, the secrets and
 * the detection of dead runners are the Effect 3 cluster edition's, written once for both
 * (`../binding/NodeClusterSessions.ts`). An Effect 4 runner serves Effect 4 members only: the two
 * lines do not share a cluster.
 *
 * @example
 * ```ts
 * import { NodeClusterSessions } from "effect-agent-session-effect4/cluster"
 * import { NodeAgentSessions } from "effect-agent-session-effect4"
 * import * as Layer from "effect/Layer"
 *
 * // The database URL from CLUSTER_DATABASE_URL, the secret from CLUSTER_SECRET.
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
import * as NodeClusterSocket from "@effect/platform-node/NodeClusterSocket"
import * as Cause from "effect/Cause"
import type * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as MessageStorage from "effect/cluster/MessageStorage"
import * as RunnerAddress from "effect/cluster/RunnerAddress"
import type * as Runners from "effect/cluster/Runners"
import type * as RunnerStorage from "effect/cluster/RunnerStorage"
import type * as Sharding from "effect/cluster/Sharding"
import * as ShardingConfig from "effect/cluster/ShardingConfig"
import * as SocketRunner from "effect/cluster/SocketRunner"
import * as RpcSerialization from "effect/rpc/RpcSerialization"
import type * as SocketServer from "effect/socket/SocketServer"
import type * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import type { AgentApi } from "../../src/AgentApi.js"
import type { AgentSessions } from "../../src/AgentSessions.js"
import { type Auth, checkListen, membership } from "../binding/internal/membership.js"
import { pg } from "../binding/internal/startupLock.js"
import { socketSharding } from "../binding/internal/socketSharding.js"
import {
  type ClientOptions,
  defaultDetection,
  defaultShardingConfig,
  type RunnerOptions
} from "../binding/NodeClusterSessions.js"
import type { ClusterSecretError } from "./ClusterErrors.js"
import * as ClusterSessions from "./ClusterSessions.js"
import * as EventLog from "./EventLog.js"
import * as AuthSocket from "./internal/authSocket.js"
import { sqlError, sqlMessageStorage, sqlRunnerStorage } from "./internal/line.js"
import * as SessionEntity from "./SessionEntity.js"

export * from "../binding/NodeClusterSessions.js"

/**
 * The cluster's own storage (messages, runners, shard locks), tables created under the start-up
 * lock; a failure to create them is a storage failure, typed as the `SqlError` it is.
 */
const clusterStorage: Layer.Layer<
  MessageStorage.MessageStorage | RunnerStorage.RunnerStorage,
  SqlError,
  SqlClient.SqlClient | ShardingConfig.ShardingConfig
> = Layer.merge(sqlMessageStorage, sqlRunnerStorage).pipe(
  Layer.catchCause((cause) =>
    Layer.effectContext<MessageStorage.MessageStorage | RunnerStorage.RunnerStorage, SqlError, never>(
      Cause.hasInterruptsOnly(cause)
        ? Effect.failCause(cause as Cause.Cause<never>)
        : Effect.fail(Option.getOrElse(Cause.findErrorOption(cause), () => sqlError(Cause.pretty(cause).split("\n")[0] ?? "storage failed", cause)))
    )
  )
)

/**
 * The runner protocol's serialization: newline-delimited JSON (`NodeClusterSocket`'s `"ndjson"`).
 * Not its default, the schema-driven binary layout: it refuses the session entity's protocol
 * (its unions' members are not told apart by a tag it can see).
 */
const serialization = RpcSerialization.layerNdjson

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
  SqlError | EventLog.EventLogError | SocketServer.SocketServerError | Config.ConfigError | ClusterSecretError,
  AgentSessions | AgentApi
> =>
  Layer.unwrap(Effect.gen(function*() {
    const auth = yield* membership(options)
    yield* checkListen(auth, options.listenHost ?? options.host)
    const config = ShardingConfig.layerFromEnv({
      ...defaultShardingConfig,
      runnerAddress: Option.some(RunnerAddress.make(options.host, options.port)),
      runnerListenAddress: options.listenHost === undefined
        ? Option.none()
        : Option.some(RunnerAddress.make(options.listenHost, options.port)),
      ...options.shardingConfig
    })
    return ClusterSessions.layer(options).pipe(
      Layer.provideMerge(SessionEntity.layer(options.entity)),
      Layer.provideMerge(socketSharding({ ...defaultDetection, ...options.detection }, auth)),
      Layer.provideMerge(pg(options, Layer.merge(clusterStorage, EventLog.layerSql(options.log)))),
      Layer.provide(config),
      Layer.provide(serialization)
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
  SqlError | Config.ConfigError | ClusterSecretError,
  AgentApi
> =>
  Layer.unwrap(Effect.map(membership(options), (auth: Auth) =>
    ClusterSessions.layer(options).pipe(
      Layer.provideMerge(SocketRunner.layerClientOnly.pipe(Layer.provide(clientProtocol(auth)))),
      Layer.provideMerge(pg(options, clusterStorage)),
      Layer.provide(ShardingConfig.layerFromEnv({ ...defaultShardingConfig, ...options.shardingConfig })),
      Layer.provide(serialization)
    )))

/** The dialing side: `NodeClusterSocket`'s when there is neither a secret nor TLS. */
const clientProtocol = (auth: Auth) =>
  auth.secrets.length === 0 && auth.tls === undefined
    ? NodeClusterSocket.layerClientProtocol
    : AuthSocket.layerClientProtocol(auth)
