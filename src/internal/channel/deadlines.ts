/**
 * The shared timer of the event channel: every time-out of every connection made by one service
 * (idle time-outs, connect time-outs, the grace given to a closing socket) is an entry of the
 * core's `Timer` (which decides when to start, wake and stop), and ONE fiber, started on the first
 * entry and gone when none is left, sleeps until the earliest. Not a fiber per connection: the SDK keeps at most
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
import { type Deadlines as Core, Timer } from "effect-agent-session-core/shell"

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
  /** How to wake the fiber before its time. */
  let wake: Deferred.Deferred<void> | undefined
  const timer = new Timer.Timer<Runtime.Runtime<never>>({
    // A fiber of its own (not the caller's child), interruptible whatever the caller: the race
    // below must be able to drop its sleeper.
    start: (runtime) => Runtime.runFork(runtime)(Effect.interruptible(detached)),
    rouse: () => {
      if (wake !== undefined) Deferred.unsafeDone(wake, Exit.void)
    }
  })

  const sweep: Effect.Effect<void> = Effect.clockWith((clock) =>
    Effect.suspend(function loop(): Effect.Effect<void> {
      const now = clock.unsafeCurrentTimeMillis()
      const failed = timer.runDue(now)
      if (failed.length > 0) {
        return Effect.forEach(failed, (defect) => Effect.logError("A deadline check failed", Cause.die(defect)), {
          discard: true
        }).pipe(Effect.zipRight(Effect.suspend(loop)))
      }
      const next = timer.next()
      if (next === undefined) {
        wake = undefined
        return Effect.void
      }
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
      timer.stopped()
      wake = undefined
    }))
  )

  const unsafeSchedule = (at: number, check: Check, runtime: Runtime.Runtime<never>): Entry =>
    timer.schedule(at, check, runtime)

  const schedule = (at: number, check: Check): Effect.Effect<Entry> =>
    Effect.map(Effect.runtime<never>(), (runtime) => timer.schedule(at, check, runtime))

  return { schedule, unsafeSchedule, size: () => timer.size }
}
