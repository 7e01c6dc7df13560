/**
 * One WebSocket attempt of the event channel, driven from the socket's own events: the handshake
 * message on open, each message handed to the attempt's hooks as a frame, synchronously, and the
 * attempt's end decided from how the socket ended (an `error` event: an open failure before
 * `open`, a read failure after; a `close` event: by its code, `Close.classifyClose`). The
 * connect time-out's verdict is here too; its timer is the edition's.
 *
 * The socket is any WebSocket (the platform's WHATWG one, the `ws` package's, a test's) seen
 * through {@link SocketHandle}; the edition subclasses {@link WebSocketAttempt} to add the one
 * thing that needs its Effect line, writing an answer as an `Effect`, and to say what it adds as
 * the socket's listener (the object itself where the socket takes listener objects, a function
 * otherwise). One object per attempt, its methods shared by every connection: the attempt is held
 * for as long as the connection is open.
 *
 * @since 0.1.0
 */
import { Close, Frame, Secrets, type Connection } from "effect-agent-session-core"
import type { Entry } from "./Deadlines.js"
import * as Socket from "./Socket.js"
import type { Outcomes, Settings } from "./Outcomes.js"
import { rejectionOf } from "./Upgrade.js"

/**
 * The events of a socket an attempt listens to.
 *
 * @since 0.1.0
 * @category models
 */
export type EventType = "open" | "message" | "error" | "close"

/**
 * An event of the socket, as far as the attempt reads it (a message's `data`, a close's `code`
 * and `reason`, an error's `error` are read where they are).
 *
 * @since 0.1.0
 * @category models
 */
export interface SocketEvent {
  readonly type?: string | undefined
}

/**
 * What the attempt needs of a socket; `L` is what it takes as a listener.
 *
 * @since 0.1.0
 * @category models
 */
export interface SocketHandle<L> {
  readonly readyState: number
  send(data: string): void
  close(code?: number): void
  addEventListener(type: "error", listener: () => void): void
  addEventListener(type: EventType, listener: L, options?: { readonly once?: boolean }): void
  removeEventListener(type: EventType, listener: L): void
}

/**
 * What the attempt calls of the engine (the edition's `Hooks` fit): the key, `open` once open
 * (the handshake sent), `frame` per message, `end` with how the attempt ended (the first call
 * wins: the engine ignores the others).
 *
 * @since 0.1.0
 * @category models
 */
export interface Hooks<K, O> {
  readonly key: K
  readonly open: () => void
  readonly frame: (data: string | Uint8Array) => void
  readonly end: (outcome: O) => void
}

/**
 * One socket of one attempt. The edition makes the socket, subclasses this with its `send` and
 * its `listener`, hands it to the engine (`attach`), schedules the connect time-out
 * ({@link WebSocketAttempt.connectTimedOut}), calls {@link WebSocketAttempt.listen}, and
 * {@link WebSocketAttempt.close} when the attempt is over.
 *
 * @since 0.1.0
 * @category models
 */
export abstract class WebSocketAttempt<K, O, S extends Settings, L> {
  /** Whether the socket opened. */
  opened = false
  /** The connect time-out (its entry in the edition's timer), dropped once the socket opens or the attempt ends. */
  connectTimeout: Entry | undefined = undefined
  private readonly pausable: Socket.Pausable | undefined
  private readonly emitter: Socket.Emitter | undefined
  /** `ws`'s own `message` event: the text without a WHATWG `MessageEvent` per message. */
  private readonly onWsMessage: ((data: unknown, isBinary: boolean) => void) | undefined
  /** The socket as the source of all its own events (`ownEvents`), if it is listened to so. */
  private readonly source: Socket.EventSource | undefined
  private readonly onWsOpen: (() => void) | undefined
  private readonly onWsClose: ((code: unknown, reason: unknown) => void) | undefined
  private readonly onWsError: ((error: unknown) => void) | undefined
  /** The attempt has ended (its first `error` or `close`): later events are not its. */
  private over = false
  /** The close was sent by {@link WebSocketAttempt.drain}: reading on until the service's. */
  private draining = false

  /** What the socket is given as its listener: every event it calls goes to {@link handleEvent}. */
  protected abstract readonly listener: L

  constructor(
    readonly socket: SocketHandle<L>,
    readonly hooks: Hooks<K, O>,
    readonly outcomes: Outcomes<K, O, S>,
    readonly settings: S,
    /** The session to name in the handshake message, if the dialect sends one (made at open: the key is not kept in it). */
    readonly handshakeFor: string | undefined,
    /**
     * The socket is the `ws` package's (its constructor says so): its own `open`, `close` and
     * `error` events are listened to through `on`, with `ws`'s arguments, instead of through
     * `addEventListener`, and no listener is removed before the attempt ends.
     */
    ownEvents = false
  ) {
    this.pausable = Socket.isPausable(socket) ? socket : undefined
    this.emitter = Socket.isEmitter(socket) ? socket : undefined
    this.onWsMessage = this.emitter === undefined
      ? undefined
      : (data, isBinary) => this.frame(Socket.emitterFrameOf(data, isBinary))
    this.source = ownEvents && this.emitter !== undefined ? (socket as unknown as Socket.EventSource) : undefined
    if (this.source !== undefined) {
      this.onWsOpen = () => this.open()
      // Read as the WHATWG events are (`Close.closeCodeOf`, `Close.socketErrorKind`).
      this.onWsClose = (code, reason) => {
        const event = { type: "close", code, reason: reasonText(reason) }
        this.ended(event, false)
      }
      this.onWsError = (error) => {
        const event = { type: "error", error, message: Close.describeCause(error) }
        this.ended(event, true)
      }
    }
  }

  /**
   * Writes one answer to an open socket: `undefined` once written, else why not (closing or
   * closed: how the socket ended, 1000 or a drop, decides when it arrives).
   */
  write(frame: string): Connection.WriteFailure | undefined {
    if (this.socket.readyState !== Socket.OPEN) return { retry: true, closing: true, message: Close.SOCKET_NOT_OPEN }
    try {
      this.socket.send(frame)
      return undefined
    } catch (cause) {
      return { retry: true, message: Close.describeCause(cause) }
    }
  }
  /** Stops reading, where the socket can (back-pressure). */
  pause(): void {
    this.pausable?.pause()
  }
  /** Reads again. */
  resume(): void {
    this.pausable?.resume()
  }
  /** Drops the connection at once (idle time-out). */
  abort(): void {
    Socket.terminate(this.socket)
  }
  /**
   * Sends the close (1000) and reads on until the service's close ends the attempt
   * (`Reader.drain`): every frame the service sent before it saw the close still arrives. Only on
   * an open socket of `ws` (an emitter: its `message` event still fires while it closes); a
   * standard `WebSocket` drops what arrives once it is closing, so it is not asked (false:
   * nothing was sent). Asked again while draining: true, nothing sent again.
   */
  drain(): boolean {
    if (this.draining && !this.over) return true
    if (this.emitter === undefined || this.over || this.socket.readyState !== Socket.OPEN) return false
    this.draining = true
    this.socket.close(1000)
    return true
  }

  /** Listens to the socket; opens at once a socket already open. */
  listen(): void {
    const { listener, socket, source, onWsClose, onWsError, onWsMessage, onWsOpen } = this
    if (source !== undefined && onWsOpen && onWsClose && onWsError && onWsMessage) {
      source.on("close", onWsClose)
      source.on("error", onWsError)
      source.on("message", onWsMessage)
      if (socket.readyState === Socket.OPEN) this.open()
      else source.on("open", onWsOpen)
      return
    }
    socket.addEventListener("close", listener, { once: true })
    socket.addEventListener("error", listener, { once: true })
    if (this.emitter !== undefined && this.onWsMessage !== undefined) this.emitter.on("message", this.onWsMessage)
    else socket.addEventListener("message", listener)
    if (socket.readyState === Socket.OPEN) this.open()
    else socket.addEventListener("open", listener, { once: true })
  }
  /** One event of the socket. */
  handleEvent(event: SocketEvent): void {
    switch (event.type) {
      case "message":
        return "data" in event ? this.frame(Socket.frameOf(event.data)) : undefined
      case "open":
        return this.open()
      case "error":
        return this.ended(event, true)
      case "close":
        return this.ended(event, false)
    }
  }
  /**
   * The connect time-out came due: a socket not open yet is dropped and the attempt ends
   * (`Outcomes.timedOut`); one that opened meanwhile is left alone.
   */
  connectTimedOut(): void {
    if (this.opened) return
    // Ended first: a socket may report its own `error` as it is dropped (a standard `WebSocket`
    // closed while connecting: "closed before it was established"), which must not end the
    // attempt as an open failure in place of the time-out.
    this.hooks.end(this.outcomes.timedOut(this.settings))
    Socket.terminate(this.socket)
  }
  /** The attempt is over: its connect time-out goes, and the socket is closed. */
  close(): void {
    this.connectTimeout?.cancel()
    Socket.closeQuietly(this.socket)
  }

  private frame(frame: string | Uint8Array | undefined): void {
    if (frame !== undefined) this.hooks.frame(frame)
  }
  private open(): void {
    if (this.opened || this.over) return
    this.opened = true
    this.connectTimeout?.cancel()
    if (this.handshakeFor !== undefined) {
      this.socket.send(Frame.handshakeMessage(this.outcomes.reveal(this.hooks.key), this.handshakeFor))
    }
    this.hooks.open()
  }
  private ended(event: SocketEvent, error: boolean): void {
    if (this.over) return
    this.over = true
    const { listener, socket, source, onWsClose, onWsError, onWsMessage, onWsOpen } = this
    if (source !== undefined && onWsOpen && onWsClose && onWsError && onWsMessage) {
      source.off("message", onWsMessage)
      source.off("open", onWsOpen)
      source.off("close", onWsClose)
      source.off("error", onWsError)
    } else {
      if (this.emitter !== undefined && this.onWsMessage !== undefined) this.emitter.off("message", this.onWsMessage)
      else socket.removeEventListener("message", listener)
      socket.removeEventListener("open", listener)
      socket.removeEventListener(error ? "close" : "error", listener)
    }
    this.connectTimeout?.cancel()
    if (error) return this.hooks.end(this.errorOutcome(event))
    const { code, reason } = Close.closeCodeOf(event)
    this.hooks.end(this.closeOutcome(code, reason))
  }

  /** How an `error` event ends the attempt: before `open` an open failure, after it a read failure. */
  private errorOutcome(cause: unknown): O {
    const { hooks, outcomes, settings } = this
    const key = outcomes.reveal(hooks.key)
    switch (Close.socketErrorKind(cause, this.opened)) {
      case "too-large":
        // Refused while read, never retried (the service would send it again). Its exact size is
        // unknown: it is at least one byte over what the socket accepted.
        return outcomes.tooLarge(
          Close.maxPayload(settings.maxFrameSize, settings.failOnFrameError) + 1,
          settings.maxFrameSize
        )
      case "invalid-utf8":
        return outcomes.malformed(Close.INVALID_UTF8)
      case "read-failed":
        return outcomes.retry(Close.readFailed(cause, key))
      case "open-failed":
        break
    }
    const rejection = rejectionOf(this.socket, cause)
    if (rejection !== undefined) {
      const { reason, status } = rejection
      const refusal = Close.classifyRefusal(status, "upgrade")
      return refusal._tag === "Rejected"
        ? outcomes.rejected(status, Secrets.scrubChannelText(reason, key))
        : outcomes.retry(refusal.message)
    }
    return outcomes.retry(Close.openFailed(cause, key))
  }

  /** How a `close` event ends the attempt: by its code, the reason scrubbed of the key. */
  private closeOutcome(code: number, closeReason: string): O {
    const { hooks, outcomes } = this
    const reason = Secrets.scrubChannelText(closeReason, outcomes.reveal(hooks.key))
    const verdict = Close.classifyClose(code, reason)
    switch (verdict._tag) {
      case "Ended":
        return outcomes.ended()
      case "Rejected":
        return outcomes.rejected(code, reason)
      case "Superseded":
        // A newer connection took the session over: reconnecting would take it back.
        return outcomes.superseded(reason)
      case "Dropped":
        return outcomes.retry(verdict.message)
    }
  }
}

/** A `close` reason as `ws` gives it (a `Buffer`) or as text. */
const reasonText = (reason: unknown): string =>
  typeof reason === "string" ? reason : reason instanceof Uint8Array ? new TextDecoder().decode(reason) : ""
