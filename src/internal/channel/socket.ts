/**
 * The WebSocket transport: one socket per attempt, read through a thin adapter of our own over
 * the `Socket.WebSocketConstructor` service (so a user's layer still swaps the constructor),
 * instead of the platform's `Socket.runRaw`.
 *
 * Why (measured, bench/RESULTS.md "floors", 1,000 connections on this machine): a connection read
 * by `Socket.runRaw` costs a fiber of its own, its `FiberSet`, a latch and an open-time-out race,
 * about 54 KiB of heap per idle connection against 32 KiB for the same socket feeding a
 * `Mailbox` from its callback; and every frame is first wrapped by the platform. Here the
 * socket's listeners call the engine's hooks directly and synchronously: no fiber while the
 * connection is open, the connect time-out is an entry of the shared timer, and the engine
 * pauses the socket itself (`ws`'s `pause()`/`resume()`) when its buffer is full.
 *
 * The semantics are the platform's, with `closeCodeIsError: (code) => code !== 1000` (1006, an
 * abrupt drop, is an error to reconnect from): an `error` event ends the attempt (an open failure
 * before `open`, a read failure after), a `close` event ends it with its code.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Predicate from "effect/Predicate"
import type * as Dialect from "../../Dialect.js"
import { ConnectTimeout } from "../../Errors.js"
import * as Wire from "../../Wire.js"
import { closeCodeOf, closeOutcome, errorOutcome } from "./outcomes.js"
import type { Settings } from "./settings.js"
import { describeCause, type Io, Retry, scrub, type Transport } from "./transport.js"
import { maxPayloadOf, sizedConstructors } from "./upgrade.js"

/** A socket whose reading can be paused (the `ws` package's sockets can). */
interface Pausable {
  readonly pause: () => void
  readonly resume: () => void
}

const isPausable = (ws: object): ws is Pausable =>
  Predicate.hasProperty(ws, "pause") && typeof ws.pause === "function" &&
  Predicate.hasProperty(ws, "resume") && typeof ws.resume === "function"

/** A socket of the `ws` package (an EventEmitter besides the WHATWG interface). */
interface Emitter {
  readonly on: (event: "message", listener: (data: unknown, isBinary: boolean) => void) => unknown
  readonly off: (event: "message", listener: (data: unknown, isBinary: boolean) => void) => unknown
}

const isEmitter = (ws: object): ws is Emitter =>
  Predicate.hasProperty(ws, "on") && typeof ws.on === "function" &&
  Predicate.hasProperty(ws, "off") && typeof ws.off === "function"

/** Drops the connection at once when the socket can (`ws`'s `terminate()`), else closes it. */
const terminate = (ws: globalThis.WebSocket): void => {
  if (Predicate.hasProperty(ws, "terminate") && typeof ws.terminate === "function") {
    ws.terminate()
  } else {
    ws.close()
  }
}

const OPEN = 1
const CLOSING = 2

const noop = (): void => {}

const closeQuietly = (ws: globalThis.WebSocket): void => {
  // `ws` emits `error` when a socket still connecting is closed: keep it from being unhandled.
  ws.addEventListener("error", noop)
  // Closing already (after a read error, or a close the peer may never complete): nothing
  // polite is left to do, and a hostile peer would hold the socket until `ws`'s close time-out.
  if (ws.readyState === CLOSING) return terminate(ws)
  if (ws.readyState <= OPEN) {
    try {
      ws.close(1000)
    } catch {
      terminate(ws)
    }
  }
}

const socketIo = (ws: globalThis.WebSocket): Io => {
  const pausable = isPausable(ws) ? ws : undefined
  return {
    send: (frame) =>
      Effect.suspend(() => {
        // Closing or closed: how the socket ended (1000 or a drop) decides, when it arrives.
        if (ws.readyState !== OPEN) return Effect.fail({ retry: true, closing: true, message: "the socket is not open" })
        try {
          ws.send(frame)
          return Effect.succeed("written" as const)
        } catch (cause) {
          return Effect.fail({ retry: true, message: describeCause(cause) })
        }
      }),
    pause: () => pausable?.pause(),
    resume: () => pausable?.resume(),
    abort: () => terminate(ws)
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
    let ws: globalThis.WebSocket
    try {
      const sized = sizedConstructors.get(options.constructor)
      ws = sized === undefined ? options.constructor(url) : sized(url, maxPayloadOf(settings))
    } catch (cause) {
      return hooks.end(Retry(`open failed: ${scrub(describeCause(cause), hooks.key)}`))
    }
    const socket = ws
    socket.binaryType = "arraybuffer"
    hooks.attach(socketIo(socket))
    // The connect time-out goes with the attempt, whether or not the socket reports its close.
    let cancelConnectTimeout = noop
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        cancelConnectTimeout()
        closeQuietly(socket)
      })
    )
    let opened = false
    const clock = yield* Effect.clock
    const connectTimeout = yield* hooks.deadlines.schedule(
      clock.unsafeCurrentTimeMillis() + Duration.toMillis(settings.connectTimeout),
      () => {
        if (!opened) {
          terminate(socket)
          hooks.end(Retry(new ConnectTimeout({ timeout: settings.connectTimeout })))
        }
        return undefined
      }
    )
    cancelConnectTimeout = connectTimeout.cancel
    const onData = (data: unknown): void => {
      if (typeof data === "string") return hooks.frame(data)
      if (data instanceof ArrayBuffer) return hooks.frame(new Uint8Array(data))
      if (data instanceof Uint8Array) return hooks.frame(data)
    }
    const onMessage = (event: MessageEvent): void => onData(event.data)
    // A `ws` socket is read through its own `message` event, without the WHATWG `MessageEvent`
    // made per message: the same text (`ws` decodes it so for its `MessageEvent` too), less work.
    const emitter = isEmitter(socket) ? socket : undefined
    const onWsMessage = (data: unknown, isBinary: boolean): void =>
      isBinary ? onData(data) : hooks.frame(String(data))
    const stopReading = (): void => {
      if (emitter !== undefined) emitter.off("message", onWsMessage)
      else socket.removeEventListener("message", onMessage)
    }
    const onError = (event: Event): void => {
      stopReading()
      socket.removeEventListener("close", onClose)
      connectTimeout.cancel()
      hooks.end(errorOutcome(event, opened, socket, hooks.key, settings))
    }
    const onClose = (event: CloseEvent): void => {
      stopReading()
      socket.removeEventListener("error", onError)
      connectTimeout.cancel()
      const { code, reason } = closeCodeOf(event)
      hooks.end(closeOutcome(code, reason, hooks.key))
    }
    const onOpen = (): void => {
      opened = true
      connectTimeout.cancel()
      if (dialect.handshake !== "query") socket.send(Wire.handshakeMessage(hooks.key, sessionId))
      hooks.open()
    }
    socket.addEventListener("close", onClose, { once: true })
    socket.addEventListener("error", onError, { once: true })
    if (emitter !== undefined) emitter.on("message", onWsMessage)
    else socket.addEventListener("message", onMessage)
    if (socket.readyState === OPEN) onOpen()
    else socket.addEventListener("open", onOpen, { once: true })
  })
