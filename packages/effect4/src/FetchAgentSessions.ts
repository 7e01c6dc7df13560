/**
 * One layer for any runtime with the standard `fetch` and `WebSocket` (Node 22, Bun, Deno):
 * `AgentSessions`, `AgentApi`, `EventStream` and `Credentials` over Effect's `FetchHttpClient` and
 * the runtime's own global `WebSocket`, nothing of `@effect/platform-node`. Same options, same
 * variables, same address rules as `NodeAgentSessions`; two things differ, both because a standard
 * `WebSocket` is more limited than the `ws` package's:
 *
 * - **No upgrade headers.** The WebSocket upgrade carries no header (no `user-agent`). Nothing of
 *   the protocol needs one: the key goes in the first message (the `message` handshake of the
 *   documented dialect) or, when the dialect asks for it (`query`, `both`), in the address, under
 *   the rules every layer follows: a plain `ws://` address only to a loopback host unless
 *   `allowInsecure`, and the address printed only without the key. The HTTP calls and the SSE
 *   transport send their headers through `fetch` as on Node.
 * - **Back-pressure.** A standard `WebSocket` cannot pause its reading. When `bufferSize` events
 *   wait for a slow consumer, the channel keeps reading up to twice that; past it the connection
 *   is closed and the events fail with `BufferOverflow` after every event received before it:
 *   memory stays bounded and no event is dropped silently. The SSE transport reads a `fetch` body,
 *   which pauses: with `transport: "sse"` a slow consumer is back-pressured as on Node.
 *
 * A refused WebSocket upgrade (an HTTP status instead of `101`) reaches a standard `WebSocket` as
 * a bare `error`, without the status: it is retried as an open failure (then `NeverConnected`)
 * rather than failing at once with `HandshakeRejected` as on Node. A key refused after the socket
 * opened (close codes 1008, 4001, 4003, ...) is `HandshakeRejected` on every runtime.
 *
 * @since 0.1.0
 */
import type * as Config from "effect/Config"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as Layer from "effect/Layer"
import type { InsecureTransport, InvalidRequest } from "./Errors.js"
import * as SdkLayer from "../binding/internal/sdkLayer.js"
import * as StandardWebSocket from "../binding/internal/standardWebSocket.js"
import type * as NodeAgentSessions from "./NodeAgentSessions.js"

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
 * import { AgentSessions, FetchAgentSessions } from "effect-agent-session-effect4"
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
 * import { AgentSessions, FetchAgentSessions } from "effect-agent-session-effect4"
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
): Layer.Layer<Services, InsecureTransport | InvalidRequest | Config.ConfigError> =>
  SdkLayer.fromConfig(runtime, options)
