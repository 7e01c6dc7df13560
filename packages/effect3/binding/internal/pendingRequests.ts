/**
 * A session's watched rules bound to Effect: the protocol core's `Session.Watched` decides (the
 * budget, the outcome, which requests wait, which warning is due and when); here its pending list
 * is published (`RunningSession.pending`, a `SubscriptionRef` made when first read) and its
 * warnings are logged when due. The warnings of every session of one façade are entries of one
 * shared timer (`channel/deadlines.ts`), not a fiber per session: a session holds an entry only
 * while a request waits for its warning, and an idle one holds none.
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as SubscriptionRef from "effect/SubscriptionRef"
import { Session as CoreSession } from "effect-agent-session-core"
import { ConnectionShell } from "effect-agent-session-shell"
import type { PendingRequest } from "../AgentSessions.js"
import type * as SessionEvent from "../../src/SessionEvent.js"
import { forkWith, type RunContext, runContext } from "../../src/internal/line.js"
import type * as Session from "../Session.js"
import type * as Deadlines from "./channel/deadlines.js"

/** A watched session over this edition's events. */
export type Watched = CoreSession.Watched<
  SessionEvent.SessionEvent,
  SessionEvent.ExternalResourceRequested,
  SessionEvent.Complete
>

/** What the core asks of this edition's events (the shell's rules, over every edition's events). */
export const classifier: CoreSession.Classifier<
  SessionEvent.SessionEvent,
  SessionEvent.ExternalResourceRequested,
  SessionEvent.Complete
> = ConnectionShell.sessionClassifier

/**
 * What the session's event guard and `respond` tell the pending list. Built on demand: the
 * `SubscriptionRef` when `pending` is first read, the timer's entry when a request first waits
 * for its warning (most sessions never read `pending` and never see a request: they pay for
 * neither).
 */
export class PendingRequests {
  private ref: SubscriptionRef.SubscriptionRef<ReadonlyArray<PendingRequest>> | undefined = undefined
  /** The entry of the next warning in the shared timer, while a request waits for its warning. */
  private entry: Deadlines.Entry | undefined = undefined

  constructor(
    readonly sessionId: Session.SessionId,
    readonly watched: Watched,
    /** The timer the warnings are due on: shared by the sessions of one façade. */
    private readonly warnings: Deadlines.Deadlines
  ) {}

  /** The requests waiting for an answer, made on first use from the list reached (a pure construction). */
  get pending(): SubscriptionRef.SubscriptionRef<ReadonlyArray<PendingRequest>> {
    this.ref ??= Effect.runSync(SubscriptionRef.make<ReadonlyArray<PendingRequest>>(this.watched.pending))
    return this.ref
  }

  /** The requests of the chunk just received arrived now. */
  get arrived(): Effect.Effect<void> {
    return Effect.flatMap(Clock.currentTimeMillis, (now) => {
      this.watched.arrivedAt(now)
      return Effect.andThen(this.publish(), this.reschedule())
    })
  }

  /** A request answered (its answer accepted by `respond`). */
  answered(request: SessionEvent.ExternalResourceRequested): Effect.Effect<void> {
    return Effect.suspend(() => {
      if (!this.watched.answered(request)) return Effect.void
      if (this.watched.nextWarningAt() === undefined) this.cancel()
      return this.publish()
    })
  }

  /** The events ended: nothing waits any more. */
  get cleared(): Effect.Effect<void> {
    return Effect.suspend(() => {
      this.watched.closed()
      this.cancel()
      return this.publish()
    })
  }

  /** Read inside the ref's update, so concurrent publishers never leave an older list behind. */
  private publish(): Effect.Effect<void> {
    return Effect.suspend(() => this.ref === undefined ? Effect.void : SubscriptionRef.update(this.ref, () => this.watched.pending))
  }

  /**
   * After an arrival (requests are rare): the entry is set again at the earliest warning due. Its
   * warnings are logged in the context of the fiber that received the requests (its logger, its
   * log annotations and span), as a fiber of their own.
   */
  private reschedule(): Effect.Effect<void> {
    return Effect.suspend(() => {
      this.cancel()
      const at = this.watched.nextWarningAt()
      if (at === undefined) return Effect.void
      return Effect.map(runContext, (context) => {
        this.entry = this.warnings.scheduleUnsafe(at, (now) => this.due(now, context), context)
      })
    })
  }

  /** The timer's check: the warnings due now logged, and when the next is due (none: the entry ends). */
  private due(now: number, context: RunContext): number | undefined {
    const given = this.watched.warningsDue(now)
    if (given.length > 0) forkWith(context)(Effect.forEach(given, (warning) => this.warn(warning), { discard: true }))
    const next = this.watched.nextWarningAt()
    if (next === undefined) this.entry = undefined
    return next
  }

  private cancel(): void {
    this.entry?.cancel()
    this.entry = undefined
  }

  private warn({ resourceType, waitedMillis }: CoreSession.Warning<SessionEvent.ExternalResourceRequested>): Effect.Effect<void> {
    return Effect.logWarning(CoreSession.warningText(Duration.format(Duration.millis(waitedMillis)), resourceType)).pipe(
      Effect.annotateLogs({ sessionId: this.sessionId, resourceType, waitedMs: waitedMillis })
    )
  }
}
