/**
 * Replays: what counts as a new event after a reconnect. A service may send
 * again, on a reopened connection, events it had already sent; those are dropped, so no event is
 * delivered twice. The replay ends at the first event not delivered before: from then on every
 * frame of that connection is delivered, repeats included.
 *
 * An event is known by its frame text (the string `ws` made of it: keeping it costs a reference,
 * not a copy), among the last {@link REPLAY_WINDOW} delivered and {@link REPLAY_WINDOW_CHARS}
 * characters in all; a binary frame (rare) by a fingerprint. The set to look replays up in is
 * built once per reconnect, so recording costs nothing per frame but a ring slot.
 *
 * @since 0.1.0
 */

/**
 * How many delivered events are remembered to recognise a replay after a reconnect (why 1,024:
 * docs/engine.md, "Replays"). A replay reaching further back than the window is delivered again
 * (at least once, never lost).
 *
 * @since 0.1.0
 * @category models
 */
export const REPLAY_WINDOW = 1024

/**
 * The most frame text remembered for that (UTF-16 code units): the memory bound per connection.
 *
 * @since 0.1.0
 * @category models
 */
export const REPLAY_WINDOW_CHARS = 256 * 1024

/**
 * The identity of a frame for replay detection: its text. A binary frame (rare) is fingerprinted
 * (two 32-bit FNV-1a variants and the length) instead of copied.
 *
 * @since 0.1.0
 * @category constructors
 */
export const frameKey = (data: string | Uint8Array): string => {
  if (typeof data === "string") return data
  let a = 0x811c9dc5
  let b = 0x01000193
  for (let i = 0; i < data.length; i++) {
    const c = data[i] ?? 0
    a = Math.imul(a ^ c, 0x01000193)
    b = Math.imul(b ^ c, 0x5bd1e995) ^ (b >>> 15)
  }
  return `\u0000binary:${(a >>> 0).toString(36)}.${(b >>> 0).toString(36)}.${data.length}`
}

/** The texts of the last events delivered, in a ring. */
class Delivered {
  private readonly ring: Array<string | undefined> = []
  private head = 0
  private count = 0
  private chars = 0
  add(key: string): void {
    if (key.length > REPLAY_WINDOW_CHARS) return
    while (this.count > 0 && (this.count >= REPLAY_WINDOW || this.chars + key.length > REPLAY_WINDOW_CHARS)) {
      const oldest = this.ring[this.head]
      this.ring[this.head] = undefined
      this.head = (this.head + 1) % REPLAY_WINDOW
      this.count -= 1
      this.chars -= oldest?.length ?? 0
    }
    this.ring[(this.head + this.count) % REPLAY_WINDOW] = key
    this.count += 1
    this.chars += key.length
  }
  snapshot(): ReadonlySet<string> {
    const set = new Set<string>()
    for (let i = 0; i < this.count; i++) {
      const key = this.ring[(this.head + i) % REPLAY_WINDOW]
      if (key !== undefined) set.add(key)
    }
    return set
  }
}

/**
 * The replay filter of one connection (across its attempts).
 *
 * @since 0.1.0
 * @category models
 */
export class Replay {
  private readonly ring = new Delivered()
  private replaying: ReadonlySet<string> | undefined
  private deliveredAny = false
  /** Events dropped as replayed since the last `takeDropped`. */
  private dropped = 0

  /** A new attempt: until its first new event, events already delivered are a replay. */
  reopened(): void {
    this.replaying = this.deliveredAny ? this.ring.snapshot() : undefined
  }

  /** Whether an event that is progress (not a keep-alive), arriving as `print`, is replayed. */
  replayed(print: string | undefined): boolean {
    return print !== undefined && this.replaying !== undefined && this.replaying.has(print)
  }

  /** A replayed event dropped. */
  drop(): void {
    this.dropped += 1
  }

  /** An event delivered: a new one ends the replay; it is remembered. */
  delivered(print: string | undefined): void {
    if (!this.replayed(print)) this.replaying = undefined
    if (print !== undefined) this.ring.add(print)
    this.deliveredAny = true
  }

  /**
   * An event that is progress (not a keep-alive) arrived as `print`: whether to deliver it.
   * `pendingAgain` says whether a replayed event is nonetheless new to the caller (a request
   * asked again after its answer went through): delivered, and the replay goes on.
   */
  admit(print: string | undefined, pendingAgain: () => boolean): boolean {
    if (this.replayed(print) && !pendingAgain()) {
      this.drop()
      return false
    }
    this.delivered(print)
    return true
  }

  /** How many were dropped since last asked. */
  takeDropped(): number {
    const dropped = this.dropped
    this.dropped = 0
    return dropped
  }
}
