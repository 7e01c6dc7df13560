/**
 * The runner's start gate (binding/internal/gate.ts): never more holders than places, a waiter
 * interrupted in line, or as its turn came, loses no place (a property test, on this line's
 * FastCheck). The cases both cluster editions run are in `shared/gate.test.ts`.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import * as Fiber from "effect/Fiber"
import { makeGate } from "../binding/internal/gate.js"

describe("the start gate", () => {
  // Any number of fibers, each holding a place for a while, some interrupted at any moment (in
  // line, as their turn came, or holding): never more holders than places, and once all are done
  // every place is free and nobody waits. Time is counted in turns of the scheduler.
  const fiberArb = FastCheck.record({
    startAfter: FastCheck.integer({ min: 0, max: 50 }),
    hold: FastCheck.integer({ min: 0, max: 20 }),
    interruptAfter: FastCheck.option(FastCheck.integer({ min: 0, max: 200 }), { nil: undefined })
  })
  const turns = (n: number): Effect.Effect<void> => n <= 0 ? Effect.void : Effect.zipRight(Effect.yieldNow(), turns(n - 1))

  it.effect.prop(
    "never more holders than places; every place back at the end",
    [FastCheck.integer({ min: 1, max: 4 }), FastCheck.array(fiberArb, { maxLength: 30 })],
    ([places, fibers]) =>
      Effect.gen(function*() {
        const gate = yield* makeGate(places)
        let holding = 0
        let most = 0
        const hold = (n: number) =>
          Effect.acquireUseRelease(
            Effect.sync(() => {
              holding += 1
              most = Math.max(most, holding)
            }),
            () => turns(n),
            () => Effect.sync(() => void (holding -= 1))
          )
        const started = yield* Effect.forEach(fibers, (f) =>
          Effect.fork(Effect.zipRight(turns(f.startAfter), gate.withPlace(hold(f.hold)))))
        yield* Effect.forEach(fibers, (f, i) =>
          f.interruptAfter === undefined
            ? Effect.void
            : Effect.fork(Effect.zipRight(turns(f.interruptAfter), Fiber.interrupt(started[i]!))))
        // Far more turns than every start and every hold one after the other (50 + 30 times 20).
        yield* turns(5_000)
        assert.isTrue(started.every((fiber) => fiber.unsafePoll() !== null), "every fiber has ended")
        assert.isAtMost(most, places)
        assert.deepStrictEqual([gate.free(), gate.waiting(), holding], [places, 0, 0])
      })
  )
})
