/**
 * What a watched session adds up to: the `action_run` events counted against `max_actions` (the
 * action budget), the last error event's text, the `complete` event, and a bounded tail of
 * the events kept for the outcome. The edition says what each event is; the tally applies the
 * rules.
 *
 * @since 0.1.0
 */

/**
 * How many events an outcome keeps by default: the last 100.
 *
 * @since 0.1.0
 * @category models
 */
export const defaultKeepEvents = 100

/**
 * How many events an outcome keeps for a `keepEvents` option: a number `n` the last `n` (rounded
 * down, at least 0; an infinite one every event), `true` every event, `false` none, none given
 * {@link defaultKeepEvents}.
 *
 * @since 0.1.0
 * @category constructors
 */
export const keptEvents = (option: boolean | number | undefined): number =>
  option === undefined
    ? defaultKeepEvents
    : option === true
    ? Number.POSITIVE_INFINITY
    : option === false
    ? 0
    : Number.isFinite(option)
    ? Math.max(0, Math.floor(option))
    : option > 0
    ? Number.POSITIVE_INFINITY
    : 0

/**
 * The tally of one watched session.
 *
 * @since 0.1.0
 * @category models
 */
export class Tally<E> {
  /** The `action_run` events seen. */
  actions = 0
  /** The `complete` event, once seen. */
  complete: E | undefined = undefined
  /** The text of the last error event seen. */
  lastError: string | undefined = undefined
  /** The first count of actions over the budget, once seen. */
  overrunAt: number | undefined = undefined
  private tail: Array<E> = []

  constructor(readonly maxActions: number, readonly keep: number) {}

  /** Any event, in arrival order: kept in the bounded tail. */
  event(event: E): void {
    if (this.keep <= 0) return
    this.tail.push(event)
    // A bounded tail: the oldest half is dropped at twice the bound (amortized O(1)).
    if (this.tail.length >= 2 * this.keep) this.tail.splice(0, this.tail.length - this.keep)
  }

  /** An `action_run`: counted. True when the count is now over the budget. */
  action(): boolean {
    this.actions += 1
    if (this.actions <= this.maxActions) return false
    this.overrunAt ??= this.actions
    return true
  }

  /** An error event, with its text. */
  error(message: string): void {
    this.lastError = message
  }

  /** The `complete` event. */
  completed(event: E): void {
    this.complete = event
  }

  /** The events kept, oldest first. */
  kept(): ReadonlyArray<E> {
    return this.tail.length > this.keep ? this.tail.slice(-this.keep) : this.tail
  }
}
