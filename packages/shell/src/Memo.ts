/**
 * Values built once per key and kept, up to a bound: for what an edition would otherwise build on
 * every use (a metric with attributes, the decoders of a framing).
 *
 * @since 0.1.0
 */

/**
 * A lookup that builds the value of a key on first use and keeps it: `get(key, make)` gives the
 * value kept for `key`, else `make()`, kept while fewer than `max` values are (past that, built
 * afresh on each use, so a key set that grows without end costs no memory).
 *
 * @example
 * ```ts
 * import { Memo } from "effect-agent-session-shell"
 *
 * const squares = Memo.bounded<number>(2)
 * squares("3", () => 9) // 9, built and kept
 * squares("3", () => 0) // 9, the value kept
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const bounded = <V>(max: number): (key: string, make: () => V) => V => {
  const kept = new Map<string, V>()
  return (key, make) => {
    const known = kept.get(key)
    if (known !== undefined) return known
    const made = make()
    if (kept.size < max) kept.set(key, made)
    return made
  }
}
