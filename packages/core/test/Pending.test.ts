import { describe, expect, it } from "vitest"
import { Ledger, Pending } from "../src/index.js"

const same = (a: string, b: string) => a === b

describe("Pending", () => {
  it("a request replaces an earlier one of the same key and goes last; entries kept are the same objects", () => {
    const first = Pending.arrived([], ["a", "b"], 1, same)
    expect(first).toEqual([{ request: "a", since: 1 }, { request: "b", since: 1 }])
    const second = Pending.arrived(first, ["a"], 5, same)
    expect(second).toEqual([{ request: "b", since: 1 }, { request: "a", since: 5 }])
    expect(second[0]).toBe(first[1])
    expect(Pending.answered(second, "b", same)).toEqual([{ request: "a", since: 5 }])
  })

  it("at most Ledger.MAX_REQUESTS are listed, the oldest going first", () => {
    const many = Array.from({ length: Ledger.MAX_REQUESTS + 3 }, (_, i) => `r${i}`)
    const listed = Pending.arrived([], many, 0, same)
    expect(listed.length).toBe(Ledger.MAX_REQUESTS)
    expect(listed[0]?.request).toBe("r3")
  })

  it("the next warning is for the longest waiting request not warned of yet", () => {
    const waiting = [{ request: "x", since: 7 }, { request: "y", since: 3 }, { request: "z", since: 5 }]
    expect(Pending.nextToWarn(waiting, () => false)?.request).toBe("y")
    expect(Pending.nextToWarn(waiting, (e) => e.request === "y")?.request).toBe("z")
    expect(Pending.nextToWarn(waiting, () => true)).toBeUndefined()
  })

  it("the warning names the wait and the resource type, and how to answer", () => {
    expect(Pending.warning("30s", "otp")).toBe(
      "The agent has waited 30s for an answer to its otp request: answer it with respond (RunningSession.pending lists it)"
    )
  })
})
