/**
 * The intake of events after a reconnect, for `Connection` (its base class, so that the state
 * stays in one object): the first events of a reopened connection may repeat the last ones
 * delivered (`Replay`). Where the service is known to replay they are held until the run is
 * decided (by a frame, a keep-alive, a frame error, the attempt's end, or the hold time after the
 * open) and a proven replay is dropped, unless it is a request asked again after its answer went
 * through; elsewhere everything is delivered and the repeat only decides whether the attempt made
 * progress.
 */
import { HOLD, Replay } from "../Replay.js"
import type { EventKind } from "./connection.js"

export abstract class Intake<E> {
  protected readonly replay = new Replay()
  /**
   * Frames of a possible replay held back (only where the service is known to replay), in
   * arrival order, keep-alives among them; their prints beside them. At most `REPLAY_WINDOW`.
   */
  private held: Array<E> | undefined = undefined
  private heldPrints: Array<string | undefined> | undefined = undefined

  constructor(private readonly dropReplays: boolean) {}

  /** What an event is. */
  protected abstract kindOf(event: E): EventKind
  /** Hands an event on (a request is registered first; `complete` may end the attempt). */
  protected abstract deliver(event: E, kind: EventKind): void
  /** The attempt made progress: a new event (the answers written before it got through). */
  protected abstract madeProgress(): void
  /** Whether a request event is answered already (asked again after its answer went through). */
  protected abstract isAnswered(event: E): boolean
  /** Delivers a request asked again in a replay: new to the caller, the attempt made progress. */
  protected abstract deliverAskedAgain(event: E, kind: EventKind): void
  /** Whether the attempt has ended (delivering `complete` ends it). */
  protected abstract hasEnded(): boolean

  /** A new attempt: what it starts with may repeat the tail of what was delivered. */
  protected reopenIntake(): void {
    this.held = undefined
    this.heldPrints = undefined
    this.replay.reopened()
  }

  /** A keep-alive arrived: never part of a replay, it ends a burst (what was held is decided first). */
  protected keepAlive(event: E, kind: EventKind): void {
    if (this.held !== undefined && this.held.length > 0) this.settleReplay()
    this.deliver(event, kind)
  }

  /** An event that is not a keep-alive arrived as `print`. */
  protected intake(event: E, kind: EventKind, print: string | undefined): void {
    if (!this.replay.active) return this.progress(event, kind, print)
    const seen = this.replay.seen + 1
    const verdict = this.replay.next(print)
    if (!this.dropReplays) {
      // Not known to replay: everything is delivered, as it comes. The phase only says whether
      // the attempt made progress: a frame beyond the repeat of the delivered tail.
      if (verdict >= 0 && seen > verdict) this.madeProgress()
      this.replay.delivered(print)
      return this.deliver(event, kind)
    }
    if (verdict === HOLD) {
      ;(this.held ??= []).push(event)
      ;(this.heldPrints ??= []).push(print)
      return
    }
    this.release(verdict, event, print)
  }

  /**
   * The replay phase ends without a frame that decides it (a keep-alive or a frame error came,
   * the hold time is over, or the attempt is ending): the replay is what matched a whole tail so far.
   */
  protected settleReplay(): void {
    if (!this.replay.active) return
    const seen = this.replay.seen
    const replayed = this.replay.settle()
    if (!this.dropReplays) {
      if (seen > replayed) this.madeProgress()
      return
    }
    this.release(replayed, undefined, undefined)
  }

  /** A new event: remembered for replay detection, progress, and delivered. */
  protected progress(event: E, kind: EventKind, print: string | undefined): void {
    this.replay.delivered(print)
    this.madeProgress()
    this.deliver(event, kind)
  }

  /**
   * The phase was decided: of the held events (and `last`, the one that decided it), the first
   * `replayed` that are not keep-alives are the replay (dropped, unless asked again), the rest are
   * delivered, in arrival order.
   */
  private release(replayed: number, last: E | undefined, lastPrint: string | undefined): void {
    const held = this.held ?? []
    const prints = this.heldPrints ?? []
    this.held = undefined
    this.heldPrints = undefined
    if (last !== undefined) {
      held.push(last)
      prints.push(lastPrint)
    }
    let index = 0
    for (let i = 0; i < held.length; i++) {
      const event = held[i]!
      const kind = this.kindOf(event)
      if (kind === "keep-alive") {
        this.deliver(event, kind)
      } else if (index++ < replayed) {
        // A request asked again after its answer went through is new to the caller (pending
        // again); it is already in the delivered window at its place.
        if (kind === "request" && this.isAnswered(event)) {
          this.deliverAskedAgain(event, kind)
        } else {
          this.replay.drop()
        }
      } else {
        this.progress(event, kind, prints[i])
      }
      if (this.hasEnded()) return
    }
  }
}
