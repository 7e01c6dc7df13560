import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { Session } from "../src/index.js"

describe("Session", () => {
  it("keptEvents: a number keeps the last n, true every event, false none, none given 100", () => {
    expect([undefined, true, false, 3.7, -2, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY].map(Session.keptEvents))
      .toEqual([100, Number.POSITIVE_INFINITY, 0, 3, 0, Number.POSITIVE_INFINITY, 0])
  })

  it("the budget (U20): over max_actions from the first action past it; the first overrun is kept", () => {
    const tally = new Session.Tally<string>(2, 10)
    expect([tally.action(), tally.action(), tally.action(), tally.action()]).toEqual([false, false, true, true])
    expect([tally.actions, tally.overrunAt]).toEqual([4, 3])
  })

  it("the tail kept is the last `keep` events in arrival order, whatever their number (property)", () => {
    fc.assert(fc.property(fc.array(fc.nat(), { maxLength: 500 }), fc.nat(40), (events, keep) => {
      const tally = new Session.Tally<number>(0, keep)
      for (const event of events) tally.event(event)
      expect(tally.kept()).toEqual(keep === 0 ? [] : events.slice(-keep))
    }))
  })

  it("the last error and the complete event", () => {
    const tally = new Session.Tally<string>(1, 0)
    tally.error("a")
    tally.error("b")
    tally.completed("done")
    expect([tally.lastError, tally.complete, tally.kept()]).toEqual(["b", "done", []])
  })
})
