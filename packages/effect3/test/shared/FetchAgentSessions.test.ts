/**
 * `FetchAgentSessions` and what it brings: the runtime's standard `WebSocket` (no headers, no
 * pause) and the bound the WebSocket transport keeps for it (`BufferOverflow`). Over scripted
 * in-memory sockets (`FakeWebSocket.ts`) put in place of the runtime's global `WebSocket`; the
 * same layer over real sockets on the runtimes is each edition's `test/runtimes/runtimes.test.ts`.
 * Written once for both editions: no case differs, so neither keeps a file of its own.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as Credentials from "../../src/Credentials.js"
import * as Dialect from "../../src/Dialect.js"
import * as Errors from "../../src/Errors.js"
import * as FetchAgentSessions from "../../src/FetchAgentSessions.js"
import type * as NodeAgentSessions from "../../src/NodeAgentSessions.js"
import * as internal from "../../binding/internal/eventStream.js"
import * as StandardWebSocket from "../../binding/internal/standardWebSocket.js"
import { FakeWebSocket } from "./FakeWebSocket.js"
import { action, KEY, SESSION, startedFrame, URL_BASE } from "./events.js"
import { failureIn, forkChild, outcomes, scoped, successOf, yieldNow } from "../helpers/line.js"

/** A socket as a runtime's standard `WebSocket` is: no `pause()`/`resume()`. */
class Unpausable extends FakeWebSocket {}
Object.defineProperty(Unpausable.prototype, "pause", { value: undefined })
Object.defineProperty(Unpausable.prototype, "resume", { value: undefined })

/** A socket whose `pause()` lets frames through (Bun's, for frames it had read already). */
class LeakyPause extends FakeWebSocket {
  override pause(): void {
    this.pauses += 1
  }
}

/** Runs `body` with `globalThis.WebSocket` replaced by `socket`'s class; every socket made is kept. */
const withGlobalWebSocket = <A, E, R>(
  socket: typeof FakeWebSocket,
  body: (made: Array<FakeWebSocket>) => Effect.Effect<A, E, R>
) => {
  const made: Array<FakeWebSocket> = []
  const Recording = class extends socket {
    constructor(url: string) {
      super(url)
      made.push(this)
    }
  }
  return Effect.acquireUseRelease(
    Effect.sync(() => {
      const original = globalThis.WebSocket
      globalThis.WebSocket = Recording as unknown as typeof WebSocket
      return original
    }),
    () => body(made),
    (original) => Effect.sync(() => (globalThis.WebSocket = original))
  )
}

/** Waits (letting other fibers run) until the `n`-th socket exists and is listened to. */
const socketOf = (made: Array<FakeWebSocket>, n: number) =>
  Effect.gen(function*() {
    for (let i = 0; i < 10_000; i++) {
      const socket = made[n - 1]
      if (socket !== undefined && socket.listens("open") && socket.listens("message")) return socket
      yield* yieldNow()
    }
    return yield* Effect.die(new Error(`socket ${n} was never created`))
  })

/** The standard constructor and the key. */
const layer = Layer.merge(StandardWebSocket.layer, Credentials.layer({ apiKey: KEY }))

/** The error type of a layer. */
type ErrorOf<T> = T extends Layer.Layer<infer _A, infer E, infer _R> ? E : never

/**
 * A connection over the standard constructor with `bufferSize` 4, whose consumer takes one chunk
 * and then nothing while the socket delivers 100 frames: what the consumer gets in the end.
 */
const overrun = (made: Array<FakeWebSocket>) =>
  Effect.gen(function*() {
    const engine = yield* internal.connectEngine({ url: URL_BASE }, SESSION, { bufferSize: 4 }).pipe(
      Effect.provide(layer)
    )
    const pull = yield* Stream.toPull(engine.connection.events)
    const first = yield* forkChild(pull)
    const socket = yield* socketOf(made, 1)
    socket.open()
    socket.stream((function*() {
      yield startedFrame(SESSION)
      for (let i = 1; i < 100; i++) yield action(i)
    })())
    const taken = yield* Fiber.join(first).pipe(Effect.orDie)
    const rest = Array.from(yield* Stream.runCollect(outcomes(Stream.fromPull(Effect.succeed(pull)))))
    const events = [...Array.from(taken), ...rest.flatMap((r) => {
      const event = successOf(r)
      return event === undefined ? [] : [event]
    })]
    const last = rest.at(-1)
    return {
      socket,
      events,
      failure: last !== undefined ? failureIn(last) : undefined,
      peak: engine.peakBuffered()
    }
  })

describe("FetchAgentSessions", () => {
  scoped("a socket that cannot pause: at most 2 x bufferSize events wait, then BufferOverflow after every one of them, in order", () =>
    withGlobalWebSocket(Unpausable, (made) =>
      Effect.gen(function*() {
        const { events, failure, peak, socket } = yield* overrun(made)
        assert.instanceOf(failure, Errors.BufferOverflow)
        assert.strictEqual((failure as Errors.BufferOverflow).limit, 8)
        assert.strictEqual((failure as Errors.BufferOverflow).sessionId, SESSION)
        assert.isTrue((failure as Errors.BufferOverflow).mayStillBeRunning)
        assert.isAtMost(peak, 8)
        assert.strictEqual(events.length, 8, "every event buffered before the bound was delivered")
        assert.deepStrictEqual(
          events.map((event) => event._tag === "ActionRun" ? event.name : event._tag),
          ["Started", ...Array.from({ length: 7 }, (_, i) => `click-${i + 1}`)]
        )
        assert.strictEqual(socket.closedByClientWith, 1000, "the connection was closed")
        assert.strictEqual(made.length, 1, "never reopened")
      })
    ))

  scoped("a standard socket whose pause lets frames through (Bun's) is bounded as well", () =>
    withGlobalWebSocket(LeakyPause, (made) =>
      Effect.gen(function*() {
        const { events, failure, peak, socket } = yield* overrun(made)
        assert.isAbove(socket.pauses, 0, "reading was asked to pause")
        assert.instanceOf(failure, Errors.BufferOverflow)
        assert.isAtMost(peak, 8)
        assert.strictEqual(events.length, 8)
      })
    ))

  scoped("the documented dialect: the key goes in the first message, never in the address, and no header is asked for", () =>
    withGlobalWebSocket(FakeWebSocket, (made) =>
      Effect.gen(function*() {
        const engine = yield* internal.connectEngine({ url: "ws://127.0.0.1:9", dialect: Dialect.documented }, SESSION).pipe(
          Effect.provide(layer)
        )
        const fiber = yield* forkChild(Stream.runCollect(engine.connection.events))
        const socket = yield* socketOf(made, 1)
        socket.open()
        socket.message(startedFrame(SESSION))
        assert.notInclude(socket.url, KEY)
        assert.strictEqual(socket.url, "ws://127.0.0.1:9/v1/connect")
        assert.deepStrictEqual(JSON.parse(socket.sent[0] ?? "{}"), { apiKey: KEY, sessionId: SESSION })
        yield* engine.connection.close
        yield* Fiber.join(fiber)
      })
    ))

  scoped("a plain ws:// address to a host that is not loopback is refused before any socket, as on Node", () =>
    withGlobalWebSocket(FakeWebSocket, (made) =>
      Effect.gen(function*() {
        const error = yield* Effect.flip(
          internal.connectEngine({ url: "ws://agents.example.com" }, SESSION).pipe(
            Effect.provide(layer)
          )
        )
        assert.instanceOf(error, Errors.InsecureTransport)
        assert.strictEqual(made.length, 0)
      })
    ))

  it("has the options, variables and errors of NodeAgentSessions", () => {
    const options: NodeAgentSessions.Options = { apiKey: KEY, baseUrl: "http://127.0.0.1:9" }
    assert.isTrue(Layer.isLayer(FetchAgentSessions.layer(options)))
    assert.isTrue(Layer.isLayer(FetchAgentSessions.layerConfig()))
    const same: ErrorOf<ReturnType<typeof FetchAgentSessions.layerConfig>> extends
      ErrorOf<ReturnType<typeof NodeAgentSessions.layerConfig>> ? true : false = true
    assert.isTrue(same)
  })
})
