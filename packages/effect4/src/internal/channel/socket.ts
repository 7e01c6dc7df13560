/**
 * The WebSocket transport: one socket per attempt, made by the `Socket.WebSocketConstructor`
 * service (so a user's layer still swaps it) and read by a thin adapter of our own instead of
 * `Socket.makeWebSocket`'s pull-based reader.
 *
 * Why: the platform's reader needs a fiber pulling per connection, holds a buffer, a latch and a
 * scope of its own, and its back-pressure counts bytes; here the socket's listeners hand each
 * frame to the engine's hooks synchronously, the connect time-out is an entry of the shared timer,
 * and the engine pauses the socket itself (`ws`'s `pause()`/`resume()`) when its buffer of events
 * is full (docs/editions.md, "The event channel of the Effect 4 edition", has the measurement).
 *
 * The semantics are those of a socket whose every close fails, 1000 included (as Effect 4's
 * `Socket` reports them): the core's `Close` classifies the code; an `error` event ends the
 * attempt (an open failure before `open`, a read failure after).
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Predicate from "effect/Predicate"
import type * as Socket from "effect/socket/Socket"
import { Close } from "effect-agent-session-core"
import type * as Dialect from "../../Dialect.js"
import { ConnectTimeout } from "../../Errors.js"
import * as Wire from "../../Wire.js"
import type * as Deadlines from "./deadlines.js"
import { closeOutcome, errorOutcome } from "./outcomes.js"
import type { Settings } from "./settings.js"
import { type Hooks, type Io, Retry, scrub, type SendFailure, type Transport } from "./transport.js"
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
const terminate = (ws: Socket.WebSocketLike): void => {
  if (Predicate.hasProperty(ws, "terminate") && typeof ws.terminate === "function") {
    ws.terminate()
  } else {
    ws.close()
  }
}

const OPEN = 1
const CLOSING = 2

const noop = (): void => {}

const closeQuietly = (ws: Socket.WebSocketLike): void => {
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

/**
 * One socket of one attempt: the engine's `Io` over it, and the listener of its events (one
 * function for every WHATWG event, and `ws`'s own `message` event where there is one).
 */
class SocketAttempt implements Io {
  opened = false
  connectTimeout: Deadlines.Entry | undefined = undefined
  private readonly pausable: Pausable | undefined
  private readonly emitter: Emitter | undefined
  /** `ws`'s own `message` event: the text without a WHATWG `MessageEvent` per message. */
  private readonly onWsMessage: ((data: unknown, isBinary: boolean) => void) | undefined
  private readonly listener: (event: Socket.WebSocketEvent) => void

  constructor(
    readonly socket: Socket.WebSocketLike,
    readonly hooks: Hooks,
    readonly settings: Settings,
    /** The session to name in the handshake message, if the dialect sends one (made at open: the key is not kept in it). */
    readonly handshakeFor: string | undefined
  ) {
    this.pausable = isPausable(socket) ? socket : undefined
    this.emitter = isEmitter(socket) ? socket : undefined
    this.onWsMessage = this.emitter === undefined
      ? undefined
      : (data, isBinary) => (isBinary === false ? hooks.frame(String(data)) : this.data(data))
    this.listener = (event) => this.handleEvent(event)
  }

  // --- Io ---
  send(frame: string): Effect.Effect<"written", SendFailure> {
    return Effect.suspend(() => {
      // Closing or closed: how the socket ended (1000 or a drop) decides, when it arrives.
      if (this.socket.readyState !== OPEN) {
        return Effect.fail({ retry: true, closing: true, message: "the socket is not open" })
      }
      try {
        this.socket.send(frame)
        return Effect.succeed("written" as const)
      } catch (cause) {
        return Effect.fail({ retry: true, message: Close.describeCause(cause) })
      }
    })
  }
  pause(): void {
    this.pausable?.pause()
  }
  resume(): void {
    this.pausable?.resume()
  }
  abort(): void {
    terminate(this.socket)
  }

  // --- the socket's events ---
  listen(): void {
    const { listener, socket } = this
    socket.addEventListener("close", listener, { once: true })
    socket.addEventListener("error", listener, { once: true })
    if (this.emitter !== undefined && this.onWsMessage !== undefined) this.emitter.on("message", this.onWsMessage)
    else socket.addEventListener("message", listener)
    if (socket.readyState === OPEN) this.open()
    else socket.addEventListener("open", listener, { once: true })
  }
  private handleEvent(event: Socket.WebSocketEvent): void {
    switch (event.type) {
      case "message":
        return this.data(event.data)
      case "open":
        return this.open()
      case "error":
        return this.ended(event, true)
      case "close":
        return this.ended(event, false)
    }
  }
  private data(data: unknown): void {
    if (typeof data === "string") return this.hooks.frame(data)
    if (data instanceof ArrayBuffer) return this.hooks.frame(new Uint8Array(data))
    if (data instanceof Uint8Array) return this.hooks.frame(data)
  }
  private open(): void {
    this.opened = true
    this.connectTimeout?.cancel()
    if (this.handshakeFor !== undefined) this.socket.send(Wire.handshakeMessage(this.hooks.key, this.handshakeFor))
    this.hooks.open()
  }
  private ended(event: Socket.WebSocketEvent, error: boolean): void {
    const { hooks, listener, socket } = this
    if (this.emitter !== undefined && this.onWsMessage !== undefined) this.emitter.off("message", this.onWsMessage)
    else socket.removeEventListener("message", listener)
    socket.removeEventListener("open", listener)
    socket.removeEventListener(error ? "close" : "error", listener)
    this.connectTimeout?.cancel()
    if (error) return hooks.end(errorOutcome(event, this.opened, socket, hooks.key, this.settings))
    const { code, reason } = Close.closeCodeOf(event)
    hooks.end(closeOutcome(code, reason, hooks.key))
  }
  /** The attempt is over: its connect time-out goes, and the socket is closed. */
  close(): void {
    this.connectTimeout?.cancel()
    closeQuietly(this.socket)
  }
}

/** The WebSocket transport. */
export const webSocketTransport = (options: {
  readonly base: string
  readonly dialect: Dialect.Dialect
  readonly sessionId: string
  readonly settings: Settings
  readonly constructor: Socket.WebSocketConstructor["Service"]
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
    let ws: Socket.WebSocketLike
    try {
      const sized = sizedConstructors.get(options.constructor)
      ws = sized === undefined
        ? options.constructor(url)
        : sized(url, maxPayloadOf(settings), undefined)
    } catch (cause) {
      return hooks.end(Retry(`open failed: ${scrub(Close.describeCause(cause), hooks.key)}`))
    }
    if (Predicate.hasProperty(ws, "binaryType")) Reflect.set(ws, "binaryType", "arraybuffer")
    const attempt = new SocketAttempt(ws, hooks, settings, dialect.handshake === "query" ? undefined : sessionId)
    hooks.attach(attempt)
    // The connect time-out goes with the attempt, whether or not the socket reports its close.
    yield* Effect.addFinalizer(() => Effect.sync(() => attempt.close()))
    const clock = yield* Effect.clockWith(Effect.succeed)
    attempt.connectTimeout = yield* hooks.deadlines.schedule(
      clock.currentTimeMillisUnsafe() + Duration.toMillis(settings.connectTimeout),
      () => {
        if (!attempt.opened) {
          terminate(ws)
          hooks.end(Retry(new ConnectTimeout({ timeout: settings.connectTimeout })))
        }
        return undefined
      }
    )
    attempt.listen()
  })
