/**
 * The state of one activation of the session entity: what it knows of the session's log (folded
 * event by event), the live readers waiting on it, and the run it holds.
 */
import type * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import type * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import { Session as CoreSession } from "effect-agent-session-core"
import type { RunningSession } from "effect-agent-session/AgentSessions"
import { ConnectionShell } from "effect-agent-session-shell"
import type * as SessionEvent from "effect-agent-session/SessionEvent"
import type * as EventLog from "../EventLog.js"
import { type AnswerEncoded, requestKey } from "./eventLog.js"
import { Wakers } from "./ticker.js"

/** A session's events folded by the core's rules, as a running session's are. */
type Watched = CoreSession.Watched<
  SessionEvent.SessionEvent,
  SessionEvent.ExternalResourceRequested,
  SessionEvent.Complete
>

/** What the core's rules read of the SDK's events (the shared glue's, as the editions'). */
const classifier: CoreSession.Classifier<
  SessionEvent.SessionEvent,
  SessionEvent.ExternalResourceRequested,
  SessionEvent.Complete
> = ConnectionShell.sessionClassifier

/** The page size of log reads. */
export const page = 500

/**
 * What the log says about a session, folded event by event by the protocol core's rules, as a
 * running session folds them (`Session.Watched`): the actions counted, the first `complete` and
 * its cost, and the requests open, in arrival order, by the core's request key (a request
 * replaces an open one of the same key; at most `Ledger.MAX_REQUESTS`). A request stays open
 * until an `external_resource_granted` settles it. The budget is the running session's to
 * enforce, and the warnings its to give: the log keeps no arrival time.
 */
export interface Tally {
  lastSeq: number
  readonly session: Watched
  /** Keys of requests with a recorded answer. */
  readonly answered: Map<string, AnswerEncoded>
}

/** An empty tally. */
export const makeTally = (): Tally => ({
  lastSeq: 0,
  session: new CoreSession.Watched({
    maxActions: Number.POSITIVE_INFINITY,
    keepEvents: false,
    onBudgetExceeded: "report",
    warnAfterMillis: Number.POSITIVE_INFINITY
  }, classifier),
  answered: new Map()
})

/** The requests open (not settled by a grant), oldest first. */
export const open = (tally: Tally): Array<SessionEvent.ExternalResourceRequested> =>
  tally.session.pending.map((waiting) => waiting.request)

/** Whether a request is open whose answer the tally does not hold. */
export const awaitingAnswer = (tally: Tally): boolean =>
  tally.session.pending.some((waiting) => !tally.answered.has(requestKey(waiting.request)))

export const fold = (tally: Tally, event: SessionEvent.SessionEvent): void => {
  const { session } = tally
  if (session.received([event]).requests > 0) {
    session.arrivedAt(0)
  } else if (event._tag === "ExternalResourceGranted") {
    // The grant names no request: it settles the oldest open one that was answered (or the oldest).
    const waiting = session.pending
    const settled = waiting.find((w) => tally.answered.has(requestKey(w.request))) ?? waiting[0]
    if (settled !== undefined) session.answered(settled.request)
  }
}

/**
 * How many of the most recent events an activation keeps in `recent`: enough for the live
 * readers, which keep up (each takes what came since its last offer, a chunk or two); a reader
 * further behind reads the log. Kept small because it is held for the whole run of every
 * session a runner holds: 256 events (the earlier bound) of a long session were about 55 KiB of
 * heap (218 bytes a decoded event, measured on the simulator's events), a third as much again
 * as the rest of the held session (about 170 KiB with a subscriber: docs/scale-out.md).
 */
export const recentMax = 32

/** The payload of `Start` and `Attach`: the session to run. */
export interface RunPayload {
  readonly session: EventLog.SessionRecord["info"]
  readonly maxActions: number
  readonly agent: Option.Option<string>
}

/** One activation's state, shared by its handlers (one entity instance per session id). */
export interface Activation {
  readonly sessionId: string
  readonly log: EventLog.Service
  readonly tally: Tally
  /** Bumped after every append and at the end of a run: what live readers wait on. */
  version: number
  readonly readers: Wakers
  readonly bump: Effect.Effect<void>
  /** The most recent events, so live readers rarely go to the store. */
  readonly recent: Array<EventLog.LoggedEvent>
  record: Option.Option<EventLog.SessionRecord>
  running: RunningSession | undefined
  /** Set when this activation gives the session away (its shard moves, the runner stops). */
  handingOver: boolean
  run: { readonly done: Deferred.Deferred<void>; readonly fiber: Fiber.RuntimeFiber<void> } | undefined
  /** Folds what the log has that the tally has not seen (nothing while the session runs here). */
  readonly load: Effect.Effect<void, EventLog.EventLogError>
}

export const makeActivation = (sessionId: string, log: EventLog.Service): Effect.Effect<Activation> =>
  Effect.gen(function*() {
    const tally = makeTally()
    const readers = new Wakers()
    const recent: Array<EventLog.LoggedEvent> = []

    // What the log knows. While this activation runs the session it is the log's only writer of
    // events and its tally is current, but for answers that a runner still believing it holds
    // the session may record (the answer watch reads those); otherwise (another runner may be
    // writing, during a hand-over) every reader reads the log afresh.
    const loading = yield* Effect.makeSemaphore(1)
    const self: Activation = {
      sessionId,
      log,
      tally,
      version: 0,
      readers,
      bump: Effect.sync(() => {
        self.version += 1
        readers.wake()
      }),
      recent,
      record: Option.none(),
      running: undefined,
      handingOver: false,
      run: undefined,
      load: Effect.suspend(() => {
        if (self.run !== undefined) return Effect.void
        return Effect.gen(function*() {
          // One read for the record, the answers and the first page (a take-over reads this for
          // every session it takes); a longer log is read on by pages.
          const fresh = yield* log.snapshot(sessionId, tally.lastSeq + 1, page)
          const events: Array<EventLog.LoggedEvent> = [...fresh.events]
          let batch = fresh.events
          while (batch.length === page) {
            batch = yield* log.read(sessionId, batch[batch.length - 1]!.seq + 1, page)
            events.push(...batch)
          }
          if (self.run !== undefined) return
          self.record = fresh.record
          for (const a of fresh.answers) tally.answered.set(requestKey(a.request), a.answer)
          for (const logged of events) {
            fold(tally, logged.event)
            tally.lastSeq = logged.seq
            recent.push(logged)
          }
          if (recent.length > recentMax) recent.splice(0, recent.length - recentMax)
        }).pipe(loading.withPermits(1))
      })
    }
    return self
  })
