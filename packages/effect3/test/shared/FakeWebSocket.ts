/**
 * The fake WebSocket of the shared test support (`effect-agent-session-conformance/fakeWebSocket`)
 * bound to the edition: the `Socket.WebSocketConstructor` layer that makes its sockets, and waits
 * on the fiber scheduler. Written once for both editions (`../helpers/line.ts` binds it).
 */
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import { type FakeServer, FakeWebSocket, FakeWsSocket } from "effect-agent-session-conformance/fakeWebSocket"
import { type Socket, webSocketConstructor, yieldNow } from "../helpers/line.js"

export * from "effect-agent-session-conformance/fakeWebSocket"

/** The client's sockets, made by the fake server (`ws`: sockets like the `ws` package's, {@link FakeWsSocket}). */
export const layerFake = (server: FakeServer, options: { readonly ws?: boolean } = {}): Layer.Layer<Socket.WebSocketConstructor> =>
  webSocketConstructor((url) => {
    const socket = options.ws === true ? new FakeWsSocket(url) : new FakeWebSocket(url)
    server.sockets.push(socket)
    server.onCreate?.(socket)
    return socket
  })

/**
 * Waits (letting other fibers run, without moving the clock) until the client has created its
 * `n`-th socket (1-based) and listens on it; fails when it does not come.
 */
export const awaitSocket = (server: FakeServer, n: number): Effect.Effect<FakeWebSocket> =>
  Effect.gen(function*() {
    for (let i = 0; i < 10_000; i++) {
      const socket = server.sockets[n - 1]
      if (socket !== undefined && socket.listens("open") && socket.listens("message")) return socket
      yield* yieldNow()
    }
    return yield* Effect.die(new Error(`socket ${n} was never created (have ${server.sockets.length})`))
  })

/** Lets other fibers run for a while without moving the clock. */
export const settle = (rounds = 50): Effect.Effect<void> =>
  Effect.gen(function*() {
    for (let i = 0; i < rounds; i++) yield* yieldNow()
  })
