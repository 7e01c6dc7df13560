/**
 * Issue 13: the simulator's `Idempotency-Key` memory: per caller, per body, for a bounded window
 * and count (a flood of keys cannot grow it without limit).
 */
import { assert, describe, it } from "@effect/vitest"
import { Http } from "effect-agent-session-core"
import { IdempotencyCache, keyOf } from "../src/internal/idempotency.js"

describe("simulator Idempotency-Key", () => {
  it("the same key and body from the same caller is a hit; another body a mismatch; another caller a miss", () => {
    const cache = new IdempotencyCache<string>(1000, 10)
    assert.deepStrictEqual(cache.lookup("account", "k", "body-1", 0), { _tag: "Miss" })
    cache.remember("account", "k", "body-1", "ses_1", 0)
    assert.deepStrictEqual(cache.lookup("account", "k", "body-1", 10), { _tag: "Hit", value: "ses_1" })
    assert.deepStrictEqual(cache.lookup("account", "k", "body-2", 10), { _tag: "Mismatch" })
    assert.deepStrictEqual(cache.lookup("agt_other", "k", "body-1", 10), { _tag: "Miss" })
  })

  it("entries expire after the window", () => {
    const cache = new IdempotencyCache<string>(1000, 10)
    cache.remember("account", "k", "b", "ses_1", 0)
    assert.strictEqual(cache.lookup("account", "k", "b", 999)._tag, "Hit")
    assert.strictEqual(cache.lookup("account", "k", "b", 1000)._tag, "Miss")
    assert.strictEqual(cache.size, 0)
  })

  it("at most maxEntries are kept, the oldest dropped first", () => {
    const cache = new IdempotencyCache<number>(1_000_000, 100)
    for (let i = 0; i < 10_000; i++) cache.remember("account", `k${i}`, "b", i, i)
    assert.isAtMost(cache.size, 100)
    assert.strictEqual(cache.lookup("account", "k0", "b", 10_000)._tag, "Miss")
    assert.deepStrictEqual(cache.lookup("account", "k9999", "b", 10_000), { _tag: "Hit", value: 9999 })
  })

  it("a blank or oversized header is no key", () => {
    assert.strictEqual(keyOf({}), undefined)
    assert.strictEqual(keyOf({ "idempotency-key": "  " }), undefined)
    assert.strictEqual(keyOf({ "idempotency-key": "x".repeat(Http.MAX_IDEMPOTENCY_KEY_LENGTH + 1) }), undefined)
    assert.strictEqual(keyOf({ "idempotency-key": " order-42 " }), "order-42")
  })
})
