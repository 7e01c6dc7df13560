/**
 * The deadline queue without a clock: driven by random schedules, cancels and times, every check
 * is called at or after its time and never before, in due order, a cancelled or finished entry is
 * never called again, and the queue is empty once every entry is done; and against a sorted-array
 * model of the live entries: `nextDue` never passes over the earliest, and each `runDue` fires
 * exactly the entries due, earliest first (a heap that sinks toward the wrong child breaks both).
 */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { Deadlines } from "../src/index.js"

describe("Deadlines.DeadlineQueue", () => {
  it("fires at its time, re-arms at least 1 ms later, and ends", () => {
    const queue = new Deadlines.DeadlineQueue()
    const calls: Array<readonly [string, number]> = []
    queue.schedule(100, (now) => {
      calls.push(["a", now])
      return calls.length < 3 ? now : undefined
    })
    queue.schedule(50, (now) => {
      calls.push(["b", now])
      return undefined
    })
    expect(queue.nextDue()).toBe(50)
    queue.runDue(99, () => {})
    expect(calls).toEqual([["b", 99]])
    queue.runDue(100, () => {})
    expect(queue.nextDue()).toBe(101)
    queue.runDue(101, () => {})
    queue.runDue(102, () => {})
    expect(calls).toEqual([["b", 99], ["a", 100], ["a", 101]])
    expect(queue.size).toBe(0)
    expect(queue.nextDue()).toBeUndefined()
  })

  it("a check that throws ends its entry only; the defect goes to onDefect", () => {
    const queue = new Deadlines.DeadlineQueue()
    const defects: Array<unknown> = []
    queue.schedule(1, () => {
      throw new Error("bug")
    })
    let later = 0
    queue.schedule(1, () => {
      later += 1
      return undefined
    })
    queue.runDue(1, (defect) => defects.push(defect))
    expect(defects).toHaveLength(1)
    expect(later).toBe(1)
    expect(queue.size).toBe(0)
  })

  it("cancelling the last live entry says the queue is empty; cancelling twice changes nothing", () => {
    let empty = 0
    const queue = new Deadlines.DeadlineQueue(() => (empty += 1))
    const a = queue.schedule(10, () => undefined)
    const b = queue.schedule(20, () => undefined)
    a.cancel()
    a.cancel()
    expect([queue.size, empty]).toEqual([1, 0])
    b.cancel()
    expect([queue.size, empty]).toEqual([0, 1])
    expect(queue.nextDue()).toBeUndefined()
  })

  type Op =
    | { readonly _tag: "schedule"; readonly at: number; readonly repeats: number }
    | { readonly _tag: "cancel"; readonly which: number }
    | { readonly _tag: "advance"; readonly by: number }

  const op: fc.Arbitrary<Op> = fc.oneof(
    fc.record({ _tag: fc.constant("schedule" as const), at: fc.nat(200), repeats: fc.nat(3) }),
    fc.record({ _tag: fc.constant("cancel" as const), which: fc.nat() }),
    fc.record({ _tag: fc.constant("advance" as const), by: fc.nat(60) })
  )

  it("random schedules, cancels and times: never early, never after cancel or end, in due order (property)", () => {
    fc.assert(fc.property(fc.array(op, { maxLength: 80 }), (ops) => {
      const queue = new Deadlines.DeadlineQueue()
      let now = 0
      interface Model {
        due: number
        left: number
        cancelled: boolean
        done: boolean
        entry: Deadlines.Entry | undefined
      }
      const entries: Array<Model> = []
      const fire = (m: Model) => (at: number): number | undefined => {
        expect(m.cancelled || m.done).toBe(false)
        expect(at).toBeGreaterThanOrEqual(m.due)
        expect(at).toBe(now)
        if (m.left === 0) {
          m.done = true
          return undefined
        }
        m.left -= 1
        m.due = at + 5
        return m.due
      }
      const runTo = (time: number) => {
        // Time moves as a shell's would: to each due time in turn, then to the target.
        for (let next = queue.nextDue(); next !== undefined && next <= time; next = queue.nextDue()) {
          now = Math.max(now, next)
          queue.runDue(now, (defect) => {
            throw defect
          })
        }
        now = time
      }
      for (const o of ops) {
        if (o._tag === "schedule") {
          const at = now + o.at
          const model: Model = { due: at, left: o.repeats, cancelled: false, done: false, entry: undefined }
          model.entry = queue.schedule(at, fire(model))
          entries.push(model)
        } else if (o._tag === "cancel" && entries.length > 0) {
          const m = entries[o.which % entries.length]!
          m.entry?.cancel()
          if (!m.done) m.cancelled = true
        } else if (o._tag === "advance") {
          runTo(now + o.by)
        }
        expect(queue.size).toBe(entries.filter((m) => !m.cancelled && !m.done).length)
      }
      // Run everything to its end: every live entry finishes; the queue is then empty.
      runTo(now + 10_000)
      expect(entries.every((m) => m.cancelled || m.done)).toBe(true)
      expect(queue.size).toBe(0)
      expect(queue.nextDue()).toBeUndefined()
    }))
  })

  // Guards: the heap's pop sinking toward the later child (the top is then not the earliest entry:
  // an entry fires late, after later ones, or the shell is told to sleep past it).
  it("against a sorted-array model: nextDue is the earliest entry, each runDue fires exactly the entries due, earliest first (property)", () => {
    type ModelOp =
      | { readonly _tag: "schedule"; readonly at: number; readonly again: ReadonlyArray<number> }
      | { readonly _tag: "cancel"; readonly which: number }
      | { readonly _tag: "run"; readonly by: number; readonly late: boolean }
    const modelOp: fc.Arbitrary<ModelOp> = fc.oneof(
      {
        weight: 4,
        arbitrary: fc.record({
          _tag: fc.constant("schedule" as const),
          at: fc.nat(100),
          again: fc.array(fc.integer({ min: 1, max: 100 }), { maxLength: 2 })
        })
      },
      { weight: 1, arbitrary: fc.record({ _tag: fc.constant("cancel" as const), which: fc.nat() }) },
      { weight: 2, arbitrary: fc.record({ _tag: fc.constant("run" as const), by: fc.nat(60), late: fc.boolean() }) }
    )
    interface Model {
      readonly id: number
      due: number
      readonly again: Array<number>
      done: boolean
      entry: Deadlines.Entry | undefined
    }
    fc.assert(fc.property(fc.array(modelOp, { maxLength: 120 }), (ops) => {
      const queue = new Deadlines.DeadlineQueue()
      const all: Array<Model> = []
      // The model: the live entries as a sorted array (by due time).
      const live = () => all.filter((m) => !m.done).sort((a, b) => a.due - b.due)
      const fired: Array<{ readonly id: number; readonly due: number; readonly at: number }> = []
      let now = 0
      const runAt = (time: number) => {
        now = time
        const expected = live().filter((m) => m.due <= now).map((m) => m.id)
        fired.length = 0
        queue.runDue(now, (defect) => {
          throw defect
        })
        // Exactly the entries due, each once, in due order (ties in any order).
        expect(fired.map((f) => f.id).sort((a, b) => a - b)).toEqual([...expected].sort((a, b) => a - b))
        for (let i = 1; i < fired.length; i++) expect(fired[i]!.due).toBeGreaterThanOrEqual(fired[i - 1]!.due)
      }
      for (const o of ops) {
        if (o._tag === "schedule") {
          const model: Model = { id: all.length, due: now + o.at, again: [...o.again], done: false, entry: undefined }
          model.entry = queue.schedule(model.due, (at) => {
            fired.push({ id: model.id, due: model.due, at })
            const gap = model.again.shift()
            if (gap === undefined) {
              model.done = true
              return undefined
            }
            model.due = at + gap
            return model.due
          })
          all.push(model)
        } else if (o._tag === "cancel") {
          if (all.length === 0) continue
          const model = all[o.which % all.length]!
          model.entry?.cancel()
          model.done = true
        } else if (o.late) {
          // A shell woken late (a blocked event loop): one run for everything due by then.
          runAt(now + o.by)
        } else {
          // A shell on time: it wakes at each time nextDue names; every check then runs at its due time.
          const until = now + o.by
          for (let next = queue.nextDue(); next !== undefined && next <= until; next = queue.nextDue()) {
            expect(next).toBeGreaterThanOrEqual(now)
            runAt(next)
            for (const f of fired) expect(f.at, `entry ${f.id} fired late`).toBe(f.due)
          }
          now = until
        }
        const earliest = live()[0]
        expect(queue.size).toBe(live().length)
        // A cancelled entry may sit at the top (a wake-up for nothing); a live one is never passed over.
        if (earliest !== undefined) expect(queue.nextDue()).toBeLessThanOrEqual(earliest.due)
        else expect(queue.nextDue()).toBeUndefined()
      }
    }))
  })
})
