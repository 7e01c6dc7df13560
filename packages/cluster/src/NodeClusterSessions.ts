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
import * as PgClient from "@effect/sql-pg/PgClient"
import * as Cause from "effect/Cause"
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import type * as ConfigError from "effect/ConfigError"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schedule from "effect/Schedule"
import type { AgentApi } from "effect-agent-session/AgentApi"
import type { AgentSessions } from "effect-agent-session/AgentSessions"
import { ClusterSecretError } from "./ClusterErrors.js"
import * as ClusterSessions from "./ClusterSessions.js"
import * as EventLog from "./EventLog.js"
import type { Auth } from "./internal/authSocket.js"
import * as AuthSocket from "./internal/authSocket.js"
import { MAX_SECRETS } from "../binding/internal/handshake.js"
import { socketSharding } from "./internal/socketSharding.js"
import * as SessionEntity from "./SessionEntity.js"

/**
 * The environment variable the database URL is read from when `databaseUrl` is not given:
 * `CLUSTER_DATABASE_URL` (the command line reads the same one).
 *
 * @since 0.1.0
 * @category constructors
 */
export const DATABASE_URL_VARIABLE = "CLUSTER_DATABASE_URL"

/**
 * The database URL as a `Config`: `CLUSTER_DATABASE_URL`, redacted.
 *
 * @since 0.1.0
 * @category constructors
 */
export const databaseUrlConfig: Config.Config<Redacted.Redacted<string>> = Config.redacted(DATABASE_URL_VARIABLE)

/**
 * Where the cluster's storage is.
 *
 * @since 0.1.0
 * @category models
 */
export interface DatabaseOptions {
  /**
   * The PostgreSQL URL (`postgres://user:password@host:port/database`); kept `Redacted`.
   * Default: the environment variable `CLUSTER_DATABASE_URL` ({@link databaseUrlConfig}).
   */
  readonly databaseUrl?: Redacted.Redacted<string> | string | undefined
  /**
   * Connections of this process's pool. Default 10. A runner holds one more, outside the pool:
   * the lock that shows it alive to the others (its sessions' log claims hold while it does).
   */
  readonly maxConnections?: number | undefined
}

/**
 * The environment variable the cluster secret is read from when `secret` is not given:
 * `CLUSTER_SECRET` (the command line reads the same one).
 *
 * @since 0.3.0
 * @category constructors
 */
export const SECRET_VARIABLE = "CLUSTER_SECRET"

/**
 * The environment variable previous cluster secrets are read from when `secret` is not given,
 * comma-separated: `CLUSTER_SECRETS_PREVIOUS` (during a rotation, see docs/scale-out.md).
 *
 * @since 0.3.0
 * @category constructors
 */
export const PREVIOUS_SECRETS_VARIABLE = "CLUSTER_SECRETS_PREVIOUS"

/**
 * The cluster secrets as a `Config`: `CLUSTER_SECRET` then each of `CLUSTER_SECRETS_PREVIOUS`,
 * redacted; empty when neither is set.
 *
 * @since 0.3.0
 * @category constructors
 */
export const secretsConfig: Config.Config<ReadonlyArray<Redacted.Redacted<string>>> = Config.all([
  Config.option(Config.redacted(SECRET_VARIABLE)),
  Config.option(Config.redacted(PREVIOUS_SECRETS_VARIABLE))
]).pipe(Config.map(([current, previous]) => [
  ...Option.toArray(current),
  ...Option.match(previous, {
    onNone: () => [],
    onSome: (list) => Redacted.value(list).split(",").map((s) => s.trim()).filter((s) => s !== "").map(Redacted.make)
  })
]))

/**
 * TLS of the runner protocol, over the membership handshake (which proves membership but neither
 * hides nor protects the messages that follow it): for networks that are not private. PEM strings
 * or buffers, as `node:tls` takes them. A runner serves with `key` and `cert` and, unless
 * `requireClientCertificate` is false, asks every connection for a certificate signed by `ca`
 * (mutual TLS); every process dialing a runner checks its certificate against `ca` and shows its
 * own `key` and `cert`. A runner's certificate names the `host` it registers (an IP address in
 * `subjectAltName`).
 *
 * @since 0.3.0
 * @category models
 */
export interface TlsOptions {
  readonly key?: string | Buffer | undefined
  readonly cert?: string | Buffer | undefined
  readonly ca?: string | Buffer | ReadonlyArray<string | Buffer> | undefined
  readonly requireClientCertificate?: boolean | undefined
}

/**
 * Who may talk to a runner: every connection between the cluster's processes proves, before one
 * message is read, that both ends know a cluster secret (an HMAC-SHA256 challenge-response: the
 * secret never travels). A runner listening beyond loopback needs one.
 *
 * @since 0.3.0
 * @category models
 */
export interface MembershipOptions {
  /**
   * The cluster secret (16 characters or more; `openssl rand -base64 32` makes one); kept
   * `Redacted`. Default: the environment variables `CLUSTER_SECRET` and
   * `CLUSTER_SECRETS_PREVIOUS` ({@link secretsConfig}). None: the transport is open to every
   * process that reaches the port, so a runner then listens on loopback only.
   */
  readonly secret?: Redacted.Redacted<string> | string | undefined
  /**
   * Secrets still accepted during a rotation (with `secret`, at most 8 in all). Two processes
   * talk while their lists share one secret.
   */
  readonly previousSecrets?: ReadonlyArray<Redacted.Redacted<string> | string> | undefined
  /** TLS of the runner protocol: none by default. */
  readonly tls?: TlsOptions | undefined
  /** How long a connection may take to prove membership before it is closed. Default 3 s. */
  readonly handshakeTimeout?: Duration.DurationInput | undefined
}

const redact = (secret: Redacted.Redacted<string> | string) => typeof secret === "string" ? Redacted.make(secret) : secret

/** The secrets and TLS of `options`, checked (the secrets from the environment when not given). */
const membership = (options: MembershipOptions): Effect.Effect<Auth, ClusterSecretError | ConfigError.ConfigError> =>
  Effect.gen(function*() {
    const secrets = options.secret === undefined
      ? options.previousSecrets === undefined
        ? yield* secretsConfig
        : yield* new ClusterSecretError({ reason: "Missing", message: "previousSecrets are given without a secret" })
      : [options.secret, ...(options.previousSecrets ?? [])].map(redact)
    if (secrets.length > MAX_SECRETS) {
      return yield* new ClusterSecretError({ reason: "TooMany", message: `at most ${MAX_SECRETS} cluster secrets are accepted at once, ${secrets.length} were given` })
    }
    const short = secrets.findIndex((secret) => Redacted.value(secret).length < 16)
    if (short !== -1) {
      return yield* new ClusterSecretError({
        reason: "TooShort",
        message: `the cluster secret ${short === 0 ? "" : `(previous no. ${short}) `}is shorter than 16 characters`
      })
    }
    return { secrets, tls: options.tls, handshakeTimeout: Duration.decode(options.handshakeTimeout ?? Duration.seconds(3)) }
  })

/** Whether `host` is a loopback address: only processes of this machine reach it. */
const isLoopback = (host: string): boolean =>
  host === "localhost" || host === "::1" || host === "[::1]" || /^127\.\d+\.\d+\.\d+$/.test(host) ||
  /^::ffff:127\./i.test(host)

/**
 * Options of a runner.
 *
 * @since 0.1.0
 * @category models
 */
export interface RunnerOptions extends DatabaseOptions, ClusterSessions.Options, MembershipOptions {
  /** The address other processes reach this runner at. */
  readonly host: string
  readonly port: number
  /**
   * The address to listen on, when it differs (such as `0.0.0.0`). Default: `host`:`port`.
   * Beyond loopback, a runner needs a cluster secret ({@link MembershipOptions}).
   */
  readonly listenHost?: string | undefined
  /** The session entity's options (channel options, idle time). */
  readonly entity?: SessionEntity.Options | undefined
  /** The log's options (retention). */
  readonly log?: EventLog.Options | undefined
  /** `@effect/cluster`'s sharding settings, over {@link defaultShardingConfig}. */
  readonly shardingConfig?: Partial<ShardingConfig.ShardingConfig["Type"]> | undefined
  /** How a runner decides that another one is dead, over {@link defaultDetection}. */
  readonly detection?: Partial<Detection> | undefined
}

/**
 * Options of a client-only process.
 *
 * @since 0.1.0
 * @category models
 */
export interface ClientOptions extends DatabaseOptions, ClusterSessions.Options, MembershipOptions {
  /** `@effect/cluster`'s sharding settings, over {@link defaultShardingConfig}. */
  readonly shardingConfig?: Partial<ShardingConfig.ShardingConfig["Type"]> | undefined
}

/**
 * How a runner decides that another runner is dead: at every health check
 * (`runnerHealthCheckInterval` of the sharding settings) each runner pings the others; a runner
 * that does not answer a ping within `pingTimeout`, `pingRetries` more times `pingSpacing` apart,
 * fails the check. A killed runner's port refuses the connection, so its pings fail at once: it is
 * declared dead at that check, and its shards move. A runner whose pings time out (frozen, its
 * machine gone, or only slow: a live runner whose event loop lags under load) is suspected at its
 * first failed check and declared dead only at a failed check `suspectFor` or more after that one
 * (a check it passes clears the suspicion): a lag of one check does not move every session it
 * holds away and back (measured at 10,000 sessions: docs/scale-out.md).
 *
 * @since 0.1.0
 * @category models
 */
export interface Detection {
  readonly pingTimeout: Duration.DurationInput
  readonly pingRetries: number
  readonly pingSpacing: Duration.DurationInput
  /** How long a runner whose pings time out stays suspected before a failed check declares it dead. */
  readonly suspectFor: Duration.DurationInput
}

/**
 * The detection this module starts from: a ping times out after 500 ms and is tried 3 times,
 * 100 ms apart, and a runner whose pings time out is suspected for 1 s. A killed runner (its port
 * refuses) is declared dead within about 0.2 s of the health check that pings it. A runner that
 * answers none of the pings (frozen, its machine gone) fails a check about 1.7 s after it starts,
 * and the next check, 0.5 s later, declares it dead: about 3.9 s after the first. A live runner
 * that cannot answer for that long (a long pause of its event loop) is declared dead too: a false
 * positive, which moves its shards away (its PostgreSQL locks keep its sessions from running
 * elsewhere until it lets go). `@effect/cluster`'s own default is a 10 s time-out and 5 retries
 * 500 ms apart.
 *
 * @since 0.1.0
 * @category constructors
 */
export const defaultDetection: Detection = {
  pingTimeout: Duration.millis(500),
  pingRetries: 2,
  pingSpacing: Duration.millis(100),
  suspectFor: Duration.seconds(1)
}

/**
 * The sharding settings this module starts from: health checks every 500 ms (by every runner,
 * see {@link Detection}), assignments refreshed and unprocessed messages polled every 250 ms, so
 * a session comes back on another runner within about 3 s of its runner's death (see
 * docs/scale-out.md for the measured figure and its cost). Everything else is
 * `@effect/cluster`'s default.
 *
 * @since 0.1.0
 * @category constructors
 */
export const defaultShardingConfig: Partial<ShardingConfig.ShardingConfig["Type"]> = {
  runnerHealthCheckInterval: Duration.millis(500),
  refreshAssignmentsInterval: Duration.millis(250),
  entityMessagePollInterval: Duration.millis(250),
  shardLockRefreshInterval: Duration.seconds(5),
  shardLockExpiration: Duration.seconds(15)
}

const databaseUrl = (options: DatabaseOptions): Effect.Effect<Redacted.Redacted<string>, ConfigError.ConfigError> =>
  options.databaseUrl === undefined
    ? databaseUrlConfig
    : Effect.succeed(typeof options.databaseUrl === "string" ? Redacted.make(options.databaseUrl) : options.databaseUrl)

/**
 * The process's pool, and `layer` (the storage) built on it under the start-up lock, which is
 * held on a connection of its own (not the pool's: the storage's first queries need those).
 */
const pg = <A, E, R>(
  options: DatabaseOptions,
  storage: Layer.Layer<A, E, R>
): Layer.Layer<A | PgClient.PgClient | SqlClient.SqlClient, E | SqlError | ConfigError.ConfigError, Exclude<R, SqlClient.SqlClient>> =>
  Layer.unwrapEffect(
    Effect.map(databaseUrl(options), (url) =>
      withStartupLock(url, storage).pipe(
        Layer.provideMerge(PgClient.layer({ url, maxConnections: options.maxConnections ?? 10 }))
      ))
  )

/** The key of the start-up lock (PostgreSQL's two-key advisory lock space: no clash with the shard locks). */
const startupLockKey = [0x45415353, 1] as const

/**
 * Builds `layer` while this process holds the cluster's start-up lock (a PostgreSQL advisory
 * lock on a connection of its own), so that processes started together create the storage's
 * tables one at a time: two `CREATE TABLE IF NOT EXISTS` of one table at once fail in PostgreSQL.
 * The lock is awaited for at most `timeout`; its connection is returned once the layer is built.
 */
const withStartupLock = <A, E, R>(
  url: Redacted.Redacted<string>,
  layer: Layer.Layer<A, E, R>,
  timeout: Duration.DurationInput = Duration.minutes(2)
): Layer.Layer<A, E | SqlError, R> =>
  Layer.scopedContext(Effect.gen(function*() {
    const scope = yield* Effect.scope
    return yield* Effect.scoped(Effect.gen(function*() {
      const lockClient = yield* Effect.map(Layer.build(PgClient.layer({ url, maxConnections: 1 })), Context.get(PgClient.PgClient))
      const connection = yield* lockClient.reserve
      const [classId, objId] = startupLockKey
      yield* connection.executeValues(`SELECT pg_try_advisory_lock(${classId}, ${objId})`, []).pipe(
        Effect.filterOrFail(
          (rows) => rows[0]?.[0] === true,
          () => new SqlError({ message: "the cluster's start-up lock is held by another process" })
        ),
        Effect.retry(Schedule.spaced("100 millis").pipe(Schedule.upTo(timeout))),
        Effect.mapError((error) =>
          new SqlError({
            message: `the cluster's start-up lock was not obtained within ${Duration.format(timeout)}: ${error.message}`,
            cause: error
          })
        )
      )
      yield* Effect.addFinalizer(() =>
        connection.executeRaw(`SELECT pg_advisory_unlock(${classId}, ${objId})`, []).pipe(Effect.ignore)
      )
      return yield* Layer.buildWithScope(layer, scope)
    }))
  }))

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
    const listenHost = options.listenHost ?? options.host
    if (auth.secrets.length === 0 && !isLoopback(listenHost)) {
      return yield* new ClusterSecretError({
        reason: "Missing",
        message: `a runner listening on ${listenHost} (beyond loopback) needs a cluster secret: set ${SECRET_VARIABLE} or the option secret`
      })
    }
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
