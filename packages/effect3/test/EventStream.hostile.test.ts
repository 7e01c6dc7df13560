/**
 * Issue 20 (hostile input, round 2) items 1 to 3 over the fake socket (TestClock): what a reopened connection delivers
 * when it repeats events (a service known to replay, or not: `replaysOnReconnect`), how long a
 * possible replay is held, and the end of a connection superseded by a newer one (close 4000).
 * The same through real sockets: test/e2e/events.replay.test.ts.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as TestClock from "effect/TestClock"
import * as Answer from "../src/Answer.js"
import * as Dialect from "../src/Dialect.js"
import * as Errors from "../src/Errors.js"
import * as EventStream from "../src/EventStream.js"
import * as Layer from "effect/Layer"
import * as Credentials from "../src/Credentials.js"
import * as Deadlines from "../binding/internal/channel/deadlines.js"
import { Ledger } from "effect-agent-session-core"
import * as internal from "../binding/internal/eventStream.js"
import { awaitSocket, type FakeServer, layerFake, makeFakeServer, settle } from "./shared/FakeWebSocket.js"
import {
  action,
  completeFrame,
  errorEvent,
  fast,
  heartbeat,
  makeSetup,
  receivedRequest,
  request,
  startedFrame,
  URL_BASE,
  withLogs
} from "./shared/events.js"

const KEY = "sk-replay-test-key-0020"
const SESSION = "session-replay"
const started = startedFrame(SESSION)
const complete = completeFrame(SESSION)
const setup = makeSetup(KEY)
/** "scroll down" twice is the same frame twice. */
const scroll = action(7, "scroll down")

/**
 * Forks a consumer that records each event's tag as it is delivered (a failure as `!Tag`).
 * `ended` checks, without waiting, that the stream has ended, and returns what it delivered: a
 * stream that would not end fails the test by assertion, not by a time-out.
 */
const watch = (connection: EventStream.Connection) =>
  Effect.gen(function*() {
    const seen = yield* Ref.make<ReadonlyArray<string>>([])
    const failure = yield* Ref.make<Errors.EventStreamError | undefined>(undefined)
    const fiber = yield* Effect.fork(
      Stream.runForEach(Stream.either(connection.events), (result) =>
        Effect.zipRight(
          result._tag === "Left" ? Ref.set(failure, result.left) : Effect.void,
          Ref.update(seen, (all) => [...all, result._tag === "Right" ? result.right._tag : `!${result.left._tag}`])
        ))
    )
    const ended = Effect.gen(function*() {
      yield* settle()
      const tags = yield* Ref.get(seen)
      assert.isTrue(Option.isSome(yield* Fiber.poll(fiber)), `the stream has not ended; delivered so far: ${tags.join(", ")}`)
      return tags
    })
    return { seen: Ref.get(seen), failure: Ref.get(failure), ended }
  })

/** Opens socket `n`, sends `frames`, then closes it with `code` (none: left open). */
const connection = (
  server: FakeServer,
  n: number,
  frames: ReadonlyArray<string>,
  code?: number
) =>
  Effect.gen(function*() {
    const socket = yield* awaitSocket(server, n)
    socket.open()
    socket.message(...frames)
    yield* settle()
    if (code !== undefined) {
      socket.serverClose(code)
      yield* settle()
    }
    return socket
  })

const replaying = { replaysOnReconnect: true } as const

/**
 * A connection whose first socket sends `first` and drops (1006), and whose second sends
 * `second`: what it delivered by its end (`setup`'s options, with one reconnect allowed).
 */
const acrossReconnect = (
  options: Partial<EventStream.Options>,
  first: ReadonlyArray<string>,
  second: ReadonlyArray<string>
) =>
  Effect.gen(function*() {
    const { ended, server } = yield* reconnected(options, first)
    yield* connection(server, 2, second)
    return yield* ended
  })

/** A watched connection whose first socket sent `first` and dropped (1006); the clock moved to the reconnect. */
const reconnected = (options: Partial<EventStream.Options>, first: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const { server, service } = yield* setup({ reconnect: fast(1), ...options })
    const conn = yield* service.connect(SESSION)
    const watched = yield* watch(conn)
    yield* connection(server, 1, first, 1006)
    yield* TestClock.adjust("250 millis")
    return { ...watched, conn, server }
  })

describe("EventStream replays (issue 20 item 1)", () => {
  for (const dialect of [Dialect.documented, Dialect.observed]) {
    it.scoped(`issue 20: the ${dialect.name} dialect is not known to replay: 4 identical action_run around a reconnect are 4 events`, () =>
      Effect.gen(function*() {
        const results = yield* acrossReconnect({ dialect }, [started, scroll, scroll], [scroll, scroll, complete])
        assert.deepStrictEqual(
          results.filter((tag) => tag !== "Connected"),
          ["Started", "ActionRun", "ActionRun", "ActionRun", "ActionRun", "Complete"]
        )
      }))
  }

  it.scoped("a service known to replay sends its last two again: they are dropped, the two new ones delivered (4 in all)", () =>
    Effect.gen(function*() {
      const results = yield* acrossReconnect(replaying, [started, scroll, scroll], [scroll, scroll, scroll, scroll, complete])
      assert.deepStrictEqual(results, ["Started", "ActionRun", "ActionRun", "ActionRun", "ActionRun", "Complete"])
    }))

  it.scoped("a replay option on the dialect works as the connection option does", () =>
    Effect.gen(function*() {
      const dialect = Dialect.make({ name: "replaying", replaysOnReconnect: true })
      const first = [started, action(1)]
      const second = [started, action(1), action(2), complete]
      assert.deepStrictEqual(yield* acrossReconnect({ dialect }, first, second), ["Started", "ActionRun", "ActionRun", "Complete"])
      // The option wins over the dialect.
      assert.deepStrictEqual(
        yield* acrossReconnect({ dialect, replaysOnReconnect: false }, first, second),
        ["Started", "ActionRun", "Started", "ActionRun", "ActionRun", "Complete"]
      )
    }))

  for (const replays of [true, false]) {
    const mode = replays ? "known to replay" : "not known to replay"
    for (const code of [1001, 1006, 1011, 1013, 4999]) {
      it.scoped(`issue 12 defect 10 (${mode}): the same events then close ${code} on every connection: bounded (ConnectionLost)`, () =>
        Effect.gen(function*() {
          const { server, service } = yield* setup({ reconnect: fast(2), replaysOnReconnect: replays })
          const conn = yield* service.connect(SESSION)
          const { ended } = yield* watch(conn)
          for (let n = 1; n <= 3; n++) {
            yield* connection(server, n, [started, errorEvent], code)
            yield* TestClock.adjust("10 seconds")
          }
          const results = yield* ended
          // Known to replay: delivered once. Not known: each connection's events are events.
          const once = ["Started", "AgentError"]
          assert.deepStrictEqual(results, [...(replays ? once : [...once, ...once, ...once]), "!ConnectionLost"])
          yield* TestClock.adjust("1 minute")
          yield* settle()
          assert.strictEqual(server.sockets.length, 3)
        }))
    }

    it.scoped(`issue 12 defect 10 (${mode}): every connection sends the same event then drops: bounded, attempts counted`, () =>
      Effect.gen(function*() {
        const { server, service } = yield* setup({ reconnect: fast(3), replaysOnReconnect: replays })
        const conn = yield* service.connect(SESSION)
        const { ended, failure } = yield* watch(conn)
        for (let n = 1; n <= 4; n++) {
          yield* connection(server, n, [errorEvent], 1011)
          yield* TestClock.adjust("10 seconds")
        }
        const results = yield* ended
        assert.deepStrictEqual(results, [...Array(replays ? 1 : 4).fill("AgentError"), "!ConnectionLost"])
        const error = (yield* failure)!
        if (error._tag === "ConnectionLost") assert.strictEqual(error.attempts, 4)
        assert.isTrue("sessionId" in error && error.sessionId === SESSION)
        yield* TestClock.adjust("1 minute")
        yield* settle()
        assert.strictEqual(server.sockets.length, 4)
      }))
  }

  it.scoped("issue 12 defect 10: a service known to replay resends everything from the start, then goes on: only the new events", () =>
    Effect.gen(function*() {
      const { ended, server } = yield* reconnected(replaying, [started, action(1)])
      // A repeat after new events is kept.
      yield* connection(server, 2, [started, action(1), action(2), action(2)], 1006)
      yield* TestClock.adjust("250 millis")
      // A service that resumes where it stopped (the simulator): all new.
      yield* connection(server, 3, [action(3), complete])
      const results = yield* ended
      assert.deepStrictEqual(results, ["Started", "ActionRun", "ActionRun", "ActionRun", "ActionRun", "Complete"])
    }))

  it.scoped("events equal to delivered ones but not a replay of the tail are delivered (known to replay)", () =>
    Effect.gen(function*() {
      // action(1) was delivered, but not last: [action(1), action(3)] is no tail. Both are new.
      const results = yield* acrossReconnect(replaying, [started, action(1), action(2)], [action(1), action(3), complete])
      assert.deepStrictEqual(results, ["Started", "ActionRun", "ActionRun", "ActionRun", "ActionRun", "Complete"])
    }))

  // Guards: a replayed request already answered ending the replay, so the replayed events
  // after it were delivered twice.
  it.scoped("issue 12 defect 10: a replayed request already answered is delivered again, and the rest of the replay is dropped", () =>
    Effect.gen(function*() {
      const { server, service } = yield* setup({ reconnect: fast(1), ...replaying })
      const conn = yield* service.connect(SESSION)
      const { ended } = yield* watch(conn)
      const first = yield* connection(server, 1, [started, request("as-1")])
      yield* conn.respond(receivedRequest("as-1"), Answer.grant("jane@example.com"))
      yield* settle()
      // A progress frame confirms the answer; then the connection drops.
      first.message(action(1))
      yield* settle()
      first.serverClose(1006)
      yield* settle()
      yield* TestClock.adjust("250 millis")
      yield* connection(server, 2, [started, request("as-1"), action(1), action(2), complete])
      const results = yield* ended
      assert.deepStrictEqual(results, [
        "Started",
        "ExternalResourceRequested",
        "ActionRun",
        "ExternalResourceRequested",
        "ActionRun",
        "Complete"
      ])
    }))

  describe("the hold of a possible replay is bounded", () => {
    it.scoped("frames that may be a replay are held until replayHold (1 s) after the open, then judged: not a replay, delivered", () =>
      Effect.gen(function*() {
        const { ended, seen, server } = yield* reconnected(replaying, [started, action(1)])
        // `started` may begin a replay of [started, action(1)]; the service then says nothing.
        const second = yield* connection(server, 2, [started])
        assert.deepStrictEqual(yield* seen, ["Started", "ActionRun"], "held")
        yield* TestClock.adjust("999 millis")
        yield* settle()
        assert.deepStrictEqual(yield* seen, ["Started", "ActionRun"], "still held")
        yield* TestClock.adjust("1 millis")
        yield* settle()
        assert.deepStrictEqual(yield* seen, ["Started", "ActionRun", "Started"], "not a replay: delivered")
        second.message(complete)
        assert.deepStrictEqual(yield* ended, ["Started", "ActionRun", "Started", "Complete"])
      }))

    it.scoped("replayHold is an option", () =>
      Effect.gen(function*() {
        const { seen, server } = yield* reconnected({ ...replaying, replayHold: "5 seconds" }, [started, action(1)])
        yield* connection(server, 2, [started])
        yield* TestClock.adjust("4999 millis")
        yield* settle()
        assert.deepStrictEqual(yield* seen, ["Started", "ActionRun"])
        yield* TestClock.adjust("1 millis")
        yield* settle()
        assert.deepStrictEqual(yield* seen, ["Started", "ActionRun", "Started"])
      }))

    it.scoped("a keep-alive ends the hold: what was held is judged and delivered before it, in order", () =>
      Effect.gen(function*() {
        const { seen, server } = yield* reconnected(replaying, [started, action(1)])
        yield* connection(server, 2, [started, heartbeat])
        assert.deepStrictEqual(yield* seen, ["Started", "ActionRun", "Started", "Heartbeat"])
      }))

    it.scoped("a frame error ends the hold: what was held is delivered before the error", () =>
      Effect.gen(function*() {
        const { ended, server } = yield* reconnected(replaying, [started, action(1)])
        yield* connection(server, 2, [started, "{not json"])
        assert.deepStrictEqual((yield* ended), ["Started", "ActionRun", "Started", "!MalformedFrame"])
      }))

    it.scoped("the attempt's end ends the hold: what was held is judged (a drop, a close by the caller)", () =>
      Effect.gen(function*() {
        const { conn, seen, server } = yield* reconnected({ reconnect: fast(2), ...replaying }, [started, action(1)])
        // [started] alone is no tail of [started, action(1)]: new, delivered at the drop.
        yield* connection(server, 2, [started], 1006)
        assert.deepStrictEqual(yield* seen, ["Started", "ActionRun", "Started"])
        yield* TestClock.adjust("500 millis")
        // Now [action(1)] then the caller closes: [action(1)] is not the tail [action(1), started].
        yield* connection(server, 3, [action(1)])
        assert.deepStrictEqual(yield* seen, ["Started", "ActionRun", "Started"], "held")
        yield* conn.close
        yield* settle()
        assert.deepStrictEqual(yield* seen, ["Started", "ActionRun", "Started", "ActionRun"])
      }))
  })
})

describe("an action_run is never skipped (issue 20, a sibling of item 1)", () => {
  it.scoped("with failOnFrameError false, an action_run that does not decode ends the stream (EventDecodeError); other bad frames are skipped", () =>
    Effect.gen(function*() {
      const { server, service } = yield* setup({ failOnFrameError: false })
      const conn = yield* service.connect(SESSION)
      const { ended, failure } = yield* watch(conn)
      const badThought = JSON.stringify({ event: "thoughts_and_memories", data: { thought: 42 } })
      const badAction = JSON.stringify({ event: "action_run", data: { name: "scroll", content: "down" } })
      yield* connection(server, 1, [started, "{not json", badThought, action(1), badAction, action(2)])
      assert.deepStrictEqual(yield* ended, ["Started", "ActionRun", "!EventDecodeError"])
      const error = yield* failure
      assert.isTrue(error?._tag === "EventDecodeError" && error.event === "action_run")
    }))
})

describe("EventStream superseded (issue 20 item 2)", () => {
  it.scoped("close 4000 (superseded) ends the stream with Superseded: never reconnects, the session's id on it", () =>
    Effect.gen(function*() {
      const { server, service } = yield* setup({ reconnect: fast(5) })
      const conn = yield* service.connect(SESSION)
      const { ended, failure } = yield* watch(conn)
      const socket = yield* connection(server, 1, [started, action(1)])
      socket.serverClose(4000, `superseded by a newer connection (${KEY})`)
      const results = yield* ended
      assert.deepStrictEqual(results, ["Started", "ActionRun", "!Superseded"])
      const error = (yield* failure)!
      assert.instanceOf(error, Errors.Superseded)
      if (error._tag === "Superseded") {
        assert.strictEqual(error.reason, "superseded by a newer connection (<redacted>)")
        assert.strictEqual(error.sessionId, SESSION)
        assert.isTrue(error.mayStillBeRunning, "the session runs on at the service, watched by the newer connection")
        assert.include(error.message, "4000")
      }
      assert.isTrue(Errors.isAgentSessionError(error))
      yield* TestClock.adjust("1 minute")
      yield* settle()
      assert.strictEqual(server.sockets.length, 1, "no reconnect: it would take the session back")
      assert.deepStrictEqual(yield* SubscriptionRef.get(conn.state), EventStream.ConnectionState.Closed({ reason: "superseded" }))
    }))

  it.scoped("superseded after a reconnect, with an answer written and not confirmed: ends at once, the answer reported unsent", () =>
    Effect.gen(function*() {
      const { server, service } = yield* setup({ reconnect: fast(5) })
      const conn = yield* service.connect(SESSION)
      const { ended } = yield* watch(conn)
      yield* connection(server, 1, [started, request("as-1")], 1006)
      yield* conn.respond(receivedRequest("as-1"), Answer.deny())
      yield* TestClock.adjust("250 millis")
      const second = yield* awaitSocket(server, 2)
      second.open()
      yield* settle()
      assert.strictEqual(second.sent.length, 2, "the handshake, then the answer")
      // The answer was written, but the service closes with 4000 before any frame confirms it.
      second.serverClose(4000, "superseded")
      const results = yield* ended
      assert.deepStrictEqual(results, ["Started", "ExternalResourceRequested", "!Superseded"])
      yield* TestClock.adjust("1 minute")
      assert.strictEqual(server.sockets.length, 2)
      assert.deepStrictEqual(
        yield* SubscriptionRef.get(conn.state),
        EventStream.ConnectionState.Closed({
          reason: "superseded",
          unsent: [{ actionSessionId: "as-1", resourceType: "request_user_input" }]
        })
      )
    }))

  it("Superseded round-trips through its schema, as every error does", () => {
    const error = new Errors.Superseded({ reason: "superseded", sessionId: "s", mayStillBeRunning: true })
    const encode = Schema.encodeSync(Errors.AgentSessionError)
    const back = Schema.decodeUnknownSync(Errors.AgentSessionError)(JSON.parse(JSON.stringify(encode(error))))
    assert.strictEqual(back._tag, "Superseded")
    assert.deepStrictEqual(encode(back), encode(error))
    assert.strictEqual(back.message, error.message)
  })
})

describe("EventStream answer ledger bound (issue 20 item 3)", () => {
  it.scoped("issue 20: 2,200 requests with 8 KiB action session ids: the ledger stays bounded, the newest answerable, the oldest refused with a warning", () => {
    const lines: Array<string> = []
    const count = 2200
    const id = (i: number) => `${"a".repeat(8 * 1024)}-${i}`
    return withLogs(
      lines,
      Effect.gen(function*() {
        const server = makeFakeServer()
        const engine = yield* internal.connectEngine({ url: URL_BASE }, SESSION).pipe(
          Effect.provide(Layer.merge(layerFake(server), Credentials.layer({ apiKey: KEY })))
        )
        const drained = yield* Effect.fork(Stream.runCount(engine.connection.events))
        const socket = yield* awaitSocket(server, 1)
        socket.open()
        let peak = 0
        for (let i = 0; i < count; i++) {
          socket.message(request(id(i)))
          if (i % 200 === 199) yield* settle(5)
          peak = Math.max(peak, engine.ledger().requests)
        }
        yield* settle()
        const ledger = engine.ledger()
        assert.isAtMost(peak, 2 * Ledger.MAX_REQUESTS)
        assert.isAtMost(ledger.keyChars, 2 * Ledger.MAX_REQUESTS * Ledger.MAX_KEY_LENGTH)
        assert.strictEqual(ledger.forgotten, count - ledger.requests)
        assert.isAbove(ledger.forgotten, 0)
        yield* engine.connection.respond(receivedRequest(id(count - 1)), Answer.deny())
        const refused = yield* Effect.flip(engine.connection.respond(receivedRequest(id(0)), Answer.deny()))
        assert.strictEqual(refused._tag, "RequestNotPending")
        socket.message(complete)
        assert.strictEqual(yield* Fiber.join(drained), count + 1, "every request delivered")
        yield* settle()
        assert.isTrue(lines.some((line) => line.includes("unanswered request(s) forgotten")), "a warning says so")
      })
    )
  })
})

describe("every deadline of an attempt is cleared when it ends (issue 20, harden); one timer entry per connection", () => {
  /** A connection on a timer of the test's own, to count its live entries. */
  const engineWith = (options: EventStream.ConnectOptions = {}) =>
    Effect.gen(function*() {
      const server = makeFakeServer()
      const deadlines = Deadlines.make()
      const engine = yield* internal.connectEngine({ url: URL_BASE, reconnect: fast(3) }, SESSION, options, deadlines).pipe(
        Effect.provide(Layer.merge(layerFake(server), Credentials.layer({ apiKey: KEY })))
      )
      const watched = yield* watch(engine.connection)
      return { server, deadlines, engine, ...watched }
    })

  it.scoped("open: the idle time-out is the only entry; complete: none left", () =>
    Effect.gen(function*() {
      const { deadlines, ended, server } = yield* engineWith()
      const socket = yield* awaitSocket(server, 1)
      assert.strictEqual(deadlines.size(), 1, "connecting: the connect time-out")
      socket.open()
      yield* settle()
      assert.strictEqual(deadlines.size(), 1, "open: the idle time-out (the connect time-out went)")
      socket.message(started, complete)
      yield* ended
      assert.strictEqual(deadlines.size(), 0)
    }))

  it.scoped("a drop: nothing of the dropped attempt is left while reconnecting", () =>
    Effect.gen(function*() {
      const { deadlines, server } = yield* engineWith({ replaysOnReconnect: true })
      yield* connection(server, 1, [started, action(1)], 1006)
      assert.strictEqual(deadlines.size(), 0, "reconnecting: no entry of the dropped attempt")
      yield* TestClock.adjust("250 millis")
      const second = yield* connection(server, 2, [started])
      assert.strictEqual(deadlines.size(), 1, "one entry for the connection: the replay hold, then the idle time-out")
      second.serverClose(1006)
      yield* settle()
      assert.strictEqual(deadlines.size(), 0, "both cleared with their attempt")
    }))

  it.scoped("an attempt that never opens: its connect time-out goes with it", () =>
    Effect.gen(function*() {
      const { deadlines, server } = yield* engineWith()
      yield* connection(server, 1, [started], 1006)
      yield* TestClock.adjust("250 millis")
      const second = yield* awaitSocket(server, 2)
      assert.strictEqual(deadlines.size(), 1, "the connect time-out")
      second.fail("ECONNREFUSED")
      yield* settle()
      assert.strictEqual(deadlines.size(), 0)
    }))

  it.scoped("an idle time-out, a close by the caller and a superseded end leave no entry", () =>
    Effect.gen(function*() {
      const idle = yield* engineWith()
      yield* connection(idle.server, 1, [started])
      yield* TestClock.adjust("60 seconds")
      yield* settle()
      assert.strictEqual(idle.deadlines.size(), 0, "idle: dropped, reconnecting")

      const closed = yield* engineWith()
      yield* connection(closed.server, 1, [started])
      yield* closed.engine.connection.close
      yield* closed.ended
      assert.strictEqual(closed.deadlines.size(), 0, "closed by the caller")

      const superseded = yield* engineWith()
      const socket = yield* connection(superseded.server, 1, [started])
      socket.serverClose(4000, "superseded")
      yield* superseded.ended
      assert.strictEqual(superseded.deadlines.size(), 0, "superseded")
    }))

  it.scoped("an answer written to a closing socket: its grace entry goes when the close arrives", () =>
    Effect.gen(function*() {
      const { deadlines, engine, server } = yield* engineWith({})
      const socket = yield* connection(server, 1, [request("as-1")])
      // The close frame arrived, not yet the close event: the write fails, a grace entry waits.
      socket.readyState = 2
      yield* engine.connection.respond(receivedRequest("as-1"), Answer.deny())
      yield* settle()
      assert.strictEqual(deadlines.size(), 1, "one entry for the connection: the closing grace, earlier than the idle time-out")
      socket.serverClose(1006)
      yield* settle()
      assert.strictEqual(deadlines.size(), 0)
    }))
})
