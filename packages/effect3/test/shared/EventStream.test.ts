/**
 * The event channel's shell under the `TestClock`, the cases whose text is the same on both Effect
 * lines: the engine over a fake socket (a scripted in-memory `WebSocketConstructor`,
 * `shared/FakeWebSocket.ts`) and over a stubbed `HttpClient` (Server-Sent Events). No real
 * socket, no real sleeping: every schedule and time-out is driven by `TestClock.adjust`. The cases
 * that differ between the lines are each edition's `test/EventStream.test.ts`.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as Answer from "../../src/Answer.js"
import * as Dialect from "../../src/Dialect.js"
import * as EventStream from "../../src/EventStream.js"
import * as Metrics from "../../src/Metrics.js"
import * as internal from "../../binding/internal/eventStream.js"
import { awaitSocket, settle } from "./FakeWebSocket.js"
import {
  action,
  collect,
  complete,
  errorEvent,
  failureOf,
  fast,
  frame,
  KEY,
  parseAll,
  receivedRequest,
  request,
  SESSION,
  setup,
  started,
  stateOf,
  tags
} from "./events.js"
import { changesOf, forkChild, scoped, TestClock } from "../helpers/line.js"

describe("EventStream", () => {
  describe("handshake (U08)", () => {
    scoped("U08 documented dialect: the first frame is { apiKey, sessionId }; the address carries no key", () =>
      Effect.gen(function*() {
        const { server, service } = yield* setup()
        const connection = yield* service.connect(SESSION)
        const fiber = yield* collect(connection)
        const socket = yield* awaitSocket(server, 1)
        assert.strictEqual(socket.url, "wss://agents.test/v1/connect")
        assert.notInclude(socket.url, KEY)
        socket.open()
        yield* settle()
        assert.deepStrictEqual(socket.sent.map((s) => JSON.parse(s)), [{ apiKey: KEY, sessionId: SESSION }])
        socket.message(started, complete)
        const results = yield* Fiber.join(fiber)
        assert.deepStrictEqual(tags(results), ["Started", "Complete"])
      }))

    scoped("U08 observed dialect: sessionId and apiKey in the query, no handshake frame", () =>
      Effect.gen(function*() {
        const { server, service } = yield* setup({ dialect: Dialect.observed })
        const connection = yield* service.connect(SESSION)
        const fiber = yield* collect(connection)
        const socket = yield* awaitSocket(server, 1)
        const url = new URL(socket.url)
        assert.strictEqual(url.pathname, "/v1/connect")
        assert.strictEqual(url.searchParams.get("sessionId"), SESSION)
        assert.strictEqual(url.searchParams.get("apiKey"), KEY)
        socket.open()
        socket.message(started, complete)
        const results = yield* Fiber.join(fiber)
        assert.deepStrictEqual(tags(results), ["Started", "Complete"])
        assert.deepStrictEqual(socket.sent, [])
      }))

    scoped("U08 both: the key goes in the query and in the first frame", () =>
      Effect.gen(function*() {
        const { server, service } = yield* setup({ dialect: Dialect.make({ name: "both", handshake: "both" }) })
        const connection = yield* service.connect(SESSION)
        const fiber = yield* collect(connection)
        const socket = yield* awaitSocket(server, 1)
        assert.strictEqual(new URL(socket.url).searchParams.get("apiKey"), KEY)
        socket.open()
        yield* settle()
        socket.message(complete)
        yield* Fiber.join(fiber)
        assert.deepStrictEqual(JSON.parse(socket.sent[0] ?? "null"), { apiKey: KEY, sessionId: SESSION })
      }))

    scoped("U11 the key is read afresh on every reconnect", () =>
      Effect.gen(function*() {
        const current = yield* Ref.make("key-one")
        const { server, service } = yield* setup({}, {
          apiKey: Effect.map(Ref.get(current), (key) => Option.some(Redacted.make(key)))
        })
        const connection = yield* service.connect(SESSION)
        const fiber = yield* collect(connection)
        const first = yield* awaitSocket(server, 1)
        first.open()
        first.message(started)
        yield* settle()
        yield* Ref.set(current, "key-two")
        first.serverClose(1006)
        yield* settle()
        yield* TestClock.adjust("250 millis")
        const second = yield* awaitSocket(server, 2)
        second.open()
        yield* settle()
        second.message(complete)
        yield* Fiber.join(fiber)
        assert.strictEqual(JSON.parse(first.sent[0] ?? "null").apiKey, "key-one")
        assert.strictEqual(JSON.parse(second.sent[0] ?? "null").apiKey, "key-two")
      }))
  })

  describe("subscribe-then-connect", () => {
    scoped("nothing opens before events is consumed; the first frame reaches the caller", () =>
      Effect.gen(function*() {
        const { server, service } = yield* setup()
        const connection = yield* service.connect(SESSION)
        yield* settle()
        yield* TestClock.adjust("1 minute")
        assert.strictEqual(server.sockets.length, 0)
        assert.strictEqual((yield* stateOf(connection))._tag, "Connecting")
        const fiber = yield* collect(connection)
        const socket = yield* awaitSocket(server, 1)
        socket.open()
        // Frames sent at once on open, before anything else can happen.
        socket.message(started, action(1), complete)
        const results = yield* Fiber.join(fiber)
        assert.deepStrictEqual(tags(results), ["Started", "ActionRun", "Complete"])
      }))
  })

  describe("ending", () => {
    scoped("U17 events end after complete; the socket is closed with 1000; no reconnect", () =>
      Effect.gen(function*() {
        const { server, service } = yield* setup()
        const connection = yield* service.connect(SESSION)
        const fiber = yield* collect(connection)
        const socket = yield* awaitSocket(server, 1)
        socket.open()
        socket.message(started, complete, action(99))
        const results = yield* Fiber.join(fiber)
        assert.deepStrictEqual(tags(results), ["Started", "Complete"])
        assert.strictEqual(socket.closedByClientWith, 1000)
        yield* TestClock.adjust("1 minute")
        yield* settle()
        assert.strictEqual(server.sockets.length, 1)
        assert.deepStrictEqual(yield* stateOf(connection), EventStream.ConnectionState.Closed({ reason: "complete" }))
      }))

    scoped("close sends 1000, ends events, no reconnect, state Closed{closed-by-caller}", () =>
      Effect.gen(function*() {
        const { server, service } = yield* setup()
        const connection = yield* service.connect(SESSION)
        const fiber = yield* collect(connection)
        const socket = yield* awaitSocket(server, 1)
        socket.open()
        socket.message(started)
        yield* settle()
        yield* connection.close
        const results = yield* Fiber.join(fiber)
        assert.deepStrictEqual(tags(results), ["Started"])
        assert.strictEqual(socket.closedByClientWith, 1000)
        assert.deepStrictEqual(
          yield* stateOf(connection),
          EventStream.ConnectionState.Closed({ reason: "closed-by-caller" })
        )
        yield* TestClock.adjust("1 minute")
        yield* settle()
        assert.strictEqual(server.sockets.length, 1)
      }))

    scoped("closing the connection's scope closes the socket with 1000", () =>
      Effect.gen(function*() {
        const { server, service } = yield* setup()
        const exit = yield* Effect.scoped(
          Effect.gen(function*() {
            const connection = yield* service.connect(SESSION)
            yield* forkChild(Stream.runDrain(connection.events))
            const socket = yield* awaitSocket(server, 1)
            socket.open()
            socket.message(started)
            yield* settle()
            return connection
          })
        ).pipe(Effect.exit)
        assert.isTrue(Exit.isSuccess(exit))
        assert.strictEqual(server.sockets[0]?.closedByClientWith, 1000)
        if (Exit.isSuccess(exit)) {
          assert.deepStrictEqual(
            yield* stateOf(exit.value),
            EventStream.ConnectionState.Closed({ reason: "closed-by-caller" })
          )
        }
      }))

    scoped("U17 a close with 1000 before complete ends the stream normally, without reconnect", () =>
      Effect.gen(function*() {
        const { server, service } = yield* setup()
        const connection = yield* service.connect(SESSION)
        const fiber = yield* collect(connection)
        const socket = yield* awaitSocket(server, 1)
        socket.open()
        socket.message(started, action(1))
        socket.serverClose(1000, "session over")
        const results = yield* Fiber.join(fiber)
        assert.deepStrictEqual(tags(results), ["Started", "ActionRun"])
        yield* TestClock.adjust("1 minute")
        yield* settle()
        assert.strictEqual(server.sockets.length, 1)
        assert.deepStrictEqual(
          yield* stateOf(connection),
          EventStream.ConnectionState.Closed({ reason: "closed-by-service" })
        )
      }))

    scoped("U17 an error event is delivered and does not end the stream", () =>
      Effect.gen(function*() {
        const { server, service } = yield* setup()
        const connection = yield* service.connect(SESSION)
        const fiber = yield* collect(connection)
        const socket = yield* awaitSocket(server, 1)
        socket.open()
        socket.message(started, errorEvent, action(1), complete)
        const results = yield* Fiber.join(fiber)
        assert.deepStrictEqual(tags(results), ["Started", "AgentError", "ActionRun", "Complete"])
      }))

    scoped("U17 endOnError ends the stream after delivering the error event", () =>
      Effect.gen(function*() {
        const { server, service } = yield* setup()
        const connection = yield* service.connect(SESSION, { endOnError: true })
        const fiber = yield* collect(connection)
        const socket = yield* awaitSocket(server, 1)
        socket.open()
        socket.message(started, errorEvent, action(1), complete)
        const results = yield* Fiber.join(fiber)
        assert.deepStrictEqual(tags(results), ["Started", "AgentError"])
        assert.strictEqual(socket.closedByClientWith, 1000)
        assert.deepStrictEqual(yield* stateOf(connection), EventStream.ConnectionState.Closed({ reason: "error-event" }))
      }))
  })

  describe("reconnect (U22)", () => {
    scoped("U22 an abrupt close (1006) reconnects after the schedule's delays; state and downtime follow", () =>
      Effect.gen(function*() {
        const { server, service } = yield* setup()
        const connection = yield* service.connect(SESSION)
        const states = yield* Ref.make<Array<EventStream.ConnectionState>>([])
        yield* forkChild(Stream.runForEach(changesOf(connection.state), (s) => Ref.update(states, (all) => [...all, s])))
        const fiber = yield* collect(connection)
        const first = yield* awaitSocket(server, 1)
        first.open()
        first.message(started)
        yield* settle()
        first.serverClose(1006)
        yield* settle()
        yield* TestClock.adjust("249 millis")
        yield* settle()
        assert.strictEqual(server.sockets.length, 1, "no attempt before the first delay")
        yield* TestClock.adjust("1 millis")
        const second = yield* awaitSocket(server, 2)
        // An open failure: the next delay doubles (the first attempt had been alive: fresh bout).
        second.fail("connect ECONNREFUSED")
        yield* settle()
        yield* TestClock.adjust("499 millis")
        yield* settle()
        assert.strictEqual(server.sockets.length, 2, "no attempt before the second delay")
        yield* TestClock.adjust("1 millis")
        const third = yield* awaitSocket(server, 3)
        third.open()
        yield* settle()
        third.message(action(1), complete)
        const results = yield* Fiber.join(fiber)
        assert.deepStrictEqual(tags(results), ["Started", "ActionRun", "Complete"])
        // The handshake is sent again on the new socket.
        assert.deepStrictEqual(JSON.parse(third.sent[0] ?? "null"), { apiKey: KEY, sessionId: SESSION })
        yield* settle()
        const seen = yield* Ref.get(states)
        assert.deepStrictEqual(seen.map((s) => s._tag), [
          "Connecting",
          "Open",
          "Reconnecting",
          "Reconnecting",
          "Open",
          "Closed"
        ])
        assert.deepStrictEqual(seen[2], EventStream.ConnectionState.Reconnecting({
          attempt: 1,
          lastError: "closed with code 1006"
        }))
        const reopened = seen[4]
        assert.isTrue(reopened?._tag === "Open" && reopened.reconnects === 1)
        if (reopened?._tag === "Open") {
          assert.deepStrictEqual(reopened.downtime, Option.some(Duration.millis(750)))
        }
      }))

    scoped("U22 attempts stop at the schedule's limit with ConnectionLost (exact count)", () =>
      Effect.gen(function*() {
        const { server, service } = yield* setup({ reconnect: fast(3) })
        const connection = yield* service.connect(SESSION)
        const fiber = yield* collect(connection)
        const first = yield* awaitSocket(server, 1)
        first.open()
        first.message(started)
        yield* settle()
        first.serverClose(1006)
        yield* settle()
        yield* TestClock.adjust("10 seconds")
        for (let n = 2; n <= 4; n++) {
          const socket = yield* awaitSocket(server, n)
          socket.fail("connect ECONNREFUSED 10.0.0.1:443")
          yield* settle()
          yield* TestClock.adjust("10 seconds")
        }
        const results = yield* Fiber.join(fiber)
        const error = failureOf(results)
        assert.strictEqual(error._tag, "ConnectionLost")
        if (error._tag === "ConnectionLost") {
          assert.strictEqual(error.attempts, 4)
          assert.include(error.lastError, "ECONNREFUSED")
        }
        yield* TestClock.adjust("1 minute")
        yield* settle()
        assert.strictEqual(server.sockets.length, 4)
        assert.deepStrictEqual(
          yield* stateOf(connection),
          EventStream.ConnectionState.Closed({ reason: "connection-lost" })
        )
      }))

    scoped("U22 the schedule restarts after a connection that was alive", () =>
      Effect.gen(function*() {
        const { server, service } = yield* setup({ reconnect: fast(1) })
        const connection = yield* service.connect(SESSION)
        const fiber = yield* collect(connection)
        // Three drops of a live connection, each followed by one successful reconnect: recurs(1)
        // is enough because every drop starts a fresh bout.
        for (let n = 1; n <= 3; n++) {
          const socket = yield* awaitSocket(server, n)
          socket.open()
          socket.message(action(n))
          yield* settle()
          socket.serverClose(1011, "restarting")
          yield* settle()
          yield* TestClock.adjust("250 millis")
        }
        const last = yield* awaitSocket(server, 4)
        last.open()
        last.message(complete)
        const results = yield* Fiber.join(fiber)
        assert.deepStrictEqual(tags(results), ["ActionRun", "ActionRun", "ActionRun", "Complete"])
      }))

    scoped("U22 idle time-out: no frame for 60 s reconnects", () =>
      Effect.gen(function*() {
        const { server, service } = yield* setup()
        const connection = yield* service.connect(SESSION)
        const fiber = yield* collect(connection)
        const first = yield* awaitSocket(server, 1)
        first.open()
        first.message(started)
        yield* settle()
        yield* TestClock.adjust("30 seconds")
        first.message(action(1)) // a frame restarts the idle timer
        yield* settle()
        yield* TestClock.adjust("59 seconds")
        yield* settle()
        assert.strictEqual(server.sockets.length, 1)
        assert.strictEqual((yield* stateOf(connection))._tag, "Open")
        yield* TestClock.adjust("1 second")
        yield* settle()
        const state = yield* stateOf(connection)
        assert.strictEqual(state._tag, "Reconnecting")
        if (state._tag === "Reconnecting") assert.include(state.lastError, "idle")
        assert.isDefined(first.closedByClientWith, "the silent socket is dropped")
        yield* TestClock.adjust("250 millis")
        const second = yield* awaitSocket(server, 2)
        second.open()
        second.message(complete)
        const results = yield* Fiber.join(fiber)
        assert.deepStrictEqual(tags(results), ["Started", "ActionRun", "Complete"])
      }))

    scoped("U22 ConnectTimeout counts as a failed attempt; ConnectionLost carries it", () =>
      Effect.gen(function*() {
        const { server, service } = yield* setup({ reconnect: fast(1) })
        const connection = yield* service.connect(SESSION)
        const fiber = yield* collect(connection)
        const first = yield* awaitSocket(server, 1)
        first.open()
        first.message(started)
        yield* settle()
        first.serverClose(1006)
        yield* settle()
        yield* TestClock.adjust("250 millis")
        yield* awaitSocket(server, 2)
        yield* TestClock.adjust("9 seconds")
        yield* settle()
        assert.strictEqual((yield* stateOf(connection))._tag, "Reconnecting")
        yield* TestClock.adjust("1 second")
        const results = yield* Fiber.join(fiber)
        const error = failureOf(results)
        assert.strictEqual(error._tag, "ConnectionLost")
        if (error._tag === "ConnectionLost") {
          assert.strictEqual(error.attempts, 2)
          assert.include(error.lastError, "did not open within 10s")
        }
        assert.strictEqual(server.sockets.length, 2)
      }))

    scoped("U22 issue 13: a first attempt that does not open in time is NeverConnected after one connect time-out", () =>
      Effect.gen(function*() {
        const { server, service } = yield* setup({ connectTimeout: "2 seconds" })
        const connection = yield* service.connect(SESSION)
        const fiber = yield* collect(connection)
        yield* awaitSocket(server, 1)
        yield* TestClock.adjust("2 seconds")
        const results = yield* Fiber.join(fiber)
        const error = failureOf(results)
        assert.strictEqual(error._tag, "NeverConnected")
        if (error._tag === "NeverConnected") {
          assert.strictEqual(error.sessionId, SESSION)
          assert.strictEqual(error.attempts, 1)
          assert.include(error.lastError, "did not open within 2s")
          assert.include(error.message, "never connected")
        }
        assert.strictEqual(server.sockets.length, 1)
      }))

    scoped("issue 13: a refused first connection fails with NeverConnected within about a second, never Reconnecting", () =>
      Effect.gen(function*() {
        const { server, service } = yield* setup()
        const connection = yield* service.connect(SESSION)
        const states = yield* Ref.make<Array<string>>([])
        yield* forkChild(Stream.runForEach(changesOf(connection.state), (s) => Ref.update(states, (all) => [...all, s._tag])))
        const fiber = yield* collect(connection)
        const first = yield* awaitSocket(server, 1)
        first.fail("connect ECONNREFUSED 127.0.0.1:1")
        yield* settle()
        yield* TestClock.adjust("249 millis")
        yield* settle()
        assert.strictEqual(server.sockets.length, 1, "no second try before 250 ms")
        yield* TestClock.adjust("1 millis")
        ;(yield* awaitSocket(server, 2)).fail("connect ECONNREFUSED 127.0.0.1:1")
        yield* settle()
        yield* TestClock.adjust("500 millis")
        ;(yield* awaitSocket(server, 3)).fail("connect ECONNREFUSED 127.0.0.1:1")
        // 750 ms of virtual time: done, no fourth try.
        const results = yield* Fiber.join(fiber)
        const error = failureOf(results)
        assert.strictEqual(error._tag, "NeverConnected")
        if (error._tag === "NeverConnected") {
          assert.strictEqual(error.attempts, 3)
          assert.include(error.lastError, "ECONNREFUSED")
        }
        yield* TestClock.adjust("1 minute")
        yield* settle()
        assert.strictEqual(server.sockets.length, 3)
        assert.deepStrictEqual(yield* Ref.get(states), ["Connecting", "Closed"])
      }))

    for (const max of [0, 1, 2]) {
      scoped(`issue 13: Reconnecting attempts equal the tries made (reconnect: recurs(${max}))`, () =>
        Effect.gen(function*() {
          const { server, service } = yield* setup({ reconnect: fast(max) })
          const connection = yield* service.connect(SESSION)
          const states = yield* Ref.make<Array<EventStream.ConnectionState>>([])
          yield* forkChild(Stream.runForEach(changesOf(connection.state), (s) => Ref.update(states, (all) => [...all, s])))
          const before = yield* Metrics.counterValue("agent_session_reconnect_attempts_total")
          const fiber = yield* collect(connection)
          const first = yield* awaitSocket(server, 1)
          first.open()
          first.message(started)
          yield* settle()
          first.serverClose(1006)
          yield* settle()
          for (let n = 2; n <= max + 1; n++) {
            yield* TestClock.adjust("10 seconds")
            ;(yield* awaitSocket(server, n)).serverClose(1011)
            yield* settle()
          }
          const error = failureOf(yield* Fiber.join(fiber))
          assert.strictEqual(error._tag, "ConnectionLost")
          yield* settle()
          const attempts = (yield* Ref.get(states)).flatMap((s) => s._tag === "Reconnecting" ? [s.attempt] : [])
          assert.deepStrictEqual(attempts, Array.from({ length: max }, (_, i) => i + 1))
          assert.strictEqual(server.sockets.length, max + 1, "tries made: the first and one per reconnect")
          assert.strictEqual((yield* Metrics.counterValue("agent_session_reconnect_attempts_total")) - before, max)
        }))
    }

    // Replays and the same event on every connection (issue 12 defect 10, issue 20): EventStream.replay.test.ts.
  })

  describe("refused handshake (U12)", () => {
    scoped("U12 HTTP 401 at the upgrade is HandshakeRejected, exactly one attempt", () =>
      Effect.gen(function*() {
        const { server, service } = yield* setup()
        const connection = yield* service.connect(SESSION)
        const fiber = yield* collect(connection)
        const socket = yield* awaitSocket(server, 1)
        socket.fail("Unexpected server response: 401")
        const results = yield* Fiber.join(fiber)
        const error = failureOf(results)
        assert.strictEqual(error._tag, "HandshakeRejected")
        if (error._tag === "HandshakeRejected") assert.strictEqual(error.code, 401)
        yield* TestClock.adjust("1 minute")
        yield* settle()
        assert.strictEqual(server.sockets.length, 1)
        assert.deepStrictEqual(
          yield* stateOf(connection),
          EventStream.ConnectionState.Closed({ reason: "handshake-rejected" })
        )
      }))

    scoped("U12 an upgrade refused with 403 (recorded by the SDK's constructor) is not retried", () =>
      Effect.gen(function*() {
        const { server, service } = yield* setup()
        server.onCreate = (socket) => internal.recordRejection(socket, { status: 403, reason: "Forbidden" })
        const connection = yield* service.connect(SESSION)
        const fiber = yield* collect(connection)
        const socket = yield* awaitSocket(server, 1)
        socket.fail("WebSocket was closed before the connection was established")
        const error = failureOf(yield* Fiber.join(fiber))
        assert.deepStrictEqual(error._tag === "HandshakeRejected" ? [error.code, error.reason] : [], [403, "Forbidden"])
        yield* TestClock.adjust("1 minute")
        assert.strictEqual(server.sockets.length, 1)
      }))

    for (const [status, reason] of [[400, "Bad Request"], [404, "Not Found"], [410, "Gone"]] as const) {
      scoped(`U08 an upgrade refused with ${status} (no such session) is HandshakeRejected, not retried`, () =>
        Effect.gen(function*() {
          const { server, service } = yield* setup()
          server.onCreate = (socket) => internal.recordRejection(socket, { status, reason })
          const connection = yield* service.connect(SESSION)
          const fiber = yield* collect(connection)
          const socket = yield* awaitSocket(server, 1)
          socket.fail("WebSocket was closed before the connection was established")
          const error = failureOf(yield* Fiber.join(fiber))
          assert.deepStrictEqual(error._tag === "HandshakeRejected" ? [error.code, error.reason] : [], [status, reason])
          yield* TestClock.adjust("1 minute")
          assert.strictEqual(server.sockets.length, 1)
        }))
    }

    scoped("U12 an upgrade refused with 503 is retried", () =>
      Effect.gen(function*() {
        const { server, service } = yield* setup()
        const connection = yield* service.connect(SESSION)
        const fiber = yield* collect(connection)
        const first = yield* awaitSocket(server, 1)
        first.fail("Unexpected server response: 503")
        yield* settle()
        yield* TestClock.adjust("250 millis")
        const second = yield* awaitSocket(server, 2)
        second.open()
        second.message(complete)
        assert.deepStrictEqual(tags(yield* Fiber.join(fiber)), ["Complete"])
      }))

    for (const code of [1008, 4001, 4003, 4401, 4403]) {
      scoped(`U12 close code ${code} is HandshakeRejected, not retried`, () =>
        Effect.gen(function*() {
          const { server, service } = yield* setup()
          const connection = yield* service.connect(SESSION)
          const fiber = yield* collect(connection)
          const socket = yield* awaitSocket(server, 1)
          socket.open()
          yield* settle()
          socket.serverClose(code, "invalid api key")
          const error = failureOf(yield* Fiber.join(fiber))
          assert.deepStrictEqual(
            error._tag === "HandshakeRejected" ? [error.code, error.reason] : [],
            [code, "invalid api key"]
          )
          yield* TestClock.adjust("1 minute")
          yield* settle()
          assert.strictEqual(server.sockets.length, 1)
        }))
    }

    scoped("U12 a missing key fails with MissingCredentials before any socket", () =>
      Effect.gen(function*() {
        const { server, service } = yield* setup({}, {})
        const connection = yield* service.connect(SESSION)
        const error = failureOf(yield* Fiber.join(yield* collect(connection)))
        assert.strictEqual(error._tag, "MissingCredentials")
        assert.strictEqual(server.sockets.length, 0)
      }))
  })

  describe("frames (U09, U22)", () => {
    scoped("U09 a malformed frame fails the stream after the events before it", () =>
      Effect.gen(function*() {
        const { server, service } = yield* setup()
        const connection = yield* service.connect(SESSION)
        const fiber = yield* collect(connection)
        const socket = yield* awaitSocket(server, 1)
        socket.open()
        socket.message(started, "not json", complete)
        const results = yield* Fiber.join(fiber)
        assert.deepStrictEqual(tags(results), ["Started", "!MalformedFrame"])
        // Issue 13: the frame error names the session, which may still be running.
        const error = failureOf(results)
        assert.isTrue("sessionId" in error && error.sessionId === SESSION && error.mayStillBeRunning === true)
        assert.strictEqual(socket.closedByClientWith, 1000)
        assert.deepStrictEqual(yield* stateOf(connection), EventStream.ConnectionState.Closed({ reason: "failed" }))
      }))

    scoped("U09 a known event with a bad payload is EventDecodeError; strict mode makes unknown events fail", () =>
      Effect.gen(function*() {
        const { server, service } = yield* setup()
        const loose = yield* service.connect(SESSION)
        const looseFiber = yield* collect(loose)
        const first = yield* awaitSocket(server, 1)
        first.open()
        first.message(frame("surprise", { x: 1 }), frame("action_run", { name: 3 }))
        const looseResults = yield* Fiber.join(looseFiber)
        assert.deepStrictEqual(tags(looseResults), ["Unrecognized", "!EventDecodeError"])

        const strict = yield* service.connect(SESSION, { strict: true })
        const strictFiber = yield* collect(strict)
        const second = yield* awaitSocket(server, 2)
        second.open()
        second.message(frame("surprise", { x: 1 }))
        assert.deepStrictEqual(tags(yield* Fiber.join(strictFiber)), ["!UnknownEvent"])
      }))

    scoped("U22 a frame over maxFrameSize is FrameTooLarge", () =>
      Effect.gen(function*() {
        const { server, service } = yield* setup()
        const connection = yield* service.connect(SESSION, { maxFrameSize: 200 })
        const fiber = yield* collect(connection)
        const socket = yield* awaitSocket(server, 1)
        socket.open()
        socket.message(started, action(1, "x".repeat(500)))
        const error = failureOf(yield* Fiber.join(fiber))
        assert.strictEqual(error._tag, "FrameTooLarge")
        if (error._tag === "FrameTooLarge") assert.strictEqual(error.limit, 200)
      }))
  })

  describe("answers (U16)", () => {
    scoped("U16 answers given while disconnected are sent in order right after the next handshake", () =>
      Effect.gen(function*() {
        const { server, service } = yield* setup({ dialect: Dialect.observed })
        const connection = yield* service.connect(SESSION)
        const fiber = yield* collect(connection)
        const first = yield* awaitSocket(server, 1)
        first.open()
        first.message(request("as-1"), request("as-2"), request("as-3"))
        yield* settle()
        first.serverClose(1006)
        yield* settle()
        assert.strictEqual((yield* stateOf(connection))._tag, "Reconnecting")
        yield* connection.respond(receivedRequest("as-2"), Answer.grant("b"))
        yield* connection.respond(receivedRequest("as-1"), Answer.deny())
        yield* connection.respond(receivedRequest("as-3"), Answer.grant("c"))
        assert.deepStrictEqual(first.sent, [])
        // No close event follows: after the closing grace (2 s) the attempt counts as dropped.
        yield* TestClock.adjust("2 seconds")
        yield* settle()
        yield* TestClock.adjust("250 millis")
        const second = yield* awaitSocket(server, 2)
        second.open()
        yield* settle()
        const sent = second.sent.map((s) => JSON.parse(s))
        assert.deepStrictEqual(sent.map((s) => [s.type, s.data.action_session_id, s.data.granted]), [
          ["external_resource_granted", "as-2", true],
          ["external_resource_granted", "as-1", false],
          ["external_resource_granted", "as-3", true]
        ])
        second.message(complete)
        yield* Fiber.join(fiber)
      }))

    scoped("U16 an answer written just before an abrupt drop is sent again; a confirmed one is not", () =>
      Effect.gen(function*() {
        const { server, service } = yield* setup({ dialect: Dialect.observed })
        const connection = yield* service.connect(SESSION)
        const fiber = yield* collect(connection)
        const first = yield* awaitSocket(server, 1)
        first.open()
        first.message(request("as-1"))
        yield* settle()
        yield* connection.respond(receivedRequest("as-1"), Answer.grant("one"))
        yield* settle()
        assert.strictEqual(first.sent.length, 1, "written on the first socket")
        // Dropped before any later frame: the service may never have read it.
        first.serverClose(1006)
        yield* settle()
        yield* TestClock.adjust("250 millis")
        const second = yield* awaitSocket(server, 2)
        second.open()
        yield* settle()
        assert.deepStrictEqual(second.sent.map((s) => JSON.parse(s).data.input), ["one"])
        // Confirmed by the frame that follows it: not sent again.
        second.message(frame("external_resource_granted", { granted: true, input: "one" }), request("as-2"))
        yield* settle()
        yield* connection.respond(receivedRequest("as-2"), Answer.grant("two"))
        yield* settle()
        second.message(action(1))
        yield* settle()
        second.serverClose(1006)
        yield* settle()
        yield* TestClock.adjust("250 millis")
        const third = yield* awaitSocket(server, 3)
        third.open()
        yield* settle()
        assert.deepStrictEqual(third.sent, [])
        third.message(complete)
        assert.deepStrictEqual(tags(yield* Fiber.join(fiber)), [
          "ExternalResourceRequested",
          "ExternalResourceGranted",
          "ExternalResourceRequested",
          "ActionRun",
          "Complete"
        ])
      }))

    scoped("U16 AnswerBufferFull at the 65th queued answer", () =>
      Effect.gen(function*() {
        const { server, service } = yield* setup()
        const connection = yield* service.connect(SESSION)
        yield* collect(connection)
        const socket = yield* awaitSocket(server, 1)
        socket.open()
        socket.message(...Array.from({ length: 65 }, (_, i) => request(`as-${i}`)))
        yield* settle()
        socket.serverClose(1006)
        yield* settle()
        for (let i = 0; i < 64; i++) {
          yield* connection.respond(receivedRequest(`as-${i}`), Answer.grant())
        }
        const full = yield* Effect.flip(connection.respond(receivedRequest("as-64"), Answer.grant()))
        assert.deepStrictEqual([full._tag, full._tag === "AnswerBufferFull" ? full.limit : 0], ["AnswerBufferFull", 64])
        // Once they are sent, there is room again.
        yield* TestClock.adjust("250 millis")
        const second = yield* awaitSocket(server, 2)
        second.open()
        yield* settle()
        assert.strictEqual(second.sent.length, 1 + 64)
        yield* connection.respond(receivedRequest("as-64"), Answer.grant())
      }))

    scoped("U16 an answer whose write fails stays queued and is sent after the reconnect", () =>
      Effect.gen(function*() {
        const { server, service } = yield* setup({ dialect: Dialect.observed })
        const connection = yield* service.connect(SESSION)
        const fiber = yield* collect(connection)
        const first = yield* awaitSocket(server, 1)
        first.open()
        first.message(request("as-1"))
        yield* settle()
        // The socket went away under us, before its close event arrived.
        first.readyState = 3
        yield* connection.respond(receivedRequest("as-1"), Answer.grant("x"))
        yield* settle()
        assert.deepStrictEqual(first.sent, [])
        // No close event follows: after the closing grace (2 s) the attempt counts as dropped.
        yield* TestClock.adjust("2 seconds")
        yield* settle()
        yield* TestClock.adjust("250 millis")
        const second = yield* awaitSocket(server, 2)
        second.open()
        yield* settle()
        assert.strictEqual(second.sent.length, 1)
        assert.include(second.sent[0], "as-1")
        second.message(complete)
        yield* Fiber.join(fiber)
      }))
  })

  describe("hostile closes (issue 12)", () => {
    scoped("U17 an answer written as the service closes with 1000 ends the stream cleanly; the answer is reported unsent (defect 9)", () =>
      Effect.gen(function*() {
        const { server, service } = yield* setup()
        const connection = yield* service.connect(SESSION)
        const fiber = yield* collect(connection)
        const socket = yield* awaitSocket(server, 1)
        socket.open()
        socket.message(request("as-1"))
        yield* settle()
        // The service's 1000 close frame arrived: the socket is closing, its close event not yet.
        socket.readyState = 2
        yield* connection.respond(receivedRequest("as-1"), Answer.grant("x"))
        yield* settle()
        socket.serverClose(1000, "session over")
        const results = yield* Fiber.join(fiber)
        assert.deepStrictEqual(tags(results), ["ExternalResourceRequested"], "no HandshakeRejected, no reconnect")
        assert.strictEqual(server.sockets.length, 1, "no reconnect")
        const state = yield* SubscriptionRef.get(connection.state)
        assert.deepStrictEqual(
          state,
          EventStream.ConnectionState.Closed({
            reason: "closed-by-service",
            unsent: [{ actionSessionId: "as-1", resourceType: "request_user_input" }]
          })
        )
      }))

    scoped("U16 answering after the channel closed is RequestNotPending(channel-closed) (defect 14)", () =>
      Effect.gen(function*() {
        const { server, service } = yield* setup()
        const connection = yield* service.connect(SESSION)
        const fiber = yield* collect(connection)
        const socket = yield* awaitSocket(server, 1)
        socket.open()
        socket.message(request("as-1"), complete)
        yield* Fiber.join(fiber)
        for (const id of ["as-1", "as-never-seen"]) {
          const error = yield* Effect.flip(connection.respond(receivedRequest(id), Answer.deny()))
          assert.strictEqual(error._tag, "RequestNotPending")
          if (error._tag !== "RequestNotPending") return
          assert.strictEqual(error.reason, "channel-closed")
          assert.include(error.message, "closed")
        }
      }))
  })

  describe("Server-Sent Events", () => {
    it("the parser reads named events split anywhere, CRLF, comments and multi-line data", () => {
      const stream = "event: started\r\ndata: {\"a\":1}\r\n\r\n: keep-alive\n\nevent: x\ndata: one\ndata:two\n\ndata: plain\n\n"
      const whole = parseAll([stream])
      assert.deepStrictEqual(whole, ["started={\"a\":1}", "x=one\ntwo", "message=plain"])
      // Every split point gives the same events.
      for (let i = 1; i < stream.length; i++) {
        assert.deepStrictEqual(parseAll([stream.slice(0, i), stream.slice(i)]), whole, `split at ${i}`)
      }
      assert.deepStrictEqual(parseAll(["event: empty\n\n", "id: 3\nretry: 10\n\n"]), [])
    })

    it("U22 the parser drops the data of an event over the limit and reports its size", () => {
      assert.deepStrictEqual(parseAll([`event: big\ndata: ${"x".repeat(50)}\n\ndata: ok\n\n`], 20), [
        "too-large 50",
        "message=ok"
      ])
      // A line that never ends is bounded too, and reported as soon as it is over the limit
      // (an event that never ends must not wait for its end: issue 12), with the size read then.
      assert.deepStrictEqual(parseAll([`data: ${"y".repeat(100)}`, "y".repeat(100), "\n\n"], 20), [
        "too-large 106"
      ])
    })
  })
})
