/**
 * `Connection.drain` under the `TestClock`: the engine over a fake socket like the `ws`
 * package's (`shared/FakeWebSocket.ts`, `FakeWsSocket`: it reads on while it closes), and over
 * one that cannot (a standard `WebSocket`: drain is close). The rule is the core's
 * (`Connection.drain`): the drained attempt is the last, its end the caller's close, bound by a
 * 10 s grace.
 */
import { assert, describe } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Credentials from "../../src/Credentials.js"
import * as EventStream from "../../src/EventStream.js"
import { awaitSocket, type FakeServer, layerFake, makeFakeServer, settle } from "./FakeWebSocket.js"
import {
  action,
  collect,
  complete,
  fast,
  KEY,
  makeSetup,
  SESSION,
  started,
  stateOf,
  tags,
  URL_BASE
} from "./events.js"
import { forkChild, pollNow, scoped, type Success, TestClock } from "../helpers/line.js"

/** The event channel over sockets like `ws`'s. */
const wsSetup = (): Effect.Effect<{ readonly server: FakeServer; readonly service: EventStream.Service }> =>
  Effect.gen(function*() {
    const server = makeFakeServer()
    const service = yield* EventStream.make({ url: URL_BASE, reconnect: fast(5) }).pipe(
      Effect.provide(Layer.merge(layerFake(server, { ws: true }), Credentials.layer({ apiKey: KEY })))
    )
    return { server, service }
  })

/** A connection whose first socket is open with `Started` read, its events collected, and its `drain` forked. */
const draining = (setup: Effect.Effect<{ readonly server: FakeServer; readonly service: EventStream.Service }>) =>
  Effect.gen(function*() {
    const { server, service } = yield* setup
    const connection = yield* service.connect(SESSION)
    const events = yield* collect(connection)
    const socket = yield* awaitSocket(server, 1)
    socket.open()
    socket.message(started)
    yield* settle()
    const drained = yield* forkChild(connection.drain)
    yield* settle()
    return { server, connection, events, socket, drained }
  })

type Drained = Success<ReturnType<typeof draining>>

/** The drain returned, the events ended with `expected`, the connection closed by its caller, and no reconnect followed. */
const endedByCaller = (run: Drained, expected: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    yield* Fiber.join(run.drained)
    assert.deepStrictEqual(tags(yield* Fiber.join(run.events)), expected)
    assert.deepStrictEqual(yield* stateOf(run.connection), EventStream.ConnectionState.Closed({ reason: "closed-by-caller" }))
    yield* TestClock.adjust("1 minute")
    yield* settle()
    assert.strictEqual(run.server.sockets.length, 1, "no reconnect")
  })

describe("EventStream: drain", () => {
  scoped("frames sent before the service's close arrive; its close ends the connection as the caller's, no reconnect", () =>
    Effect.gen(function*() {
      const run = yield* draining(wsSetup())
      const { drained, socket } = run
      assert.strictEqual(socket.closedByClientWith, 1000, "the close is sent")
      assert.isUndefined(pollNow(drained), "drain waits for the service's close")
      // The service had sent these before it saw the close: they are read.
      socket.message(action(1), action(2))
      socket.serverClose(1000)
      yield* endedByCaller(run, ["Started", "ActionRun", "ActionRun"])
    }))

  scoped("a second drain while the first waits waits too (no close of its own)", () =>
    Effect.gen(function*() {
      const run = yield* draining(wsSetup())
      const again = yield* forkChild(run.connection.drain)
      yield* settle()
      assert.isUndefined(pollNow(again), "the second drain waits too")
      run.socket.message(action(1))
      run.socket.serverClose(1000)
      yield* Fiber.join(again)
      yield* endedByCaller(run, ["Started", "ActionRun"])
    }))

  scoped("a drop while draining ends it as the caller's close too, without a reconnect", () =>
    Effect.gen(function*() {
      const run = yield* draining(wsSetup())
      run.socket.message(action(1))
      run.socket.serverClose(1006)
      yield* endedByCaller(run, ["Started", "ActionRun"])
    }))

  scoped("an end the service decided itself stays what it is (complete)", () =>
    Effect.gen(function*() {
      const { connection, drained, events, socket } = yield* draining(wsSetup())
      socket.message(action(1), complete)
      socket.serverClose(1000)
      yield* Fiber.join(drained)
      assert.deepStrictEqual(tags(yield* Fiber.join(events)), ["Started", "ActionRun", "Complete"])
      assert.deepStrictEqual(yield* stateOf(connection), EventStream.ConnectionState.Closed({ reason: "complete" }))
    }))

  scoped("no close within 10 s: the connection ends at the grace's end, as the caller's close", () =>
    Effect.gen(function*() {
      const run = yield* draining(wsSetup())
      const { connection, drained, socket } = run
      socket.message(action(1))
      yield* TestClock.adjust("9999 millis")
      yield* settle()
      assert.isUndefined(pollNow(drained), "still waiting before 10 s")
      assert.strictEqual((yield* stateOf(connection))._tag, "Open")
      yield* TestClock.adjust("1 millis")
      yield* endedByCaller(run, ["Started", "ActionRun"])
    }))

  scoped("a socket that cannot read on while closing (a standard WebSocket): drain is close", () =>
    Effect.gen(function*() {
      const run = yield* draining(makeSetup(KEY)())
      yield* endedByCaller(run, ["Started"])
      assert.strictEqual(run.socket.closedByClientWith, 1000)
    }))

  scoped("a connection not open yet: drain is close", () =>
    Effect.gen(function*() {
      const { server, service } = yield* wsSetup()
      const connection = yield* service.connect(SESSION)
      const events = yield* collect(connection)
      const socket = yield* awaitSocket(server, 1)
      yield* connection.drain
      assert.deepStrictEqual(tags(yield* Fiber.join(events)), [])
      assert.deepStrictEqual(yield* stateOf(connection), EventStream.ConnectionState.Closed({ reason: "closed-by-caller" }))
      assert.strictEqual(socket.closedByClientWith, 1000)
    }))
})
