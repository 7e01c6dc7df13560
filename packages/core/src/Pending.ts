/**
 * The agent's requests waiting for an answer, as a session lists them (`RunningSession.pending`),
 * and the warning for one that waits too long: which requests are listed (a request replaces an
 * earlier one of the same key; at most as many as the answer ledger remembers, the oldest going
 * first, as the ledger forgets them), which warning is due next, and its text. The editions keep
 * the list in a reference and run the warning's timer.
 *
 * @since 0.1.0
 */
import { MAX_REQUESTS } from "./Ledger.js"

/**
 * A request waiting for an answer, and since when (epoch milliseconds).
 *
 * @since 0.1.0
 * @category models
 */
export interface Waiting<R> {
  readonly request: R
  readonly since: number
}

/**
 * The list after `requests` arrived (in one chunk, in order) at `since`: each replaces an earlier
 * one that is `same`, and the list keeps at most `Ledger.MAX_REQUESTS`, the oldest going first
 * (answering one of them fails with `RequestNotPending`). Entries kept are the same objects.
 *
 * @since 0.1.0
 * @category constructors
 */
export const arrived = <R>(
  all: ReadonlyArray<Waiting<R>>,
  requests: ReadonlyArray<R>,
  since: number,
  same: (a: R, b: R) => boolean
): ReadonlyArray<Waiting<R>> => {
  let next = all
  for (const request of requests) {
    next = [...next.filter((p) => !same(p.request, request)), { request, since }]
  }
  return next.length > MAX_REQUESTS ? next.slice(next.length - MAX_REQUESTS) : next
}

/**
 * The list after `request` was answered.
 *
 * @since 0.1.0
 * @category constructors
 */
export const answered = <R>(
  all: ReadonlyArray<Waiting<R>>,
  request: R,
  same: (a: R, b: R) => boolean
): ReadonlyArray<Waiting<R>> => all.filter((p) => !same(p.request, request))

/**
 * The entry whose warning is due first among those not `warned` yet (the one waiting longest).
 *
 * @since 0.1.0
 * @category constructors
 */
export const nextToWarn = <W extends Waiting<unknown>>(
  waiting: ReadonlyArray<W>,
  warned: (entry: W) => boolean
): W | undefined => {
  let next: W | undefined
  for (const entry of waiting) {
    if (!warned(entry) && (next === undefined || entry.since < next.since)) next = entry
  }
  return next
}

/**
 * The warning for a request the agent has waited `waited` (printed by the edition) for.
 *
 * @since 0.1.0
 * @category constructors
 */
export const warning = (waited: string, resourceType: string): string =>
  `The agent has waited ${waited} for an answer to its ${resourceType} request: answer it with respond (RunningSession.pending lists it)`
