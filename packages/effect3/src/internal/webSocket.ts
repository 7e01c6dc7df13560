/**
 * A `Socket.WebSocketConstructor` built on the `ws` package, for Node.
 *
 * Unlike `NodeSocket.layerWebSocketConstructor` (which passes only the address and protocols),
 * it can send headers (such as `User-Agent`), and it records the HTTP status of a refused
 * upgrade (401, 403, ...) so the event channel can tell a refused handshake (`HandshakeRejected`,
 * never retried) from a network failure (retried). Its sockets can be paused and resumed
 * (`ws`'s `pause()` / `resume()`), which the event channel uses to stop reading when its bounded
 * buffer is full. Kept apart from the engine so that only this file imports `ws`.
 */
import * as Socket from "@effect/platform/Socket"
import * as Layer from "effect/Layer"
import { Upgrade } from "effect-agent-session-shell"
import * as WS from "ws"
import { registerConstructor } from "../../binding/internal/channel/upgrade.js"

/**
 * Options of the constructor.
 */
export interface Options {
  /** Headers sent with every upgrade request. Never put a key here unless the dialect asks for it. */
  readonly headers?: Readonly<Record<string, string>> | undefined
  /**
   * The largest message `ws` accepts before closing with 1009, for sockets opened without a
   * limit of their own (default 1 MiB, the event channel's default `maxFrameSize`; `ws`'s own
   * default is 100 MiB). The event channel opens every socket with its `maxFrameSize` instead,
   * so a larger frame is refused while it is read (`FrameTooLarge`), never read whole.
   */
  readonly maxPayload?: number | undefined
}

/**
 * Builds the constructor.
 */
export const make = (options: Options = {}) => {
  const sized = (url: string, protocols: string | Array<string> | undefined, maxPayload: number) =>
    open(url, protocols, options, maxPayload)
  const constructor = (url: string, protocols?: string | Array<string> | undefined): globalThis.WebSocket =>
    sized(url, protocols, options.maxPayload ?? Upgrade.DEFAULT_MAX_PAYLOAD)
  registerConstructor(constructor, { sized: (url, maxPayload) => sized(url, undefined, maxPayload) })
  return constructor
}

const open = (
  url: string,
  protocols: string | Array<string> | undefined,
  options: Options,
  maxPayload: number
): globalThis.WebSocket => {
  const ws = new WS.WebSocket(url, protocols, Upgrade.clientOptions(maxPayload, options.headers))
  ws.on("unexpected-response", (_request, response) => Upgrade.refusedUpgrade(ws, response))
  // The platform's `Socket` reads through the WHATWG interface, which `ws` implements. This is
  // the one cast the project allows.
  return ws as unknown as globalThis.WebSocket
}

/**
 * The constructor as a layer.
 */
export const layer = (options?: Options): Layer.Layer<Socket.WebSocketConstructor> =>
  Layer.succeed(Socket.WebSocketConstructor, make(options))

