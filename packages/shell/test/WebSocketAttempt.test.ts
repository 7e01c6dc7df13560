/**
 * The WebSocket attempt over a scripted fake socket handle, with hooks that record every call:
 * the handshake, frames in order (WHATWG messages and `ws`'s own), how each close code and error
 * ends the attempt (the key scrubbed from what is kept), the connect time-out's verdict, writes,
 * pause and resume, a drain, and closing the attempt.
 */
import { EventEmitter } from "node:events"
import { describe, expect, it } from "vitest"
import { Upgrade, WebSocketAttempt } from "../src/index.js"
import { KEY, key, outcomes, settings, type TestSettings, type Wrapped } from "./helpers.js"

type Listener = { handleEvent(event: WebSocketAttempt.SocketEvent): void }

/** A socket that records what is done to it and lets the test fire its events. */
class FakeSocket implements WebSocketAttempt.SocketHandle<Listener> {
  readyState = 0
  readonly sent: Array<string> = []
  readonly done: Array<string> = []
  sendThrows: Error | undefined = undefined
  readonly listeners = new Map<string, Set<Listener | (() => void)>>()
  /** Listeners added `once`: dropped as they fire, as a socket does. */
  private readonly once = new Map<string, Set<Listener | (() => void)>>()

  send(data: string): void {
    if (this.sendThrows !== undefined) throw this.sendThrows
    this.sent.push(data)
  }
  close(code?: number): void {
    this.done.push(`close ${code ?? ""}`.trim())
    this.readyState = 3
  }
  addEventListener(type: string, listener: Listener | (() => void), options?: { readonly once?: boolean }): void {
    const set = this.listeners.get(type) ?? new Set()
    set.add(listener)
    this.listeners.set(type, set)
    if (options?.once === true) this.once.set(type, (this.once.get(type) ?? new Set()).add(listener))
  }
  removeEventListener(type: string, listener: Listener): void {
    this.listeners.get(type)?.delete(listener)
    this.once.get(type)?.delete(listener)
  }
  listening(type: string): number {
    return this.listeners.get(type)?.size ?? 0
  }
  fire(event: WebSocketAttempt.SocketEvent & Record<string, unknown>): void {
    const set = this.listeners.get(event.type ?? "")
    for (const listener of [...(set ?? [])]) {
      if (this.once.get(event.type ?? "")?.delete(listener) === true) set?.delete(listener)
      if (typeof listener === "function") listener()
      else listener.handleEvent(event)
    }
  }
  open(): void {
    this.readyState = 1
    this.fire({ type: "open" })
  }
  message(data: unknown): void {
    this.fire({ type: "message", data })
  }
  serverClose(code: number, reason = ""): void {
    this.readyState = 3
    this.fire({ type: "close", code, reason })
  }
  fail(error: unknown): void {
    this.fire({ type: "error", ...(typeof error === "string" ? { message: error } : { error }) })
  }
}

/** A `ws` socket: it pauses, terminates, and gives its own `message` event. */
class FakeWsSocket extends FakeSocket {
  onMessage: ((data: unknown, isBinary: boolean) => void) | undefined = undefined
  pause(): void {
    this.done.push("pause")
  }
  resume(): void {
    this.done.push("resume")
  }
  terminate(): void {
    this.done.push("terminate")
    this.readyState = 3
  }
  on(_event: "message", listener: (data: unknown, isBinary: boolean) => void): void {
    this.onMessage = listener
  }
  off(_event: "message", listener: (data: unknown, isBinary: boolean) => void): void {
    if (this.onMessage === listener) this.onMessage = undefined
  }
}

/** The attempt as an edition subclasses it: the object itself its socket's listener. */
class Attempt extends WebSocketAttempt.WebSocketAttempt<Wrapped, string, TestSettings, Listener> {
  protected get listener(): Listener {
    return this
  }
}

interface Recorded {
  readonly calls: Array<string>
  readonly frames: Array<string | Uint8Array>
  readonly ends: Array<string>
  /** What the socket had been sent when `open` was called. */
  readonly sentAtOpen: Array<ReadonlyArray<string>>
}

const start = (
  options: { readonly socket?: FakeSocket; readonly handshakeFor?: string; readonly listen?: boolean } = {}
) => {
  const socket = options.socket ?? new FakeSocket()
  const recorded: Recorded = { calls: [], frames: [], ends: [], sentAtOpen: [] }
  const hooks: WebSocketAttempt.Hooks<Wrapped, string> = {
    key,
    open: () => {
      recorded.sentAtOpen.push(socket.sent.slice())
      recorded.calls.push("open")
    },
    frame: (data) => {
      recorded.frames.push(data)
      recorded.calls.push("frame")
    },
    end: (outcome) => {
      recorded.ends.push(outcome)
      recorded.calls.push("end")
    }
  }
  const attempt = new Attempt(socket, hooks, outcomes, settings, options.handshakeFor)
  let cancelled = 0
  attempt.connectTimeout = {
    cancel: () => {
      cancelled += 1
    }
  }
  if (options.listen !== false) attempt.listen()
  return { attempt, socket, ...recorded, cancelled: () => cancelled }
}

describe("WebSocketAttempt", () => {
  it("the message handshake: the key and session sent on open, before the engine hears of it", () => {
    const started = start({ handshakeFor: "session-42" })
    expect(started.calls).toEqual([])
    started.socket.open()
    expect(started.calls).toEqual(["open"])
    expect(started.sentAtOpen).toEqual([[JSON.stringify({ apiKey: KEY, sessionId: "session-42" })]])
    expect(started.attempt.opened).toBe(true)
    expect(started.cancelled()).toBe(1)
  })

  it("the query handshake: nothing sent on open", () => {
    const started = start()
    started.socket.open()
    expect(started.calls).toEqual(["open"])
    expect(started.socket.sent).toEqual([])
  })

  it("a socket already open is opened at once, and not listened to for `open`", () => {
    const socket = new FakeSocket()
    socket.readyState = 1
    const started = start({ socket, handshakeFor: "s" })
    expect(started.calls).toEqual(["open"])
    expect(socket.sent.length).toBe(1)
    expect(socket.listening("open")).toBe(0)
  })

  it("frames reach hooks.frame in order, text and binary; data that is no frame is skipped", () => {
    const started = start()
    started.socket.open()
    started.socket.message("a")
    started.socket.message(new Uint8Array([1, 2, 3]).buffer)
    started.socket.message({ blob: true })
    started.socket.fire({ type: "message" })
    started.socket.message("b")
    expect(started.frames).toEqual(["a", new Uint8Array([1, 2, 3]), "b"])
  })

  it("a `ws` socket is read through its own `message` event, text as text, and let go at the end", () => {
    const socket = new FakeWsSocket()
    const started = start({ socket })
    expect(socket.listening("message")).toBe(0)
    socket.open()
    socket.onMessage?.(Buffer.from("text"), false)
    socket.onMessage?.(new Uint8Array([7]), true)
    expect(started.frames).toEqual(["text", new Uint8Array([7])])
    socket.serverClose(1000)
    expect(socket.onMessage).toBeUndefined()
  })

  it("close 1000: ended, its listeners removed, nothing after it", () => {
    const started = start()
    started.socket.open()
    started.socket.serverClose(1000, "bye")
    expect(started.ends).toEqual(["ended"])
    started.socket.message("late")
    started.socket.fail("late error")
    expect(started.frames).toEqual([])
    expect(started.ends).toEqual(["ended"])
    for (const type of ["open", "message", "error", "close"]) expect(started.socket.listening(type)).toBe(0)
  })

  it("a close reason that echoes the key: retried with the code and the reason, the key scrubbed", () => {
    const started = start()
    started.socket.open()
    started.socket.serverClose(1011, `internal error for ${KEY}`)
    expect(started.ends).toEqual(["retry: closed with code 1011: internal error for <redacted>"])
    const dropped = start()
    dropped.socket.serverClose(1006)
    expect(dropped.ends).toEqual(["retry: closed with code 1006"])
  })

  it("a close without a code is an abnormal close (1006)", () => {
    const started = start()
    started.socket.fire({ type: "close" })
    expect(started.ends).toEqual(["retry: closed with code 1006"])
  })

  for (const code of [1008, 4001, 4003, 4401, 4403]) {
    it(`close ${code} whose reason echoes the key: rejected, the key scrubbed`, () => {
      const started = start()
      started.socket.open()
      started.socket.serverClose(code, `invalid key ${KEY}`)
      expect(started.ends).toEqual([`rejected ${code}: invalid key <redacted>`])
    })
  }

  it("close 4000 whose reason echoes the key: superseded, the key scrubbed", () => {
    const started = start()
    started.socket.open()
    started.socket.serverClose(4000, `taken over from ${KEY}`)
    expect(started.ends).toEqual(["superseded: taken over from <redacted>"])
  })

  it("an error before open: retried as an open failure, the key scrubbed; the close after it is no second end", () => {
    const started = start()
    started.socket.fail(`connect ECONNREFUSED ws://service.test/v1/connect?apiKey=${KEY}`)
    expect(started.ends.length).toBe(1)
    expect(started.ends[0]).toMatch(/^retry: open failed: connect ECONNREFUSED/)
    expect(started.ends[0]).not.toContain(KEY)
    started.socket.serverClose(1006)
    expect(started.ends.length).toBe(1)
    expect(started.calls).not.toContain("open")
    expect(started.cancelled()).toBe(1)
  })

  it("an error after open: retried as a read failure, the key scrubbed", () => {
    const started = start()
    started.socket.open()
    started.socket.fail(`read ECONNRESET ${KEY}`)
    expect(started.ends).toEqual(["retry: read failed: read ECONNRESET <redacted>"])
  })

  it("a message over maxPayload (ws refuses it while reading): too large, one byte over the bound", () => {
    const started = start()
    started.socket.open()
    started.socket.fail({ code: "WS_ERR_UNSUPPORTED_MESSAGE_LENGTH" })
    expect(started.ends).toEqual([`too large: ${settings.maxFrameSize + 1} over ${settings.maxFrameSize}`])
  })

  it("a text frame that is not UTF-8 (ws): malformed", () => {
    const started = start()
    started.socket.open()
    started.socket.fail({ code: "WS_ERR_INVALID_UTF8" })
    expect(started.ends).toEqual(["malformed: a text frame that is not valid UTF-8"])
  })

  it("an error before open with a recorded 401 whose reason echoes the key: rejected, scrubbed", () => {
    const started = start({ listen: false })
    Upgrade.recordRejection(started.socket, { status: 401, reason: `Unauthorized: ${KEY}` })
    started.attempt.listen()
    started.socket.fail("Unexpected server response")
    expect(started.ends).toEqual(["rejected 401: Unauthorized: <redacted>"])
  })

  it("an error before open with a recorded 503 (not a refusal): retried", () => {
    const started = start()
    Upgrade.recordRejection(started.socket, { status: 503, reason: "Service Unavailable" })
    started.socket.fail("Unexpected server response")
    expect(started.ends).toEqual(["retry: upgrade refused with HTTP 503"])
  })

  it("an error before open reading `Unexpected server response: 403` (ws): rejected", () => {
    const started = start()
    started.socket.fail("Unexpected server response: 403")
    expect(started.ends).toEqual(["rejected 403: Unexpected server response: 403"])
  })

  it("the connect time-out ends the attempt as timed out even when the dropped socket reports an error at once", () => {
    // A standard WebSocket closed while connecting reports `error` ("closed before it was established").
    class Reporting extends FakeSocket {
      override close(code?: number): void {
        super.close(code)
        this.fail("WebSocket was closed before the connection was established")
      }
    }
    const socket = new Reporting()
    const started = start({ socket })
    started.attempt.connectTimedOut()
    expect(started.ends[0]).toEqual(`timed out after ${settings.connectTimeoutMillis} ms`)
  })

  it("the connect time-out: a socket not open is dropped and the attempt ends; an open one is left alone", () => {
    const socket = new FakeWsSocket()
    const started = start({ socket })
    started.attempt.connectTimedOut()
    expect(socket.done).toEqual(["terminate"])
    expect(started.ends).toEqual([`timed out after ${settings.connectTimeoutMillis} ms`])

    const opened = start({ socket: new FakeWsSocket() })
    opened.socket.open()
    opened.attempt.connectTimedOut()
    expect(opened.socket.done).toEqual([])
    expect(opened.ends).toEqual([])
  })

  it("close: drops the connect time-out and closes the socket with 1000", () => {
    const started = start()
    started.socket.open()
    const before = started.cancelled()
    started.attempt.close()
    expect(started.cancelled()).toBe(before + 1)
    expect(started.socket.done).toEqual(["close 1000"])
  })

  it("write: to an open socket, else refused as closing; a send that throws is retried, its cause kept", () => {
    const started = start()
    expect(started.attempt.write("early")).toEqual({ retry: true, closing: true, message: "the socket is not open" })
    started.socket.open()
    expect(started.attempt.write("{\"type\":\"x\"}")).toBeUndefined()
    expect(started.socket.sent).toEqual(["{\"type\":\"x\"}"])
    started.socket.sendThrows = new Error("buffer full")
    expect(started.attempt.write("again")).toEqual({ retry: true, message: "buffer full" })
  })

  it("pause, resume and abort reach a `ws` socket; a plain socket has no pause, and abort closes it", () => {
    const ws = start({ socket: new FakeWsSocket() })
    ws.attempt.pause()
    ws.attempt.resume()
    ws.attempt.abort()
    expect(ws.socket.done).toEqual(["pause", "resume", "terminate"])
    const plain = start()
    plain.attempt.pause()
    plain.attempt.resume()
    plain.attempt.abort()
    expect(plain.socket.done).toEqual(["close"])
  })

  it("drain: an open `ws` socket is sent the close (1000) and read on until the service's close ends the attempt", () => {
    const socket = new FakeWsSocket()
    const started = start({ socket })
    socket.open()
    expect(started.attempt.drain()).toBe(true)
    expect(socket.done).toEqual(["close 1000"])
    // Asked again while it drains: still draining, nothing sent again.
    expect(started.attempt.drain()).toBe(true)
    expect(socket.done).toEqual(["close 1000"])
    // What the service sent before it saw the close still arrives.
    socket.onMessage?.(Buffer.from("in flight"), false)
    expect(started.frames).toEqual(["in flight"])
    expect(started.ends).toEqual([])
    socket.serverClose(1000)
    expect(started.ends).toEqual(["ended"])
    expect(started.attempt.drain()).toBe(false)
  })

  it("drain: not on a socket that is not open, has ended, or drops what arrives while closing (a standard WebSocket)", () => {
    const connecting = start({ socket: new FakeWsSocket() })
    expect(connecting.attempt.drain()).toBe(false)
    const ended = start({ socket: new FakeWsSocket() })
    ended.socket.open()
    ended.socket.serverClose(1006)
    ended.socket.readyState = 1
    expect(ended.attempt.drain()).toBe(false)
    const plain = start()
    plain.socket.open()
    expect(plain.attempt.drain()).toBe(false)
    for (const { socket } of [connecting, ended, plain]) expect(socket.done).toEqual([])
  })

  it("with a function as listener (a socket that takes no listener object)", () => {
    type Fn = (event: WebSocketAttempt.SocketEvent) => void
    const fired = new Map<string, Fn>()
    const socket: WebSocketAttempt.SocketHandle<Fn> = {
      readyState: 0,
      send: () => {},
      close: () => {},
      addEventListener: (type: string, listener: Fn | (() => void)) => void fired.set(type, listener),
      removeEventListener: (type: string) => void fired.delete(type)
    }
    class FnAttempt extends WebSocketAttempt.WebSocketAttempt<Wrapped, string, TestSettings, Fn> {
      protected readonly listener: Fn = (event) => this.handleEvent(event)
    }
    const frames: Array<string | Uint8Array> = []
    const ends: Array<string> = []
    const attempt = new FnAttempt(
      socket,
      { key, open: () => {}, frame: (data) => void frames.push(data), end: (outcome) => void ends.push(outcome) },
      outcomes,
      settings,
      undefined
    )
    attempt.listen()
    fired.get("open")?.({ type: "open" })
    const message = { type: "message", data: "x" }
    const close = { type: "close", code: 1000 }
    fired.get("message")?.(message)
    fired.get("close")?.(close)
    expect(frames).toEqual(["x"])
    expect(ends).toEqual(["ended"])
    // `close` was added `once`: the socket drops it as it fires.
    expect([...fired.keys()]).toEqual(["close"])
  })

  describe("a `ws` socket listened to through its own events (ownEvents)", () => {
    /** A `ws` socket as an EventEmitter (`ws`'s arguments); its WHATWG listeners must stay unused. */
    class EmitterSocket extends EventEmitter implements WebSocketAttempt.SocketHandle<Listener> {
      readyState = 0
      readonly sent: Array<string> = []
      readonly whatwg: Array<string> = []
      send(data: string): void {
        this.sent.push(data)
      }
      close(): void {
        this.readyState = 3
      }
      pause(): void {}
      resume(): void {}
      addEventListener(type: string): void {
        this.whatwg.push(type)
      }
      removeEventListener(): void {}
    }

    const startOwn = (socket: EmitterSocket, handshakeFor?: string) => {
      const frames: Array<string | Uint8Array> = []
      const ends: Array<string> = []
      const calls: Array<string> = []
      const attempt = new Attempt(
        socket,
        {
          key,
          open: () => void calls.push("open"),
          frame: (data) => void frames.push(data),
          end: (outcome) => void ends.push(outcome)
        },
        outcomes,
        settings,
        handshakeFor,
        true
      )
      attempt.listen()
      return { attempt, frames, ends, calls }
    }

    it("open, frames and close 1000 through `on`, no WHATWG listener; no listener removed until the end, all after", () => {
      const socket = new EmitterSocket()
      const started = startOwn(socket, "s")
      expect(socket.eventNames().sort()).toEqual(["close", "error", "message", "open"])
      socket.readyState = 1
      socket.emit("open")
      expect(started.calls).toEqual(["open"])
      expect(socket.sent.length).toBe(1)
      // Still listened to: removing a listener while open would turn `_events` into a dictionary.
      expect(socket.listenerCount("open")).toBe(1)
      socket.emit("message", Buffer.from("a"), false)
      socket.emit("message", new Uint8Array([1]), true)
      socket.emit("close", 1000, Buffer.from("bye"))
      expect(started.frames).toEqual(["a", new Uint8Array([1])])
      expect(started.ends).toEqual(["ended"])
      expect(socket.eventNames()).toEqual([])
      expect(socket.whatwg).toEqual([])
    })

    it("a close's code and `Buffer` reason are read as a CloseEvent's: the key scrubbed", () => {
      const socket = new EmitterSocket()
      const started = startOwn(socket)
      socket.emit("open")
      socket.emit("close", 1008, Buffer.from(`bad key ${KEY}`))
      expect(started.ends).toEqual(["rejected 1008: bad key <redacted>"])
    })

    it("an error before open: an open failure, scrubbed; the close after it is no second end", () => {
      const socket = new EmitterSocket()
      const started = startOwn(socket)
      socket.emit("error", new Error(`connect ECONNREFUSED ?apiKey=${KEY}`))
      expect(started.ends.length).toBe(1)
      expect(started.ends[0]).toMatch(/^retry: open failed: connect ECONNREFUSED/)
      expect(started.ends[0]).not.toContain(KEY)
      expect(socket.eventNames()).toEqual([])
      socket.emit("close", 1006, Buffer.alloc(0))
      expect(started.ends.length).toBe(1)
    })

    it("an error after open carries ws's code: a message over maxPayload is too large", () => {
      const socket = new EmitterSocket()
      const started = startOwn(socket)
      socket.emit("open")
      socket.emit("error", Object.assign(new Error("Max payload size exceeded"), { code: "WS_ERR_UNSUPPORTED_MESSAGE_LENGTH" }))
      expect(started.ends).toEqual([`too large: ${settings.maxFrameSize + 1} over ${settings.maxFrameSize}`])
    })

    it("a socket already open is opened at once and not listened to for `open`", () => {
      const socket = new EmitterSocket()
      socket.readyState = 1
      const started = startOwn(socket)
      expect(started.calls).toEqual(["open"])
      expect(socket.listenerCount("open")).toBe(0)
    })

    it("without ownEvents the same socket is listened to as a WHATWG socket (its `message` through `on`)", () => {
      const socket = new EmitterSocket()
      new Attempt(socket, { key, open: () => {}, frame: () => {}, end: () => {} }, outcomes, settings, undefined).listen()
      expect(socket.whatwg.sort()).toEqual(["close", "error", "open"])
      expect(socket.eventNames()).toEqual(["message"])
    })
  })
})
