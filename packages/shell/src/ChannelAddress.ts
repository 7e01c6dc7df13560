/**
 * The address of a session's event channel, as both editions configure it: the environment
 * variable that names it, the address derived from the service's HTTP base URL when it is not
 * named, and the check a configured address passes (an absolute `ws://` or `wss://` URL). The
 * editions read the variables with their own `Config`.
 *
 * @example
 * ```ts
 * import { ChannelAddress } from "effect-agent-session-shell"
 *
 * console.log(ChannelAddress.fromBaseUrl("https://agents.example.com/api")) // "wss://agents.example.com/api"
 * console.log(ChannelAddress.isWebSocketUrl("http://agents.example.com")) // false
 * ```
 *
 * @since 0.1.0
 */

/**
 * The environment variables of the event channel's address: its WebSocket base URL (`{ws_url}`),
 * and the service's HTTP base URL it is derived from when that one is not set.
 *
 * @since 0.1.0
 * @category models
 */
export const environment = {
  wsUrl: "AGENT_SESSION_WS_URL",
  baseUrl: "AGENT_SESSION_BASE_URL"
} as const

/**
 * The WebSocket base URL of a service whose HTTP base URL is given: the same address (trimmed)
 * with `http:` turned into `ws:` and `https:` into `wss:` (same host, port and base path).
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromBaseUrl = (baseUrl: string): string =>
  baseUrl.trim().replace(/^http(s?):/i, (_, secure: string) => secure.length > 0 ? "wss:" : "ws:")

/**
 * Whether a configured address is an absolute `ws://` or `wss://` URL.
 *
 * @since 0.1.0
 * @category guards
 */
export const isWebSocketUrl = (url: string): boolean => {
  if (!URL.canParse(url)) return false
  const protocol = new URL(url).protocol
  return protocol === "ws:" || protocol === "wss:"
}

/**
 * The message of a configured address that is not one ({@link isWebSocketUrl}).
 *
 * @since 0.1.0
 * @category models
 */
export const invalidUrlMessage = "Expected an absolute ws:// or wss:// URL"
