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
import { recordRejection, registerSizedConstructor } from "./channel/upgrade.js"

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

const DEFAULT_MAX_PAYLOAD = 1024 * 1024

const CLOSE_TIMEOUT_MS = 5_000

const open = (
  url: string,
  protocols: string | Array<string> | undefined,
  headers: Readonly<Record<string, string>> | undefined,
  maxPayload: number
): Socket.WebSocketLike => {
  // A peer that never answers our close frame holds the socket at most this long (`ws`: 30 s).
  // (`closeTimeout` is in ws 8.23, not yet in its published types.)
  const wsOptions: NodeWS.ClientOptions & { closeTimeout?: number } = { maxPayload, closeTimeout: CLOSE_TIMEOUT_MS }
  if (headers !== undefined) wsOptions.headers = { ...headers }
  const ws = new NodeWS.WebSocket(url, protocols, wsOptions)
  ws.on("unexpected-response", (_request, response) => {
    recordRejection(ws, { status: response.statusCode ?? 0, reason: response.statusMessage ?? "" })
    response.resume()
    // Aborts the handshake: `error`, then `close` with 1006, as `ws` does by default.
    ws.terminate()
  })
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
      headers === undefined ? options.headers : { ...options.headers, ...headers },
      options.maxPayload ?? DEFAULT_MAX_PAYLOAD
    )
  }
  registerSizedConstructor(constructor, (url, maxPayload, headers) =>
    open(url, undefined, headers === undefined ? options.headers : { ...options.headers, ...headers }, maxPayload))
  return constructor
}

/** The constructor as a layer. */
export const layer = (options?: Options): Layer.Layer<Socket.WebSocketConstructor> =>
  Layer.succeed(Socket.WebSocketConstructor)(make(options))
