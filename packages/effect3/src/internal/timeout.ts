/**
 * A time-out that runs the effect in one fiber of its own: the outcome of `Effect.timeoutFail`,
 * for the per-attempt time-out of `AgentApi`, at the cost of one fiber instead of two.
 *
 * `Effect.timeoutFail` races the effect against a sleep: it forks both into fibers of their own,
 * interrupts the loser and merges the winner's fiber refs back into the caller. Here the effect
 * is forked (it must run in a fiber of its own to be abandoned when the time is up) and, on the
 * live clock, a timer of the clock's own kind (`setTimeout`, what the live clock's `sleep` uses)
 * ends the wait: no second fiber, less CPU per call (src/internal/README.md, "HTTP calls").
 *
 * The effect's fiber is its own: what it sets fiber-locally (`FiberRef.set`, a service added to
 * its context) stays there and is not merged back into the caller. So an effect run here may set
 * its fiber refs directly, without the save-and-restore of `Effect.locally`.
 *
 * Any other clock (a `TestClock`, a caller's own) and a duration the timer cannot hold
 * (`LiveWait.fits`: over about 24.8 days, or infinite) wait with `Effect.timeoutTo` on the clock itself, so virtual
 * time drives the time-out; the effect still runs in its own fiber.
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import { LiveWait } from "effect-agent-session-shell"

/** The prototype of the live clock: every clock built by `Clock.make` sleeps on `setTimeout`. */
const liveClockPrototype: unknown = Object.getPrototypeOf(Clock.make())

/** Waits for `child` on the live clock: its exit, or `onTimeout()` once `millis` have passed. */
const awaitLive = <A, E, E1>(
  child: Fiber.RuntimeFiber<A, E>,
  millis: number,
  onTimeout: () => E1
): Effect.Effect<A, E | E1> =>
  Effect.async<A, E | E1>((resume) => {
    const onExit = (exit: Exit.Exit<A, E>): void => {
      if (wait.settle()) resume(exit)
    }
    const wait = new LiveWait.Wait(millis, () => {
      child.removeObserver(onExit)
      resume(Effect.zipRight(Fiber.interrupt(child), Effect.fail(onTimeout())))
    })
    child.addObserver(onExit)
    // The caller was interrupted: so is the effect, and the interruption waits for it.
    return Effect.suspend(() => {
      wait.settle()
      child.removeObserver(onExit)
      return Fiber.interrupt(child)
    })
  })

/** Waits for `child` on any clock (virtual time included), with the same outcomes. */
const awaitOnClock = <A, E, E1>(
  child: Fiber.RuntimeFiber<A, E>,
  duration: Duration.Duration,
  onTimeout: () => E1
): Effect.Effect<A, E | E1> =>
  Effect.timeoutTo(Fiber.await(child), {
    duration,
    onSuccess: (exit): Option.Option<Exit.Exit<A, E>> => Option.some(exit),
    onTimeout: (): Option.Option<Exit.Exit<A, E>> => Option.none()
  }).pipe(
    Effect.flatMap((exit): Effect.Effect<A, E | E1> =>
      Option.isSome(exit) ? exit.value : Effect.zipRight(Fiber.interrupt(child), Effect.fail(onTimeout()))
    ),
    Effect.onInterrupt(() => Fiber.interrupt(child))
  )

/**
 * `self`, run in a fiber of its own, failed with `onTimeout()` once `duration` has passed
 * without it ending (it is then interrupted, and awaited, first). Interrupting the caller
 * interrupts `self` and awaits it. What `self` sets fiber-locally is not merged back.
 */
export const timeoutFail = <A, E, R, E1>(
  self: Effect.Effect<A, E, R>,
  duration: Duration.Duration,
  onTimeout: () => E1
): Effect.Effect<A, E | E1, R> =>
  Effect.clockWith((clock) => {
    const millis = Duration.toMillis(duration)
    const live = Object.getPrototypeOf(clock) === liveClockPrototype && LiveWait.fits(millis)
    return Effect.uninterruptibleMask((restore) =>
      Effect.flatMap(
        Effect.fork(restore(self)),
        (child) => restore(live ? awaitLive(child, millis, onTimeout) : awaitOnClock(child, duration, onTimeout))
      )
    )
  })
