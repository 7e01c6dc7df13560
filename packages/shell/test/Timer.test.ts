/**
 * The shared timer (packages/shell/src/Timer.ts) without an edition: the sleeper is a
 * record of its starts and wake-ups, and the test plays it (run what is due, ask when to wake). It
 * starts once, with the first entry's context; an earlier entry wakes it, a later one does not; a
 * check that throws ends its entry only, and is handed over to log; with nothing left it stops, and
 * the next entry starts it again; a cancel that leaves nothing wakes it.
 */
import { describe, expect, it } from "vitest"
import { Timer } from "../src/index.js"

const make = () => {
  const starts: Array<string> = []
  let rousals = 0
  const timer = new Timer.Timer<string>({
    start: (context) => {
      starts.push(context)
    },
    rouse: () => {
      rousals += 1
    }
  })
  return { timer, starts, rousals: () => rousals }
}

describe("Timer", () => {
  it("starts once, with the first entry's context; an earlier entry wakes it, a later one does not", () => {
    const { rousals, starts, timer } = make()
    timer.schedule(100, () => undefined, "first")
    expect(starts).toEqual(["first"])
    expect(timer.isRunning).toBe(true)
    timer.schedule(200, () => undefined, "second")
    expect(rousals()).toBe(0)
    timer.schedule(50, () => undefined, "third")
    expect(rousals()).toBe(1)
    expect(starts).toEqual(["first"])
    expect(timer.size).toBe(3)
  })

  it("runs what is due and says when to wake next; stops when nothing is left; starts again", () => {
    const { starts, timer } = make()
    const fired: Array<readonly [string, number]> = []
    timer.schedule(100, (now) => {
      fired.push(["a", now])
      return undefined
    }, "c1")
    timer.schedule(300, (now) => {
      fired.push(["b", now])
      return undefined
    }, "c2")
    expect(timer.runDue(0)).toEqual([])
    expect(timer.next()).toBe(100)
    timer.runDue(100)
    expect(timer.next()).toBe(300)
    timer.runDue(300)
    expect(fired).toEqual([["a", 100], ["b", 300]])
    expect(timer.next()).toBe(undefined)
    expect(timer.isRunning).toBe(false)
    timer.schedule(400, () => undefined, "c3")
    expect(starts).toEqual(["c1", "c3"])
  })

  it("a wake-up target moves with `next`: an entry earlier than it wakes the sleeper", () => {
    const { rousals, timer } = make()
    timer.schedule(100, () => undefined, "c")
    timer.schedule(500, () => undefined, "c")
    timer.runDue(100)
    expect(timer.next()).toBe(500)
    timer.schedule(400, () => undefined, "c")
    expect(rousals()).toBe(1)
    timer.schedule(450, () => undefined, "c")
    expect(rousals()).toBe(2)
  })

  it("a check that throws ends its entry only; what it threw is handed over once", () => {
    const { timer } = make()
    const fired: Array<string> = []
    timer.schedule(10, () => {
      throw new Error("a bug")
    }, "c")
    timer.schedule(10, () => {
      fired.push("b")
      return undefined
    }, "c")
    const defects = timer.runDue(10)
    expect(defects).toHaveLength(1)
    expect(String(defects[0])).toContain("a bug")
    expect(fired).toEqual(["b"])
    expect(timer.runDue(11)).toEqual([])
    expect(timer.size).toBe(0)
    expect(timer.next()).toBe(undefined)
  })

  it("a cancel that leaves nothing wakes the sleeper, which then stops", () => {
    const { rousals, timer } = make()
    const a = timer.schedule(100, () => undefined, "c")
    const b = timer.schedule(200, () => undefined, "c")
    a.cancel()
    expect(rousals()).toBe(0)
    b.cancel()
    expect(rousals()).toBe(1)
    expect(timer.runDue(0)).toEqual([])
    expect(timer.next()).toBe(undefined)
    expect(timer.isRunning).toBe(false)
  })

  it("a sleeper that ended any other way: the next entry starts another", () => {
    const { starts, timer } = make()
    timer.schedule(100, () => undefined, "c1")
    timer.stopped()
    timer.schedule(100, () => undefined, "c2")
    expect(starts).toEqual(["c1", "c2"])
  })
})
