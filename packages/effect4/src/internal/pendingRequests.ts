/**
 * A session's watched rules bound to Effect: the protocol core's `Session.Watched` decides (the
 * budget, the outcome, which requests wait, which warning is due and when); here its pending list
 * is published (`RunningSession.pending`, a `SubscriptionRef`) and its warnings are logged by a
 * timer: one fiber per session, in a `FiberHandle`, only while a request waits for its warning.
 * An idle session has none.
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as FiberHandle from "effect/FiberHandle"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as SubscriptionRef from "effect/SubscriptionRef"
import { Session as CoreSession } from "effect-agent-session-core"
import { ConnectionShell } from "effect-agent-session-core/shell"
import type { PendingRequest } from "../AgentSessions.js"
import type * as Session from "../Session.js"
import * as SessionEvent from "../SessionEvent.js"

/** A watched session over this edition's events. */
export type Watched = CoreSession.Watched<
  SessionEvent.SessionEvent,
  SessionEvent.ExternalResourceRequested,
  SessionEvent.Complete
>

/** What the core asks of this edition's events. */
export const classifier: CoreSession.Classifier<
  SessionEvent.SessionEvent,
  SessionEvent.ExternalResourceRequested,
  SessionEvent.Complete
> = {
  wireName: ConnectionShell.wireNameOf,
  actionSessionId: (request) => request.action_session_id,
  resourceType: (request) => SessionEvent.resourceTypeRaw(request.resource_type),
  errorText: (event) => event._tag === "AgentError" ? event.error : "",
  cost: (complete) => Option.getOrUndefined(SessionEvent.totalCost(complete))
}

/** What the session's event guard and `respond` tell the pending list. */
export interface PendingRequests {
  readonly pending: SubscriptionRef.SubscriptionRef<ReadonlyArray<PendingRequest>>
  /** The requests of the chunk just received arrived now. */
  readonly arrived: Effect.Effect<void>
  /** A request answered (its answer accepted by `respond`). */
  readonly answered: (request: SessionEvent.ExternalResourceRequested) => Effect.Effect<void>
  /** The events ended: nothing waits any more. */
  readonly cleared: Effect.Effect<void>
}

/** The pending list of one watched session; its timer lives in the current scope. */
export const make = (
  sessionId: Session.SessionId,
  watched: Watched
): Effect.Effect<PendingRequests, never, Scope.Scope> =>
  Effect.gen(function*() {
    const pending = yield* SubscriptionRef.make<ReadonlyArray<PendingRequest>>(watched.pending)
    const timer = yield* FiberHandle.make<void, never>()
    // Read inside the ref's update, so concurrent publishers never leave an older list behind.
    const publish = SubscriptionRef.update(pending, () => watched.pending)

    const warn = ({ resourceType, waitedMillis }: CoreSession.Warning<SessionEvent.ExternalResourceRequested>) =>
      Effect.logWarning(CoreSession.warningText(Duration.format(Duration.millis(waitedMillis)), resourceType)).pipe(
        Effect.annotateLogs({ sessionId, resourceType, waitedMs: waitedMillis })
      )
    // Sleeps until the next warning is due, gives the warnings due, and so on; ends when none is left.
    const watch: Effect.Effect<void> = Effect.suspend(() => {
      const due = watched.nextWarningAt()
      if (due === undefined) return Effect.void
      return Effect.flatMap(Clock.currentTimeMillis, (now) =>
        due > now
          ? Effect.andThen(Effect.sleep(Duration.millis(due - now)), watch)
          : Effect.andThen(Effect.forEach(watched.warningsDue(now), warn, { discard: true }), watch))
    })
    // Restarted on every arrival (requests are rare): the new timer sleeps until the earliest
    // warning due, and no arrival can miss a timer that is just ending.
    const restart = Effect.suspend(() =>
      watched.nextWarningAt() === undefined ? Effect.void : Effect.asVoid(FiberHandle.run(timer, watch))
    )
    const stopIfIdle = Effect.suspend(() => watched.nextWarningAt() === undefined ? FiberHandle.clear(timer) : Effect.void)

    return {
      pending,
      arrived: Effect.flatMap(Clock.currentTimeMillis, (now) => {
        watched.arrivedAt(now)
        return Effect.andThen(publish, restart)
      }),
      answered: (request) =>
        Effect.suspend(() => watched.answered(request) ? Effect.andThen(publish, stopIfIdle) : Effect.void),
      cleared: Effect.suspend(() => {
        watched.closed()
        return Effect.andThen(publish, FiberHandle.clear(timer))
      })
    }
  })
