/**
 * The shared timer of the event channel: every time-out of every connection made by one service
 * (idle time-outs, connect time-outs, the grace given to a closing socket) is an entry of the
 * core's `Timer` (which decides when to start, wake and stop), and ONE fiber, started on the first
 * entry and gone when none is left, sleeps until the earliest. Not a fiber per connection (the
 * repository's src/internal/README.md, "Deadlines").
 *
 * The sleeping is `Effect.sleep`, so the `TestClock` drives every time-out in tests. While it
 * sleeps the timer is a few fibers (itself and the sides of the race that lets an earlier entry
 * wake it), per service, whatever the number of connections.
 */
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import { type Deadlines as Core, Timer } from "effect-agent-session-shell"
import {
  currentTimeMillis,
  doneDeferredUnsafe,
  forkDetached,
  makeDeferredUnsafe,
  type RunContext,
  runContext
} from "../../../src/internal/line.js"

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
   * it runs with `context`'s Clock and logger (the TestClock in tests).
   */
  readonly scheduleUnsafe: (at: number, check: Check, context: RunContext) => Entry
  /** Entries not cancelled nor done (for tests). */
  readonly size: () => number
}

/** A new timer (one per service; its fiber runs only while it has entries). */
export const make = (): Deadlines => {
  /** How to wake the fiber before its time. */
  let wake: Deferred.Deferred<void> | undefined
  const timer = new Timer.Timer<RunContext>({
    // A fiber of its own (not the caller's child), interruptible whatever the caller: the race
    // below must be able to drop its sleeper. It is started by whichever connection schedules
    // first, but serves them all: it keeps that connection's Clock (the TestClock in tests: the
    // connections of one service share one clock) and logger, not its log annotations, span or
    // services.
    start: (context) => forkDetached(context, Effect.interruptible(detached)),
    rouse: () => {
      if (wake !== undefined) doneDeferredUnsafe(wake, Exit.void)
    }
  })

  const sweep: Effect.Effect<void> = Effect.clockWith((clock) =>
    Effect.suspend(function loop(): Effect.Effect<void> {
      const now = currentTimeMillis(clock)
      const failed = timer.runDue(now)
      if (failed.length > 0) {
        return Effect.forEach(failed, (defect) => Effect.logError("A deadline check failed", Cause.die(defect)), {
          discard: true
        }).pipe(Effect.andThen(Effect.suspend(loop)))
      }
      const next = timer.next()
      if (next === undefined) {
        wake = undefined
        return Effect.void
      }
      const signal = makeDeferredUnsafe<void>()
      wake = signal
      return Effect.raceFirst(Effect.sleep(Duration.millis(next - now)), Deferred.await(signal)).pipe(
        Effect.andThen(Effect.suspend(loop))
      )
    })
  )

  // Should the fiber end any other way (interrupted, a defect), the next entry starts another.
  const detached: Effect.Effect<void> = Effect.ensuring(
    sweep,
    Effect.sync(() => {
      timer.stopped()
      wake = undefined
    })
  )

  const scheduleUnsafe = (at: number, check: Check, context: RunContext): Entry => timer.schedule(at, check, context)

  const schedule = (at: number, check: Check): Effect.Effect<Entry> =>
    Effect.map(runContext, (context) => timer.schedule(at, check, context))

  return { schedule, scheduleUnsafe, size: () => timer.size }
}
