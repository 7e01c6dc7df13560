/**
 * A bounded memo: a key's value is built once and kept, up to the bound; past it values are built
 * on each use and nothing more is kept.
 */
import { describe, expect, it } from "vitest"
import { Memo } from "../src/index.js"

describe("Memo.bounded", () => {
  it("builds a key's value once and gives the kept value after", () => {
    const get = Memo.bounded<{ readonly key: string }>(4)
    let built = 0
    const make = (key: string) => () => {
      built++
      return { key }
    }
    const first = get("a", make("a"))
    expect(get("a", make("a"))).toBe(first)
    expect(built).toBe(1)
    expect(get("b", make("b"))).toStrictEqual({ key: "b" })
    expect(built).toBe(2)
  })

  it("past the bound, builds on each use and keeps nothing more", () => {
    const get = Memo.bounded<{ readonly key: string }>(1)
    const kept = get("a", () => ({ key: "a" }))
    expect(get("a", () => ({ key: "other" }))).toBe(kept)
    const b1 = get("b", () => ({ key: "b" }))
    const b2 = get("b", () => ({ key: "b" }))
    expect(b1).toStrictEqual(b2)
    expect(b1).not.toBe(b2)
  })
})
