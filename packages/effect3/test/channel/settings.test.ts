/**
 * The options of one connection (binding/internal/channel/settings.ts): the defaults, a connection's
 * own options over the layer's over the defaults, `positiveInt` for the counts, and the default
 * schedules' delays.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"
import * as Schedule from "effect/Schedule"
import * as TestClock from "effect/TestClock"
import {
  defaultFirstConnectSchedule,
  defaultReconnectSchedule,
  positiveInt,
  resolveSettings,
  type Settings
} from "../../binding/internal/channel/settings.js"
import * as Wire from "../../src/Wire.js"

const millis = (duration: Duration.Duration): number => Duration.toMillis(duration)

/** The settings as plain values (durations in ms), to compare whole. */
const plain = (settings: Settings) => ({
  reconnect: settings.reconnect,
  firstConnect: settings.firstConnect,
  idleTimeout: millis(settings.idleTimeout),
  connectTimeout: millis(settings.connectTimeout),
  answerTimeout: millis(settings.answerTimeout),
  bufferSize: settings.bufferSize,
  answerBufferSize: settings.answerBufferSize,
  maxFrameSize: settings.maxFrameSize,
  strict: settings.strict,
  endOnError: settings.endOnError,
  failOnFrameError: settings.failOnFrameError
})

/**
 * The delays between the tries a schedule allows for failures that go on (on the TestClock):
 * each `next` that continues is one more try, after the time it slept, in whole milliseconds (a
 * jittered delay is a fraction of one, and the clock's sum of them drifts below a millisecond).
 */
const delaysOf = (schedule: Schedule.Schedule<unknown, string>) =>
  Effect.gen(function*() {
    const driver = yield* Schedule.driver(schedule)
    const fiber = yield* Effect.fork(Effect.gen(function*() {
      const delays: Array<number> = []
      let last = yield* Clock.currentTimeMillis
      while (Either.isRight(yield* Effect.either(driver.next("closed with code 1006")))) {
        const now = yield* Clock.currentTimeMillis
        delays.push(Math.round(now - last))
        last = now
      }
      return delays
    }))
    yield* TestClock.adjust("10 minutes")
    return yield* Fiber.join(fiber)
  })

describe("settings", () => {
  it("the defaults", () => {
    const settings = resolveSettings({}, {})
    assert.deepStrictEqual(plain(settings), {
      reconnect: defaultReconnectSchedule,
      firstConnect: defaultFirstConnectSchedule,
      idleTimeout: 60_000,
      connectTimeout: 10_000,
      answerTimeout: 10_000,
      bufferSize: 1024,
      answerBufferSize: 64,
      maxFrameSize: Wire.defaultMaxFrameSize,
      strict: false,
      endOnError: false,
      failOnFrameError: true
    })
    assert.strictEqual(settings.maxFrameSize, 1024 * 1024)
    assert.deepStrictEqual(settings.pendingRequests, [])
  })

  it("the layer's options over the defaults", () => {
    const reconnect = Schedule.recurs(1)
    const firstConnect = Schedule.recurs(0)
    const settings = resolveSettings({
      reconnect,
      firstConnect,
      idleTimeout: "5 seconds",
      connectTimeout: 2000,
      answerTimeout: Duration.seconds(3),
      bufferSize: 16,
      answerBufferSize: 4,
      maxFrameSize: 4096,
      strict: true,
      endOnError: true,
      failOnFrameError: false
    }, {})
    assert.deepStrictEqual(plain(settings), {
      reconnect,
      firstConnect,
      idleTimeout: 5000,
      connectTimeout: 2000,
      answerTimeout: 3000,
      bufferSize: 16,
      answerBufferSize: 4,
      maxFrameSize: 4096,
      strict: true,
      endOnError: true,
      failOnFrameError: false
    })
  })

  it("a connection's own options over the layer's", () => {
    const layerSchedule = Schedule.recurs(1)
    const ownSchedule = Schedule.recurs(7)
    const ownFirst = Schedule.recurs(3)
    const settings = resolveSettings({
      reconnect: layerSchedule,
      firstConnect: layerSchedule,
      idleTimeout: "5 seconds",
      connectTimeout: "6 seconds",
      answerTimeout: "7 seconds",
      bufferSize: 16,
      answerBufferSize: 4,
      maxFrameSize: 4096,
      strict: true,
      endOnError: true,
      failOnFrameError: false
    }, {
      reconnect: ownSchedule,
      firstConnect: ownFirst,
      idleTimeout: "1 second",
      connectTimeout: "2 seconds",
      answerTimeout: "3 seconds",
      bufferSize: 8,
      answerBufferSize: 2,
      maxFrameSize: 100,
      strict: false,
      endOnError: false,
      failOnFrameError: true
    })
    // An own false is not overridden by the layer's true.
    assert.deepStrictEqual(plain(settings), {
      reconnect: ownSchedule,
      firstConnect: ownFirst,
      idleTimeout: 1000,
      connectTimeout: 2000,
      answerTimeout: 3000,
      bufferSize: 8,
      answerBufferSize: 2,
      maxFrameSize: 100,
      strict: false,
      endOnError: false,
      failOnFrameError: true
    })
  })

  it("an own option left undefined takes the layer's", () => {
    const settings = resolveSettings({ bufferSize: 16, strict: true, idleTimeout: "5 seconds" }, {
      bufferSize: undefined,
      strict: undefined,
      idleTimeout: undefined
    })
    assert.strictEqual(settings.bufferSize, 16)
    assert.isTrue(settings.strict)
    assert.strictEqual(millis(settings.idleTimeout), 5000)
  })

  it("pendingRequests are the connection's own", () => {
    const settings = resolveSettings({}, { pendingRequests: [] })
    assert.deepStrictEqual(settings.pendingRequests, [])
  })

  it("counts that are not positive integers fall back to the default", () => {
    for (const bad of [0, -1, -0.5, 0.99, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) {
      const settings = resolveSettings({}, { bufferSize: bad, answerBufferSize: bad, maxFrameSize: bad })
      assert.strictEqual(settings.bufferSize, 1024, `bufferSize ${bad}`)
      assert.strictEqual(settings.answerBufferSize, 64, `answerBufferSize ${bad}`)
      assert.strictEqual(settings.maxFrameSize, Wire.defaultMaxFrameSize, `maxFrameSize ${bad}`)
    }
    assert.strictEqual(resolveSettings({ bufferSize: 0 }, {}).bufferSize, 1024, "a bad layer option too")
  })
})

describe("positiveInt", () => {
  it("keeps a finite number >= 1, rounded down; else the fallback", () => {
    assert.strictEqual(positiveInt(1, 9), 1)
    assert.strictEqual(positiveInt(2.7, 9), 2)
    assert.strictEqual(positiveInt(1.0001, 9), 1)
    assert.strictEqual(positiveInt(1e9, 9), 1e9)
    assert.strictEqual(positiveInt(undefined, 9), 9)
    assert.strictEqual(positiveInt(0, 9), 9)
    assert.strictEqual(positiveInt(0.5, 9), 9)
    assert.strictEqual(positiveInt(-3, 9), 9)
    assert.strictEqual(positiveInt(Number.NaN, 9), 9)
    assert.strictEqual(positiveInt(Number.POSITIVE_INFINITY, 9), 9)
    assert.strictEqual(positiveInt(Number.NEGATIVE_INFINITY, 9), 9)
  })
})

describe("default schedules", () => {
  it.effect("firstConnect: two more tries, 250 ms then 500 ms apart", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* delaysOf(defaultFirstConnectSchedule), [250, 500])
    }))

  it.effect("reconnect: at most 10 tries, exponential from 250 ms (jittered), capped at 10 s", () =>
    Effect.gen(function*() {
      const delays = yield* delaysOf(defaultReconnectSchedule)
      assert.strictEqual(delays.length, 10)
      delays.forEach((delay, i) => {
        const base = 250 * 2 ** i
        assert.isAtLeast(delay, Math.min(base * 0.8, 10_000), `try ${i + 1}`)
        assert.isAtMost(delay, Math.min(base * 1.2, 10_000), `try ${i + 1}`)
      })
      assert.deepStrictEqual(delays.slice(6), [10_000, 10_000, 10_000, 10_000])
      // The jitter is applied: reconnecting clients do not all wait the same base delays.
      assert.notDeepEqual(delays.slice(0, 5), [250, 500, 1000, 2000, 4000])
    }))
})
