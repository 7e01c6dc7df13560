/**
 * The bookkeeping of a connection's attempts, for `Connection` (which owns one): whether it was
 * ever open, the reconnects, when the last gap began, the attempts of the current bout (since the
 * last progress), the retries the reconnect schedule decided in it, and the last error.
 */
import type { OpenReport } from "./connection.js"

/** The report of a connection's first open (no reconnect, no gap): one object for every connection. */
const firstOpen: OpenReport = Object.freeze({ reconnects: 0, downtimeMillis: undefined, reopened: false })

export class Attempts {
  everOpen = false
  /** The attempts of the current bout, the current one included. */
  bout = 0
  lastError = ""
  lastOpen: OpenReport = firstOpen
  private reconnects = 0
  private retries = 0
  private downSince: number | undefined = undefined

  /** An attempt began. */
  began(): void {
    this.bout += 1
  }

  /** An attempt opened at `now`: a reopening counts a reconnect; the gap since the drop is the downtime. */
  opened(now: number): void {
    const reopened = this.everOpen
    if (reopened) this.reconnects += 1
    this.everOpen = true
    this.lastOpen = !reopened && this.downSince === undefined ? firstOpen : {
      reconnects: this.reconnects,
      downtimeMillis: this.downSince === undefined ? undefined : now - this.downSince,
      reopened
    }
    this.downSince = undefined
  }

  /**
   * An attempt dropped at `now` (`wasOpen`: it had opened; `progressed`: it delivered a new event,
   * which starts a fresh bout and a fresh schedule): whether the schedule restarts.
   */
  dropped(now: number, wasOpen: boolean, lastError: string, progressed: boolean): boolean {
    if (wasOpen) this.downSince = now
    this.lastError = lastError
    if (!this.everOpen || !progressed) return false
    this.bout = 1
    this.retries = 0
    return true
  }

  /** The reconnect schedule decided to try again: the retry's number in this bout, and why. */
  retrying(): { readonly attempt: number; readonly lastError: string } {
    this.retries += 1
    return { attempt: this.retries, lastError: this.lastError }
  }
}
