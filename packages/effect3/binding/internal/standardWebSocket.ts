/**
 * A `Socket.WebSocketConstructor` over the runtime's own standard (WHATWG) `WebSocket`: Node 22's,
 * Bun's, Deno's, a browser's. It cannot send headers with the upgrade (a standard `WebSocket` has
 * no way to), which the event channel never needs: the key goes in the first message (the
 * `message` handshake) or, where the dialect asks for it, in the address (`query`, `both`), under
 * the same address rules as on Node. It cannot pause its reading either (no `pause()`/`resume()`;
 * Bun's has them, but they let frames already read through): registered `pausable: false`, so the
 * core's connection bounds what waits for the consumer (`BufferOverflow`).
 *
 * Where the runtime has `WebSocketStream` (Deno 2.9 run with `--unstable-net`), the constructor
 * opens one of those instead, through the core's `StreamWebSocket`, which reads a message only
 * while the consumer wants more: that socket pauses, and a slow consumer is back-pressured as on
 * Node, with no overflow bound.
 */
import * as Layer from "effect/Layer"
import { StreamWebSocket } from "effect-agent-session-shell"
import { registerConstructor } from "./channel/upgrade.js"
import { protocolsOf, Socket, type WebSocketConstructorService } from "../../src/internal/line.js"

/**
 * Builds the constructor: over the runtime's `WebSocketStream` when it has one (`streams`, by
 * default whether it has), else over its `WebSocket` (`StreamWebSocket.standard`).
 */
export const make = (streams?: boolean): WebSocketConstructorService => {
  const { open, pausable } = StreamWebSocket.standard(streams)
  // A `StreamWebSocket` has the socket interface the transport reads, and `pause()`/`resume()`.
  const constructor: WebSocketConstructorService = (url, options) =>
    open(url, protocolsOf(options)) as globalThis.WebSocket
  registerConstructor(constructor, { pausable })
  return constructor
}

/** The constructor as a layer. */
export const layer: Layer.Layer<Socket.WebSocketConstructor> = Layer.sync(Socket.WebSocketConstructor)(() => make())
