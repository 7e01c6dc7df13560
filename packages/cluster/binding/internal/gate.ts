/**
 * A gate of a fixed number of places, taken in the order they were asked for: the runner's line
 * of starts, the log's writers and readers, and each activation's locks (one place).
 *
 * Not `Effect.makeSemaphore`: in Effect 3 (3.22) a release wakes every waiting fiber, each of
 * which checks the permits again and, finding none, waits again at the back of the line. With
 * thousands waiting (a runner taking thousands of sessions over) each release costs thousands of
 * wake-ups, and the order is lost. Here a release hands its place to the first in line.
 *
 * One object with its methods on the prototype, its line made when someone first waits: a runner
 * holds two gates for every session it holds (bench/RESULTS.md, "What a held session keeps"),
 * where a semaphore is an object, a set and six closures.
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

class PlaceGate implements Gate {
  /** Waiting in order; a place given away completes the first. */
  private line: Set<Deferred.Deferred<void>> | undefined = undefined

  constructor(private places: number) {}

  withPlace<A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> {
    return Effect.uninterruptibleMask((restore) =>
      Effect.andThen(
        restore(Effect.suspend(() => this.acquire())),
        Effect.ensuring(restore(self), Effect.sync(() => this.release()))
      )
    )
  }

  free(): number {
    return this.places
  }

  waiting(): number {
    return this.line?.size ?? 0
  }

  private release(): void {
    const first = this.line?.values().next()
    if (first === undefined || first.done === true) {
      this.places += 1
      return
    }
    this.line!.delete(first.value)
    doneDeferredUnsafe(first.value, Effect.void)
  }

  private acquire(): Effect.Effect<void> {
    if (this.places > 0) {
      this.places -= 1
      return Effect.void
    }
    return Effect.flatMap(Deferred.make<void>(), (turn) => {
      const line = this.line ??= new Set()
      line.add(turn)
      return Deferred.await(turn).pipe(
        // Interrupted in line: leave it; interrupted once given a place: give it on.
        Effect.onInterrupt(() => line.delete(turn) ? Effect.void : Effect.sync(() => this.release()))
      )
    })
  }
}

/** A gate of `places` places. */
export const gate = (places: number): Gate => new PlaceGate(places)

export const makeGate = (places: number): Effect.Effect<Gate> => Effect.sync(() => gate(places))
