/**
 * A wait on the host's timer (`setTimeout`), for a shell that ends a wait itself rather than on
 * its framework's clock: the longest delay the timer keeps, and a wait that ends once, by its
 * timer or by whoever settles it first.
 *
 * @since 0.1.0
 */

/**
 * The longest delay `setTimeout` keeps, in milliseconds (a longer one fires at once).
 *
 * @since 0.1.0
 * @category models
 */
export const MAX_TIMER_MILLIS = 2 ** 31 - 1

/**
 * Whether the timer can wait `millis`: a delay from 0 to {@link MAX_TIMER_MILLIS} (not a negative,
 * infinite or `NaN` one).
 *
 * @since 0.1.0
 * @category guards
 */
export const fits = (millis: number): boolean => millis >= 0 && millis <= MAX_TIMER_MILLIS

/**
 * A wait that ends once: `onTimeout` runs when `millis` have passed unless {@link settle} ended it
 * first. Whoever ends it first wins: a settle after the time-out, or a second settle, does
 * nothing and says so.
 *
 * @since 0.1.0
 * @category models
 */
export class Wait {
  private settled = false
  private readonly timer: ReturnType<typeof setTimeout>

  constructor(millis: number, onTimeout: () => void) {
    this.timer = setTimeout(() => {
      if (this.settle()) onTimeout()
    }, millis)
  }

  /** Ends the wait and clears its timer: `true` when this call ended it, `false` when it had ended. */
  settle(): boolean {
    if (this.settled) return false
    this.settled = true
    clearTimeout(this.timer)
    return true
  }
}
