/**
 * The shared timer of the event channel: every time-out of every connection made by one service
 * (idle time-outs, connect time-outs, the grace given to a closing socket) is an entry of the
 * protocol core's `Deadlines.DeadlineQueue`, and ONE fiber, started on the first entry and gone
 * when none is left, sleeps until the earliest. Not a fiber per connection: the SDK keeps at most
 * one fiber per idle open session, the connection's loop (src/internal/README.md, "Deadlines").
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
import * as Runtime from "effect/Runtime"
import { Deadlines as Core } from "effect-agent-session-core"

/** What an entry's check says: when to check again (a time on the Clock, in ms), or done. */
export type Check = Core.Check

/** A scheduled entry. */
export type Entry = Core.Entry

/** The timer. */
export interface Deadlines {
  /** Calls `check` once the Clock reaches `at` (ms), then again whenever it asks. */
  readonly schedule: (at: number, check: Check) => Effect.Effect<Entry>
  /**
   * The same, synchronously (from a socket's callback): should the timer's fiber have to start,
   * it runs with `runtime` (its Clock, the TestClock in tests).
   */
  readonly unsafeSchedule: (at: number, check: Check, runtime: Runtime.Runtime<never>) => Entry
  /** Entries not cancelled nor done (for tests). */
  readonly size: () => number
}

/** A new timer (one per service; its fiber runs only while it has entries). */
export const make = (): Deadlines => {
  let running = false
  /** When the fiber wakes up next (ms), and how to wake it earlier. */
  let target = Number.POSITIVE_INFINITY
  let wake: Deferred.Deferred<void> | undefined
  const defects: Array<unknown> = []

  const rouse = (): void => {
    if (wake !== undefined) Deferred.unsafeDone(wake, Exit.void)
  }
  // A cancel that leaves no entry wakes the fiber, which then ends.
  const queue = new Core.DeadlineQueue(rouse)
  // A defect in one connection's check must not stop every connection's time-outs: that entry
  // ends, the defect is logged by the fiber.
  const onDefect = (defect: unknown): void => {
    defects.push(defect)
  }

  const sweep: Effect.Effect<void> = Effect.clockWith((clock) =>
    Effect.suspend(function loop(): Effect.Effect<void> {
      const now = clock.unsafeCurrentTimeMillis()
      queue.runDue(now, onDefect)
      if (defects.length > 0) {
        const failed = defects.splice(0)
        return Effect.forEach(failed, (defect) => Effect.logError("A deadline check failed", Cause.die(defect)), {
          discard: true
        }).pipe(Effect.zipRight(Effect.suspend(loop)))
      }
      const next = queue.nextDue()
      if (next === undefined) {
        running = false
        target = Number.POSITIVE_INFINITY
        wake = undefined
        return Effect.void
      }
      target = next
      const signal = Deferred.unsafeMake<void>(FiberId.none)
      wake = signal
      return Effect.raceFirst(Effect.sleep(Duration.millis(next - now)), Deferred.await(signal)).pipe(
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

  const unsafeSchedule = (at: number, check: Check, runtime: Runtime.Runtime<never>): Entry => {
    const entry = queue.schedule(at, check)
    if (!running) {
      running = true
      target = at
      // A fiber of its own (not the caller's child), interruptible whatever the caller: the race
      // below must be able to drop its sleeper.
      Runtime.runFork(runtime)(Effect.interruptible(detached))
    } else if (at < target) {
      rouse()
    }
    return entry
  }

  const schedule = (at: number, check: Check): Effect.Effect<Entry> =>
    Effect.map(Effect.runtime<never>(), (runtime) => unsafeSchedule(at, check, runtime))

  return { schedule, unsafeSchedule, size: () => queue.size }
}
