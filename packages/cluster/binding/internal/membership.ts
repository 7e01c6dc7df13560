/**
 * The checks both cluster editions make before a runner or a client joins: the cluster secrets of
 * the options (or of the environment) and the TLS, as the transport's `Auth`; whether a listen
 * address is loopback; the database URL.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import { ClusterSecretError } from "../../src/ClusterErrors.js"
import { type ConfigError, durationOf } from "../../src/internal/line.js"
import {
  type DatabaseOptions,
  databaseUrlConfig,
  type MembershipOptions,
  secretsConfig,
  type TlsOptions
} from "../NodeClusterSessions.js"
import { MAX_SECRETS } from "./handshake.js"

/** How the transport proves membership; `secrets` empty: no handshake (loopback only). */
export interface Auth {
  readonly secrets: ReadonlyArray<Redacted.Redacted<string>>
  readonly tls?: TlsOptions | undefined
  readonly handshakeTimeout: Duration.Duration
}

const redact = (secret: Redacted.Redacted<string> | string) => typeof secret === "string" ? Redacted.make(secret) : secret

/** The secrets and TLS of `options`, checked (the secrets from the environment when not given). */
export const membership = (options: MembershipOptions): Effect.Effect<Auth, ClusterSecretError | ConfigError> =>
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
    return { secrets, tls: options.tls, handshakeTimeout: durationOf(options.handshakeTimeout ?? Duration.seconds(3)) }
  })

/** Whether `host` is a loopback address: only processes of this machine reach it. */
export const isLoopback = (host: string): boolean =>
  host === "localhost" || host === "::1" || host === "[::1]" || /^127\.\d+\.\d+\.\d+$/.test(host) ||
  /^::ffff:127\./i.test(host)

/** A runner listening beyond loopback with no secret: refused (anyone reaching the port could talk to it). */
export const checkListen = (auth: Auth, listenHost: string): Effect.Effect<void, ClusterSecretError> =>
  auth.secrets.length === 0 && !isLoopback(listenHost)
    ? Effect.fail(
      new ClusterSecretError({
        reason: "Missing",
        message: `a runner listening on ${listenHost} (beyond loopback) needs a cluster secret: set CLUSTER_SECRET or the option secret`
      })
    )
    : Effect.void

/** The database URL of the options, else of the environment (`CLUSTER_DATABASE_URL`). */
export const databaseUrl = (options: DatabaseOptions): Effect.Effect<Redacted.Redacted<string>, ConfigError> =>
  options.databaseUrl === undefined
    ? databaseUrlConfig
    : Effect.succeed(typeof options.databaseUrl === "string" ? Redacted.make(options.databaseUrl) : options.databaseUrl)
