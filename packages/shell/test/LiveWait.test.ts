/**
 * `LiveWait`: the longest delay the host's timer keeps, and a wait that ends once.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest"
import { LiveWait } from "../src/index.js"

describe("LiveWait.fits", () => {
  it("0 to 2^31 - 1 ms; not a negative, longer, infinite or NaN delay", () => {
    expect([0, 1, 30_000, LiveWait.MAX_TIMER_MILLIS].map(LiveWait.fits)).toEqual([true, true, true, true])
    expect([-1, LiveWait.MAX_TIMER_MILLIS + 1, Infinity, Number.NaN].map(LiveWait.fits)).toEqual([false, false, false, false])
  })
})

describe("LiveWait.Wait", () => {
  beforeEach(() => {
    vi.useFakeTimers()
  })
  afterEach(() => {
    vi.useRealTimers()
  })

  it("times out once `millis` have passed; a settle afterwards does nothing", () => {
    const timeouts: Array<number> = []
    const wait = new LiveWait.Wait(100, () => timeouts.push(Date.now()))
    vi.advanceTimersByTime(99)
    expect(timeouts).toHaveLength(0)
    vi.advanceTimersByTime(1)
    expect(timeouts).toHaveLength(1)
    expect(wait.settle()).toBe(false)
    vi.advanceTimersByTime(1_000)
    expect(timeouts).toHaveLength(1)
  })

  it("settled first: the timer is cleared, only the first settle wins", () => {
    let timedOut = false
    const wait = new LiveWait.Wait(100, () => {
      timedOut = true
    })
    expect(wait.settle()).toBe(true)
    expect(wait.settle()).toBe(false)
    expect(vi.getTimerCount()).toBe(0)
    vi.advanceTimersByTime(1_000)
    expect(timedOut).toBe(false)
  })
})
