/**
 * What the transports' attempts are tested with: outcomes that are plain texts naming the end
 * (so a test compares strings), a key wrapped as an edition wraps it (so a key read without
 * `reveal` shows), and settings.
 */
import type { Outcomes } from "../src/index.js"

export const KEY = "sk-live-very-secret-0123"

/** The key, wrapped: only `outcomes.reveal` reads it. */
export interface Wrapped {
  readonly wrapped: string
}

export const key: Wrapped = { wrapped: KEY }

export interface TestSettings extends Outcomes.Settings {
  readonly connectTimeoutMillis: number
}

export const settings: TestSettings = { maxFrameSize: 1024, failOnFrameError: true, connectTimeoutMillis: 5000 }

/** Every end as a text: `ended`, `rejected 1008: reason`, `retry: message`, ... */
export const outcomes: Outcomes.Outcomes<Wrapped, string, TestSettings> = {
  reveal: (wrapped) => wrapped.wrapped,
  ended: () => "ended",
  rejected: (code, reason) => `rejected ${code}: ${reason}`,
  superseded: (reason) => `superseded: ${reason}`,
  tooLarge: (size, limit) => `too large: ${size} over ${limit}`,
  malformed: (message) => `malformed: ${message}`,
  retry: (message) => `retry: ${message}`,
  timedOut: (timedOutSettings) => `timed out after ${timedOutSettings.connectTimeoutMillis} ms`
}
