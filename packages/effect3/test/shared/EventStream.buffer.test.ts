/**
 * The buffer between a connection's transport and its consumer (`binding/internal/channel/buffer.ts`):
 * events taken whole and in order, the end and the failure only after every event, a waiting
 * consumer woken once per burst (after the producer's callback), and a wait that is interrupted
 * leaves no other waiter stranded. Written once for both editions (the buffer is the binding's); the
 * Effect 3 edition's `channel/buffer.test.ts` holds more of its races.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import { EventBuffer } from "../../binding/internal/channel/buffer.js"
import { forkChild, interrupted, pollNow, yieldNow } from "../helpers/line.js"

type Buffer = EventBuffer<number, string>

/** A pull over the buffer as the engine's: every event waiting, else the end, else a wait and again. */
const pull = (buffer: Buffer): Effect.Effect<ReadonlyArray<number>, string | "done"> => {
  const again: Effect.Effect<ReadonlyArray<number>, string | "done"> = Effect.suspend(() => {
    const chunk = buffer.takeAll()
    if (chunk !== undefined) return Effect.succeed(chunk)
    const finished = buffer.finished
    if (finished !== undefined) {
      return finished._tag === "Done" ? Effect.fail("done" as const) : Effect.failCause(finished.cause)
    }
    return buffer.waitThen(again)
  })
  return again
}

describe("EventBuffer", () => {
  it.effect("events are taken whole and in order; the end comes after every event", () =>
    Effect.gen(function*() {
      const buffer: Buffer = new EventBuffer()
      buffer.offer(1)
      buffer.offer(2)
      buffer.end()
      buffer.offer(3)
      assert.deepStrictEqual(yield* pull(buffer), [1, 2])
      assert.deepStrictEqual(yield* Effect.flip(pull(buffer)), "done")
    }))

  it.effect("a failure comes after every event before it", () =>
    Effect.gen(function*() {
      const buffer: Buffer = new EventBuffer()
      buffer.offer(1)
      buffer.fail(Cause.fail("boom"))
      buffer.end()
      assert.deepStrictEqual(yield* pull(buffer), [1])
      assert.deepStrictEqual(yield* Effect.flip(pull(buffer)), "boom")
    }))

  it.effect("a waiting consumer is woken after the producer's callback: one burst, one chunk", () =>
    Effect.gen(function*() {
      const buffer: Buffer = new EventBuffer()
      const fiber = yield* forkChild(pull(buffer))
      yield* yieldNow()
      assert.isUndefined(pollNow(fiber))
      // One socket read: three frames in one synchronous callback.
      buffer.offer(1)
      buffer.offer(2)
      buffer.offer(3)
      assert.isUndefined(pollNow(fiber))
      assert.deepStrictEqual(yield* Fiber.join(fiber), [1, 2, 3])
    }))

  it.effect("an interrupted wait leaves the other waiter woken by the next event", () =>
    Effect.gen(function*() {
      const buffer: Buffer = new EventBuffer()
      const first = yield* forkChild(pull(buffer))
      const second = yield* forkChild(pull(buffer))
      yield* yieldNow()
      yield* Fiber.interrupt(first)
      buffer.offer(7)
      assert.deepStrictEqual(yield* Fiber.join(second), [7])
      const exit = yield* Fiber.await(first)
      assert.isTrue(Exit.isFailure(exit) && interrupted(exit.cause))
    }))

  it.effect("waits interrupted again and again: the next event still reaches the live one", () =>
    Effect.gen(function*() {
      const buffer: Buffer = new EventBuffer()
      for (let i = 0; i < 100; i++) {
        const waiting = yield* forkChild(pull(buffer))
        yield* yieldNow()
        yield* Fiber.interrupt(waiting)
      }
      const live = yield* forkChild(pull(buffer))
      yield* yieldNow()
      buffer.offer(1)
      assert.deepStrictEqual(yield* Fiber.join(live), [1])
    }))
})
