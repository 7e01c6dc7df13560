/**
 * Issue 15 target 1: at most two fibers per idle open session, the caller's consumer and at most
 * one of the SDK's. Counted, not assumed: every fiber forked while the sessions are opened is
 * tracked by a `Supervisor`, over real sockets (the SDK's `ws` constructor against a `ws` server
 * on port 0 that completes the handshake, sends `started`, then stays silent).
 *
 * The caller's consumer is itself two fibers on Effect 3: `Stream.runForEach` (every `Stream.run*`)
 * forks the channel executor into a fiber of its own (effect `channelExecutor.ts`, `runIn`). So
 * the consumer is measured the same way over a bare `Mailbox` stream (the bench's floor), and the
 * SDK's share is the difference. The SDK keeps no fiber of its own per idle session when none is
 * needed: frames go from the socket's callback into the buffer the consumer pulls, and the
 * connection's loop runs a step in a fiber only while it has something to do.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Mailbox from "effect/Mailbox"
import * as Stream from "effect/Stream"
import * as Supervisor from "effect/Supervisor"
import { type WebSocket as WsSocket, WebSocketServer } from "ws"
import * as Credentials from "../../src/Credentials.js"
import * as EventStream from "../../src/EventStream.js"
import * as WebSocket from "../../src/internal/webSocket.js"

/** A server that sends `started` after the documented handshake, then nothing. */
const silentServer = Effect.acquireRelease(
  Effect.async<WebSocketServer>((resume) => {
    const server: WebSocketServer = new WebSocketServer(
      { host: "127.0.0.1", port: 0 },
      (): void => resume(Effect.succeed(server))
    )
    server.on("connection", (socket: WsSocket) => {
      socket.once("message", () =>
        socket.send(JSON.stringify({ event: "started", data: { sessionId: "s", start_url: "https://example.com" } }))
      )
    })
  }),
  (server) =>
    Effect.async<void>((resume) => {
      for (const client of server.clients) client.terminate()
      server.close(() => resume(Effect.void))
    })
)

const portOf = (server: WebSocketServer): number => {
  const address = server.address()
  return typeof address === "object" && address !== null ? address.port : 0
}

/** Opens `count` sessions, each drained by its own consumer, and counts the live fibers once all are idle. */
const liveFibersWith = (count: number) =>
  Effect.scoped(Effect.gen(function*() {
    const server = yield* silentServer
    const supervisor = yield* Supervisor.track
    const layer = EventStream.layer({ url: `ws://127.0.0.1:${portOf(server)}` }).pipe(
      Layer.provide(Layer.merge(Credentials.layer({ apiKey: "sk-fibers" }), WebSocket.layer()))
    )
    const opened = yield* Effect.gen(function*() {
      const events = yield* EventStream.EventStream
      const firsts: Array<Deferred.Deferred<void>> = []
      for (let i = 0; i < count; i++) {
        const first = yield* Deferred.make<void>()
        firsts.push(first)
        yield* Effect.forkScoped(
          Stream.runForEach(events.events(`session-${i}`), () => Deferred.succeed(first, undefined))
        )
      }
      for (const first of firsts) yield* Deferred.await(first)
    }).pipe(Effect.provide(layer), Effect.supervised(supervisor), Effect.timeout("30 seconds"), Effect.either)
    assert.isTrue(opened._tag === "Right", "the sessions did not open")
    // Let every fiber that was only passing through (an open, a state update) end.
    yield* Effect.sleep("100 millis")
    const fibers = yield* supervisor.value
    return fibers.length
  }))

/** The same consumer over a bare `Mailbox` stream that has delivered one event: the floor. */
const floorFibersWith = (count: number) =>
  Effect.scoped(Effect.gen(function*() {
    const supervisor = yield* Supervisor.track
    yield* Effect.gen(function*() {
      for (let i = 0; i < count; i++) {
        const mailbox = yield* Mailbox.make<number>()
        yield* mailbox.offer(1)
        const first = yield* Deferred.make<void>()
        yield* Effect.forkScoped(Stream.runForEach(Mailbox.toStream(mailbox), () => Deferred.succeed(first, undefined)))
        yield* Deferred.await(first)
      }
    }).pipe(Effect.supervised(supervisor))
    yield* Effect.sleep("100 millis")
    return (yield* supervisor.value).length
  }))

describe("fibers per idle open session (issue 15)", () => {
  it.live("at most two per session (the consumer and at most one of the SDK's), plus the shared timer's", () =>
    Effect.gen(function*() {
      const consumer = ((yield* floorFibersWith(40)) - (yield* floorFibersWith(10))) / 30
      const few = yield* liveFibersWith(10)
      const many = yield* liveFibersWith(40)
      const perSession = (many - few) / 30
      assert.strictEqual(consumer, 2, "a Stream consumer on Effect 3: the caller's fiber and the channel executor's")
      // Each session: its consumer and at most one fiber of the SDK's (none while idle).
      assert.isAtMost(perSession - consumer, 1, `10 sessions: ${few} fibers, 40 sessions: ${many} fibers`)
      assert.isAtLeast(perSession - consumer, 0, `10 sessions: ${few} fibers, 40 sessions: ${many} fibers`)
      // The service's one shared timer (its fiber and its sleep race: 3) does not grow with the sessions.
      assert.isAtMost(few - perSession * 10, 3, `fibers not per session: ${few - perSession * 10}`)
    }))
})
