/**
 * Hostile WebSocket peers over real sockets: a `ws` server on 127.0.0.1, port 0, that answers the
 * documented handshake the way a hostile or broken service would (close codes carrying the key,
 * frames echoing it, a frame far over the limit), against the SDK's `ws` constructor. Each case:
 * the typed error at once, not retried (one connection), and the key in none of it. The Effect 3
 * edition's `test/hostile/sdk-ws.test.ts` cases that matter most.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import type * as Http from "node:http"
import { type WebSocket as WsSocket, WebSocketServer } from "ws"
import * as Credentials from "../../src/Credentials.js"
import * as EventStream from "../../src/EventStream.js"
import * as WebSocket from "../../src/internal/webSocket.js"
import { quick } from "../helpers/sdk.js"

const KEY = "sk-hostile-0123456789abcdef"
const SESSION = "ses_hostile"

/** A server that runs `act` on each socket once the client's handshake frame arrived. */
const hostileServer = (act: (socket: WsSocket, index: number) => void) =>
  Effect.acquireRelease(
    Effect.callback<{ readonly port: number; readonly connections: () => number; readonly server: WebSocketServer }>(
      (resume) => {
        let connections = 0
        const server: WebSocketServer = new WebSocketServer({ host: "127.0.0.1", port: 0 }, () => {
          const address = server.address()
          resume(Effect.succeed({
            port: typeof address === "object" && address !== null ? address.port : 0,
            connections: () => connections,
            server
          }))
        })
        server.on("connection", (socket: WsSocket, _request: Http.IncomingMessage) => {
          const index = connections++
          socket.once("message", () => act(socket, index))
        })
      }
    ),
    ({ server }) =>
      Effect.callback<void>((resume) => {
        for (const client of server.clients) client.terminate()
        server.close(() => resume(Effect.void))
      })
  )

/** Drains the events of `SESSION` against the server: how they ended, and how many connections were made. */
const watch = (act: (socket: WsSocket, index: number) => void, options: EventStream.ConnectOptions = {}) =>
  Effect.gen(function*() {
    const server = yield* hostileServer(act)
    const exit = yield* Effect.flatMap(EventStream.EventStream, (channel) =>
      Stream.runDrain(channel.events(SESSION, options))).pipe(
        Effect.provide(
          EventStream.layer({ url: `ws://127.0.0.1:${server.port}`, reconnect: quick }).pipe(
            Layer.provide(Layer.merge(Credentials.layer({ apiKey: KEY }), WebSocket.layer()))
          )
        ),
        Effect.timeout("20 seconds"),
        Effect.exit
      )
    return { exit, connections: server.connections() }
  })

const failureOf = (exit: Exit.Exit<unknown, unknown>) => (Exit.isFailure(exit) ? exit.cause : undefined)

/** The typed failure of an exit, and the exit printed whole (to look for the key). */
const ended = (exit: Exit.Exit<void, unknown>) => ({
  error: Option.getOrUndefined(Exit.findErrorOption(exit)),
  printed: String(failureOf(exit))
})

const tagOf = (error: unknown) =>
  typeof error === "object" && error !== null && "_tag" in error ? String(error._tag) : undefined

describe("hostile WebSocket peers over real sockets", () => {
  it.live("issue 20: 4000 (superseded) carrying the key is Superseded at once, never retried, the key scrubbed", () =>
    Effect.gen(function*() {
      const { connections, exit } = yield* watch((socket) => socket.close(4000, `superseded: ${KEY}`))
      const { error, printed } = ended(exit)
      assert.strictEqual(tagOf(error), "Superseded")
      assert.include(JSON.stringify(error), "superseded: ", "the reason is kept, scrubbed")
      assert.strictEqual(connections, 1)
      assert.notInclude(printed, KEY)
      assert.notInclude(JSON.stringify(error), KEY)
    }))

  it.live("U08 U12 a rejection (1008) carrying the key is HandshakeRejected at once, the reason scrubbed", () =>
    Effect.gen(function*() {
      const { connections, exit } = yield* watch((socket) => socket.close(1008, `bad key ${KEY}`))
      const { error, printed } = ended(exit)
      assert.strictEqual(tagOf(error), "HandshakeRejected")
      assert.include(JSON.stringify(error), "bad key ", "the reason is kept, scrubbed")
      assert.strictEqual(connections, 1)
      assert.notInclude(printed, KEY)
      assert.notInclude(JSON.stringify(error), KEY)
    }))

  it.live("U09 a malformed frame echoing the key is MalformedFrame, the raw frame scrubbed", () =>
    Effect.gen(function*() {
      const { connections, exit } = yield* watch((socket) => socket.send(`{"event":"started","data":{"key":"${KEY}"`))
      const { error, printed } = ended(exit)
      assert.strictEqual(tagOf(error), "MalformedFrame")
      assert.include(JSON.stringify(error), "started", "the raw frame is kept, scrubbed")
      assert.strictEqual(connections, 1)
      assert.notInclude(printed, KEY)
      assert.notInclude(JSON.stringify(error), KEY)
    }))

  it.live("U22 a real 3 MiB frame with maxFrameSize 64 KiB is FrameTooLarge (limit 65536), not retried", () =>
    Effect.gen(function*() {
      const big = JSON.stringify({ event: "thoughts_and_memories", data: { thought: "x".repeat(3 * 1024 * 1024), memory: "" } })
      const { connections, exit } = yield* watch((socket) => socket.send(big), { maxFrameSize: 64 * 1024 })
      const { error } = ended(exit)
      assert.strictEqual(tagOf(error), "FrameTooLarge")
      assert.strictEqual(
        typeof error === "object" && error !== null && "limit" in error ? error.limit : undefined,
        64 * 1024
      )
      assert.strictEqual(connections, 1)
    }))

  it.live("U17 a close with 1000 before complete ends the stream without an error, no reconnect", () =>
    Effect.gen(function*() {
      const { connections, exit } = yield* watch((socket) => {
        socket.send(JSON.stringify({ event: "started", data: { sessionId: SESSION, start_url: "https://example.com" } }))
        socket.close(1000, "done")
      })
      assert.isTrue(Exit.isSuccess(exit), String(failureOf(exit)))
      assert.strictEqual(connections, 1)
    }))
})
