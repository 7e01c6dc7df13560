/**
 * What a `ws`-based constructor records and opens with: the refused upgrade read back by the
 * attempt (recorded, else read from `ws`'s error text), the `unexpected-response` handling, the
 * sockets' options and headers.
 */
import { describe, expect, it } from "vitest"
import { Upgrade } from "../src/index.js"

describe("Upgrade", () => {
  it("a recorded refusal is read back for its socket only; else one is read from `ws`'s error text", () => {
    const socket = {}
    Upgrade.recordRejection(socket, { status: 401, reason: "Unauthorized" })
    expect(Upgrade.rejectionOf(socket, new Error("whatever"))).toEqual({ status: 401, reason: "Unauthorized" })
    expect(Upgrade.rejectionOf({}, new Error("whatever"))).toBeUndefined()
    expect(Upgrade.rejectionOf({}, new Error("Unexpected server response: 403"))).toEqual({
      status: 403,
      reason: "Unexpected server response: 403"
    })
  })

  it("an unexpected response: recorded, its body discarded, the handshake aborted", () => {
    const done: Array<string> = []
    const socket = { terminate: () => void done.push("terminate") }
    Upgrade.refusedUpgrade(socket, { statusCode: 410, statusMessage: "Gone", resume: () => done.push("resume") })
    expect(done).toEqual(["resume", "terminate"])
    expect(Upgrade.rejectionOf(socket, undefined)).toEqual({ status: 410, reason: "Gone" })
    const bare = { terminate: () => {} }
    Upgrade.refusedUpgrade(bare, { resume: () => {} })
    expect(Upgrade.rejectionOf(bare, undefined)).toEqual({ status: 0, reason: "" })
  })

  it("the options: the bound, a 5 s close time-out, the headers copied when there are any", () => {
    expect(Upgrade.clientOptions(1024, undefined)).toEqual({ maxPayload: 1024, closeTimeout: 5000 })
    const headers = { "user-agent": "test" }
    const options = Upgrade.clientOptions(1024, headers)
    expect(options).toEqual({ maxPayload: 1024, closeTimeout: 5000, headers })
    expect(options.headers).not.toBe(headers)
    expect(Upgrade.DEFAULT_MAX_PAYLOAD).toBe(1024 * 1024)
  })

  it("the headers of one socket: the constructor's, the caller's on top", () => {
    const base = { "user-agent": "sdk", a: "1" }
    expect(Upgrade.mergeHeaders(base, undefined)).toBe(base)
    expect(Upgrade.mergeHeaders(base, { a: "2" })).toEqual({ "user-agent": "sdk", a: "2" })
    expect(Upgrade.mergeHeaders(undefined, { a: "2" })).toEqual({ a: "2" })
  })
})
