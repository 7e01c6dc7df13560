/**
 * What an edition's own WebSocket constructor (on the `ws` package) tells the WebSocket attempt
 * beyond the socket's interface: the HTTP status of a refused upgrade, so that a refused
 * handshake is a rejection (never retried) and not a network failure (retried). Also the options
 * such a constructor opens its sockets with. The registry is keyed by the socket object, so any
 * constructor may record into it and any attempt read from it.
 *
 * @since 0.1.0
 */
import { Close } from "effect-agent-session-core"

/**
 * The HTTP answer to a refused upgrade.
 *
 * @since 0.1.0
 * @category models
 */
export interface UpgradeRejection {
  readonly status: number
  readonly reason: string
}

const rejections = new WeakMap<object, UpgradeRejection>()

/**
 * Records the HTTP status with which the server refused a socket's upgrade.
 *
 * @since 0.1.0
 * @category constructors
 */
export const recordRejection = (ws: object, rejection: UpgradeRejection): void => {
  rejections.set(ws, rejection)
}

/**
 * The refused upgrade of a socket: recorded by a constructor ({@link recordRejection}), else found
 * in the open error of any `ws`-based socket (`Close.upgradeRefusal`: `Unexpected server
 * response: 401`).
 *
 * @since 0.1.0
 * @category accessors
 */
export const rejectionOf = (ws: object, cause: unknown): UpgradeRejection | undefined =>
  rejections.get(ws) ?? Close.upgradeRefusal(cause)

/**
 * The HTTP response `ws` gives its `unexpected-response` event.
 *
 * @since 0.1.0
 * @category models
 */
export interface UnexpectedResponse {
  readonly statusCode?: number | undefined
  readonly statusMessage?: string | undefined
  resume(): unknown
}

/**
 * What to do on `ws`'s `unexpected-response` event (the server answered the upgrade with an HTTP
 * status): record the refusal, discard the response's body, and abort the handshake (`error`,
 * then `close` with 1006, as `ws` does when nobody listens to the event).
 *
 * @since 0.1.0
 * @category combinators
 */
export const refusedUpgrade = (ws: { terminate(): void }, response: UnexpectedResponse): void => {
  recordRejection(ws, { status: response.statusCode ?? 0, reason: response.statusMessage ?? "" })
  response.resume()
  ws.terminate()
}

/**
 * The largest message a socket opened without a limit of its own accepts (1 MiB, the event
 * channel's default `maxFrameSize`; `ws`'s own default is 100 MiB).
 *
 * @since 0.1.0
 * @category models
 */
export const DEFAULT_MAX_PAYLOAD = 1024 * 1024

/**
 * How long a peer that never answers our close frame holds the socket (`ws`'s default: 30 s).
 *
 * @since 0.1.0
 * @category models
 */
export const CLOSE_TIMEOUT_MS = 5_000

/**
 * The options of a `ws` client socket: the message bound, the close time-out (`closeTimeout` is
 * in ws 8.23, not in its published types), and the headers of the upgrade request when there are
 * any (copied: the socket keeps no reference to the caller's object).
 *
 * @since 0.1.0
 * @category constructors
 */
export const clientOptions = (
  maxPayload: number,
  headers: Readonly<Record<string, string>> | undefined
): { maxPayload: number; closeTimeout: number; headers?: Record<string, string> } =>
  headers === undefined
    ? { maxPayload, closeTimeout: CLOSE_TIMEOUT_MS }
    : { maxPayload, closeTimeout: CLOSE_TIMEOUT_MS, headers: { ...headers } }

/**
 * The headers of one socket: the constructor's, with the caller's on top when it gives any.
 *
 * @since 0.1.0
 * @category combinators
 */
export const mergeHeaders = (
  base: Readonly<Record<string, string>> | undefined,
  extra: Readonly<Record<string, string>> | undefined
): Readonly<Record<string, string>> | undefined => extra === undefined ? base : { ...base, ...extra }
