/**
 * The WebSocket transport: one socket per attempt, made by the `Socket.WebSocketConstructor`
 * service (so a user's layer still swaps it) and read by a thin adapter of our own instead of the
 * platform's socket reader (`Socket.runRaw`, `Socket.makeWebSocket`'s).
 *
 * Why: the platform's reader needs a fiber per connection, holds a buffer, a latch and a scope of
 * its own (the heap it costs per idle connection: src/internal/README.md, "One connection"), and
 * wraps every frame first; here the socket's listeners hand each frame to the engine's hooks
 * synchronously, the connect time-out is an entry of the shared timer, and the engine pauses the
 * socket itself (`ws`'s `pause()`/`resume()`) when its buffer of events is full.
 *
 * The semantics are those of a socket whose every close but 1000 fails (1006, an abrupt drop, is
 * an error to reconnect from): the core's `Close` classifies the code; an `error` event ends the
 * attempt (an open failure before `open`, a read failure after).
 *
 * A socket that cannot pause (a runtime's standard WHATWG `WebSocket`: no `pause()`/`resume()`)
 * keeps delivering after the engine asked it to pause, and so does Bun's, whose `pause()` lets the
 * frames it had read already through (every socket of `../standardWebSocket.ts` is treated so:
 * its constructor is registered `pausable: false`, `./upgrade.ts`). The attempt tells the core's
 * connection so as it attaches: the connection bounds what waits for the consumer at
 * `2 * bufferSize` and ends the attempt with an overflow (never retried), which the loop turns
 * into `BufferOverflow`. Memory stays bounded; every event received before the overflow is
 * delivered, then the stream fails.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Predicate from "effect/Predicate"
import * as Redacted from "effect/Redacted"
import { Close } from "effect-agent-session-core"
import { Socket as CoreSocket, WebSocketAttempt } from "effect-agent-session-shell"
import type * as Dialect from "../../../src/Dialect.js"
import * as Wire from "../../../src/Wire.js"
import {
  currentTimeMillis,
  socketListener,
  type SocketListener,
  type WebSocketConstructorService,
  type WebSocketLike
} from "../../../src/internal/line.js"
import type { Settings } from "./settings.js"
import { outcomes } from "./outcomes.js"
import { type AttemptOutcome, type Io, Retry, type SendFailure, type Transport } from "./transport.js"
import { maxPayloadOf, traitsOf } from "./upgrade.js"

const written = Effect.succeed("written" as const)

/**
 * One socket of one attempt: the core's `WebSocketAttempt` (the socket's events, the attempt's
 * end), the engine's `Io` over it, and the socket's listener (the object itself where the line's
 * socket takes listener objects, one function for every event where it takes none: `line.ts`).
 */
class SocketAttempt extends WebSocketAttempt.WebSocketAttempt<
  Redacted.Redacted<string>,
  AttemptOutcome,
  Settings,
  SocketListener
> implements Io {
  protected readonly listener: SocketListener = socketListener(this)
  send(frame: string): Effect.Effect<"written", SendFailure> {
    return Effect.suspend(() => {
      const failure = this.write(frame)
      return failure === undefined ? written : Effect.fail(failure)
    })
  }
}

/**
 * The WebSocket transport to `base`, shared by the connections of a service: each attempt reads
 * its connection's session and settings from its hooks.
 */
export const webSocketTransport = (options: {
  readonly base: string
  readonly dialect: Dialect.Dialect
  readonly constructor: WebSocketConstructorService
}): Transport =>
(hooks) =>
  Effect.gen(function*() {
    const { dialect } = options
    const { sessionId, settings } = hooks
    const url = Wire.connectUrl({
      base: options.base,
      path: dialect.connectPath,
      handshake: dialect.handshake,
      sessionId,
      apiKey: hooks.key
    })
    yield* Effect.logDebug(`Connecting to ${Wire.redactUrl(url)}`)
    const traits = traitsOf(options.constructor)
    let ws: WebSocketLike
    try {
      const sized = traits?.sized
      ws = sized === undefined ? options.constructor(url) : sized(url, maxPayloadOf(settings), undefined)
    } catch (cause) {
      return hooks.end(Retry(Close.openFailed(cause, Redacted.value(hooks.key))))
    }
    if (Predicate.hasProperty(ws, "binaryType")) Reflect.set(ws, "binaryType", "arraybuffer")
    const attempt = new SocketAttempt(
      ws,
      hooks,
      outcomes,
      settings,
      dialect.handshake === "query" ? undefined : sessionId,
      traits?.ownEvents === true
    )
    // Its `close` (the engine's `Io.close` at the attempt's end) drops the connect time-out and
    // closes the socket, whether or not the socket reported its close.
    hooks.attach(attempt, CoreSocket.isPausable(ws) && traits?.pausable !== false)
    const clock = yield* Effect.clockWith(Effect.succeed)
    attempt.connectTimeout = yield* hooks.deadlines.schedule(
      currentTimeMillis(clock) + Duration.toMillis(settings.connectTimeout),
      () => {
        attempt.connectTimedOut()
        return undefined
      }
    )
    attempt.listen()
  })
