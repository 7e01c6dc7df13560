/**
 * The service's HTTP operations: onboard an agent, create a session, and (observed dialect only)
 * retrieve a session, over the platform `HttpClient`.
 *
 * The declarations of the public module `AgentApi`, written once for both editions:
 * each edition's `src/AgentApi.ts` is its entry point and re-exports them.
 *
 * @since 0.1.0
 */
import * as Config from "effect/Config"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Schedule from "effect/Schedule"
import { Http } from "effect-agent-session-core"
import type * as Agent from "../src/Agent.js"
import type * as Credentials from "../src/Credentials.js"
import * as Dialect from "../src/Dialect.js"
import type {
  AgentApiError,
  CreateSessionError,
  GetSessionError,
  InsecureTransport,
  InvalidRequest,
  OnboardError
} from "../src/Errors.js"
import * as internal from "./internal/agentApi.js"
import * as internalBody from "./internal/body.js"
import {
  type ConfigError,
  configString,
  type DurationInput,
  type HttpClient,
  ServiceTag
} from "../src/internal/line.js"
import type * as Session from "../src/Session.js"

/**
 * Whose key a session operation uses: an onboarded agent (or its `AgentKeyRef`), or the id
 * of an agent onboarded earlier through this service or given to `Credentials`. Without it the
 * `Credentials` selection decides (by default the account key).
 *
 * @since 0.1.0
 * @category models
 */
export interface AgentOption {
  readonly agent?: Credentials.AgentKeyRef | string | undefined
}

/**
 * Options of the creating operations (`createSession`, `onboard`).
 * @since 0.1.0
 * @category models
 */
export interface CreateOptions {
  /**
   * The `Idempotency-Key` header of this call (1 to 255 printable ASCII characters), the same on
   * each of its attempts. Default: a fresh random UUID per call. Pass the `idempotencyKey` of an
   * `OutcomeUnknown` to send the same request again to a service that honours the key.
   */
  readonly idempotencyKey?: string | undefined
}

/**
 * The operations of the service.
 *
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /**
   * `POST /agent/onboard` with the account key. Validates first (`InvalidRequest`, nothing
   * sent). The new agent's key, when the response carries one, is remembered by `Credentials`,
   * so later operations can name the agent by id. A name already taken is `Conflict`. An
   * attempt that may have created the agent and got no answer is `OutcomeUnknown`.
   */
  readonly onboard: (
    request: Agent.OnboardInput,
    options?: CreateOptions | undefined
  ) => Effect.Effect<Agent.Agent, OnboardError>
  /**
   * Creates a session (`POST /api/v1sessions`, or `/api/v1/sessions` in the observed dialect).
   * Validates first (`InvalidRequest`, nothing sent). Uses the agent's key when `agent` is given
   * (`MissingAgentKey` when that agent has none), else per `Credentials`. An
   * attempt that may have created the session and got no answer (a time-out, a reset, a 500) is
   * `OutcomeUnknown`, never `RequestTimeout`.
   */
  readonly createSession: (
    request: Session.CreateSessionInput,
    options?: (AgentOption & CreateOptions) | undefined
  ) => Effect.Effect<Session.SessionInfo, CreateSessionError>
  /**
   * Whether {@link getSession} asks the service: `true` in a dialect with a retrieve operation
   * (the observed one) and in a replay; `false` in a dialect without one (the documented one) and
   * in the scripted test layer, where it fails with `NotFound` without sending anything. A
   * caller that only wants to learn what the service knows (the cluster edition taking a session
   * over) skips the call when it is `false`.
   */
  readonly canRetrieve: boolean
  /**
   * `GET {sessionsPath}/<id>`: only in a dialect with `retrieve` (the observed one). In a dialect
   * without it (the documented one) it fails with `NotFound` (status 404) without sending
   * anything.
   */
  readonly getSession: (
    sessionId: string,
    options?: AgentOption | undefined
  ) => Effect.Effect<Session.SessionInfo, GetSessionError>
}

/**
 * The HTTP client service.
 *
 * @since 0.1.0
 * @category tags
 */
export class AgentApi extends ServiceTag<AgentApi, Service>()("effect-agent-session/AgentApi") {}

/**
 * Options of {@link make} and {@link layer}.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /**
   * The base URL of the service, such as `https://agents.example.com`. Plain `http://` is
   * refused with `InsecureTransport` unless the host is loopback or `allowInsecure` is set.
   */
  readonly baseUrl: string | URL
  /** The wire dialect (default `Dialect.documented`). */
  readonly dialect?: Dialect.Dialect | undefined
  /** The time-out of one request attempt (default 30 s): `RequestTimeout` past it. */
  readonly timeout?: DurationInput | undefined
  /**
   * The retry schedule; its input is the error of the failed attempt (default
   * {@link defaultRetry}). Whatever the schedule, only retryable errors are retried
   * (`Errors.isRetryable`: transport, time-out, 408, 429, 5xx) and each wait is at least the
   * service's `Retry-After`, capped at `maxRetryAfter`. `Schedule.recurs(0)` disables retries.
   */
  readonly retry?: Schedule.Schedule<unknown, AgentApiError> | undefined
  /**
   * Which failed attempts of a creating call (`createSession`, `onboard`) are sent again
   * (docs/reliability.md). `"safe"` (default): only those the service cannot have acted on (no
   * connection was made; 429, 503 or 408), so a service that ignores `Idempotency-Key` never
   * creates two sessions for one call; an attempt that may have acted (a time-out after the
   * request was written, a reset, 500, 502, 504) fails with `OutcomeUnknown`. `"idempotent"`:
   * every retryable failure is sent again with the same `Idempotency-Key`; choose it only when
   * the service honours the key (the simulator does).
   */
  readonly createPolicy?: "safe" | "idempotent" | undefined
  /** The longest wait a `Retry-After` may impose (default 60 s); a longer one waits this. */
  readonly maxRetryAfter?: DurationInput | undefined
  /** Allows plain `http://` to a host that is not loopback (default `false`). */
  readonly allowInsecure?: boolean | undefined
  /**
   * The largest response body read, in bytes (default {@link defaultMaxResponseSize}, 4 MiB).
   * Enforced while the body is read: a 2xx body over it fails with `ResponseTooLarge` (not
   * retried) and nothing past the limit is kept; an error body is cut at it.
   */
  readonly maxResponseSize?: number | undefined
}

/**
 * The default retry schedule: 2 retries, exponential from 500 ms, factor 2, jittered, each wait
 * capped at 8 s.
 *
 * @since 0.1.0
 * @category constructors
 */
export const defaultRetry: Schedule.Schedule<unknown, AgentApiError> = internal.defaultRetry

/**
 * The default request time-out: 30 s.
 *
 * @since 0.1.0
 * @category constructors
 */
export const defaultTimeout: Duration.Duration = internal.defaultTimeout

/**
 * The default cap on a `Retry-After` wait: 60 s.
 *
 * @since 0.1.0
 * @category constructors
 */
export const defaultMaxRetryAfter: Duration.Duration = internal.defaultMaxRetryAfter

/**
 * The default largest response body: 4 MiB (4194304 bytes).
 * @since 0.1.0
 * @category constructors
 */
export const defaultMaxResponseSize: number = internalBody.defaultMaxResponseSize

/**
 * The environment variable of the base URL.
 *
 * @since 0.1.0
 * @category models
 */
export const ENV_BASE_URL: typeof Http.environment.baseUrl = Http.environment.baseUrl

/**
 * The environment variable of the dialect name (`documented` or `observed`).
 *
 * @since 0.1.0
 * @category models
 */
export const ENV_DIALECT: typeof Http.environment.dialect = Http.environment.dialect

/**
 * Builds the service. Fails with `InsecureTransport` for plain `http://` to a host that is not
 * loopback (without `allowInsecure`), and `InvalidRequest` for a base URL that is not an
 * absolute http(s) URL.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: (
  options: Options
) => Effect.Effect<Service, InsecureTransport | InvalidRequest, HttpClient.HttpClient | Credentials.Credentials> =
  internal.make

/**
 * The service as a layer, over the platform `HttpClient` and `Credentials`.
 *
 * @example
 * ```ts
 * import { AgentApi, Credentials } from "effect-agent-session"
 * import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
 * import * as Effect from "effect/Effect"
 * import * as Layer from "effect/Layer"
 *
 * const AgentApiLive = AgentApi.layer({ baseUrl: "https://agents.example.com" }).pipe(
 *   Layer.provide([NodeHttpClient.layerUndici, Credentials.layerConfig()])
 * )
 *
 * const program = Effect.gen(function*() {
 *   const api = yield* AgentApi.AgentApi
 *   const agent = yield* api.onboard({ name: "scout", website: "https://example.com", domain: "research" })
 *   return yield* api.createSession(
 *     { start_url: "https://example.com", goal: "Find the pricing page", max_actions: 10 },
 *     { agent }
 *   )
 * })
 *
 * Effect.runPromise(Effect.provide(program, AgentApiLive))
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  options: Options
): Layer.Layer<AgentApi, InsecureTransport | InvalidRequest, HttpClient.HttpClient | Credentials.Credentials> =>
  Layer.effect(AgentApi, make(options))

/**
 * The options of {@link layerConfig}: each value a `Config` (defaults: the documented
 * variables), the rest as in {@link Options}.
 *
 * @since 0.1.0
 * @category models
 */
export interface ConfigOptions extends Omit<Options, "baseUrl" | "dialect" | "allowInsecure"> {
  /** The HTTP base URL (default: `AGENT_SESSION_BASE_URL`). */
  readonly baseUrl?: Config.Config<string> | undefined
  /** The dialect (default: `AGENT_SESSION_DIALECT`, `documented` or `observed`, else `documented`). */
  readonly dialect?: Config.Config<Dialect.Dialect> | undefined
  /** Allows plain `http://` to hosts that are not loopback (default: `false`). */
  readonly allowInsecure?: Config.Config<boolean> | undefined
}

/**
 * The dialect named by `AGENT_SESSION_DIALECT` (`documented` or `observed`), else `documented`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const dialectConfig: Config.Config<Dialect.Dialect> = Dialect.config(ENV_DIALECT).pipe(
  Config.withDefault<Dialect.DialectName>("documented"),
  Config.map(Dialect.fromName)
)

/**
 * The service from configuration: each of `baseUrl`, `dialect` and `allowInsecure` is a
 * `Config`, read when the layer is built (defaults: `AGENT_SESSION_BASE_URL`,
 * `AGENT_SESSION_DIALECT` else `documented`, `false`).
 *
 * @example
 * ```ts
 * import { AgentApi, Dialect } from "effect-agent-session"
 * import * as Config from "effect/Config"
 *
 * // The observed dialect; the base URL and the rest from the environment.
 * const ApiLive = AgentApi.layerConfig({ dialect: Config.succeed(Dialect.observed) })
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerConfig = (
  options: ConfigOptions = {}
): Layer.Layer<
  AgentApi,
  InsecureTransport | InvalidRequest | ConfigError,
  HttpClient.HttpClient | Credentials.Credentials
> =>
  Layer.effect(
    AgentApi,
    Effect.gen(function*() {
      const { allowInsecure, baseUrl, dialect } = yield* Config.all({
        baseUrl: options.baseUrl ?? configString(ENV_BASE_URL),
        dialect: options.dialect ?? dialectConfig,
        allowInsecure: options.allowInsecure ?? Config.succeed(false)
      })
      return yield* make({ ...options, baseUrl, dialect, allowInsecure })
    })
  )
