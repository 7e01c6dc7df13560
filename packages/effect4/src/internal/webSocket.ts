/**
 * A `Socket.WebSocketConstructor` built on the `ws` package (as `@effect/platform-node/NodeWS`
 * ships it), for Node.
 *
 * Beside what `NodeWS.layerWebSocketConstructor` does (headers, sockets that pause), it records
 * the HTTP status of a refused upgrade (401, 403, ...) so the event channel can tell a refused
 * handshake (`HandshakeRejected`, never retried) from a network failure (retried), bounds the size
 * of a message while it is read (`maxPayload`, per connection: the event channel's
 * `maxFrameSize`), and holds a peer that never answers a close for at most 5 s. Kept apart from
 * the engine so that only this file imports `ws`.
 */
import * as NodeWS from "@effect/platform-node/NodeWS"
import * as Layer from "effect/Layer"
import * as Socket from "effect/socket/Socket"
import { Upgrade } from "effect-agent-session-shell"
import { registerConstructor } from "../../binding/internal/channel/upgrade.js"

/** Options of the constructor. */
export interface Options {
  /** Headers sent with every upgrade request. Never put a key here unless the dialect asks for it. */
  readonly headers?: Readonly<Record<string, string>> | undefined
  /**
   * The largest message `ws` accepts before closing with 1009, for sockets opened without a
   * limit of their own (default 1 MiB, the event channel's default `maxFrameSize`; `ws`'s own
   * default is 100 MiB).
   */
  readonly maxPayload?: number | undefined
}

const open = (
  url: string,
  protocols: string | Array<string> | undefined,
  headers: Readonly<Record<string, string>> | undefined,
  maxPayload: number
): Socket.WebSocketLike => {
  const ws = new NodeWS.WebSocket(url, protocols, Upgrade.clientOptions(maxPayload, headers))
  ws.on("unexpected-response", (_request, response) => Upgrade.refusedUpgrade(ws, response))
  return ws
}

/** Builds the constructor. */
export const make = (options: Options = {}): Socket.WebSocketConstructor["Service"] => {
  const constructor: Socket.WebSocketConstructor["Service"] = (url, constructorOptions) => {
    const { headers, protocols } = typeof constructorOptions === "object" && !Array.isArray(constructorOptions)
      ? constructorOptions
      : { headers: undefined, protocols: constructorOptions }
    return open(
      url,
      protocols,
      Upgrade.mergeHeaders(options.headers, headers),
      options.maxPayload ?? Upgrade.DEFAULT_MAX_PAYLOAD
    )
  }
  registerConstructor(constructor, {
    sized: (url, maxPayload, headers) => open(url, undefined, Upgrade.mergeHeaders(options.headers, headers), maxPayload),
    ownEvents: true
  })
  return constructor
}

/** The constructor as a layer. */
export const layer = (options?: Options): Layer.Layer<Socket.WebSocketConstructor> =>
  Layer.succeed(Socket.WebSocketConstructor)(make(options))
