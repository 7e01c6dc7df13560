/**
 * A WebSocket that pauses, over a runtime's `WebSocketStream` (Deno's, with `--unstable-net` in
 * Deno 2.9; the WHATWG proposal): the socket interface the WebSocket transport reads (`readyState`,
 * `send`, `close`, the `open`/`message`/`error`/`close` events) plus `pause()`/`resume()`, which
 * stop and restart the reads from the stream's `readable`. A message is read only while the
 * consumer wants more: the stream's own back-pressure then holds the rest in the runtime (and, past
 * its buffer, in the network), so a slow consumer needs no overflow bound.
 *
 * Order is kept: every message read before the stream ends is delivered before the `close` event,
 * which comes only once the `readable` is drained (a close while paused waits for the resume).
 * Written once for both editions: each edition's standard-WebSocket constructor uses it where the
 * runtime has `WebSocketStream` ({@link available}).
 *
 * @since 0.1.0
 */
import * as Socket from "./Socket.js"

/**
 * The part of the WHATWG `WebSocketStream` used here.
 *
 * @since 0.1.0
 * @category models
 */
export interface WebSocketStreamLike {
  readonly opened: Promise<{
    readonly readable: ReadableStream<string | Uint8Array>
    readonly writable: WritableStream<string | Uint8Array>
  }>
  readonly closed: Promise<{ readonly closeCode?: number | undefined; readonly reason?: string | undefined }>
  close(info?: { readonly closeCode?: number | undefined; readonly reason?: string | undefined }): void
}

/**
 * A `WebSocketStream` constructor.
 *
 * @since 0.1.0
 * @category models
 */
export type WebSocketStreamConstructor = new(
  url: string,
  options?: { readonly protocols?: ReadonlyArray<string> | undefined }
) => WebSocketStreamLike

/**
 * The runtime's `WebSocketStream`, if it has one (Deno 2.9 with `--unstable-net`; not Node 22, not
 * Bun 1.4).
 *
 * @since 0.1.0
 * @category accessors
 */
export const available = (): WebSocketStreamConstructor | undefined => {
  const found: unknown = Reflect.get(globalThis, "WebSocketStream")
  return typeof found === "function" ? (found as WebSocketStreamConstructor) : undefined
}

/**
 * How the runtime's own WebSockets open (an edition's constructor over the standard `WebSocket`):
 * over its `WebSocketStream` when it has one and `streams` asks for it, a {@link StreamWebSocket}
 * that pauses (it reads a message only while the consumer wants more); else its standard
 * `WebSocket`, which cannot pause (no `pause()`/`resume()`: the core's connection then bounds
 * what waits for the consumer).
 *
 * @since 0.1.0
 * @category constructors
 */
export const standard = (
  streams: boolean = available() !== undefined
): {
  readonly pausable: boolean
  readonly open: (url: string, protocols: string | Array<string> | undefined) => StreamWebSocket | WebSocket
} => {
  const Stream = streams ? available() : undefined
  return Stream === undefined
    ? { pausable: false, open: (url, protocols) => new globalThis.WebSocket(url, protocols) }
    : { pausable: true, open: (url, protocols) => new StreamWebSocket(url, protocols, Stream) }
}

/** `readyState` once closed (the WHATWG value). */
const CLOSED = 3

type EventType = "open" | "message" | "error" | "close"
type Listener = ((event: SocketEvent) => void) | { handleEvent(event: SocketEvent): void }

/**
 * An event of the socket: its `type`, and a message's `data`, a close's `code` and `reason`, an
 * error's `error` and `message`.
 *
 * @since 0.1.0
 * @category models
 */
export interface SocketEvent {
  readonly type: EventType
  readonly data?: string | Uint8Array
  readonly code?: number
  readonly reason?: string
  readonly error?: unknown
  readonly message?: string
}

/**
 * A WebSocket over a `WebSocketStream`, that pauses.
 *
 * @since 0.1.0
 * @category models
 */
export class StreamWebSocket {
  readyState: number = 0
  /** Messages come as text or bytes (`Uint8Array`) whatever this says: kept for the transport. */
  binaryType = "arraybuffer"
  private readonly stream: WebSocketStreamLike
  private readonly listeners = new Map<EventType, Array<{ readonly listener: Listener; readonly once: boolean }>>()
  private reader: ReadableStreamDefaultReader<string | Uint8Array> | undefined = undefined
  private writer: WritableStreamDefaultWriter<string | Uint8Array> | undefined = undefined
  private paused = false
  private reading = false
  private ended = false

  constructor(url: string, protocols: string | ReadonlyArray<string> | undefined, Stream: WebSocketStreamConstructor) {
    this.stream = new Stream(url, protocols === undefined ? undefined : { protocols: typeof protocols === "string" ? [protocols] : protocols })
    this.stream.opened.then(
      ({ readable, writable }) => {
        if (this.ended) return
        this.reader = readable.getReader()
        this.writer = writable.getWriter()
        this.readyState = Socket.OPEN
        this.emit({ type: "open" })
        this.pump()
      },
      (cause: unknown) => this.fail(cause)
    )
    // Observed here only so that a rejection is never unhandled; the close is reported by `pump`.
    this.stream.closed.catch(() => undefined)
  }

  /**
   * Stops reading: messages wait in the stream (and the network) until {@link resume}. A read
   * already asked when the pause comes (the socket waits for a message) still delivers its one
   * message; a pause from a message's listener, as the transport's, stops at once.
   */
  pause(): void {
    this.paused = true
  }

  /** Reads again. */
  resume(): void {
    if (!this.paused) return
    this.paused = false
    this.pump()
  }

  /**
   * Writes a message to an open socket (the transport checks `readyState` first). As with a
   * standard `WebSocket`, a write that fails later is not reported here: the stream's end is.
   */
  send(data: string): void {
    if (this.readyState !== Socket.OPEN) return
    this.writer?.write(data).catch(() => undefined)
  }

  close(code?: number, reason?: string): void {
    if (this.readyState >= Socket.CLOSING) return
    this.readyState = Socket.CLOSING
    try {
      this.stream.close({ closeCode: code, reason })
    } catch {
      // Closed already: the stream's end reports it.
    }
    // Read what is left, so that the end is seen.
    this.paused = false
    this.pump()
  }

  addEventListener(type: EventType, listener: Listener, options?: { readonly once?: boolean }): void {
    const list = this.listeners.get(type) ?? []
    if (list.some((entry) => entry.listener === listener)) return
    list.push({ listener, once: options?.once === true })
    this.listeners.set(type, list)
  }

  removeEventListener(type: EventType, listener: Listener): void {
    const list = this.listeners.get(type)
    if (list === undefined) return
    this.listeners.set(type, list.filter((entry) => entry.listener !== listener))
  }

  private emit(event: SocketEvent): void {
    const list = this.listeners.get(event.type)
    if (list === undefined || list.length === 0) return
    this.listeners.set(event.type, list.filter((entry) => !entry.once))
    for (const { listener } of list) {
      if (typeof listener === "function") listener(event)
      else listener.handleEvent(event)
    }
  }

  /** Reads while not paused; at the end of the readable, reports the close (or the error). */
  private pump(): void {
    const reader = this.reader
    if (this.reading || this.paused || this.ended || reader === undefined) return
    this.reading = true
    const next = (): void => {
      reader.read().then(
        (result) => {
          if (result.done) return this.finish()
          this.emit({ type: "message", data: result.value })
          if (this.paused || this.ended) {
            this.reading = false
            return
          }
          next()
        },
        (cause: unknown) => this.finish(cause)
      )
    }
    next()
  }

  /** The readable ended: the close as the stream reports it, or the read's failure. */
  private finish(readFailure?: unknown): void {
    this.reading = false
    if (this.ended) return
    this.ended = true
    this.stream.closed.then(
      ({ closeCode, reason }) => {
        this.readyState = CLOSED
        this.emit({ type: "close", code: closeCode ?? 1005, reason: reason ?? "" })
      },
      (cause: unknown) => {
        this.readyState = CLOSED
        if (readFailure !== undefined) this.emit(errorEvent(readFailure))
        else this.emit({ type: "close", code: closeCodeOf(cause), reason: "" })
      }
    )
  }

  /** The stream did not open: an `error` (an open failure), then a `close`. */
  private fail(cause: unknown): void {
    if (this.ended) return
    this.ended = true
    this.readyState = CLOSED
    this.emit(errorEvent(cause))
    this.emit({ type: "close", code: 1006, reason: "" })
  }
}

const errorEvent = (cause: unknown): SocketEvent => ({
  type: "error",
  error: cause,
  message: cause instanceof Error ? cause.message : String(cause)
})

/** The close code a failed stream carries (`WebSocketError.closeCode`), else an abnormal close. */
const closeCodeOf = (cause: unknown): number => {
  const code: unknown = typeof cause === "object" && cause !== null ? Reflect.get(cause, "closeCode") : undefined
  return typeof code === "number" ? code : 1006
}
