/**
 * The simulator honours `Idempotency-Key` on its creating operations (onboard, create session):
 * the same key with the same body from the same caller within the window answers with what the
 * first request created (no second agent or session, no second charge); the same key with
 * another body is refused: `409 Conflict` on onboard, `400 BadRequest` on create (whose contract
 * declares neither 409 nor 422). Entries keep a digest of the body and are kept for a bounded
 * window and count, so a flood of keys cannot grow the simulator's memory without limit.
 */
import { Http } from "effect-agent-session-core"

/** What a lookup found. */
type Lookup<A> =
  | { readonly _tag: "Miss" }
  | { readonly _tag: "Hit"; readonly value: A }
  | { readonly _tag: "Mismatch" }

interface Entry<A> {
  readonly fingerprint: string
  readonly value: A
  readonly at: number
}


/** One cache per operation. */
export class IdempotencyCache<A> {
  private readonly entries = new Map<string, Entry<A>>()

  constructor(
    readonly windowMillis: number = 24 * 60 * 60 * 1000,
    readonly maxEntries: number = 10_000
  ) {}

  private slot(principal: string, key: string): string {
    return `${principal}\u0000${key}`
  }

  private evict(now: number): void {
    // Insertion order is age order: drop the expired from the front, then the oldest past the cap.
    for (const [slot, entry] of this.entries) {
      if (now - entry.at < this.windowMillis && this.entries.size < this.maxEntries) break
      this.entries.delete(slot)
    }
  }

  lookup(principal: string, key: string, fingerprint: string, now: number): Lookup<A> {
    this.evict(now)
    const entry = this.entries.get(this.slot(principal, key))
    if (entry === undefined || now - entry.at >= this.windowMillis) return { _tag: "Miss" }
    return entry.fingerprint === fingerprint ? { _tag: "Hit", value: entry.value } : { _tag: "Mismatch" }
  }

  remember(principal: string, key: string, fingerprint: string, value: A, now: number): void {
    this.evict(now)
    this.entries.set(this.slot(principal, key), { fingerprint, value, at: now })
  }

  get size(): number {
    return this.entries.size
  }
}

/** The key of a request: the `idempotency-key` header when it is a usable key, else none (`Http.idempotencyKeyOf`). */
export const keyOf: (headers: Http.Headers) => string | undefined = Http.idempotencyKeyOf
