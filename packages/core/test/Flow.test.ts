/**
 * Flow control (packages/core/src/Flow.ts): reading pauses when `bufferSize` frames are held,
 * not before, and resumes once the consumer has taken them down to half (`lowWater`), not above;
 * `peak` is the most ever held; `reset` (a new connection) reads again. A property runs random
 * sequences against a model written from the module's contract.
 */
import { assert, describe, it } from "vitest"
import * as FastCheck from "fast-check"
import { Flow } from "../src/Flow.js"

const receiveN = (flow: Flow, n: number): Array<boolean> => Array.from({ length: n }, () => flow.received())

describe("Flow", () => {
  it("pauses when bufferSize frames are held, not one before, and says so once", () => {
    const flow = new Flow(4)
    assert.deepStrictEqual(receiveN(flow, 3), [false, false, false])
    assert.isFalse(flow.paused)
    assert.isFalse(flow.shouldPause(), "3 of 4 held: keep reading")
    assert.isTrue(flow.received(), "the 4th frame fills the buffer")
    assert.isTrue(flow.paused)
    // Frames already on their way are still taken in; the pause is not asked for again.
    assert.deepStrictEqual(receiveN(flow, 2), [false, false])
    assert.isFalse(flow.shouldPause())
    assert.strictEqual(flow.held, 6)
    assert.strictEqual(flow.peak, 6)
  })

  it("resumes once taken down to half (lowWater), not above", () => {
    const flow = new Flow(4)
    receiveN(flow, 4)
    assert.isFalse(flow.taken(1), "3 held: above 2")
    assert.isTrue(flow.paused)
    assert.isTrue(flow.taken(1), "2 held: at lowWater")
    assert.isFalse(flow.paused)
    assert.isFalse(flow.taken(1), "already reading: nothing to resume")
    assert.strictEqual(flow.held, 1)
  })

  it("lowWater is half of an odd bufferSize, rounded down", () => {
    const flow = new Flow(5)
    receiveN(flow, 5)
    assert.isTrue(flow.paused)
    assert.isFalse(flow.taken(2), "3 held: above 2")
    assert.isTrue(flow.taken(1), "2 held")
  })

  it("a buffer of one pauses at every frame and resumes when it is taken", () => {
    const flow = new Flow(1)
    assert.isTrue(flow.received())
    assert.isTrue(flow.taken(1))
    assert.isTrue(flow.received())
    assert.isFalse(flow.received())
    assert.isFalse(flow.taken(1), "1 held: above 0")
    assert.isTrue(flow.taken(1))
    assert.strictEqual(flow.peak, 2)
  })

  it("a take that drains past lowWater at once resumes", () => {
    const flow = new Flow(10)
    receiveN(flow, 12)
    assert.isTrue(flow.taken(12))
    assert.strictEqual(flow.held, 0)
  })

  it("peak is the most ever held; taking does not lower it", () => {
    const flow = new Flow(100)
    receiveN(flow, 7)
    flow.taken(5)
    receiveN(flow, 2)
    assert.strictEqual(flow.held, 4)
    assert.strictEqual(flow.peak, 7)
    receiveN(flow, 4)
    assert.strictEqual(flow.peak, 8)
  })

  it("reset reads again, keeping what is held; a full buffer pauses again at the next check", () => {
    const flow = new Flow(4)
    receiveN(flow, 5)
    assert.isTrue(flow.paused)
    flow.reset()
    assert.isFalse(flow.paused)
    assert.strictEqual(flow.held, 5, "the frames are still in the buffer")
    assert.strictEqual(flow.peak, 5)
    assert.isTrue(flow.shouldPause(), "still full: the new connection pauses at once")
    assert.isTrue(flow.paused)
    flow.reset()
    assert.isTrue(flow.received(), "or at its first frame")
  })

  it("reset of a buffer below the limit keeps reading", () => {
    const flow = new Flow(4)
    receiveN(flow, 4)
    flow.taken(3)
    flow.reset()
    assert.isFalse(flow.shouldPause())
    assert.isFalse(flow.received())
    assert.isFalse(flow.paused)
  })

  it("a transport that cannot pause overflows once 2 x bufferSize are held; one that pauses never; reset forgets which", () => {
    const flow = new Flow(3)
    receiveN(flow, 100)
    assert.isFalse(flow.overflows())
    flow.taken(100)
    flow.unpausable()
    assert.strictEqual(flow.limit, 6)
    receiveN(flow, 5)
    assert.isFalse(flow.overflows())
    receiveN(flow, 1)
    assert.isTrue(flow.overflows())
    flow.taken(1)
    assert.isFalse(flow.overflows())
    receiveN(flow, 1)
    flow.reset()
    assert.isFalse(flow.overflows())
    assert.strictEqual(flow.limit, Number.POSITIVE_INFINITY)
  })

  // A model from the contract: "paused" is a pause (the buffer held >= bufferSize while reading)
  // not yet followed by a drain to lowWater or a reset; each transition is reported exactly once.
  type Op =
    | { readonly _tag: "receive" }
    | { readonly _tag: "take"; readonly share: number }
    | { readonly _tag: "check" }
    | { readonly _tag: "reset" }

  const opArb: FastCheck.Arbitrary<Op> = FastCheck.oneof(
    { weight: 6, arbitrary: FastCheck.constant({ _tag: "receive" as const }) },
    { weight: 3, arbitrary: FastCheck.double({ min: 0, max: 1, noNaN: true }).map((share) => ({ _tag: "take" as const, share })) },
    { weight: 1, arbitrary: FastCheck.constant({ _tag: "check" as const }) },
    { weight: 1, arbitrary: FastCheck.constant({ _tag: "reset" as const }) }
  )

  it("held is never negative, paused iff paused at >= bufferSize and not drained to lowWater since, peak = max held", () => {
    FastCheck.assert(FastCheck.property(FastCheck.integer({ min: 1, max: 20 }), FastCheck.array(opArb, { maxLength: 300 }), (bufferSize, ops) => {
      const flow = new Flow(bufferSize)
      const lowWater = Math.floor(bufferSize / 2)
      let held = 0
      let maxHeld = 0
      let paused = false
      let pauses = 0
      let resumes = 0
      // A reset and no receive or check since: a full buffer is not paused until then.
      let unchecked = false
      for (const op of ops) {
        switch (op._tag) {
          case "receive": {
            held += 1
            unchecked = false
            maxHeld = Math.max(maxHeld, held)
            const pause = !paused && held >= bufferSize
            if (pause) paused = true
            const said = flow.received()
            assert.strictEqual(said, pause)
            if (said) pauses += 1
            break
          }
          case "take": {
            // The consumer takes some of what is held (it cannot take what was not received).
            const count = Math.floor(op.share * held)
            held -= count
            const resume = paused && held <= lowWater
            if (resume) paused = false
            const said = flow.taken(count)
            assert.strictEqual(said, resume)
            if (said) resumes += 1
            break
          }
          case "check": {
            unchecked = false
            const pause = !paused && held >= bufferSize
            if (pause) paused = true
            assert.strictEqual(flow.shouldPause(), pause)
            if (pause) pauses += 1
            break
          }
          case "reset": {
            paused = false
            unchecked = true
            flow.reset()
            break
          }
        }
        assert.isAtLeast(flow.held, 0)
        assert.strictEqual(flow.held, held)
        assert.strictEqual(flow.paused, paused)
        assert.strictEqual(flow.peak, maxHeld)
        // While reading (unless just reset), the buffer is below its limit.
        if (!flow.paused && !unchecked) assert.isBelow(flow.held, bufferSize)
      }
      assert.isAtMost(resumes, pauses)
    }), { numRuns: 500 })
  })
})
