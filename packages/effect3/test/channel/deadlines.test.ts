/**
 * The shared timer (src/internal/channel/deadlines.ts), driven directly on the `TestClock`: an
 * entry fires at its time and not a millisecond before, entries fire in due order, a check
 * re-arms or ends its entry, a cancelled entry is never called, an earlier entry wakes the
 * sleeping sweeper, and the sweeper's one fiber is gone once no live entry is left.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import * as Supervisor from "effect/Supervisor"
import * as TestClock from "effect/TestClock"
import * as Deadlines from "../../binding/internal/channel/deadlines.js"
import { withLogs } from "../shared/events.js"

/** A check that records each call (its `now`) under `name`, and then ends its entry. */
const once = (calls: Array<readonly [string, number]>, name: string): Deadlines.Check => (now) => {
  calls.push([name, now])
  return undefined
}

/**
 * The sweeper's live fibers, as seen by a supervisor tracking the fibers forked under it: the
 * sweeper, and while it sleeps the two sides of its race (the sleep and the wake-up signal).
 */
const liveSweepers = (supervisor: Supervisor.Supervisor<ReadonlyArray<unknown>>) =>
  Effect.map(supervisor.value, (fibers) => fibers.length)

describe("Deadlines", () => {
  it.effect("an entry fires at exactly its time, not a millisecond before", () =>
    Effect.gen(function*() {
      const deadlines = Deadlines.make()
      const calls: Array<readonly [string, number]> = []
      yield* deadlines.schedule(100, once(calls, "a"))
      yield* deadlines.schedule(101, once(calls, "b"))
      assert.strictEqual(deadlines.size(), 2)
      yield* TestClock.adjust("99 millis")
      assert.deepStrictEqual(calls, [])
      yield* TestClock.adjust("1 millis")
      assert.deepStrictEqual(calls, [["a", 100]], "b is due 1 ms later")
      assert.strictEqual(deadlines.size(), 1)
      yield* TestClock.adjust("1 millis")
      assert.deepStrictEqual(calls, [["a", 100], ["b", 101]])
      assert.strictEqual(deadlines.size(), 0)
    }))

  it.effect("entries scheduled out of order fire in due order, each at its own time", () =>
    Effect.gen(function*() {
      const deadlines = Deadlines.make()
      const calls: Array<readonly [string, number]> = []
      yield* deadlines.schedule(300, once(calls, "c"))
      yield* deadlines.schedule(100, once(calls, "a"))
      yield* deadlines.schedule(500, once(calls, "e"))
      yield* deadlines.schedule(200, once(calls, "b"))
      yield* deadlines.schedule(400, once(calls, "d"))
      yield* TestClock.adjust("1 second")
      assert.deepStrictEqual(calls, [["a", 100], ["b", 200], ["c", 300], ["d", 400], ["e", 500]])
    }))

  it.effect("an entry whose time has passed fires at once", () =>
    Effect.gen(function*() {
      const deadlines = Deadlines.make()
      const calls: Array<readonly [string, number]> = []
      yield* TestClock.adjust("50 millis")
      yield* deadlines.schedule(10, once(calls, "late"))
      yield* TestClock.adjust("0 millis")
      assert.deepStrictEqual(calls, [["late", 50]])
    }))

  it.effect("a check that returns a later time re-arms its entry; undefined ends it", () =>
    Effect.gen(function*() {
      const deadlines = Deadlines.make()
      const calls: Array<number> = []
      const again = [150, 400]
      yield* deadlines.schedule(100, (now) => {
        calls.push(now)
        return again.shift()
      })
      yield* TestClock.adjust("149 millis")
      assert.deepStrictEqual(calls, [100])
      assert.strictEqual(deadlines.size(), 1)
      yield* TestClock.adjust("1 millis")
      assert.deepStrictEqual(calls, [100, 150])
      yield* TestClock.adjust("249 millis")
      assert.deepStrictEqual(calls, [100, 150])
      yield* TestClock.adjust("1 millis")
      assert.deepStrictEqual(calls, [100, 150, 400])
      assert.strictEqual(deadlines.size(), 0)
      yield* TestClock.adjust("10 seconds")
      assert.deepStrictEqual(calls, [100, 150, 400])
    }))

  it.effect("a check that asks for now (or earlier) is called again one millisecond later, not in a loop", () =>
    Effect.gen(function*() {
      const deadlines = Deadlines.make()
      const calls: Array<number> = []
      yield* deadlines.schedule(100, (now) => {
        calls.push(now)
        return calls.length < 3 ? now - 5 : undefined
      })
      yield* TestClock.adjust("100 millis")
      assert.deepStrictEqual(calls, [100])
      yield* TestClock.adjust("1 millis")
      assert.deepStrictEqual(calls, [100, 101])
      yield* TestClock.adjust("1 millis")
      assert.deepStrictEqual(calls, [100, 101, 102])
      assert.strictEqual(deadlines.size(), 0)
    }))

  it.effect("cancel prevents the call, and only that entry's", () =>
    Effect.gen(function*() {
      const deadlines = Deadlines.make()
      const calls: Array<readonly [string, number]> = []
      const a = yield* deadlines.schedule(100, once(calls, "a"))
      yield* deadlines.schedule(200, once(calls, "b"))
      yield* TestClock.adjust("50 millis")
      a.cancel()
      a.cancel()
      assert.strictEqual(deadlines.size(), 1, "a second cancel counts nothing")
      yield* TestClock.adjust("1 second")
      assert.deepStrictEqual(calls, [["b", 200]])
      assert.strictEqual(deadlines.size(), 0)
    }))

  it.effect("cancelling an entry after it fired changes nothing", () =>
    Effect.gen(function*() {
      const deadlines = Deadlines.make()
      const calls: Array<readonly [string, number]> = []
      const a = yield* deadlines.schedule(100, once(calls, "a"))
      yield* deadlines.schedule(300, once(calls, "b"))
      yield* TestClock.adjust("150 millis")
      a.cancel()
      assert.strictEqual(deadlines.size(), 1)
      yield* TestClock.adjust("150 millis")
      assert.deepStrictEqual(calls, [["a", 100], ["b", 300]])
    }))

  it.effect("an entry earlier than the one being slept on wakes the sweeper and fires on time", () =>
    Effect.gen(function*() {
      const deadlines = Deadlines.make()
      const calls: Array<readonly [string, number]> = []
      yield* deadlines.schedule(1000, once(calls, "late"))
      // The sweeper is asleep until 1000 now.
      yield* TestClock.adjust("10 millis")
      yield* deadlines.schedule(50, once(calls, "early"))
      yield* TestClock.adjust("39 millis")
      assert.deepStrictEqual(calls, [])
      yield* TestClock.adjust("1 millis")
      assert.deepStrictEqual(calls, [["early", 50]])
      yield* TestClock.adjust("950 millis")
      assert.deepStrictEqual(calls, [["early", 50], ["late", 1000]])
    }))

  it.effect("the sweeper's fiber ends when the last entry fires, and a new entry starts it again", () =>
    Effect.gen(function*() {
      const supervisor = yield* Supervisor.track
      const deadlines = Deadlines.make()
      const calls: Array<readonly [string, number]> = []
      yield* deadlines.schedule(100, once(calls, "a")).pipe(Effect.supervised(supervisor))
      yield* TestClock.adjust("0 millis")
      const sleeping = yield* liveSweepers(supervisor)
      assert.isAbove(sleeping, 0)
      for (let i = 0; i < 50; i++) {
        yield* deadlines.schedule(200 + i, once(calls, `b${i}`)).pipe(Effect.supervised(supervisor))
      }
      yield* TestClock.adjust("0 millis")
      assert.strictEqual(yield* liveSweepers(supervisor), sleeping, "as many fibers for 51 entries as for one")
      yield* TestClock.adjust("250 millis")
      assert.strictEqual(calls.length, 51)
      calls.length = 0
      assert.strictEqual(deadlines.size(), 0)
      assert.strictEqual(yield* liveSweepers(supervisor), 0, "no fiber once no entry is left")
      yield* deadlines.schedule(300, once(calls, "c")).pipe(Effect.supervised(supervisor))
      yield* TestClock.adjust("0 millis")
      assert.strictEqual(yield* liveSweepers(supervisor), sleeping, "started again")
      yield* TestClock.adjust("50 millis")
      assert.deepStrictEqual(calls, [["c", 300]])
      assert.strictEqual(yield* liveSweepers(supervisor), 0)
    }))

  it.effect("the sweeper's fiber ends at once when every entry is cancelled", () =>
    Effect.gen(function*() {
      const supervisor = yield* Supervisor.track
      const deadlines = Deadlines.make()
      const calls: Array<readonly [string, number]> = []
      const a = yield* deadlines.schedule(10_000, once(calls, "a")).pipe(Effect.supervised(supervisor))
      const b = yield* deadlines.schedule(20_000, once(calls, "b")).pipe(Effect.supervised(supervisor))
      yield* TestClock.adjust("1 millis")
      const sleeping = yield* liveSweepers(supervisor)
      assert.isAbove(sleeping, 0)
      a.cancel()
      yield* TestClock.adjust("0 millis")
      assert.strictEqual(yield* liveSweepers(supervisor), sleeping, "b is still live")
      b.cancel()
      // No time passes: the sweeper does not sleep until 20 s to find nothing.
      yield* TestClock.adjust("0 millis")
      assert.strictEqual(deadlines.size(), 0)
      assert.strictEqual(yield* liveSweepers(supervisor), 0)
      // A new entry (earlier than the cancelled ones) still fires on time.
      yield* deadlines.schedule(5, once(calls, "c")).pipe(Effect.supervised(supervisor))
      yield* TestClock.adjust("4 millis")
      assert.deepStrictEqual(calls, [["c", 5]])
    }))

  // For random entries (each scheduled at some time for some later time, maybe re-armed a few
  // times, maybe cancelled at some point), every call happens exactly at its time, in time order,
  // and none after its entry was cancelled.
  const entryArb = FastCheck.record({
    scheduledAt: FastCheck.integer({ min: 0, max: 500 }),
    delay: FastCheck.integer({ min: 0, max: 500 }),
    rearms: FastCheck.array(FastCheck.integer({ min: 1, max: 300 }), { maxLength: 3 }),
    cancelAfter: FastCheck.option(FastCheck.integer({ min: 1, max: 1500 }), { nil: undefined })
  })

  it.effect.prop(
    "every entry not cancelled fires exactly once per arm, at its time",
    [FastCheck.array(entryArb, { maxLength: 12 })],
    ([entries]) =>
      Effect.gen(function*() {
        const deadlines = Deadlines.make()
        const calls: Array<readonly [number, number]> = []
        const expected: Array<readonly [number, number]> = []
        type Step = { readonly at: number; readonly run: Effect.Effect<void> }
        const steps: Array<Step> = []
        const handles = new Map<number, Deadlines.Entry>()
        entries.forEach((entry, id) => {
          const times: Array<number> = [entry.scheduledAt + entry.delay]
          for (const rearm of entry.rearms) times.push(times[times.length - 1]! + rearm)
          const cancelAt = entry.cancelAfter === undefined ? undefined : entry.scheduledAt + entry.cancelAfter
          // A cancel at the very time a call is due comes after it (the clock runs the sweeper first).
          for (const time of times) if (cancelAt === undefined || time <= cancelAt) expected.push([time, id])
          const left = entry.rearms.slice()
          steps.push({
            at: entry.scheduledAt,
            run: Effect.map(
              deadlines.schedule(times[0]!, (now) => {
                calls.push([now, id])
                const next = left.shift()
                return next === undefined ? undefined : now + next
              }),
              (handle) => {
                handles.set(id, handle)
              }
            )
          })
          if (cancelAt !== undefined) {
            steps.push({ at: cancelAt, run: Effect.sync(() => handles.get(id)?.cancel()) })
          }
        })
        // Schedules before cancels at the same time (a cancel is always after its own schedule).
        steps.sort((x, y) => x.at - y.at)
        let now = 0
        for (const step of steps) {
          if (step.at > now) {
            yield* TestClock.adjust(step.at - now)
            now = step.at
          }
          yield* step.run
        }
        yield* TestClock.adjust(5000)
        expected.sort((x, y) => x[0] - y[0] || x[1] - y[1])
        const sorted = calls.slice().sort((x, y) => x[0] - y[0] || x[1] - y[1])
        assert.deepStrictEqual(sorted, expected)
        // Calls happen in time order (ties in any order).
        for (let i = 1; i < calls.length; i++) assert.isTrue(calls[i - 1]![0] <= calls[i]![0])
        assert.strictEqual(deadlines.size(), 0)
      }),
    { fastCheck: { numRuns: 30 } }
  )
})

describe("Deadlines, a check that throws", () => {
  it.effect("does not stop the timer: other entries, and later ones, still fire on time; the defect is logged", () =>
    Effect.gen(function*() {
      const lines: Array<string> = []
      const deadlines = Deadlines.make()
      const calls: Array<readonly [string, number]> = []
      // The sweeper logs with the logger of the fiber that started it.
      yield* withLogs(
        lines,
        deadlines.schedule(100, () => {
          throw new Error("a hook that failed")
        })
      )
      yield* deadlines.schedule(200, once(calls, "b"))
      yield* TestClock.adjust("200 millis")
      assert.deepStrictEqual(calls, [["b", 200]])
      assert.strictEqual(deadlines.size(), 0, "the entry that threw is done")
      assert.strictEqual(lines.filter((line) => line.startsWith("ERROR A deadline check failed")).length, 1)
      yield* deadlines.schedule(300, once(calls, "c"))
      yield* TestClock.adjust("100 millis")
      assert.deepStrictEqual(calls, [["b", 200], ["c", 300]])
    }))
})
