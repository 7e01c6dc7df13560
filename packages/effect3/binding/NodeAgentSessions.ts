/**
 * One layer for Node: `AgentSessions`, `AgentApi`, `EventStream` and `Credentials`, over Node's
 * HTTP client (undici) and a `ws`-based WebSocket constructor.
 *
 * The declarations of the public module `NodeAgentSessions`, written once for both editions:
 * each edition's `src/NodeAgentSessions.ts` is its entry point and re-exports them.
 *
 * @since 0.1.0
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import type * as Config from "effect/Config"
import type * as Layer from "effect/Layer"
import type * as Redacted from "effect/Redacted"
import { SdkLayer as CoreSdkLayer } from "effect-agent-session-shell"
import type * as AgentApi from "../src/AgentApi.js"
import type * as AgentSessions from "../src/AgentSessions.js"
import type * as Credentials from "../src/Credentials.js"
import type * as Dialect from "../src/Dialect.js"
import type { InsecureTransport, InvalidRequest } from "../src/Errors.js"
import type * as EventStream from "../src/EventStream.js"
import type { ConfigError } from "../src/internal/line.js"
import * as SdkLayer from "./internal/sdkLayer.js"
import { userAgent } from "../src/internal/version.js"
import * as WebSocket from "../src/internal/webSocket.js"

/**
 * Options of {@link layer}.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** The account key (default: none; operations then fail with `MissingCredentials`). */
  readonly apiKey?: Redacted.Redacted<string> | string | undefined
  /** Agents whose keys are known in advance. */
  readonly agents?: Iterable<Credentials.AgentKeyRef> | undefined
  /** Which key each operation uses. */
  readonly selection?: Credentials.KeySelection | undefined
  /** The HTTP base URL (`{base_url}`). */
  readonly baseUrl: string
  /**
   * The WebSocket base URL (`{ws_url}`); default: derived from `baseUrl` (`http` becomes `ws`,
   * `https` becomes `wss`, same host and base path: `EventStream.wsUrlFromBaseUrl`). Unused with
   * the `"sse"` transport.
   */
  readonly wsUrl?: string | undefined
  /**
   * The event channel's transport: `"websocket"` (default) or `"sse"`, the observed client's
   * Server-Sent Events transport served at `baseUrl` (same events, same guarantees).
   */
  readonly transport?: CoreSdkLayer.Transport | undefined
  /** The dialect (default `Dialect.documented`). */
  readonly dialect?: Dialect.Dialect | undefined
  /** Allows plain `http://` / `ws://` to hosts that are not loopback. */
  readonly allowInsecure?: boolean | undefined
  /** Options of the HTTP client (time-out, retry schedule, Retry-After cap). */
  readonly http?: Omit<AgentApi.Options, "baseUrl" | "dialect" | "allowInsecure"> | undefined
  /** Defaults of every connection (reconnect schedule, time-outs, buffers). */
  readonly events?: Omit<EventStream.Options, "url" | "dialect" | "allowInsecure"> | undefined
}

/**
 * Everything the layer provides.
 *
 * @since 0.1.0
 * @category models
 */
export type Services =
  | AgentSessions.AgentSessions
  | AgentApi.AgentApi
  | EventStream.EventStream
  | Credentials.Credentials

const runtime: SdkLayer.Runtime = {
  http: NodeHttpClient.layerUndici,
  webSocket: WebSocket.layer({ headers: { "user-agent": userAgent } })
}

/**
 * The whole SDK over Node, from values.
 *
 * @example
 * ```ts
 * import { AgentSessions, NodeAgentSessions } from "effect-agent-session"
 * import * as Effect from "effect/Effect"
 *
 * const SdkLive = NodeAgentSessions.layer({
 *   apiKey: process.env.AGENT_SESSION_API_KEY,
 *   baseUrl: "https://agents.example.com",
 *   wsUrl: "wss://agents.example.com"
 * })
 *
 * const program = AgentSessions.run({ start_url: "https://example.com", max_actions: 5, goal: "Read the title" })
 * // Effect.runPromise(Effect.provide(program, SdkLive))
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options): Layer.Layer<Services, InsecureTransport | InvalidRequest> =>
  SdkLayer.fromOptions(runtime, options)

/**
 * The environment variable choosing the event channel's transport: `websocket` (default) or `sse`.
 *
 * @since 0.1.0
 * @category models
 */
export const ENV_TRANSPORT: typeof CoreSdkLayer.ENV_TRANSPORT = CoreSdkLayer.ENV_TRANSPORT

/**
 * The options of {@link layerConfig}: each value a `Config`, whose default is the documented
 * variable; `agents`, `selection`, `http` and `events` as in {@link Options}.
 *
 * @since 0.1.0
 * @category models
 */
export interface ConfigOptions extends
  Omit<Options, "apiKey" | "baseUrl" | "wsUrl" | "transport" | "dialect" | "allowInsecure">
{
  /**
   * The account key (default: `AGENT_SESSION_API_KEY`, redacted), read afresh for every
   * request and reconnect; when it is missing, an operation that needs it fails with
   * `MissingCredentials`.
   */
  readonly apiKey?: Config.Config<Redacted.Redacted<string>> | undefined
  /** The HTTP base URL (default: `AGENT_SESSION_BASE_URL`). */
  readonly baseUrl?: Config.Config<string> | undefined
  /**
   * The WebSocket base URL (default: `AGENT_SESSION_WS_URL`; when that is not set, derived from
   * the base URL with `EventStream.wsUrlFromBaseUrl`).
   */
  readonly wsUrl?: Config.Config<string> | undefined
  /** The transport (default: `AGENT_SESSION_TRANSPORT`, `websocket` or `sse`, else `websocket`). */
  readonly transport?: Config.Config<CoreSdkLayer.Transport> | undefined
  /** The dialect (default: `AGENT_SESSION_DIALECT`, `documented` or `observed`, else `documented`). */
  readonly dialect?: Config.Config<Dialect.Dialect> | undefined
  /** Allows plain `http://` / `ws://` to hosts that are not loopback (default: `false`). */
  readonly allowInsecure?: Config.Config<boolean> | undefined
}

/**
 * The whole SDK over Node, from configuration. Each of `apiKey`, `baseUrl`, `wsUrl`,
 * `transport`, `dialect` and `allowInsecure` is a `Config`; by default they read
 * `AGENT_SESSION_API_KEY` (afresh for every request and reconnect), `AGENT_SESSION_BASE_URL`,
 * `AGENT_SESSION_WS_URL` (optional: derived from the base URL when not set),
 * `AGENT_SESSION_TRANSPORT` (`websocket` or `sse`) and `AGENT_SESSION_DIALECT` (`documented` or
 * `observed`). Any of them may be a `Config` of your own: a variable of another name, or a fixed
 * value.
 *
 * @example
 * ```ts
 * import { Dialect, NodeAgentSessions } from "effect-agent-session"
 * import * as Config from "effect/Config"
 *
 * // A fixed base URL and dialect; the key from `AGENT_SESSION_API_KEY`:
 * const SdkLive = NodeAgentSessions.layerConfig({
 *   baseUrl: Config.succeed("https://agents.example.com"),
 *   dialect: Config.succeed(Dialect.observed)
 * })
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerConfig = (
  options: ConfigOptions = {}
): Layer.Layer<Services, InsecureTransport | InvalidRequest | ConfigError> =>
  SdkLayer.fromConfig(runtime, options)
