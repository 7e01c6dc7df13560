/**
 * The WebSocket transport: one socket per attempt, read through a thin adapter of our own over
 * the `Socket.WebSocketConstructor` service (so a user's layer still swaps the constructor),
 * instead of the platform's `Socket.runRaw`.
 *
 * Why: a connection read by `Socket.runRaw` costs a fiber of its own, its `FiberSet`, a latch and
 * an open-time-out race, and every frame is first wrapped by the platform (the heap it costs per
 * idle connection: src/internal/README.md, "One connection"). Here the socket's listeners call the
 * engine's hooks directly and synchronously: no fiber while the connection is open, the connect
 * time-out is an entry of the shared timer, and the engine pauses the socket itself (`ws`'s
 * `pause()`/`resume()`) when its buffer is full.
 *
 * A socket that cannot pause (a runtime's standard WHATWG `WebSocket`, `../standardWebSocket.ts`,
 * registered `pausable: false` with Bun's, whose `pause()` lets frames it had read already
 * through; a user's constructor without `pause()`/`resume()`) is bounded by the core's connection
 * instead: past `2 * bufferSize` events waiting for the consumer, the attempt ends with an
 * overflow, never retried, which the loop turns into `BufferOverflow` after every event before it.
 *
 * The semantics are the platform's, with `closeCodeIsError: (code) => code !== 1000` (1006, an
 * abrupt drop, is an error to reconnect from): an `error` event ends the attempt (an open failure
 * before `open`, a read failure after), a `close` event ends it with its code.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import { Close } from "effect-agent-session-core"
import { Socket as CoreSocket, WebSocketAttempt } from "effect-agent-session-core/shell"
import type * as Dialect from "../../Dialect.js"
import * as Wire from "../../Wire.js"
import { outcomes } from "../../../binding/internal/channel/outcomes.js"
import type { Settings } from "../../../binding/internal/channel/settings.js"
import { type AttemptOutcome, type Io, Retry, type SendFailure, type Transport } from "./transport.js"
import { maxPayloadOf, traitsOf } from "../../../binding/internal/channel/upgrade.js"

const written = Effect.succeed("written" as const)

/**
 * One socket of one attempt: the core's `WebSocketAttempt` (the socket's events, the attempt's
 * end), the engine's `Io` over it, and the socket's listener itself (one object, not a closure
 * per event: it is held for as long as the connection is open).
 */
class SocketAttempt extends WebSocketAttempt.WebSocketAttempt<
  Redacted.Redacted<string>,
  AttemptOutcome,
  Settings,
  EventListenerObject
> implements Io {
  protected get listener(): EventListenerObject {
    return this
  }
  send(frame: string): Effect.Effect<"written", SendFailure> {
    return Effect.suspend(() => {
      const failure = this.write(frame)
      return failure === undefined ? written : Effect.fail(failure)
    })
  }
}

/** The WebSocket transport. */
export const webSocketTransport = (options: {
  readonly base: string
  readonly dialect: Dialect.Dialect
  readonly sessionId: string
  readonly settings: Settings
  readonly constructor: (url: string, protocols?: string | Array<string> | undefined) => globalThis.WebSocket
}): Transport =>
(hooks) =>
  Effect.gen(function*() {
    const { dialect, sessionId, settings } = options
    const url = Wire.connectUrl({
      base: options.base,
      path: dialect.connectPath,
      handshake: dialect.handshake,
      sessionId,
      apiKey: hooks.key
    })
    yield* Effect.logDebug(`Connecting to ${Wire.redactUrl(url)}`)
    const traits = traitsOf(options.constructor)
    let ws: globalThis.WebSocket
    try {
      const sized = traits?.sized
      ws = sized === undefined ? options.constructor(url) : sized(url, maxPayloadOf(settings), undefined)
    } catch (cause) {
      return hooks.end(Retry(Close.openFailed(cause, Redacted.value(hooks.key))))
    }
    ws.binaryType = "arraybuffer"
    const attempt = new SocketAttempt(ws, hooks, outcomes, settings, dialect.handshake === "query" ? undefined : sessionId)
    // A socket that cannot pause is bounded by the core instead (`BufferOverflow`).
    hooks.attach(attempt, CoreSocket.isPausable(ws) && traits?.pausable !== false)
    // The connect time-out goes with the attempt, whether or not the socket reports its close.
    yield* Effect.addFinalizer(() => Effect.sync(() => attempt.close()))
    const clock = yield* Effect.clock
    attempt.connectTimeout = yield* hooks.deadlines.schedule(
      clock.unsafeCurrentTimeMillis() + Duration.toMillis(settings.connectTimeout),
      () => {
        attempt.connectTimedOut()
        return undefined
      }
    )
    attempt.listen()
  })
