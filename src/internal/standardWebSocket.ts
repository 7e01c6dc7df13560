/**
 * A `Socket.WebSocketConstructor` over the runtime's own standard (WHATWG) `WebSocket`: Node 22's,
 * Bun's, Deno's, a browser's. It cannot send headers with the upgrade (a standard `WebSocket` has
 * no way to), which the event channel never needs: the key goes in the first message (the
 * `message` handshake) or, where the dialect asks for it, in the address (`query`, `both`), under
 * the same address rules as on Node. It cannot pause its reading either (no `pause()`/`resume()`;
 * Bun's has them, but they let frames already read through): registered `pausable: false`, so the
 * core's connection bounds what waits for the consumer (`BufferOverflow`).
 */
import * as Socket from "@effect/platform/Socket"
import * as Layer from "effect/Layer"
import { registerConstructor } from "./channel/upgrade.js"

/** Builds the constructor. */
export const make = (): (url: string, protocols?: string | Array<string> | undefined) => globalThis.WebSocket => {
  const constructor = (url: string, protocols?: string | Array<string> | undefined): globalThis.WebSocket =>
    new globalThis.WebSocket(url, protocols)
  registerConstructor(constructor, { pausable: false })
  return constructor
}

/** The constructor as a layer. */
export const layer: Layer.Layer<Socket.WebSocketConstructor> = Layer.sync(Socket.WebSocketConstructor, make)
