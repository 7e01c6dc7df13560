/**
 * A scripted in-memory WebSocket for the event channel's unit tests, for both editions: the test
 * opens it, sends frames, closes it with any code, fails it, and reads what the client sent.
 * Frames waiting to be delivered respect `pause()`/`resume()` exactly, like a socket that stops
 * reading. Each edition's `test/shared/FakeWebSocket.ts` (written once, bound by its `test/helpers/line.ts`) binds it to its `Socket` layer.
 */
export class FakeWebSocket extends EventTarget implements WebSocket {
  static readonly CONNECTING = 0
  static readonly OPEN = 1
  static readonly CLOSING = 2
  static readonly CLOSED = 3
  readonly CONNECTING = 0
  readonly OPEN = 1
  readonly CLOSING = 2
  readonly CLOSED = 3
  binaryType: BinaryType = "blob"
  readonly bufferedAmount = 0
  readonly extensions = ""
  readonly protocol = ""
  onclose: WebSocket["onclose"] = null
  onerror: WebSocket["onerror"] = null
  onmessage: WebSocket["onmessage"] = null
  onopen: WebSocket["onopen"] = null
  readyState = 0

  /** Text frames the client sent, in order. */
  readonly sent: Array<string> = []
  /** The code the client closed with, if it did. */
  closedByClientWith: number | undefined
  /** Whether the client asked to stop reading. */
  paused = false
  /** How many times the client paused reading. */
  pauses = 0
  /** Frames waiting to be delivered (or a generator of them). */
  private readonly pending: Array<string> = []
  private source: Iterator<string> | undefined
  private pumping = false
  protected readonly listening = new Set<string>()
  /** Frames are still delivered while closing (as `ws` does, {@link FakeWsSocket}). */
  protected readsWhileClosing = false

  constructor(readonly url: string) {
    super()
  }

  override addEventListener(
    type: string,
    listener: EventListenerOrEventListenerObject | null,
    options?: AddEventListenerOptions | boolean
  ): void {
    this.listening.add(type)
    super.addEventListener(type, listener, options)
  }

  /** Whether the client listens for this event yet. */
  listens(type: string): boolean {
    return this.listening.has(type)
  }

  send(data: string | ArrayBufferLike | Blob | ArrayBufferView): void {
    if (this.readyState !== 1) throw new Error("not open")
    this.sent.push(typeof data === "string" ? data : "<binary>")
  }

  close(code?: number, _reason?: string): void {
    if (this.readyState >= 2) return
    this.closedByClientWith = code
    this.readyState = 3
  }

  pause(): void {
    if (!this.paused) this.pauses += 1
    this.paused = true
  }

  resume(): void {
    this.paused = false
    this.pump()
  }

  terminate(): void {
    this.close(1006)
  }

  // --- the server's side ---

  open(): void {
    this.readyState = 1
    this.dispatchEvent(new Event("open"))
  }

  /** Delivers frames now (or as soon as reading resumes). */
  message(...frames: ReadonlyArray<string>): void {
    this.pending.push(...frames)
    this.pump()
  }

  /** Delivers frames from a generator, respecting pause. */
  stream(frames: Iterable<string>): void {
    this.source = frames[Symbol.iterator]()
    this.pump()
  }

  /** Closes from the server's side with a code. */
  serverClose(code: number, reason = ""): void {
    if (this.readyState === 3 && this.closedByClientWith !== undefined) return
    this.readyState = 3
    this.dispatchEvent(Object.assign(new Event("close"), { code, reason, wasClean: code === 1000 }))
  }

  /** Fails (an open failure before `open`, a read error after), then closes with 1006. */
  fail(message: string): void {
    this.dispatchEvent(Object.assign(new Event("error"), { message }))
    this.serverClose(1006)
  }

  private pump(): void {
    if (this.pumping) return
    this.pumping = true
    try {
      while (!this.paused && (this.readyState === 1 || (this.readsWhileClosing && this.readyState === 2))) {
        let next = this.pending.shift()
        if (next === undefined && this.source !== undefined) {
          const result = this.source.next()
          if (result.done === true) this.source = undefined
          else next = result.value
        }
        if (next === undefined) break
        this.dispatchEvent(new MessageEvent("message", { data: next }))
      }
    } finally {
      this.pumping = false
    }
  }
}

/**
 * A fake socket as the `ws` package's are: an emitter besides the WHATWG interface (its own
 * `message` event, with the data and whether it is binary), and one that, closed by the client,
 * stays closing and reads on until the server's close answers (`serverClose`).
 */
export class FakeWsSocket extends FakeWebSocket {
  private readonly onMessage = new Map<(data: unknown, isBinary: boolean) => void, EventListener>()

  constructor(url: string) {
    super(url)
    this.readsWhileClosing = true
  }

  on(type: "message", listener: (data: unknown, isBinary: boolean) => void): this {
    const wrapped: EventListener = (event) => listener((event as MessageEvent).data, false)
    this.onMessage.set(listener, wrapped)
    this.listening.add(type)
    super.addEventListener(type, wrapped)
    return this
  }

  off(type: "message", listener: (data: unknown, isBinary: boolean) => void): this {
    const wrapped = this.onMessage.get(listener)
    this.onMessage.delete(listener)
    if (wrapped !== undefined) super.removeEventListener(type, wrapped)
    return this
  }

  override close(code?: number, _reason?: string): void {
    if (this.readyState >= 2) return
    this.closedByClientWith = code
    this.readyState = 2
  }

  override terminate(): void {
    if (this.readyState === 3) return
    this.closedByClientWith ??= 1006
    this.readyState = 3
  }
}

/** The fake server: every socket the client created, in order. */
export interface FakeServer {
  readonly sockets: Array<FakeWebSocket>
  /** Called on every new socket (synchronously, before the client listens). */
  onCreate: ((socket: FakeWebSocket) => void) | undefined
}

export const makeFakeServer = (): FakeServer => ({ sockets: [], onCreate: undefined })
