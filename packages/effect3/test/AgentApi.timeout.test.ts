/**
 * The per-attempt time-out of `AgentApi` (U22, src/internal/timeout.ts): on the live clock one
 * fiber and a timer instead of `Effect.timeoutFail`'s two fibers, the same outcomes; on any other
 * clock `Effect.timeoutFail` itself, driven by virtual time. The live cases use real time-outs
 * of a few milliseconds against effects that never end (hang guards, not timings). On both, the
 * effect runs in a fiber of its own whose fiber-local changes stay there.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberRef from "effect/FiberRef"
import * as Option from "effect/Option"
import * as Supervisor from "effect/Supervisor"
import * as TestClock from "effect/TestClock"
import { timeoutFail } from "../src/internal/timeout.js"

/** Counts the fibers started under it. */
class CountStarts extends Supervisor.AbstractSupervisor<number> {
  started = 0
  get value(): Effect.Effect<number> {
    return Effect.sync(() => this.started)
  }
  override onStart(): void {
    this.started += 1
  }
}

/** The fibers `effect` starts (the fiber it runs on excluded). */
const fibersStarted = <A, E>(effect: Effect.Effect<A, E>) =>
  Effect.gen(function*() {
    const supervisor = new CountStarts()
    const exit = yield* Effect.exit(Effect.supervised(effect, supervisor))
    return { exit, started: yield* supervisor.value }
  })

describe("AgentApi time-out (U22, internal/timeout.ts)", () => {
  describe("the live clock", () => {
    it.live("U22 an effect past the time-out is interrupted, and awaited, before the time-out fails", () =>
      Effect.gen(function*() {
        const interrupted = yield* Deferred.make<void>()
        const exit = yield* Effect.exit(
          timeoutFail(
            Effect.onInterrupt(Effect.never, () => Deferred.succeed(interrupted, undefined)),
            Duration.millis(10),
            () => "timed out" as const
          )
        )
        assert.deepStrictEqual(exit, Exit.fail("timed out"))
        assert.isTrue(yield* Deferred.isDone(interrupted), "the effect's finalizer ran before the failure")
      }))

    it.live("U22 a success or a failure within the time-out is the outcome, unchanged", () =>
      Effect.gen(function*() {
        const slow = Effect.as(Effect.sleep("5 millis"), 42)
        assert.deepStrictEqual(yield* Effect.exit(timeoutFail(slow, Duration.seconds(30), () => "timed out")), Exit.succeed(42))
        const failing = Effect.zipRight(Effect.sleep("5 millis"), Effect.fail("boom" as const))
        assert.deepStrictEqual(
          yield* Effect.exit(timeoutFail(failing, Duration.seconds(30), () => "timed out" as const)),
          Exit.fail("boom")
        )
        const dying = Effect.zipRight(Effect.sleep("5 millis"), Effect.die("bug"))
        const died = yield* Effect.exit(timeoutFail(dying, Duration.seconds(30), () => "timed out"))
        assert.isTrue(Exit.isFailure(died) && died.cause._tag === "Die", "a defect stays a defect")
      }))

    it.live("U22 one fiber per attempt, where Effect.timeoutFail starts two", () =>
      Effect.gen(function*() {
        const ours = yield* fibersStarted(timeoutFail(Effect.succeed(1), Duration.seconds(30), () => "timed out"))
        const effects = yield* fibersStarted(
          Effect.timeoutFail(Effect.succeed(1), { duration: Duration.seconds(30), onTimeout: () => "timed out" })
        )
        assert.deepStrictEqual(ours.exit, Exit.succeed(1))
        assert.strictEqual(ours.started, 1)
        assert.strictEqual(effects.started, 2)
      }))

    it.live("U22 interrupting the caller interrupts the effect and waits for it", () =>
      Effect.gen(function*() {
        const started = yield* Deferred.make<void>()
        const finalized = yield* Deferred.make<void>()
        const fiber = yield* Effect.fork(
          timeoutFail(
            Effect.zipRight(
              Deferred.succeed(started, undefined),
              Effect.onInterrupt(Effect.never, () => Deferred.succeed(finalized, undefined))
            ),
            Duration.seconds(30),
            () => "timed out"
          )
        )
        yield* Deferred.await(started)
        const exit = yield* Fiber.interrupt(fiber)
        assert.isTrue(Exit.isInterrupted(exit))
        assert.isTrue(yield* Deferred.isDone(finalized), "the effect was finalized before the caller's interruption ended")
      }))
  })

  describe("the effect's own fiber", () => {
    const ref = FiberRef.unsafeMake("caller's")
    const setsRef = Effect.as(FiberRef.set(ref, "attempt's"), 1)

    it.live("what the effect sets fiber-locally is not merged back (live clock)", () =>
      Effect.gen(function*() {
        assert.deepStrictEqual(yield* Effect.exit(timeoutFail(setsRef, Duration.seconds(30), () => "timed out")), Exit.succeed(1))
        assert.strictEqual(yield* FiberRef.get(ref), "caller's")
      }))

    it.effect("what the effect sets fiber-locally is not merged back (TestClock)", () =>
      Effect.gen(function*() {
        assert.deepStrictEqual(yield* Effect.exit(timeoutFail(setsRef, Duration.seconds(30), () => "timed out")), Exit.succeed(1))
        assert.strictEqual(yield* FiberRef.get(ref), "caller's")
      }))
  })

  describe("any other clock", () => {
    it.effect("U22 interrupting the caller interrupts the effect and waits for it (TestClock)", () =>
      Effect.gen(function*() {
        const started = yield* Deferred.make<void>()
        const finalized = yield* Deferred.make<void>()
        const fiber = yield* Effect.fork(
          timeoutFail(
            Effect.zipRight(
              Deferred.succeed(started, undefined),
              Effect.onInterrupt(Effect.never, () => Deferred.succeed(finalized, undefined))
            ),
            Duration.seconds(30),
            () => "timed out"
          )
        )
        yield* Deferred.await(started)
        assert.isTrue(Exit.isInterrupted(yield* Fiber.interrupt(fiber)))
        assert.isTrue(yield* Deferred.isDone(finalized))
      }))

    it.effect("U22 a time-out interrupts the effect before it fails (TestClock)", () =>
      Effect.gen(function*() {
        const finalized = yield* Deferred.make<void>()
        const fiber = yield* Effect.fork(
          timeoutFail(
            Effect.onInterrupt(Effect.never, () => Deferred.succeed(finalized, undefined)),
            Duration.seconds(1),
            () => "timed out"
          )
        )
        yield* TestClock.adjust("1 second")
        assert.deepStrictEqual(yield* Fiber.await(fiber), Exit.fail("timed out"))
        assert.isTrue(yield* Deferred.isDone(finalized))
      }))

    it.effect("U22 the TestClock drives the time-out (Effect.timeoutFail)", () =>
      Effect.gen(function*() {
        const fiber = yield* Effect.fork(timeoutFail(Effect.never, Duration.seconds(30), () => "timed out"))
        yield* TestClock.adjust("29 seconds")
        assert.isTrue(Option.isNone(yield* Fiber.poll(fiber)), "not timed out at 29 s")
        yield* TestClock.adjust("1 second")
        assert.deepStrictEqual(yield* Fiber.await(fiber), Exit.fail("timed out"))
      }))

    it.effect("U22 an infinite time-out never fires", () =>
      Effect.gen(function*() {
        const fiber = yield* Effect.fork(timeoutFail(Effect.never, Duration.infinity, () => "timed out"))
        yield* TestClock.adjust("3650 days")
        assert.isTrue(Option.isNone(yield* Fiber.poll(fiber)))
        yield* Fiber.interrupt(fiber)
      }))
  })
})
