import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import { Close } from "../src/index.js"

describe("Close", () => {
  it("1000 ends, the rejection codes reject, 4000 is superseded, anything else drops with its code and reason", () => {
    expect(Close.classifyClose(1000, "bye")).toEqual({ _tag: "Ended" })
    for (const code of [1008, 4001, 4003, 4401, 4403]) expect(Close.classifyClose(code, "")).toEqual({ _tag: "Rejected" })
    expect(Close.classifyClose(Close.SUPERSEDED_CLOSE_CODE, "another connection")).toEqual({ _tag: "Superseded" })
    expect(Close.classifyClose(1006, "")).toEqual({ _tag: "Dropped", message: "closed with code 1006" })
    expect(Close.classifyClose(1011, "restart")).toEqual({ _tag: "Dropped", message: "closed with code 1011: restart" })
  })

  it("every code gets exactly one verdict, and only 1000 ends", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 65_535 }), fc.string(), (code, reason) => {
        const verdict = Close.classifyClose(code, reason)
        expect(verdict._tag === "Ended").toBe(code === 1000)
        expect(verdict._tag === "Rejected").toBe(Close.rejectionCloseCodes.has(code))
        if (verdict._tag === "Dropped") expect(verdict.message.startsWith(`closed with code ${code}`)).toBe(true)
      })
    )
  })

  it("a close event without a number or a string reads as 1006 with no reason", () => {
    expect(Close.closeCodeOf({ code: 4000, reason: "r" })).toEqual({ code: 4000, reason: "r" })
    expect(Close.closeCodeOf({ code: "4000", reason: 7 })).toEqual({ code: 1006, reason: "" })
    expect(Close.closeCodeOf(null)).toEqual({ code: 1006, reason: "" })
  })

  it("a socket error reads by when it came and by the ws library's code", () => {
    expect(Close.socketErrorKind({ error: { code: "WS_ERR_INVALID_UTF8" } }, false)).toBe("open-failed")
    expect(Close.socketErrorKind({ error: { code: "WS_ERR_UNSUPPORTED_MESSAGE_LENGTH" } }, true)).toBe("too-large")
    expect(Close.socketErrorKind({ message: "Max payload size exceeded" }, true)).toBe("too-large")
    expect(Close.socketErrorKind({ error: { code: "WS_ERR_INVALID_UTF8" } }, true)).toBe("invalid-utf8")
    expect(Close.socketErrorKind({ message: "ECONNRESET" }, true)).toBe("read-failed")
  })

  it("a cause is described by its message, its error's message, its type, or as a string", () => {
    expect(Close.describeCause({ message: "m" })).toBe("m")
    expect(Close.describeCause({ message: "", error: { message: "inner" } })).toBe("inner")
    expect(Close.describeCause({ type: "error" })).toBe("error event")
    expect(Close.describeCause(42)).toBe("42")
  })

  it("a refused upgrade names its status; other failures are not refusals", () => {
    expect(Close.upgradeRefusal({ message: "Unexpected server response: 403" })).toEqual({
      status: 403,
      reason: "Unexpected server response: 403"
    })
    expect(Close.upgradeRefusal({ message: "Unexpected server response" })).toBeUndefined()
  })

  it("skipping oversized frames raises the socket's limit to the skippable size, failing on them keeps it", () => {
    expect(Close.maxPayload(1024, true)).toBe(1024)
    expect(Close.maxPayload(1024, false)).toBe(Close.SKIPPABLE_FRAME_SIZE)
    expect(Close.maxPayload(Close.SKIPPABLE_FRAME_SIZE * 2, false)).toBe(Close.SKIPPABLE_FRAME_SIZE * 2)
  })

  it("the retry texts name the cause without the key (U08)", () => {
    const key = "sk-secret-1"
    expect(Close.openFailed(new Error(`connect to wss://h/ws?apiKey=${key}`), key)).toBe(
      "open failed: connect to wss://h/ws?apiKey=<redacted>"
    )
    expect(Close.readFailed(new Error(`reset ${key}`), key)).not.toContain(key)
    expect(Close.readFailed("reset", key)).toBe("read failed: reset")
  })

  it("a refusing status rejects for good when it names the credentials or the session, else it is retried (U08)", () => {
    for (const status of [400, 401, 403, 404, 410]) {
      expect(Close.classifyRefusal(status, "upgrade")).toEqual({ _tag: "Rejected" })
    }
    expect(Close.classifyRefusal(503, "upgrade")).toEqual({ _tag: "Refused", message: "upgrade refused with HTTP 503" })
    expect(Close.classifyRefusal(500, "event stream")).toEqual({
      _tag: "Refused",
      message: "event stream refused with HTTP 500"
    })
  })
})
