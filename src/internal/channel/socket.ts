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
 * The semantics are the platform's, with `closeCodeIsError: (code) => code !== 1000` (1006, an
 * abrupt drop, is an error to reconnect from): an `error` event ends the attempt (an open failure
 * before `open`, a read failure after), a `close` event ends it with its code.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Predicate from "effect/Predicate"
import * as Redacted from "effect/Redacted"
import { Close, Socket as Sockets } from "effect-agent-session-core"
import type * as Dialect from "../../Dialect.js"
import { ConnectTimeout } from "../../Errors.js"
import * as Wire from "../../Wire.js"
import { closeOutcome, errorOutcome } from "./outcomes.js"
import type { Settings } from "./settings.js"
import type * as Deadlines from "./deadlines.js"
import { type Hooks, type Io, Retry, type SendFailure, type Transport } from "./transport.js"
import { maxPayloadOf, sizedConstructors } from "./upgrade.js"

/**
 * One socket of one attempt: the engine's `Io` over it, and the listener of its events (one
 * object, not a closure per event: it is held for as long as the connection is open).
 */
class SocketAttempt implements Io, EventListenerObject {
  opened = false
  connectTimeout: Deadlines.Entry | undefined = undefined
  private readonly pausable: Sockets.Pausable | undefined
  private readonly emitter: Sockets.Emitter | undefined
  /** `ws`'s own `message` event: the text without a WHATWG `MessageEvent` per message. */
  private readonly onWsMessage: ((data: unknown, isBinary: boolean) => void) | undefined

  constructor(
    readonly socket: globalThis.WebSocket,
    readonly hooks: Hooks,
    readonly settings: Settings,
    /** The session to name in the handshake message, if the dialect sends one (made at open: the key is not kept in it). */
    readonly handshakeFor: string | undefined
  ) {
    this.pausable = Sockets.isPausable(socket) ? socket : undefined
    this.emitter = Sockets.isEmitter(socket) ? socket : undefined
    this.onWsMessage = this.emitter === undefined
      ? undefined
      : (data, isBinary) => this.frame(Sockets.emitterFrameOf(data, isBinary))
  }

  // --- Io ---
  send(frame: string): Effect.Effect<"written", SendFailure> {
    return Effect.suspend(() => {
      // Closing or closed: how the socket ended (1000 or a drop) decides, when it arrives.
      if (this.socket.readyState !== Sockets.OPEN) {
        return Effect.fail({ retry: true, closing: true, message: Close.SOCKET_NOT_OPEN })
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
    Sockets.terminate(this.socket)
  }

  // --- the socket's events ---
  listen(): void {
    const socket = this.socket
    socket.addEventListener("close", this, { once: true })
    socket.addEventListener("error", this, { once: true })
    if (this.emitter !== undefined && this.onWsMessage !== undefined) this.emitter.on("message", this.onWsMessage)
    else socket.addEventListener("message", this)
    if (socket.readyState === Sockets.OPEN) this.open()
    else socket.addEventListener("open", this, { once: true })
  }
  handleEvent(event: Event): void {
    switch (event.type) {
      case "message":
        return Predicate.hasProperty(event, "data") ? this.data(event.data) : undefined
      case "open":
        return this.open()
      case "error":
        return this.ended(event, true)
      case "close":
        return this.ended(event, false)
    }
  }
  private data(data: unknown): void {
    this.frame(Sockets.frameOf(data))
  }
  private frame(frame: string | Uint8Array | undefined): void {
    if (frame !== undefined) this.hooks.frame(frame)
  }
  private open(): void {
    this.opened = true
    this.connectTimeout?.cancel()
    if (this.handshakeFor !== undefined) this.socket.send(Wire.handshakeMessage(this.hooks.key, this.handshakeFor))
    this.hooks.open()
  }
  private ended(event: Event, error: boolean): void {
    const { hooks, socket } = this
    if (this.emitter !== undefined && this.onWsMessage !== undefined) this.emitter.off("message", this.onWsMessage)
    else socket.removeEventListener("message", this)
    socket.removeEventListener(error ? "close" : "error", this)
    this.connectTimeout?.cancel()
    if (error) return hooks.end(errorOutcome(event, this.opened, socket, hooks.key, this.settings))
    const { code, reason } = Close.closeCodeOf(event)
    hooks.end(closeOutcome(code, reason, hooks.key))
  }
  /** The attempt is over: its connect time-out goes, and the socket is closed. */
  close(): void {
    this.connectTimeout?.cancel()
    Sockets.closeQuietly(this.socket)
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
      return hooks.end(Retry(Close.openFailed(cause, Redacted.value(hooks.key))))
    }
    ws.binaryType = "arraybuffer"
    const attempt = new SocketAttempt(
      ws,
      hooks,
      settings,
      dialect.handshake === "query" ? undefined : sessionId
    )
    hooks.attach(attempt)
    // The connect time-out goes with the attempt, whether or not the socket reports its close.
    yield* Effect.addFinalizer(() => Effect.sync(() => attempt.close()))
    const clock = yield* Effect.clock
    attempt.connectTimeout = yield* hooks.deadlines.schedule(
      clock.unsafeCurrentTimeMillis() + Duration.toMillis(settings.connectTimeout),
      () => {
        if (!attempt.opened) {
          Sockets.terminate(ws)
          hooks.end(Retry(new ConnectTimeout({ timeout: settings.connectTimeout })))
        }
        return undefined
      }
    )
    attempt.listen()
  })
