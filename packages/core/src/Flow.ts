/**
 * Flow control: the bounded buffer between the socket and the consumer. Frames are counted in as
 * they are received and out as the consumer takes them; reading pauses when `bufferSize` are held
 * and resumes once the consumer has taken them down to half. Nothing is dropped: frames already on
 * their way when reading pauses are still taken in (a socket that stops reading stops within one
 * read), so `peak` may pass `bufferSize` by what one read delivered.
 *
 * Plain counters: the events themselves sit in the shell's queue; this only decides when to pause
 * the transport, synchronously, per frame.
 *
 * A transport that cannot pause (a runtime's standard WHATWG `WebSocket`; Bun's, whose `pause()`
 * lets through the frames it had read already) is bounded instead: once {@link overflowLimit}
 * events wait, the next frame overflows ({@link Flow.overflows}) and the connection ends the
 * attempt. On a transport that pauses the limit is infinite: the check per frame is one comparison.
 *
 * @since 0.1.0
 */

/**
 * The most events that may wait for the consumer on a transport that cannot pause: twice
 * `bufferSize` (reading would have paused at `bufferSize`; the second half is the slack a paused
 * socket has too, for frames it had read already).
 *
 * @since 0.1.0
 * @category constructors
 */
export const overflowLimit = (bufferSize: number): number => 2 * bufferSize

/**
 * A buffer's accounting.
 *
 * @since 0.1.0
 * @category models
 */
export class Flow {
  /** Frames received and not yet taken by the consumer. */
  held = 0
  /** The largest `held` seen. */
  peak = 0
  /** Whether reading is paused. */
  paused = false
  /**
   * The events held at which the next frame overflows: infinite while the transport can pause,
   * {@link overflowLimit} once it was said not to ({@link Flow.unpausable}).
   */
  limit = Number.POSITIVE_INFINITY
  private readonly lowWater: number

  constructor(readonly bufferSize: number) {
    this.lowWater = Math.floor(bufferSize / 2)
  }

  /** One frame in. Returns true when reading must pause now. */
  received(): boolean {
    this.held += 1
    if (this.held > this.peak) this.peak = this.held
    return this.shouldPause()
  }

  /** Whether reading must pause now (the buffer is full and reading is on); if so it is paused. */
  shouldPause(): boolean {
    if (this.paused || this.held < this.bufferSize) return false
    this.paused = true
    return true
  }

  /** The consumer took `count` frames. Returns true when reading must resume now. */
  taken(count: number): boolean {
    this.held -= count
    if (!this.paused || this.held > this.lowWater) return false
    this.paused = false
    return true
  }

  /** The current transport cannot pause: it is bounded at {@link overflowLimit} instead. */
  unpausable(): void {
    this.limit = overflowLimit(this.bufferSize)
  }

  /** Whether a frame arriving now overflows: `limit` events wait already. */
  overflows(): boolean {
    return this.held >= this.limit
  }

  /** A new connection reads until the buffer is full again (and is taken to pause until told otherwise). */
  reset(): void {
    this.paused = false
    this.limit = Number.POSITIVE_INFINITY
  }
}
