/**
 * How the editions handle a WebSocket of an attempt, whatever made it (the platform's WHATWG
 * `WebSocket`, the `ws` package's, a test's): which sockets can pause their reading, which give
 * `ws`'s own `message` event, what a message's data is as a frame, and how an attempt's socket
 * is closed (1000 when it can be, dropped at once when it is closing already). Written against
 * the smallest interface both editions' sockets have; it does no I/O of its own.
 *
 * @since 0.1.0
 */

/**
 * `readyState` of an open socket (`WebSocket.OPEN`).
 *
 * @since 0.1.0
 * @category models
 */
export const OPEN = 1

/**
 * `readyState` of a socket that is closing (`WebSocket.CLOSING`).
 *
 * @since 0.1.0
 * @category models
 */
export const CLOSING = 2

/**
 * What closing a socket needs of it.
 *
 * @since 0.1.0
 * @category models
 */
export interface Closable {
  readonly readyState: number
  close(code?: number): void
  addEventListener(type: "error", listener: () => void): void
}

/**
 * A socket whose reading can be paused (the `ws` package's sockets can).
 *
 * @since 0.1.0
 * @category models
 */
export interface Pausable {
  readonly pause: () => void
  readonly resume: () => void
}

const hasMethod = <K extends string>(value: object, name: K): value is { readonly [k in K]: (...args: Array<never>) => unknown } =>
  name in value && typeof (value as Record<K, unknown>)[name] === "function"

/**
 * Whether the socket can pause its reading (`pause` and `resume` methods).
 *
 * @since 0.1.0
 * @category guards
 */
export const isPausable = (ws: object): ws is Pausable => hasMethod(ws, "pause") && hasMethod(ws, "resume")

/**
 * A socket of the `ws` package: an EventEmitter besides the WHATWG interface, whose own `message`
 * event gives the text without a `MessageEvent` per message.
 *
 * @since 0.1.0
 * @category models
 */
export interface Emitter {
  readonly on: (event: "message", listener: (data: unknown, isBinary: boolean) => void) => unknown
  readonly off: (event: "message", listener: (data: unknown, isBinary: boolean) => void) => unknown
}

/**
 * Whether the socket is an EventEmitter with `on` and `off` (the `ws` package's sockets are).
 *
 * @since 0.1.0
 * @category guards
 */
export const isEmitter = (ws: object): ws is Emitter => hasMethod(ws, "on") && hasMethod(ws, "off")

/**
 * A socket of the `ws` package seen as the EventEmitter it is, for all its events: `open`,
 * `message` (its data and whether it is binary), `close` (its code and reason) and `error` (the
 * error). Listening through `on` costs no WHATWG event wrapper per listener nor an event object
 * per call; whether a socket's own events have these arguments is the constructor's to say.
 *
 * @since 0.1.0
 * @category models
 */
export interface EventSource {
  readonly on: (event: "open" | "message" | "close" | "error", listener: (...args: Array<never>) => void) => unknown
  readonly off: (event: "open" | "message" | "close" | "error", listener: (...args: Array<never>) => void) => unknown
}

/**
 * A message's data as a frame: text as it is, binary as bytes; anything else (a `Blob`, which
 * `binaryType = "arraybuffer"` rules out) is no frame.
 *
 * @since 0.1.0
 * @category constructors
 */
export const frameOf = (data: unknown): string | Uint8Array | undefined => {
  if (typeof data === "string") return data
  if (data instanceof ArrayBuffer) return new Uint8Array(data)
  if (data instanceof Uint8Array) return data
  return undefined
}

/**
 * The frame of `ws`'s own `message` event: a text message (`isBinary === false`) is its text.
 *
 * @since 0.1.0
 * @category constructors
 */
export const emitterFrameOf = (data: unknown, isBinary: boolean): string | Uint8Array | undefined =>
  isBinary === false ? String(data) : frameOf(data)

/**
 * Drops the connection at once when the socket can (`ws`'s `terminate()`), else closes it.
 *
 * @since 0.1.0
 * @category constructors
 */
export const terminate = (ws: Closable): void => {
  if (hasMethod(ws, "terminate")) {
    ws.terminate()
  } else {
    ws.close()
  }
}

const noop = (): void => {}

/**
 * Closes an attempt's socket without a word from it: with 1000 while it is connecting or open;
 * dropped at once when it is closing already (after a read error, or a close the peer may never
 * complete: a hostile peer would hold the socket until `ws`'s close time-out), or when `close`
 * throws.
 *
 * @since 0.1.0
 * @category constructors
 */
export const closeQuietly = (ws: Closable): void => {
  // `ws` emits `error` when a socket still connecting is closed: keep it from being unhandled.
  ws.addEventListener("error", noop)
  if (ws.readyState === CLOSING) return terminate(ws)
  if (ws.readyState <= OPEN) {
    try {
      ws.close(1000)
    } catch {
      terminate(ws)
    }
  }
}
