/**
 * The shared timer of a service's connections, written once for every edition: every time-out of
 * every connection (idle time-outs, connect time-outs, the grace given to a closing socket) is an
 * entry of one `Deadlines.DeadlineQueue`, and one sleeper of the edition's (a fiber), started on
 * the first entry and gone when none is left, sleeps until the earliest. This module decides when
 * the sleeper starts, when it must be woken early (an entry earlier than the one it sleeps
 * towards, or a cancel that leaves nothing), and what it does at each wake-up; the edition sleeps.
 *
 * @since 0.1.0
 */
import { type Check, DeadlineQueue, type Entry } from "./Deadlines.js"

/**
 * What the timer asks of the edition.
 *
 * @since 0.1.0
 * @category models
 */
export interface Sleeper<S> {
  /**
   * Starts the sleeper, with `context` (what the first entry's scheduler runs with: its clock, its
   * logger): it calls {@link Timer.runDue} and {@link Timer.next} at once, then whenever it
   * wakes, until `next` says stop.
   */
  readonly start: (context: S) => void
  /** Wakes the sleeper before its time (it runs what is due and asks when to wake again). */
  readonly rouse: () => void
}

const noDefects: ReadonlyArray<unknown> = []

/**
 * The timer of one service (`S`: what the edition starts its sleeper with).
 *
 * @example
 * ```ts
 * import { Timer } from "effect-agent-session-shell"
 *
 * let started = 0
 * const timer = new Timer.Timer<undefined>({ start: () => { started += 1 }, rouse: () => {} })
 * timer.schedule(100, () => undefined, undefined) // the sleeper starts
 * timer.runDue(0)   // nothing due, nothing thrown: []
 * timer.next()      // 100: sleep until then
 * timer.runDue(100) // the entry ran
 * timer.next()      // undefined: the sleeper stops
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export class Timer<S> {
  private readonly queue: DeadlineQueue
  private running = false
  /** When the sleeper wakes up next (ms). */
  private target = Number.POSITIVE_INFINITY
  private defects: Array<unknown> = []
  private readonly onDefect = (defect: unknown): void => {
    this.defects.push(defect)
  }

  constructor(private readonly sleeper: Sleeper<S>) {
    // A cancel that leaves no entry wakes the sleeper, which then stops.
    this.queue = new DeadlineQueue(() => this.rouse())
  }

  /** Entries not cancelled nor done. */
  get size(): number {
    return this.queue.size
  }

  /** Whether the sleeper runs. */
  get isRunning(): boolean {
    return this.running
  }

  /**
   * Calls `check` once the time reaches `at` (ms), then again whenever it asks; starts the sleeper
   * with `context` when it is not running, or wakes it when `at` is earlier than its wake-up.
   */
  schedule(at: number, check: Check, context: S): Entry {
    const entry = this.queue.schedule(at, check)
    if (!this.running) {
      this.running = true
      this.target = at
      this.sleeper.start(context)
    } else if (at < this.target) {
      this.rouse()
    }
    return entry
  }

  /**
   * The sleeper woke at `now`: the checks due run, earliest first. Returns what any of them threw
   * (that entry ends; the others go on), for the sleeper to log before it asks {@link Timer.next}.
   */
  runDue(now: number): ReadonlyArray<unknown> {
    this.queue.runDue(now, this.onDefect)
    if (this.defects.length === 0) return noDefects
    const defects = this.defects
    this.defects = []
    return defects
  }

  /**
   * When the sleeper wakes next (ms), or `undefined`: nothing is left and the sleeper stops (the
   * next entry starts another).
   */
  next(): number | undefined {
    const next = this.queue.nextDue()
    if (next === undefined) {
      this.stopped()
      return undefined
    }
    this.target = next
    return next
  }

  /** The sleeper ended (however it did): the next entry starts another. */
  stopped(): void {
    this.running = false
    this.target = Number.POSITIVE_INFINITY
  }

  private rouse(): void {
    this.sleeper.rouse()
  }
}
