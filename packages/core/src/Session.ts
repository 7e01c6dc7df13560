/**
 * A watched session, without I/O: what each event is (by its wire name), the action budget
 * (`action_run` events counted against `max_actions`), the outcome (the `complete` event and
 * its cost, the last error's text, a bounded tail of the events), and the agent's requests waiting
 * for an answer (`RunningSession.pending`) with the warning for one that waits too long.
 *
 * The shell says what happened (events received, the time they arrived, a request answered, the
 * events ended, the time now) and reads the decisions returned: how much of a chunk to deliver,
 * whether the budget stopped the session, the pending list, which warnings are due and when the
 * next one is. Time is an input; nothing is called back. The shell's own event values are read
 * through a small {@link Classifier}.
 *
 * @example
 * ```ts
 * import { Session } from "effect-agent-session-core"
 *
 * type Event = { readonly name: string; readonly id?: string; readonly text?: string }
 * const watched = new Session.Watched<Event>({ maxActions: 1 }, {
 *   wireName: (event) => event.name,
 *   actionSessionId: (request) => request.id ?? "",
 *   resourceType: () => "request_user_input",
 *   errorText: (event) => event.text ?? "",
 *   cost: () => 0
 * })
 * const step = watched.received([{ name: "action_run" }, { name: "action_run" }, { name: "heartbeat" }])
 * console.log(step.delivered, step.overrun) // 2 2: the chunk is cut after the overrun
 * ```
 *
 * @since 0.1.0
 */
import { wireNames } from "./Events.js"
import { MAX_REQUESTS, requestKey } from "./Ledger.js"

/**
 * How many events an outcome keeps by default: the last 100.
 *
 * @since 0.1.0
 * @category models
 */
export const defaultKeepEvents = 100

/**
 * How long a request waits for an answer before it is warned about, by default: 30 s.
 *
 * @since 0.1.0
 * @category models
 */
export const defaultWarnAfterMillis = 30_000

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
 * What an event is to a session: a keep-alive (`heartbeat`, `connected`), a request waiting for an
 * answer (`external_resource_requested`), the `complete` event, an `error` event, an event that
 * counts against the action budget (`action_run`), or any other event. The connection's own
 * `Connection.EventKind` is this with `chargeable` read as `event`.
 *
 * @since 0.1.0
 * @category models
 */
export type Kind = "keep-alive" | "request" | "complete" | "error" | "chargeable" | "event"

/**
 * What an event of a wire name is ({@link Kind}). An unknown name is an `event`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const kindOf = (wireName: string): Kind => {
  switch (wireName) {
    case wireNames.Heartbeat:
    case wireNames.Connected:
      return "keep-alive"
    case wireNames.ExternalResourceRequested:
      return "request"
    case wireNames.Complete:
      return "complete"
    case wireNames.AgentError:
      return "error"
    case wireNames.ActionRun:
      return "chargeable"
    default:
      return "event"
  }
}

/**
 * What a session asks of the shell's events: `E` an event, `Q` a request (an event named
 * `external_resource_requested`), `C` the `complete` event. Each accessor is asked only of the
 * events its kind names.
 *
 * @since 0.1.0
 * @category models
 */
export interface Classifier<E, Q extends E = E, C extends E = E> {
  /** The event's wire name (`Events.wireNames`, or an unknown event's own name). */
  readonly wireName: (event: E) => string
  /** A request's action session id. */
  readonly actionSessionId: (request: Q) => string
  /** A request's raw resource type (an unknown one as it was sent). */
  readonly resourceType: (request: Q) => string
  /** An `error` event's text. */
  readonly errorText: (event: E) => string
  /** A `complete` event's cost (`Events.totalCost`), if it carries one. */
  readonly cost: (complete: C) => number | undefined
}

/**
 * The options of a session: its budget, how many events its outcome keeps ({@link keptEvents}),
 * what an overrun does (`"fail"`, the default: the session stops at the overrun; `"report"`: it
 * goes on and the overrun is recorded), after how long a waiting request is warned about
 * (milliseconds; infinite: never).
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly maxActions: number
  readonly keepEvents?: boolean | number | undefined
  readonly onBudgetExceeded?: "fail" | "report" | undefined
  readonly warnAfterMillis?: number | undefined
}

/**
 * A request waiting for an answer, and since when (epoch milliseconds).
 *
 * @since 0.1.0
 * @category models
 */
export interface Waiting<Q> {
  readonly request: Q
  readonly since: number
}

/**
 * What a chunk of events received decides: how many of them to deliver (all, unless the budget
 * stopped the session: then up to the overrun, included), how many requests arrived (list them
 * with {@link Watched.arrivedAt} before delivering the chunk), whether `complete` was seen first
 * here (the outcome is {@link Watched.completed}), and the count of actions at which the budget
 * stopped the session (`"fail"` mode), if it did.
 *
 * @since 0.1.0
 * @category models
 */
export interface Received {
  readonly delivered: number
  readonly requests: number
  readonly completed: boolean
  readonly overrun: number | undefined
}

/**
 * The outcome of a session that completed, as it stood when `complete` arrived: the event, its
 * cost, the actions counted, the events kept (oldest first), and the first count of actions over
 * the budget, if any (in `"report"` mode).
 *
 * @since 0.1.0
 * @category models
 */
export interface Completed<C, E> {
  readonly _tag: "Completed"
  readonly complete: C
  readonly cost: number | undefined
  readonly actions: number
  readonly events: ReadonlyArray<E>
  readonly overrunAt: number | undefined
}

/**
 * How a session's events ended, when they end without a failure of their own: stopped by the
 * budget (the session may go on at the service; `actions` counted at the overrun), completed, or
 * ended before `complete`, with the last error event's text.
 *
 * @since 0.1.0
 * @category models
 */
export type Ending<C, E> =
  | { readonly _tag: "Overrun"; readonly actions: number }
  | Completed<C, E>
  | { readonly _tag: "WithoutComplete"; readonly lastError: string | undefined }

/**
 * A warning due: the request, its raw resource type, and how long it has waited (milliseconds).
 *
 * @since 0.1.0
 * @category models
 */
export interface Warning<Q> {
  readonly request: Q
  readonly resourceType: string
  readonly waitedMillis: number
}

/**
 * The warning's text for a request the agent has waited `waited` (printed by the edition) for.
 *
 * @since 0.1.0
 * @category constructors
 */
export const warningText = (waited: string, resourceType: string): string =>
  `The agent has waited ${waited} for an answer to its ${resourceType} request: answer it with respond (RunningSession.pending lists it)`

const none: ReadonlyArray<never> = []

/**
 * One watched session.
 *
 * @since 0.1.0
 * @category models
 */
export class Watched<E, Q extends E = E, C extends E = E> {
  /** The `action_run` events counted. */
  actions = 0
  /** The first count of actions over the budget, once seen. */
  overrunAt: number | undefined = undefined
  /** The count of actions at which the budget stopped the session (`"fail"` mode), once it did. */
  stoppedAt: number | undefined = undefined
  /** The text of the last error event. */
  lastError: string | undefined = undefined
  /** The outcome, once the first `complete` arrived. */
  completed: Completed<C, E> | undefined = undefined
  /** The requests waiting for an answer, oldest first (a new array after every change). */
  pending: ReadonlyArray<Waiting<Q>> = none

  readonly maxActions: number
  /**
   * Whether the budget stops the session at its overrun (`"fail"` mode): the shell stops watching
   * it (closes its connection), so the session may still be running at the service.
   */
  readonly stopsOnOverrun: boolean
  private readonly keep: number
  private readonly warnAfter: number
  private tail: Array<E> = []
  private arriving: Array<Q> = []
  /** Made when the first request arrives (most sessions never see one). */
  private waiting: Map<string, Waiting<Q>> | undefined = undefined
  /** Made when the first warning is given. */
  private warned: WeakSet<Waiting<Q>> | undefined = undefined

  constructor(options: Options, private readonly classifier: Classifier<E, Q, C>) {
    this.maxActions = options.maxActions
    this.keep = keptEvents(options.keepEvents)
    this.stopsOnOverrun = (options.onBudgetExceeded ?? "fail") === "fail"
    this.warnAfter = options.warnAfterMillis ?? defaultWarnAfterMillis
  }

  /** The key a request is answered by (`Ledger.requestKey`). */
  keyOf(request: Q): string {
    return requestKey(this.classifier.actionSessionId(request), this.classifier.resourceType(request))
  }

  /**
   * A chunk of events received, in arrival order. Nothing is received after the budget stopped
   * the session (`delivered` 0).
   */
  received(events: Iterable<E>): Received {
    let delivered = 0
    let requests = 0
    let completed = false
    if (this.stoppedAt !== undefined) return { delivered, requests, completed, overrun: undefined }
    for (const event of events) {
      delivered += 1
      this.kept(event)
      switch (kindOf(this.classifier.wireName(event))) {
        case "chargeable":
          this.actions += 1
          if (this.actions > this.maxActions) {
            this.overrunAt ??= this.actions
            if (this.stopsOnOverrun) {
              this.stoppedAt = this.actions
              return { delivered, requests, completed, overrun: this.actions }
            }
          }
          break
        case "request":
          this.arriving.push(event as Q)
          requests += 1
          break
        case "error":
          this.lastError = this.classifier.errorText(event)
          break
        case "complete":
          if (this.completed === undefined) {
            completed = true
            this.completed = {
              _tag: "Completed",
              complete: event as C,
              cost: this.classifier.cost(event as C),
              actions: this.actions,
              events: this.events(),
              overrunAt: this.overrunAt
            }
          }
          break
      }
    }
    return { delivered, requests, completed, overrun: undefined }
  }

  /**
   * The requests of the chunks received since the last call arrived at `now`: each replaces a
   * waiting one of the same key (and its warning), and the list keeps at most
   * `Ledger.MAX_REQUESTS`, the oldest going first (answering one of them fails with
   * `RequestNotPending`). Returns the list.
   */
  arrivedAt(now: number): ReadonlyArray<Waiting<Q>> {
    if (this.arriving.length === 0) return this.pending
    const waiting = this.waiting ??= new Map()
    for (const request of this.arriving) {
      const key = this.keyOf(request)
      waiting.delete(key)
      waiting.set(key, { request, since: now })
    }
    this.arriving = []
    for (const key of waiting.keys()) {
      if (waiting.size <= MAX_REQUESTS) break
      waiting.delete(key)
    }
    return this.pending = [...waiting.values()]
  }

  /** A request answered: no longer waiting. True when the list changed. */
  answered(request: Q): boolean {
    if (this.waiting === undefined || !this.waiting.delete(this.keyOf(request))) return false
    this.pending = [...this.waiting.values()]
    return true
  }

  /** The events are closed (however they ended): nothing waits any more. */
  closed(): void {
    this.arriving = []
    this.waiting?.clear()
    this.pending = none
  }

  /**
   * The events ended without a failure of their own: how ({@link Ending}). The budget's stop
   * comes first, then `complete`, else the session ended without it.
   */
  ended(): Ending<C, E> {
    if (this.stoppedAt !== undefined) return { _tag: "Overrun", actions: this.stoppedAt }
    return this.settled()
  }

  /** The outcome once the events are over: completed, or ended without `complete`. */
  settled(): Completed<C, E> | { readonly _tag: "WithoutComplete"; readonly lastError: string | undefined } {
    return this.completed ?? { _tag: "WithoutComplete", lastError: this.lastError }
  }

  /** When the next warning is due (epoch milliseconds), if any is left to give. */
  nextWarningAt(): number | undefined {
    if (!Number.isFinite(this.warnAfter) || this.waiting === undefined) return undefined
    let first: number | undefined
    for (const entry of this.waiting.values()) {
      if (this.warned?.has(entry) !== true && (first === undefined || entry.since < first)) first = entry.since
    }
    return first === undefined ? undefined : first + this.warnAfter
  }

  /** The warnings due at `now`, oldest request first; each is given once. */
  warningsDue(now: number): ReadonlyArray<Warning<Q>> {
    if (!Number.isFinite(this.warnAfter) || this.waiting === undefined) return none
    const due: Array<Warning<Q>> = []
    const warned = this.warned ??= new WeakSet()
    for (const entry of this.waiting.values()) {
      if (warned.has(entry) || entry.since + this.warnAfter > now) continue
      warned.add(entry)
      due.push({ request: entry.request, resourceType: this.classifier.resourceType(entry.request), waitedMillis: now - entry.since })
    }
    return due.sort((a, b) => b.waitedMillis - a.waitedMillis)
  }

  private kept(event: E): void {
    if (this.keep <= 0) return
    this.tail.push(event)
    // A bounded tail: the oldest half is dropped at twice the bound (amortized O(1)).
    if (this.tail.length >= 2 * this.keep) this.tail.splice(0, this.tail.length - this.keep)
  }

  /** The events kept, oldest first (a copy). */
  events(): ReadonlyArray<E> {
    return this.tail.length > this.keep ? this.tail.slice(-this.keep) : this.tail.slice()
  }
}
