/**
 * Hostile WebSocket peers over real sockets: a `ws` server on 127.0.0.1, port 0, that answers the
 * documented handshake the way a hostile or broken service would (close codes carrying the key,
 * frames echoing it, a frame far over the limit), against the SDK's `ws` constructor. Each case:
 * the typed error at once, not retried (one connection), and the key in none of it. And an HTTP
 * server that never answers an answer's `POST` (Server-Sent Events, observed dialect): the wait is
 * bounded. The Effect 3 edition's `test/hostile/sdk-ws.test.ts` and `sdk-sse.test.ts` cases that
 * matter most.
 */
import { assert, describe, it } from "@effect/vitest"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as Fiber from "effect/Fiber"
import * as Result from "effect/Result"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as Http from "node:http"
import type * as Net from "node:net"
import { type WebSocket as WsSocket, WebSocketServer } from "ws"
import * as Answer from "../../src/Answer.js"
import * as Credentials from "../../src/Credentials.js"
import * as Dialect from "../../src/Dialect.js"
import * as EventStream from "../../src/EventStream.js"
import * as WebSocket from "../../src/internal/webSocket.js"
import { requestData } from "../helpers/events.js"
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

const sse = (event: string, data: unknown) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`
const opening = sse("started", { sessionId: SESSION, start_url: "https://example.com" }) +
  sse("external_resource_requested", requestData("as-1"))

/** An HTTP server for the SSE transport: `GET`s open an event stream, `POST`s go to `onPost`. */
const sseServer = (onPost: (request: Http.IncomingMessage, response: Http.ServerResponse, index: number) => void) =>
  Effect.acquireRelease(
    Effect.callback<{ readonly baseUrl: string; readonly gets: () => number; readonly posts: () => number; readonly server: Http.Server; readonly sockets: Set<Net.Socket> }>(
      (resume) => {
        let gets = 0
        let posts = 0
        const sockets = new Set<Net.Socket>()
        const server = Http.createServer((request, response) => {
          if (request.method === "GET") {
            gets += 1
            response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
            response.write(gets === 1 ? opening : "")
            return
          }
          onPost(request, response, posts++)
        })
        server.on("connection", (socket: Net.Socket) => {
          sockets.add(socket)
          socket.on("close", () => sockets.delete(socket))
        })
        server.listen(0, "127.0.0.1", () => {
          const address = server.address()
          const port = typeof address === "object" && address !== null ? address.port : 0
          resume(Effect.succeed({ baseUrl: `http://127.0.0.1:${port}`, gets: () => gets, posts: () => posts, server, sockets }))
        })
      }
    ),
    ({ server, sockets }) =>
      Effect.callback<void>((resume) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resume(Effect.void))
      })
  )

const sseLayer = (baseUrl: string, answerTimeout: Duration.Input) =>
  EventStream.layerSse({ url: baseUrl, dialect: Dialect.observed, reconnect: quick, answerTimeout }).pipe(
    Layer.provide(Layer.merge(Credentials.layer({ apiKey: KEY }), NodeHttpClient.layerUndici))
  )

/** Answers every request of the connection with a denial, as the events arrive. */
const answerEvery = (connection: EventStream.Connection) =>
  Stream.runForEach(connection.events, (event) =>
    event._tag === "ExternalResourceRequested"
      ? Effect.ignore(connection.respond(event, Answer.deny()))
      : Effect.void).pipe(Effect.ignore)

describe("a hostile HTTP peer of the SSE transport: an answer POST never answered", () => {
  it.live("U16 close returns within the answer time-out; the answer is reported unsent", () =>
    Effect.gen(function*() {
      const server = yield* sseServer((request) => request.resume())
      const { closeMillis, state } = yield* Effect.gen(function*() {
        const channel = yield* EventStream.EventStream
        const connection = yield* channel.connect(SESSION)
        const consumer = yield* Effect.forkChild(answerEvery(connection))
        while (server.posts() === 0) yield* Effect.sleep("10 millis")
        const start = Date.now()
        yield* connection.close
        const closeMillis = Date.now() - start
        yield* Fiber.join(consumer)
        return { closeMillis, state: yield* SubscriptionRef.get(connection.state) }
      }).pipe(Effect.scoped, Effect.provide(sseLayer(server.baseUrl, "500 millis")), Effect.timeout("20 seconds"))
      assert.isBelow(closeMillis, 10_000, "close is bounded by the answer time-out")
      assert.deepStrictEqual(
        state,
        EventStream.ConnectionState.Closed({
          reason: "closed-by-caller",
          unsent: [{ actionSessionId: "as-1", resourceType: "request_user_input" }]
        })
      )
    }))

  it.live("U16 an answer POST never answered times out and is sent again after the reconnect", () =>
    Effect.gen(function*() {
      const server = yield* sseServer((request, response, index) => {
        request.resume()
        // The first is never answered; the second is accepted.
        if (index > 0) request.on("end", () => response.writeHead(202).end("{}"))
      })
      const result = yield* Effect.gen(function*() {
        const channel = yield* EventStream.EventStream
        const connection = yield* channel.connect(SESSION)
        yield* Effect.forkScoped(answerEvery(connection))
        while (server.posts() < 2) yield* Effect.sleep("10 millis")
      }).pipe(Effect.scoped, Effect.provide(sseLayer(server.baseUrl, "300 millis")), Effect.timeout("20 seconds"), Effect.result)
      assert.isTrue(Result.isSuccess(result), String(result))
      assert.strictEqual(server.posts(), 2, "written again after the time-out")
      assert.isAtLeast(server.gets(), 2, "the connection was reopened")
    }))
})
