/**
 * A session's watched rules bound to Effect: the protocol core's `Session.Watched` decides (the
 * budget, the outcome, which requests wait, which warning is due and when); here its pending list
 * is published (`RunningSession.pending`, a `SubscriptionRef` made when first read) and its
 * warnings are logged by a timer: one fiber per session, in a `FiberHandle`, only while a request
 * waits for its warning. An idle session has neither.
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as FiberHandle from "effect/FiberHandle"
import type * as Scope from "effect/Scope"
import * as SubscriptionRef from "effect/SubscriptionRef"
import { Session as CoreSession } from "effect-agent-session-core"
import { ConnectionShell } from "effect-agent-session-shell"
import type { PendingRequest } from "../AgentSessions.js"
import type * as SessionEvent from "../../src/SessionEvent.js"
import { inScope } from "../../src/internal/line.js"
import type * as Session from "../Session.js"

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
 * `SubscriptionRef` when `pending` is first read, the timer when a request first waits for its
 * warning (most sessions never read `pending` and never see a request: they pay for neither).
 */
export class PendingRequests {
  private ref: SubscriptionRef.SubscriptionRef<ReadonlyArray<PendingRequest>> | undefined = undefined
  private timer: FiberHandle.FiberHandle<void, never> | undefined = undefined

  constructor(
    readonly sessionId: Session.SessionId,
    readonly watched: Watched,
    /** Where the timer lives: the session's scope. */
    private readonly scope: Scope.Scope
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
      return Effect.andThen(this.publish(), this.restart())
    })
  }

  /** A request answered (its answer accepted by `respond`). */
  answered(request: SessionEvent.ExternalResourceRequested): Effect.Effect<void> {
    return Effect.suspend(() => this.watched.answered(request) ? Effect.andThen(this.publish(), this.stopIfIdle()) : Effect.void)
  }

  /** The events ended: nothing waits any more. */
  get cleared(): Effect.Effect<void> {
    return Effect.suspend(() => {
      this.watched.closed()
      return Effect.andThen(this.publish(), this.timer === undefined ? Effect.void : FiberHandle.clear(this.timer))
    })
  }

  /** Read inside the ref's update, so concurrent publishers never leave an older list behind. */
  private publish(): Effect.Effect<void> {
    return Effect.suspend(() => this.ref === undefined ? Effect.void : SubscriptionRef.update(this.ref, () => this.watched.pending))
  }

  private warn({ resourceType, waitedMillis }: CoreSession.Warning<SessionEvent.ExternalResourceRequested>): Effect.Effect<void> {
    return Effect.logWarning(CoreSession.warningText(Duration.format(Duration.millis(waitedMillis)), resourceType)).pipe(
      Effect.annotateLogs({ sessionId: this.sessionId, resourceType, waitedMs: waitedMillis })
    )
  }

  /** Sleeps until the next warning is due, gives the warnings due, and so on; ends when none is left. */
  private watch(): Effect.Effect<void> {
    return Effect.suspend(() => {
      const due = this.watched.nextWarningAt()
      if (due === undefined) return Effect.void
      return Effect.flatMap(Clock.currentTimeMillis, (now) =>
        due > now
          ? Effect.andThen(Effect.sleep(Duration.millis(due - now)), this.watch())
          : Effect.andThen(Effect.forEach(this.watched.warningsDue(now), (warning) => this.warn(warning), { discard: true }), this.watch()))
    })
  }

  /**
   * Restarted on every arrival (requests are rare): the new timer sleeps until the earliest
   * warning due, and no arrival can miss a timer that is just ending.
   */
  private restart(): Effect.Effect<void> {
    return Effect.suspend(() => {
      if (this.watched.nextWarningAt() === undefined) return Effect.void
      const timer = this.timer === undefined
        ? Effect.map(inScope(FiberHandle.make<void, never>(), this.scope), (made) => (this.timer ??= made))
        : Effect.succeed(this.timer)
      return Effect.flatMap(timer, (handle) => Effect.asVoid(FiberHandle.run(handle, this.watch())))
    })
  }

  private stopIfIdle(): Effect.Effect<void> {
    return Effect.suspend(() =>
      this.watched.nextWarningAt() === undefined && this.timer !== undefined ? FiberHandle.clear(this.timer) : Effect.void
    )
  }
}

/** The pending list of one watched session; its timer lives in the current scope. */
export const make = (
  sessionId: Session.SessionId,
  watched: Watched
): Effect.Effect<PendingRequests, never, Scope.Scope> =>
  Effect.map(Effect.scope, (scope) => new PendingRequests(sessionId, watched, scope))
