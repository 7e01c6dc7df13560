/**
 * `StreamWebSocket` over a scripted `WebSocketStream` (web streams the test feeds): the socket
 * events the transport reads, a read only while not paused (what waits stays in the stream), every
 * message before the close, an open failure as an `error`. Deno's own `WebSocketStream` runs under
 * it in the runtime tiers (`packages/effect3/test/runtimes/`, `packages/effect4/test/runtimes/`).
 */
import { describe, expect, it } from "vitest"
import { Socket, StreamWebSocket } from "../src/index.js"

/** A `WebSocketStream` whose messages, end and writes the test controls. */
class ScriptedStream implements StreamWebSocket.WebSocketStreamLike {
  static last: ScriptedStream | undefined
  readonly opened: StreamWebSocket.WebSocketStreamLike["opened"]
  readonly closed: StreamWebSocket.WebSocketStreamLike["closed"]
  readonly written: Array<string | Uint8Array> = []
  closedWith: { readonly closeCode?: number | undefined; readonly reason?: string | undefined } | undefined
  /** How many messages were pulled from the source (read by the socket or buffered ahead). */
  pulls = 0
  private controller: ReadableStreamDefaultController<string | Uint8Array> | undefined
  private open: (() => void) | undefined
  private refuse: ((cause: unknown) => void) | undefined
  private end: ((info: { closeCode: number; reason: string }) => void) | undefined

  constructor(readonly url: string, readonly options?: { readonly protocols?: ReadonlyArray<string> | undefined }) {
    ScriptedStream.last = this
    const readable = new ReadableStream<string | Uint8Array>({
      start: (controller) => {
        this.controller = controller
      },
      pull: () => {
        this.pulls += 1
      }
    }, { highWaterMark: 0 })
    const writable = new WritableStream<string | Uint8Array>({ write: (chunk) => void this.written.push(chunk) })
    this.opened = new Promise((resolve, reject) => {
      this.open = () => resolve({ readable, writable })
      this.refuse = reject
    })
    this.closed = new Promise((resolve) => {
      this.end = resolve
    })
  }

  accept(): void {
    this.open?.()
  }
  fail(cause: unknown): void {
    this.refuse?.(cause)
  }
  message(data: string | Uint8Array): void {
    this.controller?.enqueue(data)
  }
  /** The service closes: the readable ends after what it holds, then `closed` says how. */
  serverClose(closeCode: number, reason: string): void {
    this.controller?.close()
    this.end?.({ closeCode, reason })
  }
  close(info?: { readonly closeCode?: number | undefined; readonly reason?: string | undefined }): void {
    this.closedWith = info
    this.serverClose(info?.closeCode ?? 1000, info?.reason ?? "")
  }
}

const Stream: StreamWebSocket.WebSocketStreamConstructor = ScriptedStream

/** Lets the stream's promises settle. */
const settle = async (rounds = 20): Promise<void> => {
  for (let i = 0; i < rounds; i++) await Promise.resolve()
}

/** A socket over a scripted stream, its events recorded as text. */
const opened = () => {
  const socket = new StreamWebSocket.StreamWebSocket("ws://127.0.0.1:1/v1/connect", ["v1"], Stream)
  const stream = ScriptedStream.last!
  const seen: Array<string> = []
  socket.addEventListener("open", () => seen.push("open"), { once: true })
  socket.addEventListener("message", (event) => seen.push(`message ${String(event.data)}`))
  socket.addEventListener("close", (event) => seen.push(`close ${event.code} ${event.reason}`), { once: true })
  socket.addEventListener("error", (event) => seen.push(`error ${event.message}`), { once: true })
  return { socket, stream, seen }
}

describe("StreamWebSocket", () => {
  it("is not available on Node (no WebSocketStream): the editions keep the standard WebSocket there", () => {
    expect(StreamWebSocket.available()).toBeUndefined()
  })

  it("standard: the runtime's WebSocketStream when it has one and it is asked for (pausable), else its WebSocket (not)", () => {
    expect(StreamWebSocket.standard().pausable).toBe(false)
    expect(StreamWebSocket.standard(true).pausable).toBe(false)
    Reflect.set(globalThis, "WebSocketStream", Stream)
    try {
      const streams = StreamWebSocket.standard()
      expect(streams.pausable).toBe(true)
      const socket = streams.open("ws://127.0.0.1:1/v1/connect", ["v1"])
      expect(socket).toBeInstanceOf(StreamWebSocket.StreamWebSocket)
      expect(ScriptedStream.last?.options?.protocols).toEqual(["v1"])
      expect(StreamWebSocket.standard(false).pausable).toBe(false)
    } finally {
      Reflect.deleteProperty(globalThis, "WebSocketStream")
    }
  })

  it("opens, delivers messages in order, writes, and can pause (a pausable socket to the transport)", async () => {
    const { seen, socket, stream } = opened()
    expect([socket.readyState, Socket.isPausable(socket), stream.options?.protocols]).toEqual([0, true, ["v1"]])
    stream.accept()
    await settle()
    expect(socket.readyState).toBe(Socket.OPEN)
    stream.message("a")
    stream.message("b")
    await settle()
    socket.send("answer")
    await settle()
    expect(seen).toEqual(["open", "message a", "message b"])
    expect(stream.written).toEqual(["answer"])
  })

  it("paused, it reads nothing more: messages wait in the stream until resumed, then come in order", async () => {
    const { seen, socket, stream } = opened()
    stream.accept()
    await settle()
    // Paused from the first message's listener, as the transport pauses on a full buffer.
    socket.addEventListener("message", () => socket.pause(), { once: true })
    for (const data of ["1", "2", "3", "4"]) stream.message(data)
    await settle()
    expect(seen).toEqual(["open", "message 1"])
    socket.resume()
    await settle()
    expect(seen).toEqual(["open", "message 1", "message 2", "message 3", "message 4"])
  })

  it("a close while paused comes after every message before it, once resumed (a pause lets through only the read already asked)", async () => {
    const { seen, socket, stream } = opened()
    stream.accept()
    await settle()
    // A read is pending since the open: the first message answers it, then reading stops.
    socket.pause()
    stream.message("x")
    stream.message("y")
    stream.serverClose(1000, "done")
    await settle()
    expect(seen).toEqual(["open", "message x"])
    socket.resume()
    await settle()
    expect(seen).toEqual(["open", "message x", "message y", "close 1000 done"])
    expect(socket.readyState).toBe(3)
  })

  it("close() closes the stream with the code and reports the close", async () => {
    const { seen, socket, stream } = opened()
    stream.accept()
    await settle()
    socket.close(1000)
    await settle()
    expect(stream.closedWith).toEqual({ closeCode: 1000, reason: undefined })
    expect(seen).toEqual(["open", "close 1000 "])
  })

  it("a stream that does not open: an error (an open failure), then a close 1006; nothing is sent", async () => {
    const { seen, socket, stream } = opened()
    stream.fail(new Error("connection refused"))
    await settle()
    socket.send("late")
    expect(seen).toEqual(["error connection refused", "close 1006 "])
    expect([socket.readyState, stream.written]).toEqual([3, []])
  })

  it("a listener removed hears nothing more; one added twice is called once", async () => {
    const { socket, stream } = opened()
    const heard: Array<string> = []
    const listener = (event: StreamWebSocket.SocketEvent): void => void heard.push(String(event.data))
    socket.addEventListener("message", listener)
    socket.addEventListener("message", listener)
    stream.accept()
    await settle()
    stream.message("one")
    await settle()
    socket.removeEventListener("message", listener)
    stream.message("two")
    await settle()
    expect(heard).toEqual(["one"])
  })
})
