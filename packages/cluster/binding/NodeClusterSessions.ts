/**
 * What the runners and client-only members of a cluster over Node share on both Effect lines:
 * where the storage is (`CLUSTER_DATABASE_URL`), who may talk to a runner (`CLUSTER_SECRET`, TLS),
 * how a runner decides that another one is dead, the sharding settings, and the options of
 * `layerRunner` and `layerClient`. Written once for both cluster editions; each edition's
 * `NodeClusterSessions` adds its layers (its line's socket runner, its storage).
 *
 * @since 0.1.0
 */
import * as Config from "effect/Config"
import * as Duration from "effect/Duration"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import type * as ClusterSessions from "../src/ClusterSessions.js"
import type * as EventLog from "../src/EventLog.js"
import { type DurationInput, redactedConfig, type ShardingSettings } from "../src/internal/line.js"
import type * as SessionEntity from "../src/SessionEntity.js"

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
export const databaseUrlConfig: Config.Config<Redacted.Redacted<string>> = redactedConfig(DATABASE_URL_VARIABLE)

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
  Config.option(redactedConfig(SECRET_VARIABLE)),
  Config.option(redactedConfig(PREVIOUS_SECRETS_VARIABLE))
]).pipe(Config.map(([current, previous]: readonly [
  Option.Option<Redacted.Redacted<string>>,
  Option.Option<Redacted.Redacted<string>>
]): ReadonlyArray<Redacted.Redacted<string>> => [
  ...Option.toArray(current),
  ...Option.match(previous, {
    onNone: () => [],
    onSome: (list) =>
      Redacted.value(list).split(",").map((s) => s.trim()).filter((s) => s !== "").map((s) => Redacted.make(s))
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
  readonly handshakeTimeout?: DurationInput | undefined
}

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
  /** The cluster's sharding settings, over {@link defaultShardingConfig}. */
  readonly shardingConfig?: Partial<ShardingSettings> | undefined
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
  /** The cluster's sharding settings, over {@link defaultShardingConfig}. */
  readonly shardingConfig?: Partial<ShardingSettings> | undefined
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
  readonly pingTimeout: DurationInput
  readonly pingRetries: number
  readonly pingSpacing: DurationInput
  /** How long a runner whose pings time out stays suspected before a failed check declares it dead. */
  readonly suspectFor: DurationInput
}

/**
 * The detection this module starts from: a ping times out after 500 ms and is tried 3 times,
 * 100 ms apart, and a runner whose pings time out is suspected for 1 s. A killed runner (its port
 * refuses) is declared dead within about 0.2 s of the health check that pings it. A runner that
 * answers none of the pings (frozen, its machine gone) fails a check about 1.7 s after it starts,
 * and the next check, 0.5 s later, declares it dead: about 3.9 s after the first. A live runner
 * that cannot answer for that long (a long pause of its event loop) is declared dead too: a false
 * positive, which moves its shards away (its PostgreSQL locks keep its sessions from running
 * elsewhere until it lets go). The cluster engine's own default is a 10 s time-out and 5 retries
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
 * the cluster engine's default.
 *
 * @since 0.1.0
 * @category constructors
 */
export const defaultShardingConfig: Partial<ShardingSettings> = {
  runnerHealthCheckInterval: Duration.millis(500),
  refreshAssignmentsInterval: Duration.millis(250),
  entityMessagePollInterval: Duration.millis(250),
  shardLockRefreshInterval: Duration.seconds(5),
  shardLockExpiration: Duration.seconds(15)
}
