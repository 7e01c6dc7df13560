/**
 * The agent's requests waiting for an answer (`RunningSession.pending`), and the warning for one
 * that waits past `warnAfter`. The warning's timer is one fiber per session, in a `FiberHandle`,
 * and only while a request waits for its warning: it sleeps until the earliest warning is due, and
 * ends once no request is left to warn about. An idle session has none.
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as FiberHandle from "effect/FiberHandle"
import type * as Scope from "effect/Scope"
import * as SubscriptionRef from "effect/SubscriptionRef"
import { Ledger } from "effect-agent-session-core"
import type { PendingRequest } from "../AgentSessions.js"
import type * as Session from "../Session.js"
import * as SessionEvent from "../SessionEvent.js"

/** What the session's event guard and `respond` tell the pending list. */
export interface PendingRequests {
  readonly pending: SubscriptionRef.SubscriptionRef<ReadonlyArray<PendingRequest>>
  /** Requests that arrived (in one chunk, in order): each replaces an earlier one of the same key. */
  readonly arrived: (requests: ReadonlyArray<SessionEvent.ExternalResourceRequested>) => Effect.Effect<void>
  /** A request answered (its answer accepted by `respond`). */
  readonly answered: (request: SessionEvent.ExternalResourceRequested) => Effect.Effect<void>
  /** The events ended: nothing waits any more. */
  readonly cleared: Effect.Effect<void>
}

const sameRequest = (a: SessionEvent.ExternalResourceRequested, b: SessionEvent.ExternalResourceRequested) =>
  a.action_session_id === b.action_session_id &&
  SessionEvent.resourceTypeRaw(a.resource_type) === SessionEvent.resourceTypeRaw(b.resource_type)

/** The pending list of one session; its timer lives in the current scope. */
export const make = (
  sessionId: Session.SessionId,
  warnAfter: Duration.Duration
): Effect.Effect<PendingRequests, never, Scope.Scope> =>
  Effect.gen(function*() {
    const pending = yield* SubscriptionRef.make<ReadonlyArray<PendingRequest>>([])
    const timer = yield* FiberHandle.make<void, never>()
    const warnAfterMillis = Duration.toMillis(warnAfter)
    // `pending`'s value, kept in step by `update`, so that the timer decides in one synchronous step.
    let waiting: ReadonlyArray<PendingRequest> = []
    const warned = new WeakSet<PendingRequest>()

    const update = (f: (all: ReadonlyArray<PendingRequest>) => ReadonlyArray<PendingRequest>) =>
      SubscriptionRef.update(pending, (all) => {
        waiting = f(all)
        return waiting
      })
    const unwarned = (): PendingRequest | undefined => {
      let next: PendingRequest | undefined
      for (const entry of waiting) {
        if (!warned.has(entry) && (next === undefined || entry.since < next.since)) next = entry
      }
      return next
    }

    const warn = (entry: PendingRequest, now: number) => {
      const resourceType = SessionEvent.resourceTypeRaw(entry.request.resource_type)
      return Effect.logWarning(
        `The agent has waited ${
          Duration.format(Duration.millis(now - entry.since))
        } for an answer to its ${resourceType} request: answer it with respond (RunningSession.pending lists it)`
      ).pipe(Effect.annotateLogs({ sessionId, resourceType, waitedMs: now - entry.since }))
    }
    // Sleeps until the earliest warning not given yet is due, gives it if its request still
    // waits, and so on; ends when none is left.
    const watch: Effect.Effect<void> = Effect.suspend(() => {
      const entry = unwarned()
      if (entry === undefined) return Effect.void
      return Effect.flatMap(Clock.currentTimeMillis, (now) => {
        const due = entry.since + warnAfterMillis - now
        if (due > 0) return Effect.andThen(Effect.sleep(Duration.millis(due)), watch)
        warned.add(entry)
        return Effect.andThen(warn(entry, now), watch)
      })
    })
    // Restarted on every arrival (requests are rare): the new timer sleeps until the earliest
    // warning due, and no arrival can miss a timer that is just ending.
    const restart = Number.isFinite(warnAfterMillis) ? Effect.asVoid(FiberHandle.run(timer, watch)) : Effect.void
    const stopIfIdle = Effect.suspend(() => unwarned() === undefined ? FiberHandle.clear(timer) : Effect.void)

    return {
      pending,
      arrived: (requests) =>
        Effect.flatMap(Clock.currentTimeMillis, (since) =>
          Effect.andThen(
            update((all) => {
              let next = all
              for (const request of requests) {
                next = [...next.filter((p) => !sameRequest(p.request, request)), { request, since }]
              }
              // Bounded as the connection's answer ledger is: the oldest go first, as the ledger
              // forgets them (answering one fails with RequestNotPending).
              return next.length > Ledger.MAX_REQUESTS ? next.slice(next.length - Ledger.MAX_REQUESTS) : next
            }),
            restart
          )),
      answered: (request) =>
        Effect.andThen(update((all) => all.filter((p) => !sameRequest(p.request, request))), stopIfIdle),
      cleared: Effect.andThen(update(() => []), FiberHandle.clear(timer))
    }
  })
