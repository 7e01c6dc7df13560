/**
 * Pinned engine behaviours (issue 16): each test here failed against a deliberately planted bug
 * that the rest of the suite let through. The bug each one guards is named in its title; the
 * table in test/README.md lists the plants and how to repeat the check (test/mutants/).
 */
import { assert, describe, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as TestClock from "effect/TestClock"
import * as Answer from "../src/Answer.js"
import * as Credentials from "../src/Credentials.js"
import * as Dialect from "../src/Dialect.js"
import * as EventStream from "../src/EventStream.js"
import * as internal from "../binding/internal/eventStream.js"
import * as Wire from "../src/Wire.js"
import { awaitSocket, layerFake, makeFakeServer, settle } from "./shared/FakeWebSocket.js"
import {
  action,
  collect,
  completeFrame,
  connected,
  failureOf,
  fast,
  heartbeat,
  makeSetup,
  receivedRequest,
  request,
  startedFrame,
  tags,
  URL_BASE,
  withLogs
} from "./shared/events.js"

const KEY = "sk-pinned-test-key-7f3a"
const SESSION = "session-pin"

const started = startedFrame(SESSION)
const complete = completeFrame(SESSION)
const setup = makeSetup(KEY)

/**
 * The observed dialect's first socket opened, request `as-1` delivered and answered with `answer`
 * (the answer written on that socket).
 */
const answeredOnFirstSocket = (answer: Answer.Answer) =>
  Effect.gen(function*() {
    const { server, service } = yield* setup({ dialect: Dialect.observed })
    const connection = yield* service.connect(SESSION)
    const fiber = yield* collect(connection)
    const first = yield* awaitSocket(server, 1)
    first.open()
    first.message(request("as-1"))
    yield* settle()
    yield* connection.respond(receivedRequest("as-1"), answer)
    yield* settle()
    return { fiber, first, server }
  })

describe("EventStream (pinned behaviours, issue 16)", () => {
  describe("a close reason that echoes the key", () => {
    // Guards: the key no longer scrubbed from the WebSocket close reason (socketOutcome).
    it.scoped("U12 a 1008 close whose reason echoes the key: HandshakeRejected.reason says <redacted>", () =>
      Effect.gen(function*() {
        const lines: Array<string> = []
        const error = yield* withLogs(
          lines,
          Effect.gen(function*() {
            const { server, service } = yield* setup()
            const connection = yield* service.connect(SESSION)
            const fiber = yield* collect(connection)
            const socket = yield* awaitSocket(server, 1)
            socket.open()
            yield* settle()
            socket.serverClose(1008, `bad key ${KEY}`)
            return failureOf(yield* Fiber.join(fiber))
          })
        )
        assert.strictEqual(error._tag, "HandshakeRejected")
        if (error._tag === "HandshakeRejected") {
          assert.strictEqual(error.code, 1008)
          assert.strictEqual(error.reason, "bad key <redacted>")
        }
        assert.notInclude(error.message, KEY)
        assert.notInclude(JSON.stringify(error), KEY)
        for (const line of lines) assert.notInclude(line, KEY)
      }))

    // Guards: the key no longer scrubbed from the WebSocket close reason (socketOutcome).
    it.scoped("U22 1011 then 4999 closes whose reason echoes the key: state, ConnectionLost.lastError and logs say <redacted>", () =>
      Effect.gen(function*() {
        const lines: Array<string> = []
        const { error, states } = yield* withLogs(
          lines,
          Effect.gen(function*() {
            const { server, service } = yield* setup({ reconnect: fast(1) })
            const connection = yield* service.connect(SESSION)
            const seen: Array<EventStream.ConnectionState> = []
            yield* Effect.fork(Stream.runForEach(connection.state.changes, (s) => Effect.sync(() => seen.push(s))))
            const fiber = yield* collect(connection)
            const first = yield* awaitSocket(server, 1)
            first.open()
            yield* settle()
            first.serverClose(1011, `restarting; your key ${KEY} is fine`)
            yield* settle()
            const reconnecting = yield* SubscriptionRef.get(connection.state)
            yield* TestClock.adjust("250 millis")
            const second = yield* awaitSocket(server, 2)
            second.open()
            yield* settle()
            second.serverClose(4999, `going away (${KEY})`)
            const error = failureOf(yield* Fiber.join(fiber))
            yield* settle()
            return { error, states: [reconnecting, ...seen] }
          })
        )
        assert.deepStrictEqual(
          states[0],
          EventStream.ConnectionState.Reconnecting({
            attempt: 1,
            lastError: "closed with code 1011: restarting; your key <redacted> is fine"
          })
        )
        assert.strictEqual(error._tag, "ConnectionLost")
        if (error._tag === "ConnectionLost") {
          assert.strictEqual(error.attempts, 2)
          assert.strictEqual(error.lastError, "closed with code 4999: going away (<redacted>)")
        }
        for (const state of states) assert.notInclude(JSON.stringify(state), KEY)
        assert.notInclude(JSON.stringify(error), KEY)
        assert.isTrue(lines.some((line) => line.includes("<redacted>")), lines.join("\n"))
        for (const line of lines) assert.notInclude(line, KEY)
      }))
  })

  describe("idle time-out during back-pressure", () => {
    // Guards: the idle timer no longer skipping a socket paused because the buffer is full.
    // A slow consumer is not the service's silence: the one socket is kept.
    it.scoped("U22 bufferSize 2 and a consumer blocked for 62 s: no idle time-out, no reconnect, nothing lost", () =>
      Effect.gen(function*() {
        const { server, service } = yield* setup({ bufferSize: 2 })
        const connection = yield* service.connect(SESSION)
        const firstSeen = yield* Deferred.make<void>()
        const fiber = yield* connection.events.pipe(
          Stream.mapEffect((event) =>
            event._tag === "Started"
              ? Deferred.succeed(firstSeen, undefined).pipe(Effect.zipRight(Effect.sleep("62 seconds")), Effect.as(event._tag))
              : Effect.succeed(event._tag)
          ),
          Stream.runCollect,
          Effect.map(Chunk.toReadonlyArray),
          Effect.fork
        )
        const socket = yield* awaitSocket(server, 1)
        socket.open()
        socket.message(started)
        yield* Deferred.await(firstSeen)
        // The consumer is blocked: these fill the buffer (2) and the rest waits in the socket.
        socket.message(action(1), action(2), action(3), action(4), action(5))
        yield* settle()
        assert.isTrue(socket.paused, "reading is paused while the buffer is full")
        for (let second = 0; second < 61; second++) {
          yield* TestClock.adjust("1 second")
          yield* settle(5)
        }
        assert.strictEqual(server.sockets.length, 1, "no second socket while the consumer is slow")
        assert.isUndefined(socket.closedByClientWith, "the paused socket is not dropped")
        assert.strictEqual((yield* SubscriptionRef.get(connection.state))._tag, "Open")
        // The consumer wakes at 62 s; reading resumes and everything arrives on the one socket.
        yield* TestClock.adjust("1 second")
        yield* settle()
        socket.message(complete)
        const results = yield* Fiber.join(fiber)
        assert.deepStrictEqual(results, [
          "Started",
          "ActionRun",
          "ActionRun",
          "ActionRun",
          "ActionRun",
          "ActionRun",
          "Complete"
        ])
        assert.strictEqual(server.sockets.length, 1)
      }))

    // The other side of the same rule: once reading resumes, silence counts again from then.
    it.scoped("U22 after back-pressure ends, 60 s of silence still times out (from the resume, not before)", () =>
      Effect.gen(function*() {
        const { server, service } = yield* setup({ bufferSize: 2 })
        const connection = yield* service.connect(SESSION)
        const release = yield* Deferred.make<void>()
        const firstSeen = yield* Deferred.make<void>()
        yield* connection.events.pipe(
          Stream.mapEffect((event) =>
            event._tag === "Started"
              ? Effect.zipRight(Deferred.succeed(firstSeen, undefined), Deferred.await(release))
              : Effect.void
          ),
          Stream.runDrain,
          Effect.fork
        )
        const socket = yield* awaitSocket(server, 1)
        socket.open()
        socket.message(started)
        yield* Deferred.await(firstSeen)
        socket.message(action(1), action(2), action(3))
        yield* settle()
        assert.isTrue(socket.paused)
        yield* TestClock.adjust("100 seconds")
        yield* settle()
        assert.strictEqual(server.sockets.length, 1)
        yield* Deferred.succeed(release, undefined)
        yield* settle()
        assert.isFalse(socket.paused, "reading resumed")
        yield* TestClock.adjust("59 seconds")
        yield* settle()
        assert.isUndefined(socket.closedByClientWith, "not idle yet: 59 s since the resume")
        yield* TestClock.adjust("1 second")
        yield* settle()
        assert.isDefined(socket.closedByClientWith, "idle: the silent socket is dropped")
        const state = yield* SubscriptionRef.get(connection.state)
        assert.strictEqual(state._tag, "Reconnecting")
        if (state._tag === "Reconnecting") assert.include(state.lastError, "idle")
      }))
  })

  describe("answers are confirmed by progress, not by keep-alives", () => {
    for (const [name, keepAlive] of [["heartbeat", heartbeat], ["connected", connected]] as const) {
      // Guards: a `heartbeat` (or `connected`) counted as proof that earlier answers got through.
      it.scoped(`U16 an answer followed only by a ${name} and an abrupt drop is re-sent on the next socket`, () =>
        Effect.gen(function*() {
          const { fiber, first, server } = yield* answeredOnFirstSocket(Answer.grant("jane@example.com"))
          assert.strictEqual(first.sent.length, 1, "the answer was written on the first socket")
          first.message(keepAlive)
          yield* settle()
          first.serverClose(1006)
          yield* settle()
          yield* TestClock.adjust("250 millis")
          const second = yield* awaitSocket(server, 2)
          second.open()
          yield* settle()
          assert.deepStrictEqual(
            second.sent.map((s) => {
              const data = JSON.parse(s).data
              return [data.action_session_id, data.input]
            }),
            [["as-1", "jane@example.com"]],
            "the unconfirmed answer is written again"
          )
          second.message(action(1), complete)
          assert.deepStrictEqual(tags(yield* Fiber.join(fiber)), [
            "ExternalResourceRequested",
            name === "heartbeat" ? "Heartbeat" : "Connected",
            "ActionRun",
            "Complete"
          ])
        }))
    }

    // The other direction: a progress frame after the write confirms it; not sent twice.
    it.scoped("U16 an answer followed by a progress frame is confirmed: not re-sent after a drop", () =>
      Effect.gen(function*() {
        const { fiber, first, server } = yield* answeredOnFirstSocket(Answer.deny())
        first.message(heartbeat, action(1))
        yield* settle()
        first.serverClose(1006)
        yield* settle()
        yield* TestClock.adjust("250 millis")
        const second = yield* awaitSocket(server, 2)
        second.open()
        yield* settle()
        assert.deepStrictEqual(second.sent, [])
        second.message(complete)
        yield* Fiber.join(fiber)
      }))
  })

  describe("keep-alives reset the idle clock (issue 20)", () => {
    // Guards: only events that are not keep-alives reset the idle clock, so a connection that
    // receives only heartbeats is dropped and reopened every idle time-out.
    it.scoped("U22 a connection that receives only heartbeat frames (every 30 s) stays on one socket past the idle time-out", () =>
      Effect.gen(function*() {
        const { server, service } = yield* setup({ dialect: Dialect.observed })
        const connection = yield* service.connect(SESSION)
        const fiber = yield* collect(connection)
        const socket = yield* awaitSocket(server, 1)
        socket.open()
        socket.message(connected, started)
        yield* settle()
        // Five minutes of heartbeats, 30 s apart: five idle time-outs' worth.
        for (let n = 0; n < 10; n++) {
          yield* TestClock.adjust("30 seconds")
          socket.message(heartbeat)
          yield* settle()
        }
        assert.strictEqual(server.sockets.length, 1, "one socket all along")
        assert.isUndefined(socket.closedByClientWith, "never dropped as idle")
        assert.strictEqual((yield* SubscriptionRef.get(connection.state))._tag, "Open")
        socket.message(complete)
        const results = yield* Fiber.join(fiber)
        assert.strictEqual(tags(results).filter((tag) => tag === "Heartbeat").length, 10)
      }))

    it.scoped("U22 the idle time-out still counts from the last keep-alive: 60 s of silence after it reconnects", () =>
      Effect.gen(function*() {
        const { server, service } = yield* setup({ dialect: Dialect.observed })
        const connection = yield* service.connect(SESSION)
        yield* collect(connection)
        const socket = yield* awaitSocket(server, 1)
        socket.open()
        socket.message(connected)
        yield* TestClock.adjust("30 seconds")
        socket.message(heartbeat)
        yield* settle()
        yield* TestClock.adjust("59 seconds")
        yield* settle()
        assert.isUndefined(socket.closedByClientWith)
        yield* TestClock.adjust("1 second")
        yield* settle()
        assert.isDefined(socket.closedByClientWith, "idle: dropped 60 s after the heartbeat")
      }))
  })

  describe("mutants that survived the suite (test/README.md)", () => {
    for (const [what, frames] of [["no frame", []], ["only a heartbeat", [heartbeat]], ["only connected", [connected]]] as const) {
      // Guards: the reconnect bout restarted by a socket that merely opened, or by a keep-alive.
      it.scoped(`U22 a server that accepts and drops every connection (${what}) exhausts the schedule: ConnectionLost`, () =>
        Effect.gen(function*() {
          const { server, service } = yield* setup({ reconnect: fast(2) })
          const connection = yield* service.connect(SESSION)
          const fiber = yield* collect(connection)
          for (let n = 1; n <= 3; n++) {
            const socket = yield* awaitSocket(server, n)
            socket.open()
            socket.message(...frames)
            yield* settle()
            socket.serverClose(1006)
            yield* settle()
            yield* TestClock.adjust("10 seconds")
          }
          yield* settle()
          assert.strictEqual(server.sockets.length, 3, "no fourth attempt")
          const error = failureOf(yield* Fiber.join(fiber))
          assert.strictEqual(error._tag, "ConnectionLost")
          if (error._tag === "ConnectionLost") assert.strictEqual(error.attempts, 3)
          assert.deepStrictEqual(
            yield* SubscriptionRef.get(connection.state),
            EventStream.ConnectionState.Closed({ reason: "connection-lost" })
          )
        }))
    }

    // Guards: the bound of a positive option off by one (0 taken as a size instead of the default).
    it("a bufferSize or answerBufferSize of 0 falls back to the default; 1 and fractions are kept (floored)", () => {
      const zero = internal.resolveSettings({}, { bufferSize: 0, answerBufferSize: 0, maxFrameSize: 0 })
      assert.deepStrictEqual([zero.bufferSize, zero.answerBufferSize, zero.maxFrameSize], [1024, 64, Wire.defaultMaxFrameSize])
      const odd = internal.resolveSettings({ bufferSize: -3 }, { answerBufferSize: Number.NaN })
      assert.deepStrictEqual([odd.bufferSize, odd.answerBufferSize], [1024, 64])
      const one = internal.resolveSettings({ bufferSize: 7 }, { bufferSize: 1, answerBufferSize: 2.9 })
      assert.deepStrictEqual([one.bufferSize, one.answerBufferSize], [1, 2])
    })

    // Guards: answers written before a drop re-sent after the ones given while disconnected.
    it.scoped("U16 answers written just before a drop are re-sent first, before one whose write failed", () =>
      Effect.gen(function*() {
        const { server, service } = yield* setup({ dialect: Dialect.observed })
        const connection = yield* service.connect(SESSION)
        const fiber = yield* collect(connection)
        const first = yield* awaitSocket(server, 1)
        first.open()
        first.message(request("as-1"), request("as-2"))
        yield* settle()
        yield* connection.respond(receivedRequest("as-1"), Answer.grant("early"))
        yield* settle()
        assert.strictEqual(first.sent.length, 1)
        // The socket went away under us, before its close event: the next write fails and ends it.
        first.readyState = 3
        yield* connection.respond(receivedRequest("as-2"), Answer.grant("late"))
        yield* settle()
        // A socket found closing has a grace to report its close (issue 12, defect 9); none comes.
        yield* TestClock.adjust("2 seconds")
        yield* settle()
        assert.strictEqual((yield* SubscriptionRef.get(connection.state))._tag, "Reconnecting")
        yield* TestClock.adjust("250 millis")
        const second = yield* awaitSocket(server, 2)
        second.open()
        yield* settle()
        assert.deepStrictEqual(second.sent.map((s) => JSON.parse(s).data.input), ["early", "late"])
        second.message(complete)
        yield* Fiber.join(fiber)
      }))
  })

  // The engine's internals are reachable for the back-pressure bound (used by the table's mutants).
  it.scoped("bufferSize bounds the frames held: never more than bufferSize wait for a blocked consumer", () =>
    Effect.gen(function*() {
      const server = makeFakeServer()
      const engine = yield* internal.connectEngine({ url: URL_BASE }, SESSION, { bufferSize: 3 }).pipe(
        Effect.provide(Layer.merge(layerFake(server), Credentials.layer({ apiKey: KEY })))
      )
      const release = yield* Deferred.make<void>()
      const fiber = yield* engine.connection.events.pipe(
        Stream.mapEffect((event) => Effect.as(Deferred.await(release), event._tag)),
        Stream.runCollect,
        Effect.fork
      )
      const socket = yield* awaitSocket(server, 1)
      socket.open()
      socket.message(started)
      yield* settle()
      socket.message(action(1), action(2), action(3), action(4), action(5), action(6))
      yield* settle()
      assert.isTrue(socket.paused)
      assert.strictEqual(engine.buffered(), 3)
      yield* Deferred.succeed(release, undefined)
      socket.message(complete)
      assert.strictEqual(Chunk.size(yield* Fiber.join(fiber)), 8)
      assert.strictEqual(engine.peakBuffered(), 3)
    }))
})
