/**
 * Replay detection (packages/core/src/Replay.ts): after a reconnect, the
 * events the service sends again are dropped until the first new one, and then everything is
 * delivered; an event asked again (`pendingAgain`) is delivered without ending the replay; the
 * window remembers at most REPLAY_WINDOW events and REPLAY_WINDOW_CHARS characters; binary
 * frames are known by a fingerprint.
 */
import { assert, describe, it } from "vitest"
import * as FastCheck from "fast-check"
import { frameKey, Replay, REPLAY_WINDOW, REPLAY_WINDOW_CHARS } from "../src/Replay.js"

const never = (): boolean => false
const always = (): boolean => true

/** Admits each print (none asked again); what was delivered. */
const admitAll = (replay: Replay, prints: ReadonlyArray<string>): Array<string> =>
  prints.filter((print) => replay.admit(print, never))

describe("Replay", () => {
  it("the first connection delivers everything, repeats included", () => {
    const replay = new Replay()
    replay.reopened()
    assert.deepStrictEqual(admitAll(replay, ["a", "b", "a", "b", "b"]), ["a", "b", "a", "b", "b"])
    assert.strictEqual(replay.takeDropped(), 0)
  })

  it("after a reconnect, events already delivered are dropped until the first new one; then repeats are delivered", () => {
    const replay = new Replay()
    replay.reopened()
    admitAll(replay, ["a", "b", "c"])
    replay.reopened()
    assert.deepStrictEqual(admitAll(replay, ["a", "b", "c", "d", "a", "b"]), ["d", "a", "b"])
    assert.strictEqual(replay.takeDropped(), 3)
  })

  it("a replay may start anywhere in what was delivered, and skip some of it", () => {
    const replay = new Replay()
    replay.reopened()
    admitAll(replay, ["a", "b", "c", "d"])
    replay.reopened()
    assert.deepStrictEqual(admitAll(replay, ["c", "a", "e", "c"]), ["e", "c"])
  })

  it("every reconnect starts a replay again, and knows what the last connection delivered", () => {
    const replay = new Replay()
    replay.reopened()
    admitAll(replay, ["a"])
    replay.reopened()
    admitAll(replay, ["a", "b"])
    replay.reopened()
    assert.deepStrictEqual(admitAll(replay, ["a", "b", "c"]), ["c"])
    assert.strictEqual(replay.takeDropped(), 3)
  })

  it("a reconnect before anything was delivered is no replay", () => {
    const replay = new Replay()
    replay.reopened()
    replay.reopened()
    assert.deepStrictEqual(admitAll(replay, ["a", "a"]), ["a", "a"])
  })

  it("pendingAgain: a replayed event asked again is delivered, and the replay goes on", () => {
    const replay = new Replay()
    replay.reopened()
    admitAll(replay, ["req", "x", "y"])
    replay.reopened()
    const asked: Array<string> = []
    const admit = (print: string, again: boolean) =>
      replay.admit(print, () => {
        asked.push(print)
        return again
      })
    assert.isFalse(admit("x", false))
    assert.isTrue(admit("req", true), "asked again: new to the caller")
    assert.isFalse(admit("y", false), "still a replay")
    assert.isTrue(admit("z", false), "new")
    assert.isTrue(admit("x", false), "after the first new event, repeats are delivered")
    assert.deepStrictEqual(asked, ["x", "req", "y"], "asked only about replayed events, before the replay ended")
    assert.strictEqual(replay.takeDropped(), 2)
  })

  it("pendingAgain is never asked on the first connection", () => {
    const replay = new Replay()
    replay.reopened()
    assert.isTrue(replay.admit("a", always))
    assert.isTrue(replay.admit("a", () => assert.fail("asked")))
  })

  it("an event without a print ends the replay (it cannot be recognised)", () => {
    const replay = new Replay()
    replay.reopened()
    admitAll(replay, ["a", "b"])
    replay.reopened()
    assert.isFalse(replay.admit("a", never))
    assert.isTrue(replay.admit(undefined, never))
    assert.isTrue(replay.admit("b", never))
  })

  it("takeDropped counts the drops since it was last asked", () => {
    const replay = new Replay()
    replay.reopened()
    admitAll(replay, ["a", "b"])
    replay.reopened()
    admitAll(replay, ["a"])
    assert.strictEqual(replay.takeDropped(), 1)
    assert.strictEqual(replay.takeDropped(), 0)
    admitAll(replay, ["b", "a"])
    assert.strictEqual(replay.takeDropped(), 2)
    replay.reopened()
    admitAll(replay, ["a", "b", "new"])
    assert.strictEqual(replay.takeDropped(), 2)
  })

  it(`remembers the last REPLAY_WINDOW (${REPLAY_WINDOW}) events: the oldest beyond it are forgotten`, () => {
    const prints = Array.from({ length: REPLAY_WINDOW + 2 }, (_, i) => `e${i}`)
    const replay = new Replay()
    replay.reopened()
    admitAll(replay, prints)
    replay.reopened()
    assert.isFalse(replay.admit("e2", never), "the oldest remembered")
    assert.isFalse(replay.admit(`e${REPLAY_WINDOW}`, never))
    assert.isFalse(replay.admit(`e${REPLAY_WINDOW + 1}`, never), "the newest")
    assert.isTrue(replay.admit("e1", never), "forgotten: taken as new")
    assert.strictEqual(replay.takeDropped(), 3)
  })

  it("remembers exactly REPLAY_WINDOW events", () => {
    const prints = Array.from({ length: REPLAY_WINDOW }, (_, i) => `e${i}`)
    const replay = new Replay()
    replay.reopened()
    admitAll(replay, prints)
    replay.reopened()
    assert.deepStrictEqual(admitAll(replay, prints), [])
    assert.strictEqual(replay.takeDropped(), REPLAY_WINDOW)
  })

  it(`remembers at most REPLAY_WINDOW_CHARS (${REPLAY_WINDOW_CHARS}) characters: the oldest beyond them are forgotten`, () => {
    const quarter = REPLAY_WINDOW_CHARS / 4
    const big = (i: number) => `${i}`.padEnd(quarter, ".")
    const full = new Replay()
    full.reopened()
    admitAll(full, [big(0), big(1), big(2), big(3)])
    full.reopened()
    assert.isFalse(full.admit(big(0), never), "four quarters fit exactly")

    const over = new Replay()
    over.reopened()
    admitAll(over, [big(0), big(1), big(2), big(3), "x"])
    over.reopened()
    assert.isFalse(over.admit(big(1), never))
    assert.isFalse(over.admit("x", never))
    assert.isTrue(over.admit(big(0), never), "one more character: the oldest was forgotten")
  })

  it("a window of characters forgets as many old events as a large one needs", () => {
    const replay = new Replay()
    replay.reopened()
    admitAll(replay, ["a", "b", "c", "d"])
    admitAll(replay, ["".padEnd(REPLAY_WINDOW_CHARS - 2, "z")])
    replay.reopened()
    assert.isFalse(replay.admit("d", never))
    assert.isFalse(replay.admit("c", never))
    assert.isTrue(replay.admit("b", never), "b went to make room")
  })
})

describe("frameKey", () => {
  it("a text frame is its own key", () => {
    assert.strictEqual(frameKey("{\"event\":\"x\"}"), "{\"event\":\"x\"}")
  })

  it("equal bytes give equal keys, a changed byte or length a different one, never a text's", () => {
    const bytes = new Uint8Array([1, 2, 3, 250])
    assert.strictEqual(frameKey(bytes), frameKey(new Uint8Array([1, 2, 3, 250])))
    assert.notStrictEqual(frameKey(bytes), frameKey(new Uint8Array([1, 2, 4, 250])))
    assert.notStrictEqual(frameKey(bytes), frameKey(new Uint8Array([1, 2, 3, 250, 0])))
    assert.notStrictEqual(frameKey(new Uint8Array([])), frameKey(""))
    assert.isTrue(frameKey(bytes).startsWith("\u0000"))
  })

  it("binary fingerprints: equal for equal bytes, different when one byte changes", () => {
    FastCheck.assert(
      FastCheck.property(
        FastCheck.uint8Array({ minLength: 1, maxLength: 256 }),
        FastCheck.nat(),
        FastCheck.integer({ min: 1, max: 255 }),
        (bytes, at, delta) => {
          const index = at % bytes.length
          const copy = Uint8Array.from(bytes)
          assert.strictEqual(frameKey(copy), frameKey(bytes))
          copy[index] = (copy[index]! + delta) % 256
          assert.notStrictEqual(frameKey(copy), frameKey(bytes))
        }
      ),
      { numRuns: 1000 }
    )
  })

  it("a binary frame replayed after a reconnect is recognised by its fingerprint", () => {
    const replay = new Replay()
    replay.reopened()
    assert.isTrue(replay.admit(frameKey(new Uint8Array([9, 9, 9])), never))
    replay.reopened()
    assert.isFalse(replay.admit(frameKey(new Uint8Array([9, 9, 9])), never))
    assert.isTrue(replay.admit(frameKey(new Uint8Array([9, 9, 8])), never))
  })
})
