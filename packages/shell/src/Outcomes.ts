/**
 * What a transport's attempt (`WebSocketAttempt`, `SseAttempt`) needs of the edition that drives
 * it: how to read the attempt's key, and how to build each way an attempt can end as the
 * edition's own outcome (its errors are the edition's `Schema` classes, which the core cannot
 * make). An edition writes one {@link Outcomes} object for all its attempts; the attempts decide
 * which one applies.
 *
 * @since 0.1.0
 */

/**
 * The settings an attempt reads: the frame size bound and whether a frame error ends the
 * connection (together they give the largest message a socket reads, `Close.maxPayload`).
 *
 * @since 0.1.0
 * @category models
 */
export interface Settings {
  readonly maxFrameSize: number
  readonly failOnFrameError: boolean
}

/**
 * The edition's side of every attempt: `K` its key (kept wrapped in the attempt, read only where
 * it is written or scrubbed), `O` how an attempt ended, `S` its settings.
 *
 * @since 0.1.0
 * @category models
 */
export interface Outcomes<K, O, S extends Settings = Settings> {
  /** The key in clear, to write it or to scrub it from a text kept. */
  readonly reveal: (key: K) => string
  /** The service closed the connection normally: the end, for good. */
  readonly ended: () => O
  /** The service refused the key or the session (a close code, an upgrade or `GET` status): for good. */
  readonly rejected: (code: number, reason: string) => O
  /** A newer connection took the session over (close code 4000): for good. */
  readonly superseded: (reason: string) => O
  /** A frame larger than the socket reads: for good (the service would send it again). */
  readonly tooLarge: (size: number, limit: number) => O
  /** A frame that cannot be read as text (`ws`: not UTF-8): for good. */
  readonly malformed: (message: string) => O
  /** The attempt failed or dropped, told in a text already scrubbed of the key: the schedule decides. */
  readonly retry: (message: string) => O
  /** The connection did not open within the connect time-out: the schedule decides. */
  readonly timedOut: (settings: S) => O
}
