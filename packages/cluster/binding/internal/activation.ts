/**
 * The state of one session on a runner (its `SessionRun`, `entity.ts`): what it knows of the
 * session's log (folded event by event), the live readers waiting on it, and the run it holds.
 */
import type * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { ClusterTally } from "effect-agent-session-shell"
import { type AgentSessions, type RunFiber, type SessionEvent } from "../../src/internal/line.js"
import type * as EventLog from "../EventLog.js"
import { type AnswerEncoded, requestKey } from "./eventLogMemory.js"
import { type Gate, gate } from "./gate.js"

const Wakers = ClusterTally.Wakers
type Wakers = ClusterTally.Wakers

/**
 * What the log says about a session, folded by the core's rules as a running session folds them
 * (the shared glue's `ClusterTally`, which the Effect 4 cluster edition folds with too).
 */
export type Tally = ClusterTally.Tally<
  SessionEvent.SessionEvent,
  SessionEvent.ExternalResourceRequested,
  SessionEvent.Complete,
  AnswerEncoded
>

/** An empty tally. */
export const makeTally = (): Tally => ClusterTally.make()

/** The requests open (not settled by a grant), oldest first. */
export const open = (tally: Tally): Array<SessionEvent.ExternalResourceRequested> => ClusterTally.open(tally)

/** Whether a request is open whose answer the tally does not hold. */
export const awaitingAnswer = (tally: Tally): boolean => ClusterTally.awaitingAnswer(tally)

/** Folds one event of the log into the tally. */
export const fold = (tally: Tally, event: SessionEvent.SessionEvent): void => ClusterTally.fold(tally, event)

/** The page size of log reads. */
export const page = 500

/**
 * How many of the most recent events an activation keeps in `recent` while a subscriber is open:
 * enough for the live readers, which keep up (each takes what came since its last offer, a chunk
 * or two); a reader further behind reads the log. Kept small, and only while someone reads,
 * because it would be held for the whole run of every session a runner holds: 32 decoded events
 * are about 7 KiB of heap (218 bytes an event, measured on the simulator's events).
 */
export const recentMax = 32

/** The payload of `Start` and `Attach`: the session to run. */
export interface RunPayload {
  readonly session: EventLog.SessionRecord["info"]
  readonly maxActions: number
  readonly agent: Option.Option<string>
}

/** One session's state on a runner, shared by its run and its entity's handlers. */
export interface Activation {
  readonly sessionId: string
  readonly log: EventLog.Service
  readonly tally: Tally
  /** Bumped after every append and at the end of a run: what live readers wait on. */
  version: number
  readonly readers: Wakers
  readonly bump: Effect.Effect<void>
  /**
   * The most recent events (contiguous, up to the tally's `lastSeq`), so live readers rarely go
   * to the store; empty while no subscriber is open.
   */
  readonly recent: Array<EventLog.LoggedEvent>
  /** `Events` subscribers open. */
  readonly subscribers: number
  /** A subscriber opens: from now on `recent` is kept. */
  readonly subscribe: () => void
  /** A subscriber is gone: with none left, `recent` is let go. */
  readonly unsubscribe: () => void
  /** Folds events logged after the tally's `lastSeq` into it, in order, and keeps the last in `recent`. */
  readonly keep: (logged: ReadonlyArray<EventLog.LoggedEvent>) => void
  record: Option.Option<EventLog.SessionRecord>
  running: AgentSessions.RunningSession | undefined
  /** Set when this activation gives the session away (its shard moves, the runner stops). */
  handingOver: boolean
  run: { readonly done: Deferred.Deferred<void>; readonly fiber: RunFiber<void> } | undefined
  /** Folds what the log has that the tally has not seen (nothing while the session runs here). */
  readonly load: Effect.Effect<void, EventLog.EventLogError>
}

/**
 * One object with its methods on the prototype, `load` and `bump` made when read: a runner holds
 * one for every session it holds, for the whole run.
 */
class SessionActivation implements Activation {
  readonly tally: Tally = makeTally()
  version = 0
  readonly readers = new Wakers()
  readonly recent: Array<EventLog.LoggedEvent> = []
  record: Option.Option<EventLog.SessionRecord> = Option.none()
  running: AgentSessions.RunningSession | undefined = undefined
  handingOver = false
  run: Activation["run"] = undefined
  subscribers = 0

  constructor(
    readonly sessionId: string,
    readonly log: EventLog.Service,
    /**
     * What the log knows. While this activation runs the session it is the log's only writer of
     * events and its tally is current, but for answers that a runner still believing it holds
     * the session may record (the answer watch reads those); otherwise (another runner may be
     * writing, during a hand-over) every reader reads the log afresh, one at a time.
     */
    private readonly loading: Gate
  ) {}

  subscribe(): void {
    this.subscribers += 1
  }

  unsubscribe(): void {
    this.subscribers -= 1
    if (this.subscribers === 0) this.recent.length = 0
  }

  keep(logged: ReadonlyArray<EventLog.LoggedEvent>): void {
    const { recent, tally } = this
    for (const l of logged) {
      fold(tally, l.event)
      tally.lastSeq = l.seq
    }
    if (this.subscribers === 0) return
    for (let i = Math.max(0, logged.length - recentMax); i < logged.length; i++) recent.push(logged[i]!)
    if (recent.length > recentMax) recent.splice(0, recent.length - recentMax)
  }

  get bump(): Effect.Effect<void> {
    return Effect.sync(() => {
      this.version += 1
      this.readers.wake()
    })
  }

  get load(): Effect.Effect<void, EventLog.EventLogError> {
    return Effect.suspend(() => this.run !== undefined ? Effect.void : this.loading.withPlace(this.loadLog()))
  }

  private loadLog(): Effect.Effect<void, EventLog.EventLogError> {
    const { log, sessionId, tally } = this
    // One read for the record, the answers and the first page (a take-over reads this for every
    // session it takes); a longer log is read on by pages.
    return Effect.flatMap(log.snapshot(sessionId, tally.lastSeq + 1, page), (fresh) => {
      const events: Array<EventLog.LoggedEvent> = [...fresh.events]
      const more = (batch: ReadonlyArray<EventLog.LoggedEvent>): Effect.Effect<void, EventLog.EventLogError> =>
        batch.length < page ? Effect.void : Effect.flatMap(log.read(sessionId, batch[batch.length - 1]!.seq + 1, page), (next) => {
          events.push(...next)
          return more(next)
        })
      return Effect.map(more(fresh.events), () => {
        if (this.run !== undefined) return
        this.record = fresh.record
        for (const a of fresh.answers) tally.answered.set(requestKey(a.request), a.answer)
        this.keep(events)
      })
    })
  }
}

/** A new activation's state. */
export const activationOf = (sessionId: string, log: EventLog.Service): Activation =>
  new SessionActivation(sessionId, log, gate(1))

export const makeActivation = (sessionId: string, log: EventLog.Service): Effect.Effect<Activation> =>
  Effect.sync(() => activationOf(sessionId, log))
