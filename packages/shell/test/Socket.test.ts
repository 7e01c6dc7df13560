import { describe, expect, it } from "vitest"
import { Socket } from "../src/index.js"

/** A socket recording what was done to it. */
const fake = (readyState: number, options: { terminate?: boolean; closeThrows?: boolean } = {}) => {
  const done: Array<string> = []
  const ws = {
    readyState,
    close: (code?: number) => {
      if (options.closeThrows === true) throw new Error("closed too early")
      done.push(`close ${code ?? ""}`.trim())
    },
    addEventListener: (type: "error") => void done.push(`listen ${type}`),
    ...(options.terminate === true ? { terminate: () => void done.push("terminate") } : {})
  }
  return { ws, done }
}

describe("Socket", () => {
  it("closes a connecting or open socket with 1000, a listener on its error kept from being unhandled", () => {
    for (const state of [0, Socket.OPEN]) {
      const { done, ws } = fake(state, { terminate: true })
      Socket.closeQuietly(ws)
      expect(done).toEqual(["listen error", "close 1000"])
    }
  })

  it("drops a closing socket at once (a hostile peer may never complete the close), and one whose close throws", () => {
    const closing = fake(Socket.CLOSING, { terminate: true })
    Socket.closeQuietly(closing.ws)
    expect(closing.done).toEqual(["listen error", "terminate"])
    const throwing = fake(Socket.OPEN, { terminate: true, closeThrows: true })
    Socket.closeQuietly(throwing.ws)
    expect(throwing.done).toEqual(["listen error", "terminate"])
  })

  it("leaves a closed socket alone; terminates by `close()` a socket without `terminate`", () => {
    const closed = fake(3, { terminate: true })
    Socket.closeQuietly(closed.ws)
    expect(closed.done).toEqual(["listen error"])
    const plain = fake(Socket.OPEN)
    Socket.terminate(plain.ws)
    expect(plain.done).toEqual(["close"])
  })

  it("a message's data is a frame when it is text or bytes", () => {
    expect(Socket.frameOf("{}")).toBe("{}")
    expect(Socket.frameOf(new Uint8Array([1, 2]))).toEqual(new Uint8Array([1, 2]))
    expect(Socket.frameOf(new Uint8Array([1, 2]).buffer)).toEqual(new Uint8Array([1, 2]))
    expect(Socket.frameOf(42)).toBeUndefined()
    expect(Socket.emitterFrameOf(Buffer.from("{}"), false)).toBe("{}")
    expect(Socket.emitterFrameOf(new Uint8Array([7]), true)).toEqual(new Uint8Array([7]))
  })

  it("pausable and emitter sockets are told by their methods", () => {
    expect(Socket.isPausable({ pause: () => {}, resume: () => {} })).toBe(true)
    expect(Socket.isPausable({ pause: () => {} })).toBe(false)
    expect(Socket.isEmitter({ on: () => {}, off: () => {} })).toBe(true)
    expect(Socket.isEmitter({ on: 1, off: () => {} })).toBe(false)
  })
})
