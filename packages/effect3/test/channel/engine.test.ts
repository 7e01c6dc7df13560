/**
 * The engine's use of the loop (binding/internal/channel/engine.ts): an attempt that opened counts as
 * open for the loop (its state, its reconnect count, which schedule governs it) even when it had
 * already ended (opened, delivered and dropped in one go) by the time the loop's fiber woke up.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"
import * as Tracer from "effect/Tracer"
import type * as EventStream from "../../src/EventStream.js"
import { awaitSocket, settle } from "../shared/FakeWebSocket.js"
import { action, collect, completeFrame, makeSetup, startedFrame, tags } from "../shared/events.js"

const SESSION = "session-engine"
const setup = makeSetup("sk-engine-test-key")

describe("engine", () => {
  it.scoped("an attempt that opened, delivered and dropped before the loop woke is open: reconnected, not NeverConnected", () =>
    Effect.gen(function*() {
      const { server, service } = yield* setup()
      const connection = yield* service.connect(SESSION)
      const states: Array<EventStream.ConnectionState> = []
      yield* Effect.fork(Stream.runForEach(connection.state.changes, (state) => Effect.sync(() => states.push(state))))
      const fiber = yield* collect(connection)
      // Three connections that open, deliver a new event and drop, each within one callback turn
      // (the default firstConnect schedule allows three tries in all).
      for (let n = 1; n <= 3; n++) {
        const socket = yield* awaitSocket(server, n)
        socket.open()
        socket.message(n === 1 ? startedFrame(SESSION) : action(n))
        socket.serverClose(1006)
        yield* settle()
        yield* TestClock.adjust("1 second")
      }
      const fourth = yield* awaitSocket(server, 4)
      fourth.open()
      yield* settle()
      fourth.message(completeFrame(SESSION))
      const results = yield* Fiber.join(fiber)
      assert.deepStrictEqual(tags(results), ["Started", "ActionRun", "ActionRun", "Complete"])
      yield* settle()
      const opens = states.flatMap((state) => state._tag === "Open" ? [state.reconnects] : [])
      assert.deepStrictEqual(opens, [0, 1, 2, 3], "every opening is reported, and counted")
    }))

  it.scoped("under a tracer it is given, a connection has its two spans (sessionId, url, attempt), the key in none", () =>
    Effect.gen(function*() {
      const builtIn = yield* Effect.tracer
      const spans: Array<Tracer.Span> = []
      const tracer = Tracer.make({
        span: (name, parent, context, links, startTime, kind, options) => {
          const span = builtIn.span(name, parent, context, links, startTime, kind, options)
          spans.push(span)
          return span
        },
        context: (f, fiber) => builtIn.context(f, fiber)
      })
      const { server, service } = yield* setup()
      const connection = yield* service.connect(SESSION)
      const fiber = yield* collect(connection).pipe(Effect.withTracer(tracer))
      const socket = yield* awaitSocket(server, 1)
      socket.open()
      socket.message(startedFrame(SESSION), completeFrame(SESSION))
      assert.deepStrictEqual(tags(yield* Fiber.join(fiber)), ["Started", "Complete"])
      const [connectionSpan, attemptSpan] = ["EventStream.connection", "EventStream.attempt"].map((name) =>
        spans.find((span) => span.name === name)
      )
      assert.isDefined(connectionSpan)
      assert.isDefined(attemptSpan)
      assert.strictEqual(connectionSpan?.attributes.get("sessionId"), SESSION)
      assert.strictEqual(attemptSpan?.attributes.get("attempt"), 1)
      assert.strictEqual(attemptSpan?.parent._tag === "Some" ? attemptSpan.parent.value.spanId : "", connectionSpan?.spanId)
      assert.strictEqual(attemptSpan?.status._tag, "Ended")
      for (const span of spans) {
        assert.notInclude(JSON.stringify([...span.attributes.entries()]), "sk-engine-test-key")
      }
    }))

  it.scoped("a socket paused while it was connecting is paused again once open (ws ignores pause() until open)", () =>
    Effect.gen(function*() {
      const { server, service } = yield* setup({ bufferSize: 2 })
      // Like `ws`: pause() does nothing while the socket is still connecting.
      server.onCreate = (socket) => {
        const pause = socket.pause.bind(socket)
        socket.pause = () => {
          if (socket.readyState !== 0) pause()
        }
      }
      const connection = yield* service.connect(SESSION)
      // A consumer that takes the first chunk and then never pulls again.
      yield* Effect.fork(Stream.runForEach(connection.events, () => Effect.never))
      const first = yield* awaitSocket(server, 1)
      first.open()
      first.message(startedFrame(SESSION))
      yield* settle()
      first.message(action(1), action(2), action(3))
      yield* settle()
      assert.isTrue(first.paused, "the full buffer paused the first socket")
      first.serverClose(1006)
      yield* settle()
      yield* TestClock.adjust("1 second")
      const second = yield* awaitSocket(server, 2)
      assert.isFalse(second.paused, "a connecting socket ignores pause()")
      second.open()
      yield* settle()
      assert.isTrue(second.paused, "the buffer is still full: the open socket must not read")
    }))
})
