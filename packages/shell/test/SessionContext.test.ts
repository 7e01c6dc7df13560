import { describe, expect, it } from "vitest"
import { SessionContext } from "../src/index.js"

describe("SessionContext", () => {
  it("added: the session's id, and that it may still be running", () => {
    for (const _tag of ["MalformedFrame", "ConnectionLost", "Superseded", "MissingCredentials"]) {
      expect(SessionContext.added({ _tag }, "s-1")).toStrictEqual({ sessionId: "s-1", mayStillBeRunning: true })
    }
  })

  it("added: a refusal that says there is no such session (400, 404, 410) says it is not running", () => {
    for (const code of [400, 404, 410]) {
      expect(SessionContext.added({ _tag: "HandshakeRejected", code }, "s-1")).toStrictEqual({
        sessionId: "s-1",
        mayStillBeRunning: false
      })
    }
    expect(SessionContext.added({ _tag: "HandshakeRejected", code: 403 }, "s-1").mayStillBeRunning).toBe(true)
  })

  it("added: an error that names its session itself keeps its id", () => {
    expect(SessionContext.namesItsSession.has("NeverConnected")).toBe(true)
    const fields = SessionContext.added({ _tag: "NeverConnected" }, "s-1")
    expect(fields).toStrictEqual({ mayStillBeRunning: true })
    expect("sessionId" in fields).toBe(false)
  })
})
