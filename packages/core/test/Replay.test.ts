/**
 * The replay rule (packages/core/src/Replay.ts): on a
 * reopened connection the replay is the longest run of its first events equal, in order, to the
 * last events delivered; nothing else. Checked against a brute-force transcription of the rule
 * (property tests, over one reconnect and over many in a row), and the window's bounds (REPLAY_WINDOW events, REPLAY_WINDOW_CHARS characters).
 */
import { assert, describe, it } from "vitest"
import * as FastCheck from "fast-check"
import { frameKey, HOLD, NEW, Replay, REPLAY_WINDOW, REPLAY_WINDOW_CHARS } from "../src/Replay.js"

/** Delivers `prints` outside a phase (a first connection). */
const deliverAll = (replay: Replay, prints: ReadonlyArray<string>): void => {
  for (const print of prints) {
    assert.strictEqual(replay.next(print), NEW)
    replay.delivered(print)
  }
}

/**
 * Feeds a reopened connection's frames until the phase is decided (or settles it at the end):
 * how many of its first frames are the replay, and how many frames the phase took.
 */
const judge = (replay: Replay, frames: ReadonlyArray<string>): { replayed: number; phase: number } => {
  for (let i = 0; i < frames.length; i++) {
    const verdict = replay.next(frames[i])
    if (verdict === NEW) return { replayed: 0, phase: i }
    if (verdict !== HOLD) return { replayed: verdict, phase: i + 1 }
  }
  return { replayed: replay.settle(), phase: frames.length }
}

/** The rule, by brute force: the longest m with conn[0..m) == delivered[L-m..L). */
const longestReplay = (delivered: ReadonlyArray<string>, conn: ReadonlyArray<string>): number => {
  for (let m = Math.min(delivered.length, conn.length); m > 0; m--) {
    let equal = true
    for (let i = 0; i < m && equal; i++) equal = conn[i] === delivered[delivered.length - m + i]
    if (equal) return m
  }
  return 0
}

const reopenedAfter = (delivered: ReadonlyArray<string>): Replay => {
  const replay = new Replay()
  deliverAll(replay, delivered)
  replay.reopened()
  return replay
}

describe("Replay (the rule)", () => {
  it("the first connection has no replay phase: everything is new, repeats included", () => {
    const replay = new Replay()
    replay.reopened()
    assert.isFalse(replay.active)
    deliverAll(replay, ["a", "b", "a", "b", "b"])
  })

  it("a reconnect before anything was delivered is no replay", () => {
    const replay = new Replay()
    replay.reopened()
    replay.reopened()
    assert.isFalse(replay.active)
    assert.strictEqual(replay.next("a"), NEW)
  })

  it("a reopened connection that starts with the whole delivered tail: that is the replay, decided as soon as it is complete", () => {
    const replay = reopenedAfter(["a", "b", "c"])
    assert.strictEqual(replay.next("a"), HOLD)
    assert.strictEqual(replay.next("b"), HOLD)
    assert.strictEqual(replay.next("c"), 3, "all three are the replay; nothing can continue it")
    assert.isFalse(replay.active)
    assert.strictEqual(replay.next("a"), NEW, "after the phase, repeats are new")
  })

  it("a replay of the last events only (the service replays its last N)", () => {
    const replay = reopenedAfter(["a", "b", "c", "d"])
    assert.deepStrictEqual(judge(replay, ["c", "d", "e"]), { replayed: 2, phase: 2 })
  })

  it("events equal to delivered ones that do not end where the delivered ones end are new", () => {
    // The old rule dropped `c` and `a` (each among the last delivered) until `e`.
    const replay = reopenedAfter(["a", "b", "c", "d"])
    assert.deepStrictEqual(judge(replay, ["c", "a", "e", "c"]), { replayed: 0, phase: 2 })
  })

  it("issue 20: of the same action repeated around a reconnect, only the run equal to the delivered tail is a replay", () => {
    // [x, A] delivered, then [A, A, y]: the longest run equal to a tail is [A] (one), not two.
    const replay = reopenedAfter(["x", "A"])
    assert.deepStrictEqual(judge(replay, ["A", "A", "y"]), { replayed: 1, phase: 1 })
    // [A, A] delivered, then [A, A, A, A]: two, not four.
    const twice = reopenedAfter(["A", "A"])
    assert.deepStrictEqual(judge(twice, ["A", "A", "A", "A"]), { replayed: 2, phase: 2 })
  })

  it("the longest run is the replay: a shorter tail match does not end the phase early", () => {
    // [a] alone equals the tail [a]; [a, b, a] equals the tail [a, b, a] too: three.
    const replay = reopenedAfter(["a", "b", "a"])
    assert.strictEqual(replay.next("a"), HOLD)
    assert.strictEqual(replay.next("b"), HOLD)
    assert.strictEqual(replay.next("a"), 3)
  })

  it("a run broken part-way: only the prefix that matched a whole tail is the replay", () => {
    const replay = reopenedAfter(["a", "b", "a"])
    assert.deepStrictEqual(judge(replay, ["a", "b", "z"]), { replayed: 1, phase: 3 })
  })

  it("settle decides with what has arrived (the attempt ended, the hold time is over)", () => {
    const replay = reopenedAfter(["a", "b", "c"])
    assert.strictEqual(replay.next("a"), HOLD)
    assert.strictEqual(replay.settle(), 0, "[a] is no tail of [a, b, c]")
    assert.isFalse(replay.active)
    const other = reopenedAfter(["a", "b", "a", "b"])
    assert.strictEqual(other.next("a"), HOLD)
    assert.strictEqual(other.next("b"), HOLD)
    assert.strictEqual(other.settle(), 2, "[a, b] is the tail")
  })

  it("an event without a print ends the phase (it cannot be recognised)", () => {
    const replay = reopenedAfter(["a", "b"])
    assert.strictEqual(replay.next("a"), HOLD)
    assert.strictEqual(replay.next(undefined), 0)
  })

  it("every reconnect judges against what was delivered up to it", () => {
    const replay = reopenedAfter(["a"])
    assert.deepStrictEqual(judge(replay, ["a"]), { replayed: 1, phase: 1 })
    replay.delivered("b")
    replay.reopened()
    assert.deepStrictEqual(judge(replay, ["a", "b", "c"]), { replayed: 2, phase: 2 })
  })

  // Guards: the longest match of one phase kept into the next (a reconnect whose first frames
  // match nothing would drop as many new events as the previous replay had).
  it("each reconnect's phase starts afresh: a replay found at one reconnect is not counted at the next", () => {
    const replay = reopenedAfter(["a", "b"])
    assert.deepStrictEqual(judge(replay, ["a", "b"]), { replayed: 2, phase: 2 })
    replay.delivered("c")
    replay.reopened()
    assert.deepStrictEqual(judge(replay, ["z"]), { replayed: 0, phase: 1 }, "z matches nothing: new")
    replay.delivered("z")
    replay.reopened()
    assert.strictEqual(replay.next("b"), HOLD)
    assert.strictEqual(replay.settle(), 0, "[b] is no tail of [a, b, c, z]")
  })

  /**
   * A connection as the core's intake runs it where the service is known to replay: its frames
   * are judged until the phase is decided (settled at the end when it is not), the replay is
   * dropped, and every frame after it is delivered (remembered). Returns how many were dropped.
   */
  const connect = (replay: Replay, frames: ReadonlyArray<string>): number => {
    replay.reopened()
    let replayed = 0
    let decidedAt = frames.length
    for (let i = 0; i < frames.length; i++) {
      const verdict = replay.next(frames[i])
      if (verdict === HOLD) continue
      replayed = verdict === NEW ? 0 : verdict
      decidedAt = verdict === NEW ? i : i + 1
      break
    }
    if (decidedAt === frames.length && replay.active) replayed = replay.settle()
    for (let i = replayed; i < decidedAt; i++) replay.delivered(frames[i])
    for (let i = decidedAt; i < frames.length; i++) {
      assert.strictEqual(replay.next(frames[i]), NEW)
      replay.delivered(frames[i])
    }
    return replayed
  }

  it("over many reconnects, each phase's replay is the longest prefix equal to a tail of everything delivered before it (property)", () => {
    FastCheck.assert(
      FastCheck.property(
        FastCheck.array(FastCheck.array(FastCheck.constantFrom("a", "b", "c"), { maxLength: 6 }), { minLength: 2, maxLength: 8 }),
        (connections) => {
          const replay = new Replay()
          const delivered: Array<string> = []
          for (const frames of connections) {
            const replayed = connect(replay, frames)
            const expected = longestReplay(delivered, frames)
            assert.strictEqual(replayed, expected, `after ${JSON.stringify(delivered)}, ${JSON.stringify(frames)}`)
            delivered.push(...frames.slice(expected))
          }
        }
      ),
      { numRuns: 2000 }
    )
  })

  it("takeDropped counts the drops since it was last asked", () => {
    const replay = new Replay()
    replay.drop()
    replay.drop()
    assert.strictEqual(replay.takeDropped(), 2)
    assert.strictEqual(replay.takeDropped(), 0)
  })

  // Few letters, so that events repeat and alignments collide.
  const letters = FastCheck.array(FastCheck.constantFrom("a", "b", "c"), { maxLength: 12 })

  it("the replay is exactly the longest prefix of the new connection equal to a tail of what was delivered", () => {
    FastCheck.assert(
      FastCheck.property(letters, letters, (delivered, conn) => {
      const replay = reopenedAfter(delivered)
      const { phase, replayed } = judge(replay, conn)
      assert.strictEqual(replayed, longestReplay(delivered, conn))
      assert.isAtMost(replayed, phase)
      assert.isAtMost(phase, Math.max(delivered.length, 1) + 1, "a phase is never longer than the tail (plus the frame that ends it)")
    }),
      { numRuns: 2000 }
    )
  })

  it("a service that replays its last r events then goes on: at least r are dropped, and what is kept plus what was delivered is never fewer than the new connection sent", () => {
    FastCheck.assert(
      FastCheck.property(letters, FastCheck.nat(12), letters, (delivered, r, fresh) => {
      const replayedByService = Math.min(r, delivered.length)
      const conn = [...delivered.slice(delivered.length - replayedByService), ...fresh]
      const replay = reopenedAfter(delivered)
      const { replayed } = judge(replay, conn)
      assert.isAtLeast(replayed, replayedByService)
      // What the caller has of this session: delivered before, plus the new connection's rest.
      const have = delivered.length + conn.length - replayed
      assert.isAtLeast(have, conn.length)
      // The frames dropped are a copy of the last ones delivered (counted once, never hidden).
      assert.deepStrictEqual(conn.slice(0, replayed), delivered.slice(delivered.length - replayed))
    }),
      { numRuns: 2000 }
    )
  })
})

describe("Replay (the window)", () => {
  it(`remembers the last REPLAY_WINDOW (${REPLAY_WINDOW}) events: a replay of them is recognised, a longer one is not`, () => {
    const prints = Array.from({ length: REPLAY_WINDOW + 2 }, (_, i) => `e${i}`)
    const replay = reopenedAfter(prints)
    assert.deepStrictEqual(judge(replay, prints.slice(2)), { replayed: REPLAY_WINDOW, phase: REPLAY_WINDOW })
    const longer = reopenedAfter(prints)
    assert.deepStrictEqual(judge(longer, prints.slice(1)), { replayed: 0, phase: 1 }, "e1 was forgotten: new")
  })

  it(`remembers at most REPLAY_WINDOW_CHARS (${REPLAY_WINDOW_CHARS}) characters: the oldest beyond them are forgotten`, () => {
    const quarter = REPLAY_WINDOW_CHARS / 4
    const big = (i: number) => `${i}`.padEnd(quarter, ".")
    const full = reopenedAfter([big(0), big(1), big(2), big(3)])
    assert.deepStrictEqual(judge(full, [big(0), big(1), big(2), big(3)]), { replayed: 4, phase: 4 }, "four quarters fit exactly")
    const over = reopenedAfter([big(0), big(1), big(2), big(3), "x"])
    assert.deepStrictEqual(judge(over, [big(0), big(1)]), { replayed: 0, phase: 1 }, "big(0) went to make room")
    const kept = reopenedAfter([big(0), big(1), big(2), big(3), "x"])
    assert.deepStrictEqual(judge(kept, [big(1), big(2), big(3), "x"]), { replayed: 4, phase: 4 })
  })

  it("an event too large to remember ends the tail: nothing before it can be a replay", () => {
    const huge = "".padEnd(REPLAY_WINDOW_CHARS + 1, "z")
    const replay = reopenedAfter(["a", "b", huge])
    assert.isFalse(replay.active)
    const after = reopenedAfter(["a", huge, "b"])
    assert.deepStrictEqual(judge(after, ["a", "b"]), { replayed: 0, phase: 1 })
  })

  it("a phase costs at most one pass over the window per frame: 1,024 identical events replayed", () => {
    const same = Array.from({ length: REPLAY_WINDOW }, () => "same")
    const replay = reopenedAfter(same)
    assert.deepStrictEqual(judge(replay, [...same, "other"]), { replayed: REPLAY_WINDOW, phase: REPLAY_WINDOW })
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
      FastCheck.property(FastCheck.uint8Array({ minLength: 1, maxLength: 256 }),
      FastCheck.nat(),
      FastCheck.integer({ min: 1, max: 255 }), (bytes, at, delta) => {
      const index = at % bytes.length
      const copy = Uint8Array.from(bytes)
      assert.strictEqual(frameKey(copy), frameKey(bytes))
      copy[index] = (copy[index]! + delta) % 256
      assert.notStrictEqual(frameKey(copy), frameKey(bytes))
    }),
      { numRuns: 1000 }
    )
  })

  it("a binary frame replayed after a reconnect is recognised by its fingerprint", () => {
    const replay = reopenedAfter([frameKey(new Uint8Array([9, 9, 9]))])
    assert.strictEqual(replay.next(frameKey(new Uint8Array([9, 9, 9]))), 1)
    const other = reopenedAfter([frameKey(new Uint8Array([9, 9, 9]))])
    assert.strictEqual(other.next(frameKey(new Uint8Array([9, 9, 8]))), 0)
  })
})
