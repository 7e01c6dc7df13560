/**
 * A transport that cannot pause (a runtime's standard WebSocket): the connection bounds what waits
 * for the consumer at `Flow.overflowLimit(bufferSize)` and ends the attempt with an overflow,
 * decided here and returned (`Ending` `Overflow`, then `Next` `Finish` with `overflow`), never
 * retried; every event before it is delivered, nothing after it. A transport that pauses is never
 * bounded so. Driven as a shell drives it (`driven.ts`), without either edition.
 */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { type Connection, Flow } from "../src/index.js"
import { driven, quietPort } from "./driven.js"

interface Event {
  readonly kind: Connection.EventKind
  readonly id: number
}

const classifier: Connection.Classifier<Event, string> = {
  kind: (event) => event.kind,
  requestKey: () => "",
  message: (error) => error,
  chargeable: () => false
}

const options = (bufferSize: number): Connection.Options => ({
  bufferSize,
  answerBufferSize: 4,
  idleTimeoutMillis: 60_000,
  endOnError: false,
  failOnFrameError: false
})

/** A connection whose deliveries, pauses and wakes are recorded. */
const recorded = (bufferSize: number) => {
  const delivered: Array<number> = []
  const actions: Array<string> = []
  const c = driven<Event, string>(options(bufferSize), classifier, {
    ...quietPort<Event, string>(),
    deliver: (event) => delivered.push(event.id),
    pause: () => actions.push("pause"),
    resume: () => actions.push("resume"),
    wake: () => actions.push("wake")
  })
  return { c, delivered, actions }
}

const event = (id: number, kind: Connection.EventKind = "event"): Event => ({ kind, id })

describe("Connection: a transport that cannot pause", () => {
  it("the limit is twice bufferSize", () => {
    expect([Flow.overflowLimit(1), Flow.overflowLimit(4), Flow.overflowLimit(1024)]).toEqual([2, 8, 2048])
  })

  it("a frame that finds 2 x bufferSize events waiting ends the attempt with Overflow; every event before it delivered, none after", () => {
    const { actions, c, delivered } = recorded(4)
    const attempt = c.begin(0)
    c.transportCreated(attempt, false)
    c.opened(attempt, 0)
    for (let id = 1; id <= 12; id++) c.frameArrived(attempt, id, event(id), undefined)
    expect(delivered).toEqual([1, 2, 3, 4, 5, 6, 7, 8])
    expect(c.buffered).toBe(8)
    expect(c.phase(attempt)).toBe("ended")
    expect(c.endingOf(attempt)).toEqual({ _tag: "Overflow", limit: 8 })
    // Reading was asked to pause at bufferSize (a socket with a pause that lets frames through may use it).
    expect(actions.filter((action) => action === "pause")).toEqual(["pause"])
    expect(actions.at(-1)).toBe("wake")
    // Never retried: the connection ends, failed, and the shell builds its overflow error from the limit.
    expect(c.attemptEnded(attempt, 20)).toEqual({ _tag: "Finish", reason: "failed", overflow: 8, replayDropped: 0 })
    expect(c.finish("failed")).toEqual([])
    expect(c.state).toEqual({ _tag: "Closed", reason: "failed" })
  })

  it("keep-alives and frame errors count as frames: one arriving at the limit overflows too", () => {
    for (const arrive of ["keep-alive", "frame-error"] as const) {
      const { c, delivered } = recorded(2)
      const attempt = c.begin(0)
      c.transportCreated(attempt, false)
      c.opened(attempt, 0)
      for (let id = 1; id <= 4; id++) c.frameArrived(attempt, 0, event(id), undefined)
      expect(c.phase(attempt), arrive).toBe("open")
      if (arrive === "keep-alive") c.frameArrived(attempt, 0, event(5, "keep-alive"), undefined)
      else c.frameFailed(attempt, 0, "malformed")
      expect([delivered, c.endingOf(attempt)], arrive).toEqual([[1, 2, 3, 4], { _tag: "Overflow", limit: 4 }])
    }
  })

  it("a consumer that keeps up never overflows: the bound is on what waits, not on what arrives", () => {
    const { c, delivered } = recorded(2)
    const attempt = c.begin(0)
    c.transportCreated(attempt, false)
    c.opened(attempt, 0)
    for (let id = 1; id <= 1000; id++) {
      c.frameArrived(attempt, id, event(id), undefined)
      if (id % 3 === 0) c.taken(3, id)
    }
    expect(delivered.length).toBe(1000)
    expect(c.phase(attempt)).toBe("open")
    expect(c.peakBuffered).toBeLessThanOrEqual(Flow.overflowLimit(2))
  })

  it("a transport that pauses is never bounded so: it is paused, and frames already on their way are still taken", () => {
    const { actions, c, delivered } = recorded(4)
    const attempt = c.begin(0)
    c.transportCreated(attempt)
    c.opened(attempt, 0)
    for (let id = 1; id <= 50; id++) c.frameArrived(attempt, id, event(id), undefined)
    expect([delivered.length, c.phase(attempt), c.endingOf(attempt)]).toEqual([50, "open", undefined])
    expect(actions).toContain("pause")
  })

  it("the bound is the attempt's: a new attempt over a transport that pauses is not bounded", () => {
    const { c } = recorded(2)
    const first = c.begin(0)
    c.transportCreated(first, false)
    c.opened(first, 0)
    c.frameArrived(first, 1, event(1), undefined)
    c.closed(first, { _tag: "Retry", error: "drop" })
    expect(c.attemptEnded(first, 2)._tag).toBe("Retry")
    const second = c.begin(3)
    c.transportCreated(second)
    c.opened(second, 3)
    for (let id = 2; id <= 20; id++) c.frameArrived(second, id, event(id), undefined)
    expect([c.phase(second), c.buffered]).toEqual(["open", 20])
  })

  it("an event that completes the session at the limit is not delivered: the overflow is decided first", () => {
    const { c, delivered } = recorded(1)
    const attempt = c.begin(0)
    c.transportCreated(attempt, false)
    c.opened(attempt, 0)
    c.frameArrived(attempt, 0, event(1), undefined)
    c.frameArrived(attempt, 0, event(2), undefined)
    c.frameArrived(attempt, 0, event(3, "complete"), undefined)
    expect([delivered, c.endingOf(attempt)]).toEqual([[1, 2], { _tag: "Overflow", limit: 2 }])
  })

  it("property: on a transport that cannot pause, at most 2 x bufferSize events ever wait, delivered in arrival order, and the attempt ends by overflow exactly when a frame finds the limit", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 16 }),
        fc.array(fc.oneof(fc.constant<"frame">("frame"), fc.integer({ min: 1, max: 20 })), { maxLength: 200 }),
        (bufferSize, ops) => {
          const { c, delivered } = recorded(bufferSize)
          const attempt = c.begin(0)
          c.transportCreated(attempt, false)
          c.opened(attempt, 0)
          const limit = Flow.overflowLimit(bufferSize)
          let next = 1
          let overflowed = false
          for (const op of ops) {
            if (op === "frame") {
              const waiting = c.buffered
              c.frameArrived(attempt, 0, event(next), undefined)
              if (!overflowed && waiting >= limit) overflowed = true
              if (!overflowed) next += 1
            } else {
              c.taken(Math.min(op, c.buffered), 0)
            }
            expect(c.buffered).toBeLessThanOrEqual(limit)
          }
          expect(delivered).toEqual(Array.from({ length: next - 1 }, (_, i) => i + 1))
          expect(c.endingOf(attempt)).toEqual(overflowed ? { _tag: "Overflow", limit } : undefined)
        }
      )
    )
  })
})
