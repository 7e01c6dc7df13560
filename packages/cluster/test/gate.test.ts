/**
 * The runner's start gate (packages/cluster/src/internal/gate.ts): places taken first come, first served;
 * never more holders than places; a waiter interrupted in line, or as its turn came, loses no
 * place.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import * as Fiber from "effect/Fiber"
import { makeGate } from "../src/internal/gate.js"

/** Waits (yielding) until `done` holds. */
const until = (done: () => boolean): Effect.Effect<void> =>
  Effect.suspend(() => done() ? Effect.void : Effect.zipRight(Effect.yieldNow(), until(done)))

describe("the start gate", () => {
  it.effect("places are taken in the order they were asked for", () =>
    Effect.gen(function*() {
      const gate = yield* makeGate(2)
      const open = yield* Deferred.make<void>()
      const holders = yield* Effect.forEach([0, 1], () => Effect.fork(gate.withPlace(Deferred.await(open))))
      yield* until(() => gate.free() === 0)
      const order: Array<number> = []
      const waiters: Array<Fiber.RuntimeFiber<void>> = []
      for (let i = 0; i < 6; i++) {
        waiters.push(yield* Effect.fork(gate.withPlace(Effect.sync(() => void order.push(i)))))
        yield* until(() => gate.waiting() === i + 1)
      }
      assert.deepStrictEqual(order, [])
      yield* Deferred.succeed(open, undefined)
      yield* Fiber.joinAll([...holders, ...waiters])
      assert.deepStrictEqual(order, [0, 1, 2, 3, 4, 5])
      assert.deepStrictEqual([gate.free(), gate.waiting()], [2, 0])
    }))

  it.effect("a waiter interrupted in line leaves it; the next one gets the place", () =>
    Effect.gen(function*() {
      const gate = yield* makeGate(1)
      const open = yield* Deferred.make<void>()
      const holder = yield* Effect.fork(gate.withPlace(Deferred.await(open)))
      yield* until(() => gate.free() === 0)
      const ran: Array<string> = []
      const a = yield* Effect.fork(gate.withPlace(Effect.sync(() => ran.push("a"))))
      yield* until(() => gate.waiting() === 1)
      const b = yield* Effect.fork(gate.withPlace(Effect.sync(() => ran.push("b"))))
      yield* until(() => gate.waiting() === 2)
      yield* Fiber.interrupt(a)
      assert.strictEqual(gate.waiting(), 1)
      yield* Deferred.succeed(open, undefined)
      yield* Fiber.join(holder)
      yield* Fiber.join(b)
      assert.deepStrictEqual(ran, ["b"])
      assert.deepStrictEqual([gate.free(), gate.waiting()], [1, 0])
    }))

  it.effect("a holder that fails or is interrupted gives its place back", () =>
    Effect.gen(function*() {
      const gate = yield* makeGate(1)
      assert.deepStrictEqual(yield* Effect.flip(gate.withPlace(Effect.fail("no"))), "no")
      const held = yield* Effect.fork(gate.withPlace(Effect.never))
      yield* until(() => gate.free() === 0)
      yield* Fiber.interrupt(held)
      assert.deepStrictEqual([gate.free(), gate.waiting()], [1, 0])
    }))

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
