/**
 * The cluster editions' tally of a session's log: the core's fold (actions, outcome, open
 * requests by the core's key), the grant that settles the answered request first, the answers'
 * comparison, and the wake-up set.
 */
import { describe, expect, it } from "vitest"
import { ClusterTally } from "../src/index.js"

const request = (id: string, type: string | { readonly raw: string } = "credentials") =>
  ({ _tag: "ExternalResourceRequested", action_session_id: id, resource_type: type }) as const

describe("ClusterTally", () => {
  it("folds requests by the core's key: a request again replaces the open one of its key", () => {
    const tally = ClusterTally.make()
    ClusterTally.fold(tally, request("a"))
    ClusterTally.fold(tally, request("b"))
    ClusterTally.fold(tally, request("a"))
    expect(ClusterTally.open(tally).map((r) => r.action_session_id)).toStrictEqual(["b", "a"])
    expect(ClusterTally.requestKey(request("a", { raw: "credentials" }))).toBe(ClusterTally.requestKey(request("a")))
    expect(ClusterTally.awaitingAnswer(tally)).toBe(true)
  })

  it("a grant settles the oldest answered request, else the oldest", () => {
    const tally = ClusterTally.make()
    ClusterTally.fold(tally, request("a"))
    ClusterTally.fold(tally, request("b"))
    tally.answered.set(ClusterTally.requestKey(request("b")), { _tag: "Deny" })
    expect(ClusterTally.unanswered(tally).map((r) => r.action_session_id)).toStrictEqual(["a"])
    ClusterTally.fold(tally, { _tag: "ExternalResourceGranted" })
    expect(ClusterTally.open(tally).map((r) => r.action_session_id)).toStrictEqual(["a"])
    ClusterTally.fold(tally, { _tag: "ExternalResourceGranted" })
    expect(ClusterTally.open(tally)).toStrictEqual([])
    expect(ClusterTally.awaitingAnswer(tally)).toBe(false)
  })

  it("counts actions and keeps the first complete with its cost", () => {
    const tally = ClusterTally.make()
    ClusterTally.fold(tally, { _tag: "ActionRun" })
    ClusterTally.fold(tally, { _tag: "ActionRun" })
    const complete = {
      _tag: "Complete",
      total_cost: { _tag: "Some", value: 0.5 },
      cost_summary: { _tag: "None" }
    } as const
    ClusterTally.fold(tally, complete)
    expect(tally.session.actions).toBe(2)
    expect(tally.session.completed?.cost).toBe(0.5)
  })

  it("tells channel notices from the session's events", () => {
    expect(ClusterTally.isChannelNotice({ _tag: "Heartbeat" })).toBe(true)
    expect(ClusterTally.isChannelNotice({ _tag: "Connected" })).toBe(true)
    expect(ClusterTally.isChannelNotice({ _tag: "ActionRun" })).toBe(false)
  })

  it("compares recorded answers by kind and input", () => {
    const none = { _tag: "None" } as const
    const some = (value: string) => ({ _tag: "Some", value }) as const
    expect(ClusterTally.sameAnswer({ _tag: "Deny" }, { _tag: "Deny" })).toBe(true)
    expect(ClusterTally.sameAnswer({ _tag: "Deny" }, { _tag: "Grant", input: none })).toBe(false)
    expect(ClusterTally.sameAnswer({ _tag: "Grant", input: none }, { _tag: "Grant", input: none })).toBe(true)
    expect(ClusterTally.sameAnswer({ _tag: "Grant", input: some("x") }, { _tag: "Grant", input: some("x") })).toBe(true)
    expect(ClusterTally.sameAnswer({ _tag: "Grant", input: some("x") }, { _tag: "Grant", input: some("y") })).toBe(false)
    expect(ClusterTally.sameAnswer({ _tag: "Grant", input: some("x") }, { _tag: "Grant", input: none })).toBe(false)
  })

  it("decides what an answer means: record an open request's first answer; the same again is known; another, or none open, refused", () => {
    const session = ClusterTally.make()
    const grant = { _tag: "Grant", input: { _tag: "Some", value: "x" } } as const
    const deny = { _tag: "Deny" } as const
    expect(ClusterTally.decideAnswer(session, request("a"), grant)).toBe("never-received")
    ClusterTally.fold(session, request("a"))
    expect(ClusterTally.decideAnswer(session, request("a"), grant)).toBe("record")
    session.answered.set(ClusterTally.requestKey(request("a")), grant)
    expect(ClusterTally.decideAnswer(session, request("a"), grant)).toBe("known")
    expect(ClusterTally.decideAnswer(session, request("a"), deny)).toBe("already-answered")
    // Settled by the grant: a retry of the same answer is still known, not refused.
    ClusterTally.fold(session, { _tag: "ExternalResourceGranted" })
    expect(ClusterTally.decideAnswer(session, request("a"), grant)).toBe("known")
  })

  it("wakes each waiter once, at the next wake", () => {
    const wakers = new ClusterTally.Wakers()
    let woken = 0
    const wake = () => {
      woken++
    }
    wakers.add(wake)
    wakers.add(wake)
    wakers.wake()
    wakers.wake()
    expect(woken).toBe(1)
    wakers.add(wake)
    wakers.delete(wake)
    wakers.wake()
    expect(woken).toBe(1)
  })
})
