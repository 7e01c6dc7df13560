/**
 * What both cluster editions (Effect 3's `effect-agent-session-cluster`, Effect 4's
 * `effect-agent-session-effect4/cluster`) know of a session from its log, by the protocol core's
 * rules: its events folded as a running session folds them (`Session.Watched` with the shared
 * classifier), the answers recorded, by the core's request key. Plus the wake-up set their live
 * readers wait in. Effect-free: each edition binds it to its own `Effect`.
 *
 * @since 0.1.0
 */
import { Session } from "effect-agent-session-core"
import { type Complete, keyOf, type Request, sessionClassifier, type WatchedEvent } from "./ConnectionShell.js"

/**
 * A session's events folded by the core's rules (`E` the edition's event, `R` its request, `C`
 * its `complete`).
 *
 * @since 0.1.0
 * @category models
 */
export type Watched<E extends WatchedEvent, R extends Request & E, C extends Complete & E> = Session.Watched<E, R, C>

/**
 * What the log says about a session, folded event by event by the protocol core's rules, as a
 * running session folds them (`Session.Watched`): the actions counted, the first `complete` and
 * its cost, and the requests open, in arrival order, by the core's request key (a request
 * replaces an open one of the same key; at most `Ledger.MAX_REQUESTS`). A request stays open
 * until an `external_resource_granted` settles it. The budget is the running session's to
 * enforce, and the warnings its to give: the log keeps no arrival time. `A`: an answer as the
 * edition records it.
 *
 * @since 0.1.0
 * @category models
 */
export interface Tally<E extends WatchedEvent, R extends Request & E, C extends Complete & E, A> {
  lastSeq: number
  readonly session: Watched<E, R, C>
  /** Keys ({@link requestKey}) of requests with a recorded answer. */
  readonly answered: Map<string, A>
}

/**
 * The key a request is answered by: the protocol core's (`Ledger.requestKey`: its action session
 * and raw resource type; bounded), the same as the connection's and the session's.
 *
 * @since 0.1.0
 * @category accessors
 */
export const requestKey: (request: Request) => string = keyOf

/**
 * An empty tally.
 *
 * @example
 * ```ts
 * import { ClusterTally } from "effect-agent-session-shell"
 *
 * const tally = ClusterTally.make()
 * ClusterTally.fold(tally, { _tag: "ExternalResourceRequested", action_session_id: "a1", resource_type: "credentials" })
 * ClusterTally.open(tally).length // 1
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = <
  E extends WatchedEvent = WatchedEvent,
  R extends Request & E = Request & E,
  C extends Complete & E = Complete & E,
  A = RecordedAnswer
>(): Tally<E, R, C, A> => ({
  lastSeq: 0,
  session: new Session.Watched<E, R, C>({
    maxActions: Number.POSITIVE_INFINITY,
    keepEvents: false,
    onBudgetExceeded: "report",
    warnAfterMillis: Number.POSITIVE_INFINITY
  }, sessionClassifier),
  answered: new Map()
})

/**
 * Folds one event of the log into the tally. A grant names no request: it settles the oldest open
 * request that was answered (or the oldest).
 *
 * @since 0.1.0
 * @category combinators
 */
export const fold = <E extends WatchedEvent, R extends Request & E, C extends Complete & E, A>(
  tally: Tally<E, R, C, A>,
  event: E
): void => {
  const { session } = tally
  if (session.received([event]).requests > 0) {
    session.arrivedAt(0)
  } else if (event._tag === "ExternalResourceGranted") {
    const waiting = session.pending
    const settled = waiting.find((w) => tally.answered.has(keyOf(w.request))) ?? waiting[0]
    if (settled !== undefined) session.answered(settled.request)
  }
}

/**
 * The requests open (not settled by a grant), oldest first.
 *
 * @since 0.1.0
 * @category accessors
 */
export const open = <E extends WatchedEvent, R extends Request & E, C extends Complete & E, A>(
  tally: Tally<E, R, C, A>
): Array<R> => tally.session.pending.map((waiting) => waiting.request)

/**
 * The requests open whose answer the tally does not hold, oldest first (a session's `pending`).
 *
 * @since 0.1.0
 * @category accessors
 */
export const unanswered = <E extends WatchedEvent, R extends Request & E, C extends Complete & E, A>(
  tally: Tally<E, R, C, A>
): Array<R> => open(tally).filter((request) => !tally.answered.has(keyOf(request)))

/**
 * Whether a request is open whose answer the tally does not hold.
 *
 * @since 0.1.0
 * @category accessors
 */
export const awaitingAnswer = <E extends WatchedEvent, R extends Request & E, C extends Complete & E, A>(
  tally: Tally<E, R, C, A>
): boolean => tally.session.pending.some((waiting) => !tally.answered.has(keyOf(waiting.request)))

/**
 * Events that describe the channel, not the session: not logged.
 *
 * @since 0.1.0
 * @category guards
 */
export const isChannelNotice = (event: { readonly _tag: string }): boolean =>
  event._tag === "Heartbeat" || event._tag === "Connected"

/**
 * An answer as the cluster records it (both lines' `Option` read alike: `_tag` and `value`).
 *
 * @since 0.1.0
 * @category models
 */
export type RecordedAnswer =
  | { readonly _tag: "Grant"; readonly input: { readonly _tag: "None" } | { readonly _tag: "Some"; readonly value: string } }
  | { readonly _tag: "Deny" }

/**
 * Whether two recorded answers say the same (the same kind, the same input).
 *
 * @since 0.1.0
 * @category guards
 */
export const sameAnswer = (a: RecordedAnswer, b: RecordedAnswer): boolean => {
  if (a._tag === "Deny" || b._tag === "Deny") return a._tag === b._tag
  return a.input._tag === "None"
    ? b.input._tag === "None"
    : b.input._tag === "Some" && a.input.value === b.input.value
}

/**
 * What an answer to a request means for a session, by its tally: `"record"` (the request is open
 * and has no answer yet), `"known"` (the same answer is recorded already: nothing to do; a caller
 * retrying after losing the reply), `"already-answered"` (another answer was recorded first: it
 * stands), `"never-received"` (no such request is open). Looked up in the recorded answers
 * before the open requests: a retry may arrive after the grant settled the request.
 *
 * @since 0.1.0
 * @category combinators
 */
export const decideAnswer = <E extends WatchedEvent, R extends Request & E, C extends Complete & E, A extends RecordedAnswer>(
  tally: Tally<E, R, C, A>,
  request: Request,
  answer: RecordedAnswer
): "record" | "known" | "already-answered" | "never-received" => {
  const key = keyOf(request)
  const previous = tally.answered.get(key)
  if (previous !== undefined) return sameAnswer(previous, answer) ? "known" : "already-answered"
  return tally.session.pending.some((waiting) => keyOf(waiting.request) === key) ? "record" : "never-received"
}

/**
 * Callbacks called once, at the next call of `wake` (and then forgotten): what a session's live
 * readers wait in, woken by each append and by the runner's ticker.
 *
 * @since 0.1.0
 * @category models
 */
export class Wakers {
  private waiting = new Set<() => void>()
  /** Adds a callback for the next `wake`. */
  add(wake: () => void): void {
    this.waiting.add(wake)
  }
  /** Forgets a callback. */
  delete(wake: () => void): void {
    this.waiting.delete(wake)
  }
  /** Calls every callback added since the last `wake`, once. */
  wake(): void {
    if (this.waiting.size === 0) return
    const woken = this.waiting
    this.waiting = new Set()
    for (const wake of woken) wake()
  }
}
