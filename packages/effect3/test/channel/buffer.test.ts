/**
 * The buffer between a connection's transport and its consumer (binding/internal/channel/buffer.ts)
 * on this edition's line, where the pull that waits on it is the engine's (`EngineConnection.pull`,
 * a stream through `streamFromPull`): no wake-up is lost, whether the event is offered before the
 * pull looks, between its look and its wait (the fiber yielded there), or while it waits, from
 * outside any fiber (a socket's callback); and a wait interrupted leaves the next puller woken.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { EventBuffer } from "../../binding/internal/channel/buffer.js"
import { type Pull, pullDone, pullFailCause, streamFromPull } from "../../src/internal/line.js"

type Buffer = EventBuffer<number, string>

/**
 * A pull over the buffer as the engine's: every event waiting, else the end, else a wait and
 * again; `between` runs after a look that found nothing, before the wait.
 */
const pullOf = (
  buffer: Buffer,
  between: () => Effect.Effect<void> = () => Effect.void
): Pull<readonly [number, ...Array<number>], string> => {
  const again: Pull<readonly [number, ...Array<number>], string> = Effect.suspend(() => {
    const chunk = buffer.takeAll()
    if (chunk !== undefined) return Effect.succeed(chunk)
    const finished = buffer.finished
    if (finished !== undefined) return finished._tag === "Done" ? pullDone() : pullFailCause(finished.cause)
    return Effect.zipRight(between(), buffer.waitThen(again))
  })
  return again
}

/** Fails the test (rather than hanging it) when a wake-up was lost. */
const within = <A, E>(self: Effect.Effect<A, E>): Effect.Effect<A, E | string> =>
  Effect.timeoutFail(self, { duration: "2 seconds", onTimeout: () => "a wake-up was lost" })

describe("EventBuffer under the engine's pull (this edition's line)", () => {
  it.live("an event offered between the pull's look and its wait: the wait goes on at once", () =>
    Effect.gen(function*() {
      const buffer: Buffer = new EventBuffer()
      let once = true
      const offered = () =>
        Effect.sync(() => {
          if (once) buffer.offer(1)
          once = false
        })
      assert.deepStrictEqual(yield* within(pullOf(buffer, offered)), [1])
    }))

  it.live("an event offered from a callback while the pulling fiber has yielded between its look and its wait", () =>
    Effect.gen(function*() {
      const buffer: Buffer = new EventBuffer()
      let once = true
      // The socket's callback runs while the fiber is away (it yields for 5 ms), before it waits.
      const yielded = () =>
        Effect.suspend(() => {
          if (!once) return Effect.void
          once = false
          setTimeout(() => buffer.offer(2), 0)
          return Effect.sleep("5 millis")
        })
      assert.deepStrictEqual(yield* within(pullOf(buffer, yielded)), [2])
    }))

  it.live("an event offered from outside any fiber while the pull waits wakes it; the end wakes the next", () =>
    Effect.gen(function*() {
      const buffer: Buffer = new EventBuffer()
      const fiber = yield* Effect.fork(within(pullOf(buffer)))
      yield* Effect.sleep("5 millis")
      assert.isNull(fiber.unsafePoll())
      setTimeout(() => buffer.offer(3), 0)
      assert.deepStrictEqual(yield* Fiber.join(fiber), [3])
      const next = yield* Effect.fork(within(pullOf(buffer)))
      yield* Effect.sleep("5 millis")
      setTimeout(() => buffer.end(), 0)
      // The pull fails with the stream's end.
      assert.deepStrictEqual(yield* Effect.flip(Fiber.join(next)), Option.none())
    }))

  it.live("an interrupted wait: the next puller is woken by the next event", () =>
    Effect.gen(function*() {
      const buffer: Buffer = new EventBuffer()
      for (let i = 0; i < 50; i++) {
        const waiting = yield* Effect.fork(pullOf(buffer))
        yield* Effect.yieldNow()
        yield* Fiber.interrupt(waiting)
      }
      const live = yield* Effect.fork(within(pullOf(buffer)))
      yield* Effect.yieldNow()
      setTimeout(() => buffer.offer(4), 0)
      assert.deepStrictEqual(yield* Fiber.join(live), [4])
    }))

  it.live("the engine's stream over the buffer: every event offered at random turns arrives, in order, then the end", () =>
    Effect.gen(function*() {
      const buffer: Buffer = new EventBuffer()
      const count = 3000
      // The producer: bursts of events from timers and immediates, some while the consumer is
      // mid-pull, some while it waits, then the end.
      let next = 0
      const produce = () => {
        const burst = 1 + Math.floor(Math.random() * 3)
        for (let i = 0; i < burst && next < count; i++) buffer.offer(next++)
        if (next < count) {
          if (Math.random() < 0.5) setImmediate(produce)
          else setTimeout(produce, 0)
        } else buffer.end()
      }
      setImmediate(produce)
      // The consumer yields between its look and its wait, one time in two: the producer's
      // callbacks run there too.
      const taken = yield* within(
        Stream.runCollect(streamFromPull(pullOf(buffer, () => Math.random() < 0.5 ? Effect.yieldNow() : Effect.void)))
      )
      assert.deepStrictEqual(Chunk.toReadonlyArray(taken), Array.from({ length: count }, (_, i) => i))
    }), { timeout: 30_000 })
})
