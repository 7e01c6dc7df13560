/**
 * One layer for Node: `AgentSessions`, `AgentApi`, `EventStream` and `Credentials`, over Node's
 * HTTP client (undici) and a `ws`-based WebSocket constructor.
 *
 * @since 0.1.0
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as Config from "effect/Config"
import type * as ConfigError from "effect/ConfigError"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Redacted from "effect/Redacted"
import * as AgentApi from "./AgentApi.js"
import * as AgentSessions from "./AgentSessions.js"
import * as Credentials from "./Credentials.js"
import * as Dialect from "./Dialect.js"
import { type InsecureTransport, InvalidRequest } from "./Errors.js"
import * as EventStream from "./EventStream.js"
import { userAgent } from "./internal/version.js"
import * as WebSocket from "./internal/webSocket.js"

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
  /** Which key each operation uses (U11). */
  readonly selection?: Credentials.KeySelection | undefined
  /** The HTTP base URL (`{base_url}`). */
  readonly baseUrl: string
  /** The WebSocket base URL (`{ws_url}`); required with the WebSocket transport, unused with `"sse"`. */
  readonly wsUrl?: string | undefined
  /**
   * The event channel's transport: `"websocket"` (default) or `"sse"`, the observed client's
   * Server-Sent Events transport served at `baseUrl` (same events, same guarantees).
   */
  readonly transport?: "websocket" | "sse" | undefined
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

const transports = (options: Options, credentials: Layer.Layer<Credentials.Credentials>) => {
  const dialect = options.dialect ?? Dialect.documented
  const allowInsecure = options.allowInsecure === true
  const api = AgentApi.layer({ ...options.http, baseUrl: options.baseUrl, dialect, allowInsecure }).pipe(
    Layer.provide(NodeHttpClient.layerUndici)
  )
  const events = options.transport === "sse"
    ? EventStream.layerSse({ ...options.events, url: options.baseUrl, dialect, allowInsecure }).pipe(
      Layer.provide(NodeHttpClient.layerUndici)
    )
    : options.wsUrl === undefined
    ? Layer.fail(
      new InvalidRequest({
        subject: "NodeAgentSessions",
        message: "wsUrl is required with the WebSocket transport (or set transport: \"sse\")"
      })
    )
    : EventStream.layer({ ...options.events, url: options.wsUrl, dialect, allowInsecure }).pipe(
      Layer.provide(WebSocket.layer({ headers: { "user-agent": userAgent } }))
    )
  return Layer.provideMerge(
    AgentSessions.layer,
    Layer.merge(api, events)
  ).pipe(Layer.provideMerge(credentials))
}

/**
 * The whole SDK over Node, from values.
 *
 * @example
 * ```ts
 * import { AgentSessions, NodeAgentSessions } from "effect-agent-session"
 * import { Effect } from "effect"
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
  transports(
    options,
    Credentials.layer({ apiKey: options.apiKey, agents: options.agents, selection: options.selection })
  )

/**
 * The environment variable choosing the event channel's transport: `websocket` (default) or `sse`.
 *
 * @since 0.1.0
 * @category models
 */
export const ENV_TRANSPORT = "AGENT_SESSION_TRANSPORT"

/**
 * The whole SDK over Node, from the environment: `AGENT_SESSION_API_KEY` (read afresh for every
 * request and reconnect), `AGENT_SESSION_BASE_URL`, `AGENT_SESSION_WS_URL`, and
 * `AGENT_SESSION_DIALECT` (`documented` or `observed`), and `AGENT_SESSION_TRANSPORT` (`websocket` or
 * `sse`; with `sse` no WebSocket URL is needed). Values given in `overrides` win.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerConfig = (
  overrides: Partial<Omit<Options, "apiKey">> & { readonly apiKey?: Redacted.Redacted<string> | string | undefined } =
    {}
): Layer.Layer<Services, InsecureTransport | InvalidRequest | ConfigError.ConfigError> =>
  Layer.unwrapEffect(
    Effect.gen(function*() {
      const baseUrl = overrides.baseUrl ?? (yield* Config.string(AgentApi.ENV_BASE_URL))
      const transport = overrides.transport ??
        (yield* Config.literal("websocket", "sse")(ENV_TRANSPORT).pipe(Config.withDefault("websocket" as const)))
      const wsUrl = overrides.wsUrl ??
        (transport === "sse"
          ? Option.getOrUndefined(yield* Config.option(Config.string(EventStream.ENV_WS_URL)))
          : yield* Config.string(EventStream.ENV_WS_URL))
      const dialect = overrides.dialect ??
        Option.match(yield* Config.option(Dialect.config(AgentApi.ENV_DIALECT)), {
          onNone: () => Dialect.documented,
          onSome: Dialect.fromName
        })
      const credentials = overrides.apiKey === undefined
        ? Credentials.layerConfig({ agents: overrides.agents, selection: overrides.selection })
        : Credentials.layer({ apiKey: overrides.apiKey, agents: overrides.agents, selection: overrides.selection })
      return transports({ ...overrides, baseUrl, wsUrl, dialect, transport }, credentials)
    })
  )
