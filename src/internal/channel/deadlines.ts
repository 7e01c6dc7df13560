/**
 * The shared timer of the event channel: every time-out of every connection made by one service
 * (idle time-outs, connect time-outs, the grace given to a closing socket) is an entry here, and
 * ONE fiber, started on the first entry and gone when none is left, sleeps until the earliest.
 *
 * Why not a fiber (or `Effect.timeout`, which forks two) per connection: issue 15 allows at most
 * one fiber of the SDK's per idle open session, and that one is the connection loop waiting for
 * its attempt to end. A fiber costs about 8 KiB of heap (bench/RESULTS.md, floors: "raw ws + one
 * Effect fiber waiting on a Deferred"); at 10,000 sessions, one timer fiber per session would be
 * 80 MiB. Entries are kept in a binary heap by due time; a connection touched by a frame does not
 * move its entry: when the entry comes due, its `check` sees the later deadline and says when to
 * look again (so a busy connection costs one heap operation per idle period, not one per frame).
 *
 * The sleeping is `Effect.sleep`, so the `TestClock` drives every time-out in tests. While it
 * sleeps the timer is three fibers (itself and the two sides of the race that lets an earlier
 * entry wake it), per service, whatever the number of connections.
 */
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"
import * as FiberRef from "effect/FiberRef"
import * as HashMap from "effect/HashMap"

/** What an entry's check says: when to check again (a time on the Clock, in ms), or done. */
export type Check = (now: number) => number | undefined

/** A scheduled entry. */
export interface Entry {
  /** Removes the entry; its check is never called again. */
  readonly cancel: () => void
}

/** The timer. */
export interface Deadlines {
  /** Calls `check` once the Clock reaches `at` (ms), then again whenever it asks. */
  readonly schedule: (at: number, check: Check) => Effect.Effect<Entry>
  /** Entries not cancelled nor done (for tests). */
  readonly size: () => number
}

/** An entry in the heap (and the handle its owner cancels it by: one object per entry). */
class Item implements Entry {
  constructor(public at: number, public check: Check | undefined, private readonly onCancel: () => void) {}
  cancel(): void {
    if (this.check === undefined) return
    this.check = undefined
    this.onCancel()
  }
}

/** A binary min-heap of items by `at`. */
class Heap {
  readonly items: Array<Item> = []
  push(item: Item): void {
    const items = this.items
    let i = items.push(item) - 1
    while (i > 0) {
      const parent = (i - 1) >> 1
      const p = items[parent]!
      if (p.at <= item.at) break
      items[i] = p
      i = parent
    }
    items[i] = item
  }
  pop(): Item | undefined {
    const items = this.items
    const top = items[0]
    const last = items.pop()
    if (top === undefined || last === undefined || items.length === 0) return top
    let i = 0
    while (true) {
      const left = 2 * i + 1
      if (left >= items.length) break
      const right = left + 1
      const child = right < items.length && items[right]!.at < items[left]!.at ? right : left
      if (items[child]!.at >= last.at) break
      items[i] = items[child]!
      i = child
    }
    items[i] = last
    return top
  }
}

/** A new timer (one per service; its fiber runs only while it has entries). */
export const make = (): Deadlines => {
  const heap = new Heap()
  let live = 0
  let running = false
  /** When the fiber wakes up next (ms), and how to wake it earlier. */
  let target = Number.POSITIVE_INFINITY
  let wake: Deferred.Deferred<void> | undefined
  const defects: Array<unknown> = []

  const cancelled = (): void => {
    live -= 1
    if (live === 0) rouse()
  }

  const rouse = (): void => {
    if (wake !== undefined) Deferred.unsafeDone(wake, Exit.void)
  }

  const due = (now: number): void => {
    for (let item = heap.items[0]; item !== undefined && item.at <= now; item = heap.items[0]) {
      heap.pop()
      const check = item.check
      if (check === undefined) continue
      let next: number | undefined
      try {
        next = check(now)
      } catch (defect) {
        // A defect in one connection's check must not stop every connection's time-outs (the
        // fiber would die with `running` still set): that entry ends, the defect is logged.
        defects.push(defect)
        next = undefined
      }
      if (next === undefined) {
        if (item.check !== undefined) live -= 1
        item.check = undefined
        continue
      }
      item.at = Math.max(next, now + 1)
      heap.push(item)
    }
    // Cancelled entries at the top are dropped (others wait for their time).
    while (heap.items[0] !== undefined && heap.items[0].check === undefined) heap.pop()
  }

  const sweep: Effect.Effect<void> = Effect.clockWith((clock) =>
    Effect.suspend(function loop(): Effect.Effect<void> {
      const now = clock.unsafeCurrentTimeMillis()
      due(now)
      if (defects.length > 0) {
        const failed = defects.splice(0)
        return Effect.forEach(failed, (defect) => Effect.logError("A deadline check failed", Cause.die(defect)), {
          discard: true
        }).pipe(Effect.zipRight(Effect.suspend(loop)))
      }
      const next = heap.items[0]
      if (live === 0 || next === undefined) {
        running = false
        target = Number.POSITIVE_INFINITY
        wake = undefined
        heap.items.length = 0
        return Effect.void
      }
      target = next.at
      const signal = Deferred.unsafeMake<void>(FiberId.none)
      wake = signal
      return Effect.raceFirst(Effect.sleep(Duration.millis(next.at - now)), Deferred.await(signal)).pipe(
        Effect.zipRight(Effect.suspend(loop))
      )
    })
  )

  // The fiber is started by whichever connection schedules first, but serves them all: it
  // drops that connection's log annotations and services, its span among them (it keeps its Clock,
  // the TestClock in tests: the connections of one service share one clock).
  const detached: Effect.Effect<void> = Effect.zipRight(
    Effect.zipRight(
      FiberRef.set(FiberRef.currentLogAnnotations, HashMap.empty()),
      // None of that connection's services either (the Clock and the logger are not in it).
      FiberRef.set(FiberRef.currentContext, Context.empty())
    ),
    sweep
  ).pipe(
    // Should the fiber end any other way (interrupted, a defect), the next entry starts another.
    Effect.ensuring(Effect.sync(() => {
      running = false
      wake = undefined
      target = Number.POSITIVE_INFINITY
    }))
  )

  const schedule = (at: number, check: Check): Effect.Effect<Entry> =>
    Effect.suspend(() => {
      const entry = new Item(at, check, cancelled)
      heap.push(entry)
      live += 1
      if (!running) {
        running = true
        target = at
        // Interruptible whatever the caller: the race below must be able to drop its sleeper.
        return Effect.as(Effect.forkDaemon(Effect.interruptible(detached)), entry)
      }
      if (at < target) rouse()
      return Effect.succeed(entry)
    })

  return { schedule, size: () => live }
}
