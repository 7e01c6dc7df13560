/**
 * A gate of a fixed number of places, taken in the order they were asked for.
 *
 * Not `Effect.makeSemaphore`: in Effect 3 (3.22) a release wakes every waiting fiber, each of
 * which checks the permits again and, finding none, waits again at the back of the line. With
 * thousands waiting (a runner taking thousands of sessions over) each release costs thousands of
 * wake-ups, and the order is lost. Here a release hands its place to the first in line.
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import { doneDeferredUnsafe } from "../../src/internal/line.js"

export interface Gate {
  /** Runs `self` holding one place, waiting for one (first come, first served) when none is free. */
  readonly withPlace: <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /** Places free, and fibers waiting (for tests). */
  readonly free: () => number
  readonly waiting: () => number
}

export const makeGate = (places: number): Effect.Effect<Gate> =>
  Effect.sync(() => {
    let free = places
    /** Waiting in order; a place given away completes the first. */
    const line = new Set<Deferred.Deferred<void>>()

    const release = Effect.sync(() => {
      const first = line.values().next()
      if (first.done === true) {
        free += 1
        return
      }
      line.delete(first.value)
      doneDeferredUnsafe(first.value, Effect.void)
    })

    const acquire = Effect.suspend(() => {
      if (free > 0) {
        free -= 1
        return Effect.void
      }
      return Effect.flatMap(Deferred.make<void>(), (turn) => {
        line.add(turn)
        return Deferred.await(turn).pipe(
          // Interrupted in line: leave it; interrupted once given a place: give it on.
          Effect.onInterrupt(() => line.delete(turn) ? Effect.void : release)
        )
      })
    })

    return {
      withPlace: <A, E, R>(self: Effect.Effect<A, E, R>) =>
        Effect.uninterruptibleMask((restore) => Effect.andThen(restore(acquire), Effect.ensuring(restore(self), release))),
      free: () => free,
      waiting: () => line.size
    }
  })
