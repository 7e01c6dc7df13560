/**
 * One layer for any runtime with the standard `fetch` and `WebSocket` (Node 22, Bun, Deno):
 * `AgentSessions`, `AgentApi`, `EventStream` and `Credentials` over the `FetchHttpClient` and the
 * runtime's own global `WebSocket`.
 *
 * The declarations of the public module `FetchAgentSessions`, written once for both editions:
 * each edition's `src/FetchAgentSessions.ts` is its entry point and re-exports them.
 *
 * @since 0.1.0
 */
import * as Layer from "effect/Layer"
import type { InsecureTransport, InvalidRequest } from "../src/Errors.js"
import { type ConfigError, FetchHttpClient } from "../src/internal/line.js"
import * as SdkLayer from "./internal/sdkLayer.js"
import * as StandardWebSocket from "./internal/standardWebSocket.js"
import type * as NodeAgentSessions from "../src/NodeAgentSessions.js"

/**
 * Options of {@link layer}: those of `NodeAgentSessions.layer`.
 *
 * @since 0.1.0
 * @category models
 */
export type Options = NodeAgentSessions.Options

/**
 * Options of {@link layerConfig}: those of `NodeAgentSessions.layerConfig`.
 *
 * @since 0.1.0
 * @category models
 */
export type ConfigOptions = NodeAgentSessions.ConfigOptions

/**
 * Everything the layer provides.
 *
 * @since 0.1.0
 * @category models
 */
export type Services = NodeAgentSessions.Services

const runtime: SdkLayer.Runtime = {
  // `fetch` follows redirects itself unless told not to: the key would go with the request to
  // wherever a `Location` points. As on Node, a redirect is an answer (`UnexpectedStatus`).
  http: FetchHttpClient.layer.pipe(Layer.provide(Layer.succeed(FetchHttpClient.RequestInit)({ redirect: "manual" }))),
  webSocket: StandardWebSocket.layer
}

/**
 * The whole SDK over the runtime's `fetch` and `WebSocket`, from values.
 *
 * @example
 * ```ts
 * import { AgentSessions, FetchAgentSessions } from "effect-agent-session"
 *
 * // Bun, Deno, or Node 22: the runtime's own fetch and WebSocket.
 * const SdkLive = FetchAgentSessions.layer({
 *   apiKey: process.env.AGENT_SESSION_API_KEY,
 *   baseUrl: "https://agents.example.com"
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
 * The whole SDK over the runtime's `fetch` and `WebSocket`, from configuration: the variables of
 * `NodeAgentSessions.layerConfig` (`AGENT_SESSION_API_KEY`, `AGENT_SESSION_BASE_URL`,
 * `AGENT_SESSION_WS_URL`, `AGENT_SESSION_TRANSPORT`, `AGENT_SESSION_DIALECT`), each replaceable by
 * a `Config` of your own.
 *
 * @example
 * ```ts
 * import { AgentSessions, FetchAgentSessions } from "effect-agent-session"
 * import * as Effect from "effect/Effect"
 *
 * const program = AgentSessions.run({ start_url: "https://example.com", max_actions: 5, goal: "Read the title" })
 * const runnable = Effect.provide(program, FetchAgentSessions.layerConfig())
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerConfig = (
  options: ConfigOptions = {}
): Layer.Layer<Services, InsecureTransport | InvalidRequest | ConfigError> =>
  SdkLayer.fromConfig(runtime, options)
