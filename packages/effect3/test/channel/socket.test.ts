/**
 * The WebSocket adapter (binding/internal/channel/socket.ts) over a scripted fake socket, with hooks
 * that record every call: the handshake, frames in order, how each close code and error ends the
 * attempt (the key scrubbed from what is kept), the connect time-out on the `TestClock`, the
 * `Io` it attaches, and closing the attempt's scope.
 */
import { assert, describe, it } from "@effect/vitest"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Redacted from "effect/Redacted"
import * as Scope from "effect/Scope"
import * as TestClock from "effect/TestClock"
import * as Dialect from "../../src/Dialect.js"
import { ConnectTimeout, FrameTooLarge, HandshakeRejected } from "../../src/Errors.js"
import * as Deadlines from "../../binding/internal/channel/deadlines.js"
import { resolveSettings, type Settings } from "../../binding/internal/channel/settings.js"
import { webSocketTransport } from "../../binding/internal/channel/socket.js"
import { recordRejection, registerConstructor } from "../../binding/internal/channel/upgrade.js"
import type { AttemptOutcome, Hooks, Io } from "../../binding/internal/channel/transport.js"
import * as Wire from "../../src/Wire.js"
import { FakeWebSocket } from "../shared/FakeWebSocket.js"

const KEY = "sk-live-very-secret-0123"
const ANSWER: Wire.AnswerData = { granted: true, resource_type: "login", action_session_id: "a1" }
const SESSION = "session-42"

interface Recorded {
  readonly hooks: Hooks
  readonly deadlines: Deadlines.Deadlines
  /** The hooks called, in order (`attach`, `open`, `frame`, `end`). */
  readonly calls: Array<string>
  readonly frames: Array<string | Uint8Array>
  readonly ends: Array<AttemptOutcome | Exit.Exit<AttemptOutcome>>
  /** What the socket had been sent when `open` was called. */
  readonly sentAtOpen: Array<ReadonlyArray<string>>
  /** Whether each `attach` said its socket can pause. */
  readonly pausable: Array<boolean>
  io: Io | undefined
}

/** A started attempt over a fake socket, in a scope the test closes. */
interface Started extends Recorded {
  readonly socket: FakeWebSocket
  readonly sockets: ReadonlyArray<FakeWebSocket>
  readonly scope: Scope.CloseableScope
}

const record = (sockets: ReadonlyArray<FakeWebSocket>, settings: Settings, scope: Scope.Scope): Recorded => {
  const deadlines = Deadlines.make()
  const recorded: Recorded = {
    deadlines,
    calls: [],
    frames: [],
    ends: [],
    sentAtOpen: [],
    pausable: [],
    io: undefined,
    hooks: {
      sessionId: SESSION,
      settings,
      scope: () => scope,
      key: Redacted.make(KEY),
      deadlines,
      attach: (io, pausable) => {
        recorded.io = io
        recorded.calls.push("attach")
        recorded.pausable.push(pausable !== false)
      },
      open: () => {
        recorded.sentAtOpen.push(sockets[0]?.sent.slice() ?? [])
        recorded.calls.push("open")
      },
      frame: (data) => {
        recorded.frames.push(data)
        recorded.calls.push("frame")
      },
      namedEvent: () => {
        recorded.calls.push("namedEvent")
      },
      tooLarge: () => {
        recorded.calls.push("tooLarge")
      },
      alive: () => {
        recorded.calls.push("alive")
      },
      end: (outcome) => {
        recorded.ends.push(outcome)
        recorded.calls.push("end")
      }
    }
  }
  return recorded
}

const start = (options: {
  readonly dialect?: Dialect.Dialect
  readonly connectTimeout?: Duration.DurationInput
  /** Called on each new socket, before the adapter sees it. */
  readonly onCreate?: (socket: FakeWebSocket) => void
  /** A constructor of its own instead of the fake socket's. */
  readonly make?: (url: string) => globalThis.WebSocket
} = {}): Effect.Effect<Started> =>
  Effect.gen(function*() {
    const sockets: Array<FakeWebSocket> = []
    const scope = yield* Scope.make()
    const recorded = record(
      sockets,
      resolveSettings({}, { connectTimeout: options.connectTimeout ?? "5 seconds" }),
      scope
    )
    const transport = webSocketTransport({
      base: "ws://service.test",
      dialect: options.dialect ?? Dialect.documented,
      constructor: options.make ?? ((url) => {
        const socket = new FakeWebSocket(url)
        sockets.push(socket)
        options.onCreate?.(socket)
        return socket
      })
    })
    yield* transport(recorded.hooks)
    // As the engine releases an attempt: closing the attempt's scope closes its transport (`Io.close`).
    yield* Scope.addFinalizer(scope, Effect.sync(() => recorded.io?.close?.()))
    return Object.assign(recorded, { sockets, scope, socket: sockets[0]! })
  })

/** The one outcome the attempt ended with (the first `end`; a second would be ignored by the engine). */
const outcomeOf = (started: Recorded): AttemptOutcome => {
  const first = started.ends[0]
  assert.isDefined(first, "the attempt did not end")
  assert.isFalse(Exit.isExit(first), "ended with an Exit (a defect of the transport)")
  return first as AttemptOutcome
}

describe("webSocketTransport", () => {
  it.effect("the message handshake: the key and session are sent on open, before the engine hears of it", () =>
    Effect.gen(function*() {
      const started = yield* start({ dialect: Dialect.documented })
      assert.deepStrictEqual(started.calls, ["attach"])
      assert.isFalse(started.socket.url.includes(KEY), "the key is not in the URL")
      assert.deepStrictEqual(started.socket.sent, [])
      started.socket.open()
      assert.deepStrictEqual(started.calls, ["attach", "open"])
      assert.deepStrictEqual(started.sentAtOpen, [[Wire.handshakeMessage(Redacted.make(KEY), SESSION)]])
      assert.strictEqual(started.socket.binaryType, "arraybuffer")
      yield* Scope.close(started.scope, Exit.void)
    }))

  it.effect("the query handshake: nothing is sent on open (the key is in the URL)", () =>
    Effect.gen(function*() {
      const started = yield* start({ dialect: Dialect.observed })
      assert.include(started.socket.url, `sessionId=${SESSION}`)
      started.socket.open()
      assert.deepStrictEqual(started.calls, ["attach", "open"])
      assert.deepStrictEqual(started.socket.sent, [])
      yield* Scope.close(started.scope, Exit.void)
    }))

  it.effect("a socket already open when made is opened at once", () =>
    Effect.gen(function*() {
      const started = yield* start({
        onCreate: (socket) => {
          socket.readyState = 1
        }
      })
      assert.deepStrictEqual(started.calls, ["attach", "open"])
      assert.strictEqual(started.socket.sent.length, 1)
      yield* Scope.close(started.scope, Exit.void)
    }))

  it.effect("frames reach hooks.frame in order, text and binary", () =>
    Effect.gen(function*() {
      const started = yield* start()
      started.socket.open()
      started.socket.message("a", "b")
      started.socket.dispatchEvent(new MessageEvent("message", { data: new Uint8Array([1, 2, 3]).buffer }))
      started.socket.message("c")
      assert.deepStrictEqual(started.frames, ["a", "b", new Uint8Array([1, 2, 3]), "c"])
      assert.deepStrictEqual(started.calls, ["attach", "open", "frame", "frame", "frame", "frame"])
      yield* Scope.close(started.scope, Exit.void)
    }))

  it.effect("close 1000: End closed-by-service, and nothing after it", () =>
    Effect.gen(function*() {
      const started = yield* start()
      started.socket.open()
      started.socket.serverClose(1000, "bye")
      assert.deepStrictEqual(outcomeOf(started), { _tag: "End", reason: "closed-by-service" })
      started.socket.dispatchEvent(new MessageEvent("message", { data: "late" }))
      started.socket.dispatchEvent(new Event("error"))
      assert.deepStrictEqual(started.frames, [])
      assert.strictEqual(started.ends.length, 1)
      yield* Scope.close(started.scope, Exit.void)
    }))

  it.effect("close 1006 (or any other code but a rejection): Retry with the code and the reason, scrubbed", () =>
    Effect.gen(function*() {
      const started = yield* start()
      started.socket.open()
      started.socket.serverClose(1006)
      assert.deepStrictEqual(outcomeOf(started), { _tag: "Retry", error: "closed with code 1006" })

      const other = yield* start()
      other.socket.open()
      other.socket.serverClose(1011, `internal error for ${KEY}`)
      const outcome = outcomeOf(other)
      assert.strictEqual(outcome._tag, "Retry")
      assert.strictEqual(outcome._tag === "Retry" ? outcome.error : "", "closed with code 1011: internal error for <redacted>")
      yield* Scope.close(started.scope, Exit.void)
      yield* Scope.close(other.scope, Exit.void)
    }))

  for (const code of [1008, 4001, 4003, 4401, 4403]) {
    it.effect(`close ${code}: Fatal HandshakeRejected, the key scrubbed from the reason`, () =>
      Effect.gen(function*() {
        const started = yield* start()
        started.socket.open()
        started.socket.serverClose(code, `invalid key ${KEY}`)
        const outcome = outcomeOf(started)
        assert.strictEqual(outcome._tag, "Fatal")
        if (outcome._tag !== "Fatal") return
        assert.strictEqual(outcome.reason, "handshake-rejected")
        assert.instanceOf(outcome.error, HandshakeRejected)
        assert.strictEqual(outcome.error.code, code)
        assert.notInclude(outcome.error.reason, KEY)
        assert.notInclude(outcome.error.message, KEY)
        assert.include(outcome.error.reason, "invalid key")
        yield* Scope.close(started.scope, Exit.void)
      }))
  }

  it.effect("an error before open: Retry open failed, the key scrubbed", () =>
    Effect.gen(function*() {
      const started = yield* start()
      started.socket.fail(`connect ECONNREFUSED ws://service.test/v1/connect?apiKey=${KEY}`)
      const outcome = outcomeOf(started)
      assert.strictEqual(outcome._tag, "Retry")
      const error = outcome._tag === "Retry" ? outcome.error : ""
      assert.strictEqual(typeof error, "string")
      assert.match(String(error), /^open failed: connect ECONNREFUSED/)
      assert.notInclude(String(error), KEY)
      assert.strictEqual(started.ends.length, 1, "the close that follows the error is not a second end")
      assert.notInclude(started.calls, "open")
      yield* Scope.close(started.scope, Exit.void)
    }))

  it.effect("an error after open: Retry read failed", () =>
    Effect.gen(function*() {
      const started = yield* start()
      started.socket.open()
      started.socket.fail("read ECONNRESET")
      assert.deepStrictEqual(outcomeOf(started), { _tag: "Retry", error: "read failed: read ECONNRESET" })
      assert.strictEqual(started.ends.length, 1)
      yield* Scope.close(started.scope, Exit.void)
    }))

  it.effect("a frame over maxPayload (ws refuses it while reading): Fatal FrameTooLarge, not retried", () =>
    Effect.gen(function*() {
      const started = yield* start()
      started.socket.open()
      started.socket.dispatchEvent(
        Object.assign(new Event("error"), { error: { code: "WS_ERR_UNSUPPORTED_MESSAGE_LENGTH" }, message: "" })
      )
      const outcome = outcomeOf(started)
      assert.strictEqual(outcome._tag, "Fatal")
      if (outcome._tag !== "Fatal") return
      assert.instanceOf(outcome.error, FrameTooLarge)
      assert.strictEqual(outcome.error.limit, Wire.defaultMaxFrameSize)
      assert.isAbove(outcome.error.size, outcome.error.limit)
      yield* Scope.close(started.scope, Exit.void)
    }))

  it.effect("a text frame that is not UTF-8 (ws): Fatal MalformedFrame", () =>
    Effect.gen(function*() {
      const started = yield* start()
      started.socket.open()
      started.socket.dispatchEvent(Object.assign(new Event("error"), { error: { code: "WS_ERR_INVALID_UTF8" } }))
      const outcome = outcomeOf(started)
      assert.strictEqual(outcome._tag === "Fatal" ? outcome.error._tag : outcome._tag, "MalformedFrame")
      yield* Scope.close(started.scope, Exit.void)
    }))

  it.effect("a registered sized constructor is used, with maxPayload = maxFrameSize", () =>
    Effect.gen(function*() {
      const sized: Array<readonly [string, number]> = []
      const plain = (url: string): globalThis.WebSocket => new FakeWebSocket(url)
      registerConstructor(plain, {
        sized: (url, maxPayload) => {
          sized.push([url, maxPayload])
          return new FakeWebSocket(url)
        }
      })
      const started = yield* start({ make: plain })
      assert.deepStrictEqual(sized, [["ws://service.test/v1/connect", Wire.defaultMaxFrameSize]])
      assert.deepStrictEqual(started.calls, ["attach"])
      assert.deepStrictEqual(started.pausable, [true], "a socket with pause()/resume() is attached as one that pauses")
      yield* Scope.close(started.scope, Exit.void)
    }))

  it.effect("a constructor registered pausable: false is attached as one that cannot pause (the core bounds it), though its socket has pause()", () =>
    Effect.gen(function*() {
      const plain = (url: string): globalThis.WebSocket => new FakeWebSocket(url)
      registerConstructor(plain, { pausable: false })
      const started = yield* start({ make: plain })
      assert.deepStrictEqual(started.pausable, [false])
      yield* Scope.close(started.scope, Exit.void)
    }))

  it.effect("an error before open with a recorded 401 rejection: Fatal HandshakeRejected", () =>
    Effect.gen(function*() {
      const started = yield* start({
        onCreate: (socket) => recordRejection(socket, { status: 401, reason: `Unauthorized: ${KEY}` })
      })
      started.socket.fail("Unexpected server response")
      const outcome = outcomeOf(started)
      assert.strictEqual(outcome._tag, "Fatal")
      if (outcome._tag !== "Fatal") return
      assert.strictEqual(outcome.reason, "handshake-rejected")
      assert.instanceOf(outcome.error, HandshakeRejected)
      assert.strictEqual(outcome.error.code, 401)
      assert.notInclude(outcome.error.reason, KEY)
      yield* Scope.close(started.scope, Exit.void)
    }))

  it.effect("an error before open with a recorded 503 (not a refusal): Retry", () =>
    Effect.gen(function*() {
      const started = yield* start({
        onCreate: (socket) => recordRejection(socket, { status: 503, reason: "Service Unavailable" })
      })
      started.socket.fail("Unexpected server response")
      assert.deepStrictEqual(outcomeOf(started), { _tag: "Retry", error: "upgrade refused with HTTP 503" })
      yield* Scope.close(started.scope, Exit.void)
    }))

  it.effect("an error before open reading `Unexpected server response: 403` (ws): Fatal HandshakeRejected", () =>
    Effect.gen(function*() {
      const started = yield* start()
      started.socket.fail("Unexpected server response: 403")
      const outcome = outcomeOf(started)
      assert.strictEqual(outcome._tag, "Fatal")
      assert.strictEqual(outcome._tag === "Fatal" ? outcome.error._tag : "", "HandshakeRejected")
      yield* Scope.close(started.scope, Exit.void)
    }))

  it.effect("a constructor that throws: Retry open failed, scrubbed, and no attach", () =>
    Effect.gen(function*() {
      const started = yield* start({
        make: (url) => {
          throw new Error(`bad address ${url}`)
        }
      })
      const outcome = outcomeOf(started)
      assert.strictEqual(outcome._tag, "Retry")
      const error = String(outcome._tag === "Retry" ? outcome.error : "")
      assert.match(error, /^open failed: bad address/)
      assert.deepStrictEqual(started.calls, ["end"])
      assert.strictEqual(started.deadlines.size(), 0)
      yield* Scope.close(started.scope, Exit.void)
    }))

  it.effect("the connect time-out fires at connectTimeout on the clock: Retry(ConnectTimeout), the socket terminated", () =>
    Effect.gen(function*() {
      const started = yield* start({ connectTimeout: "5 seconds" })
      assert.strictEqual(started.deadlines.size(), 1)
      yield* TestClock.adjust("4999 millis")
      assert.deepStrictEqual(started.ends, [])
      assert.isUndefined(started.socket.closedByClientWith)
      yield* TestClock.adjust("1 millis")
      const outcome = outcomeOf(started)
      assert.strictEqual(outcome._tag, "Retry")
      const error = outcome._tag === "Retry" ? outcome.error : ""
      assert.instanceOf(error, ConnectTimeout)
      assert.strictEqual(started.socket.closedByClientWith, 1006, "terminated, not closed politely")
      assert.strictEqual(started.deadlines.size(), 0)
      yield* Scope.close(started.scope, Exit.void)
    }))

  it.effect("a socket that opens in time cancels its connect time-out", () =>
    Effect.gen(function*() {
      const started = yield* start({ connectTimeout: "5 seconds" })
      yield* TestClock.adjust("4 seconds")
      started.socket.open()
      assert.strictEqual(started.deadlines.size(), 0)
      yield* TestClock.adjust("1 minute")
      assert.deepStrictEqual(started.ends, [])
      assert.isUndefined(started.socket.closedByClientWith)
      yield* Scope.close(started.scope, Exit.void)
    }))

  it.effect("a socket that fails before the time-out cancels it", () =>
    Effect.gen(function*() {
      const started = yield* start({ connectTimeout: "5 seconds" })
      started.socket.fail("connect ECONNREFUSED")
      assert.strictEqual(started.deadlines.size(), 0)
      yield* TestClock.adjust("1 minute")
      assert.strictEqual(started.ends.length, 1)
      yield* Scope.close(started.scope, Exit.void)
    }))

  it.effect("closing the attempt's scope closes an open socket with 1000", () =>
    Effect.gen(function*() {
      const started = yield* start()
      started.socket.open()
      assert.isUndefined(started.socket.closedByClientWith)
      yield* Scope.close(started.scope, Exit.void)
      assert.strictEqual(started.socket.closedByClientWith, 1000)
    }))

  it.effect("closing the attempt's scope while connecting closes the socket and drops its connect time-out", () =>
    Effect.gen(function*() {
      const started = yield* start({ connectTimeout: "5 seconds" })
      yield* Scope.close(started.scope, Exit.void)
      assert.strictEqual(started.socket.closedByClientWith, 1000)
      assert.strictEqual(started.deadlines.size(), 0, "no time-out left behind for an attempt that is over")
      yield* TestClock.adjust("1 minute")
      assert.deepStrictEqual(started.ends, [], "nothing ends an attempt after its scope closed")
    }))

  it.effect("closing the attempt's scope of a closing socket terminates it", () =>
    Effect.gen(function*() {
      const started = yield* start()
      started.socket.open()
      started.socket.readyState = 2
      let terminated = 0
      started.socket.terminate = () => {
        terminated += 1
      }
      yield* Scope.close(started.scope, Exit.void)
      assert.strictEqual(terminated, 1, "not left to a close handshake a hostile peer may never finish")
    }))

  it.effect("the Io: send writes to an open socket, and is refused (closing) otherwise; pause, resume, abort", () =>
    Effect.gen(function*() {
      const started = yield* start({ dialect: Dialect.observed })
      const io = started.io
      assert.isDefined(io)
      if (io === undefined) return
      const early = yield* Effect.either(io.send("{\"type\":\"x\"}", ANSWER))
      assert.strictEqual(early._tag, "Left")
      assert.isTrue(early._tag === "Left" && early.left.closing === true && early.left.retry)
      started.socket.open()
      const sent = yield* io.send("{\"type\":\"x\"}", ANSWER)
      assert.strictEqual(sent, "written")
      assert.deepStrictEqual(started.socket.sent, ["{\"type\":\"x\"}"])
      io.pause()
      assert.isTrue(started.socket.paused)
      started.socket.message("held")
      assert.deepStrictEqual(started.frames, [])
      io.resume()
      assert.deepStrictEqual(started.frames, ["held"])
      io.abort()
      assert.strictEqual(started.socket.closedByClientWith, 1006)
      yield* Scope.close(started.scope, Exit.void)
    }))
})
