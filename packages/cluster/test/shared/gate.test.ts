/**
 * The runner's start gate (the cluster's `binding/internal/gate.ts`, written once for both
 * cluster editions), tested on both lines: places taken first come, first served; a waiter
 * interrupted in line leaves it; a holder that fails or is interrupted gives its place back. Each
 * cluster edition's `gate.test.ts` holds the cases that differ (the property test, on Effect 3).
 */
import { assert, describe, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import { makeGate } from "../../binding/internal/gate.js"
import { forkChild, yieldNow } from "../helpers/line.js"

/** Waits (yielding) until `done` holds. */
const until = (done: () => boolean): Effect.Effect<void> =>
  Effect.suspend(() => done() ? Effect.void : Effect.andThen(yieldNow(), until(done)))

describe("the start gate", () => {
  it.effect("places are taken in the order they were asked for", () =>
    Effect.gen(function*() {
      const gate = yield* makeGate(2)
      const open = yield* Deferred.make<void>()
      const holders = yield* Effect.forEach([0, 1], () => forkChild(gate.withPlace(Deferred.await(open))))
      yield* until(() => gate.free() === 0)
      const order: Array<number> = []
      const waiters: Array<Fiber.Fiber<void>> = []
      for (let i = 0; i < 6; i++) {
        waiters.push(yield* forkChild(gate.withPlace(Effect.sync(() => void order.push(i)))))
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
      const holder = yield* forkChild(gate.withPlace(Deferred.await(open)))
      yield* until(() => gate.free() === 0)
      const ran: Array<string> = []
      const a = yield* forkChild(gate.withPlace(Effect.sync(() => ran.push("a"))))
      yield* until(() => gate.waiting() === 1)
      const b = yield* forkChild(gate.withPlace(Effect.sync(() => ran.push("b"))))
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
      const held = yield* forkChild(gate.withPlace(Effect.never))
      yield* until(() => gate.free() === 0)
      yield* Fiber.interrupt(held)
      assert.deepStrictEqual([gate.free(), gate.waiting()], [1, 0])
    }))
})
