/**
 * Replays: what may be a replay after a reconnect, and what provably is one. Plain and
 * synchronous: the `Connection` asks it per frame.
 *
 * The rule. On a reopened connection, the replay is the longest run of the connection's FIRST
 * events (keep-alives aside) that equals, in order, the LAST events delivered before the reconnect
 * (the tail of the delivered window): `new[0..m) == delivered[L-m..L)`. Nothing else is a replay:
 * an event equal to one delivered long ago, or a run that repeats delivered events but does not
 * end where the delivered ones end, is new. The run is decided by the frames themselves: the
 * phase ends at the first frame that no candidate alignment can continue (the replay is then the
 * longest prefix that matched a whole tail, possibly none), when every alignment has reached the
 * end of the tail, or when the connection settles it (a keep-alive, a frame error, the attempt's
 * end, or the hold time after the open).
 *
 * What the connection does with it depends on whether the service is known to replay
 * (`Dialect.replaysOnReconnect`, or the shell's option):
 * - known to replay: the frames of the phase are held (not delivered) until the phase is decided;
 *   then the replay is dropped and the rest is delivered, in arrival order;
 * - not known to replay (the default): every frame is delivered at once; the phase only decides
 *   whether the attempt made progress (a new event), so that a service that repeats its last
 *   events and drops every connection exhausts the reconnect schedule instead of looping.
 *
 * Either way every `action_run` the service sent is delivered unless it is in a proven replay, a
 * copy of the last events delivered: the count delivered is never below what the newest
 * connection sent.
 *
 * Events are known by their frame text (keeping it costs a reference, not a copy), among the last
 * {@link REPLAY_WINDOW} delivered and {@link REPLAY_WINDOW_CHARS} characters in all; a binary
 * frame by a fingerprint. Recording costs a ring slot per delivered frame; matching runs only in
 * the phase after a reconnect, on integer ids (each frame text is hashed once), at most
 * `REPLAY_WINDOW` frames long (why that window: src/internal/README.md of `effect-agent-session`, "Replays").
 *
 * @since 0.1.0
 */

/**
 * How many delivered events are remembered to recognise a replay after a reconnect. A replay
 * longer than the window is not recognised: it is delivered again (at least once, never lost).
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

/** The texts of the last events delivered, in a ring (oldest first when read). */
class Delivered {
  private readonly ring: Array<string | undefined> = []
  private head = 0
  private count = 0
  private chars = 0
  /** How many are remembered. */
  get size(): number {
    return this.count
  }
  add(key: string): void {
    if (key.length > REPLAY_WINDOW_CHARS) {
      // Too large to remember: the window ends here (a tail is contiguous).
      this.clear()
      return
    }
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
  /** Forgets everything (a frame that cannot be remembered breaks the tail). */
  clear(): void {
    this.ring.length = 0
    this.head = 0
    this.count = 0
    this.chars = 0
  }
  /** The remembered texts, oldest first. */
  toArray(): Array<string> {
    const out: Array<string> = []
    for (let i = 0; i < this.count; i++) {
      const key = this.ring[(this.head + i) % REPLAY_WINDOW]
      if (key !== undefined) out.push(key)
    }
    return out
  }
}

/**
 * {@link Replay.next}: the frame may still be part of a replay (the phase goes on).
 *
 * @since 0.1.0
 * @category models
 */
export const HOLD = -2
/**
 * {@link Replay.next}: no replay phase: the frame is new.
 *
 * @since 0.1.0
 * @category models
 */
export const NEW = -1

/**
 * The replay rule of one connection (across its attempts). `next` says, per event that is not a
 * keep-alive, `NEW`, `HOLD`, or (a number >= 0) that the phase ended with this frame and how many
 * of the phase's frames (those held and this one, in arrival order) are the replay.
 *
 * @since 0.1.0
 * @category models
 */
export class Replay {
  private readonly ring = new Delivered()
  /** The delivered tail at the reopen, as ids; `undefined` outside a phase. */
  private tail: Int32Array | undefined = undefined
  private ids: Map<string, number> | undefined = undefined
  /** Alignments still possible: starts `k` in the tail with `tail[k..k+matched) == phase`. */
  private candidates: Array<number> = []
  /** Frames seen in the phase. */
  private matched = 0
  /** The longest prefix of the phase that equals a whole tail. */
  private best = 0
  /** Frames dropped as a replay since the last `takeDropped`. */
  private dropped = 0

  /** Whether a phase is under way (after a reconnect, until it is decided). */
  get active(): boolean {
    return this.tail !== undefined
  }

  /** Frames seen so far in the current phase. */
  get seen(): number {
    return this.matched
  }

  /** A new attempt: the frames it starts with may repeat the tail of what was delivered. */
  reopened(): void {
    this.end()
    if (this.ring.size === 0) return
    const texts = this.ring.toArray()
    const ids = new Map<string, number>()
    const tail = new Int32Array(texts.length)
    for (let i = 0; i < texts.length; i++) {
      const text = texts[i]!
      let id = ids.get(text)
      if (id === undefined) {
        id = ids.size
        ids.set(text, id)
      }
      tail[i] = id
    }
    this.tail = tail
    this.ids = ids
  }

  /**
   * An event that is not a keep-alive arrived as `print` (`undefined`: it cannot be recognised).
   * `NEW` outside a phase; `HOLD` while the frames of the phase may still be a replay; else the
   * phase is over, and the result says how many of its frames, this one included, are the replay.
   */
  next(print: string | undefined): number {
    const tail = this.tail
    if (tail === undefined) return NEW
    const id = print === undefined ? undefined : this.ids?.get(print)
    const j = this.matched
    const length = tail.length
    const next: Array<number> = []
    let complete = false
    if (id !== undefined) {
      if (j === 0) {
        for (let k = 0; k < length; k++) {
          if (tail[k] !== id) continue
          if (k + 1 === length) complete = true
          else next.push(k)
        }
      } else {
        for (const k of this.candidates) {
          if (tail[k + j] !== id) continue
          if (k + j + 1 === length) complete = true
          else next.push(k)
        }
      }
    }
    this.matched = j + 1
    if (complete) this.best = j + 1
    if (next.length === 0) return this.settle()
    this.candidates = next
    return HOLD
  }

  /** Ends the phase now (nothing more will continue it): how many of its frames are the replay. */
  settle(): number {
    const best = this.tail === undefined ? 0 : this.best
    this.end()
    return best
  }

  private end(): void {
    this.tail = undefined
    this.ids = undefined
    this.candidates = []
    this.matched = 0
    this.best = 0
  }

  /** An event delivered: remembered. */
  delivered(print: string | undefined): void {
    if (print === undefined) this.ring.clear()
    else this.ring.add(print)
  }

  /** A replayed event dropped. */
  drop(): void {
    this.dropped += 1
  }

  /** How many were dropped since last asked. */
  takeDropped(): number {
    const dropped = this.dropped
    this.dropped = 0
    return dropped
  }
}
