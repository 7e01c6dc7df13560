/**
 * The options of an edition's whole-SDK layer (`NodeAgentSessions.layer` and `layerConfig`) read
 * once: the event channel's transport and the variable naming it, the dialect and insecure
 * transport defaults.
 *
 * @since 0.1.0
 */
import { Dialect } from "effect-agent-session-core"

/**
 * The environment variable choosing the event channel's transport: `websocket` (default) or `sse`.
 *
 * @since 0.1.0
 * @category models
 */
export const ENV_TRANSPORT = "AGENT_SESSION_TRANSPORT"

/**
 * The event channel's transports: a WebSocket, or the observed client's Server-Sent Events.
 *
 * @since 0.1.0
 * @category models
 */
export const transports = ["websocket", "sse"] as const

/**
 * One of {@link transports}.
 *
 * @since 0.1.0
 * @category models
 */
export type Transport = (typeof transports)[number]

/**
 * The transport when none is chosen: `websocket`.
 *
 * @since 0.1.0
 * @category models
 */
export const defaultTransport: Transport = "websocket"

/**
 * The choices of a whole-SDK layer with their defaults: the dialect (`documented`), whether plain
 * `http://` / `ws://` to other hosts than loopback is allowed (only when `true` is given), and
 * whether the event channel is the SSE stream (else a WebSocket).
 *
 * @example
 * ```ts
 * import { SdkLayer } from "effect-agent-session-shell"
 *
 * SdkLayer.resolve({ transport: "sse" }).sse // true
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const resolve = (options: {
  readonly dialect?: Dialect.Dialect | undefined
  readonly allowInsecure?: boolean | undefined
  readonly transport?: Transport | undefined
}): { readonly dialect: Dialect.Dialect; readonly allowInsecure: boolean; readonly sse: boolean } => ({
  dialect: options.dialect ?? Dialect.documented,
  allowInsecure: options.allowInsecure === true,
  sse: options.transport === "sse"
})
