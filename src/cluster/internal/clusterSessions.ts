/**
 * The cluster façade: entity clients with retries, and the resuming event stream.
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import { AgentApi } from "../../AgentApi.js"
import { type RequestNotPending, SessionEndedWithoutComplete } from "../../Errors.js"
import type * as SessionEvent from "../../SessionEvent.js"
import type * as ClusterSessions from "../ClusterSessions.js"
import { ClusterUnavailable } from "../ClusterSessions.js"
import type * as EventLog from "../EventLog.js"
import { SessionEntity } from "../SessionEntity.js"

export const outcomeOf = (events: ReadonlyArray<EventLog.LoggedEvent>): Option.Option<SessionEvent.Complete> => {
  for (let i = events.length - 1; i >= 0; i--) {
    const event = events[i]!.event
    if (event._tag === "Complete") return Option.some(event)
  }
  return Option.none()
}

const describe = (cause: Cause.Cause<unknown>): string =>
  Option.match(Cause.failureOption(cause), {
    onNone: () => Cause.pretty(cause).split("\n")[0] ?? "defect",
    onSome: (error) =>
      typeof error === "object" && error !== null && "_tag" in error
        ? `${String(error._tag)}${"message" in error && error.message !== "" ? `: ${String(error.message)}` : ""}`
        : String(error)
  })


export const make = (options: { readonly retry: Schedule.Schedule<unknown, unknown> }) =>
  Effect.gen(function*() {
    const makeClient = yield* SessionEntity.client
    const api = yield* AgentApi

    /**
     * A call to the cluster: failures that are not the caller's (no runner yet, mailbox full,
     * storage, a runner gone mid-call) are retried on the schedule, then `ClusterUnavailable`.
     */
    const call = <A, E>(
      operation: string,
      sessionId: string,
      effect: Effect.Effect<A, E>
    ): Effect.Effect<A, Extract<E, RequestNotPending> | ClusterUnavailable> =>
      effect.pipe(
        Effect.catchAllCause((cause): Effect.Effect<never, Extract<E, RequestNotPending> | ClusterUnavailable> => {
          // An interruption caught here came from the runner (the caller's own is not caught).
          // The caller's own failure (only `Respond` has one, `RequestNotPending`) is passed on.
          const failure = Cause.failureOption(cause)
          if (Option.isSome(failure) && Predicate.isTagged(failure.value, "RequestNotPending")) {
            return Effect.fail(failure.value as Extract<E, RequestNotPending>)
          }
          return Effect.fail(new ClusterUnavailable({ operation, sessionId, message: describe(cause) }))
        }),
        Effect.retry(Schedule.whileInput(options.retry, (error: unknown) => error instanceof ClusterUnavailable))
      )

    const attach: ClusterSessions.Service["attach"] = (session, maxActions, opts = {}) =>
      call(
        "attach",
        session.session_id,
        makeClient(session.session_id).Attach(
          { session, maxActions, agent: Option.fromNullable(opts.agent) },
          { discard: true }
        )
      ).pipe(Effect.withSpan("ClusterSessions.attach", { attributes: { sessionId: session.session_id } }))

    const start: ClusterSessions.Service["start"] = (request, opts = {}) =>
      Effect.gen(function*() {
        const session = yield* api.createSession(request, { agent: opts.agent })
        yield* call(
          "start",
          session.session_id,
          makeClient(session.session_id).Start(
            { session, maxActions: request.max_actions, agent: Option.fromNullable(opts.agent) },
            { discard: true }
          )
        )
        return session
      }).pipe(Effect.withSpan("ClusterSessions.start"))

    const events: ClusterSessions.Service["events"] = (sessionId, fromSeq = 1) =>
      Stream.suspend(() => {
        let next = Math.max(1, Math.floor(fromSeq))
        const attempt = Stream.suspend(() => makeClient(sessionId).Events({ fromSeq: next })).pipe(
          // A runner that died mid-stream, or an event at or before one already delivered
          // (never expected): resume from the next sequence number.
          Stream.filter((logged) => {
            if (logged.seq !== next) return false
            next = logged.seq + 1
            return true
          }),
          // Any end but the caller's own interruption (which is not caught here), including an
          // interruption sent by a runner that gave the session's shard away: resume.
          Stream.catchAllCause((cause) =>
            Stream.fail(new ClusterUnavailable({ operation: "events", sessionId, message: describe(cause) }))
          )
        )
        return Stream.retry(attempt, options.retry)
      })

    const respond: ClusterSessions.Service["respond"] = (sessionId, request, answer) =>
      call("respond", sessionId, makeClient(sessionId).Respond({ request, answer })).pipe(
        Effect.withSpan("ClusterSessions.respond", { attributes: { sessionId } })
      )

    const status: ClusterSessions.Service["status"] = (sessionId) =>
      call("status", sessionId, makeClient(sessionId).Status())

    const close: ClusterSessions.Service["close"] = (sessionId) => call("close", sessionId, makeClient(sessionId).Close())

    const outcome: ClusterSessions.Service["outcome"] = (sessionId) =>
      Effect.gen(function*() {
        const before = yield* status(sessionId)
        if (before.run === "running" || before.run === "unknown") {
          yield* Stream.runDrain(events(sessionId, before.lastSeq + 1))
        }
        const after = yield* status(sessionId)
        return yield* Option.match(after.outcome, {
          onSome: Effect.succeed,
          onNone: () => Effect.fail(new SessionEndedWithoutComplete({ sessionId, lastError: after.endReason }))
        })
      })

    return { start, attach, events, respond, status, outcome, close } satisfies ClusterSessions.Service
  })
