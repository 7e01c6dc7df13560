/**
 * The cluster façade: entity clients with retries, and the resuming event stream.
 */
import * as Cause from "effect/Cause"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import type * as EventLog from "../../src/EventLog.js"
import {
  AgentApi,
  catchAllCause,
  type DurationInput,
  durationOf,
  Errors,
  failureOption,
  optionFromNullish,
  retryWhile,
  type SessionEvent,
  streamCatchAllCause,
  streamTimeoutFail,
  timeoutFail,
  upTo
} from "../../src/internal/line.js"
import type * as ClusterSessions from "../ClusterSessions.js"
import { ClusterUnavailable, SessionNotFound } from "../ClusterErrors.js"
import { SessionEntity } from "../SessionEntity.js"

export const outcomeOf = (events: ReadonlyArray<EventLog.LoggedEvent>): Option.Option<SessionEvent.Complete> => {
  for (let i = events.length - 1; i >= 0; i--) {
    const event = events[i]!.event
    if (event._tag === "Complete") return Option.some(event)
  }
  return Option.none()
}

const describe = (cause: Cause.Cause<unknown>): string =>
  Option.match(failureOption(cause), {
    onNone: () => Cause.pretty(cause).split("\n")[0] ?? "defect",
    onSome: (error) =>
      typeof error === "object" && error !== null && "_tag" in error
        ? `${String(error._tag)}${"message" in error && error.message !== "" ? `: ${String(error.message)}` : ""}`
        : String(error)
  })

/** An id a session can have in the cluster: not empty, no surrounding spaces. */
const isUsableId = (id: string): boolean => id.length > 0 && id.trim() === id

/**
 * How long a subscriber waits for an event or a keep-alive (one every 2 s) before it resumes
 * elsewhere. Longer than the detection takes to declare a silent runner dead (about 3.9 s,
 * `NodeClusterSessions.defaultDetection`): resuming earlier reaches the same runner again, since
 * its shards have not moved yet. And a runner taking thousands of sessions over may answer a new
 * subscriber only after seconds: a shorter bound has subscribers give up and subscribe again,
 * each time one more request and read of the log for the busy runner.
 */
const silence = Duration.seconds(6)

const unusable = (sessionId: string) =>
  new SessionNotFound({
    sessionId,
    message: `no session can have the id ${JSON.stringify(sessionId.slice(0, 64))} (empty, or with surrounding spaces)`
  })

export const make = (options: {
  readonly retry: Schedule.Schedule<unknown, unknown>
  readonly notFoundAfter: DurationInput
  readonly attemptTimeout: DurationInput
}) =>
  Effect.gen(function*() {
    const makeClient = yield* SessionEntity.client
    const api = yield* AgentApi.AgentApi

    /**
     * A call to the cluster: failures that are not the caller's (no runner yet, mailbox full,
     * storage, a runner gone mid-call) are retried on the schedule, then `ClusterUnavailable`.
     */
    const send = <A, E>(
      operation: string,
      sessionId: string,
      effect: Effect.Effect<A, E>
    ): Effect.Effect<A, Extract<E, Errors.RequestNotPending> | ClusterUnavailable> =>
      effect.pipe(
        // An attempt can wait inside the engine (no runner owns the shard yet): bounded here,
        // then retried on the schedule like any other failure of the cluster.
        timeoutFail(options.attemptTimeout, () =>
          new ClusterUnavailable({
            operation,
            sessionId,
            message: `no runner took the call within ${Duration.format(durationOf(options.attemptTimeout))}`
          })),
        catchAllCause((cause): Effect.Effect<never, Extract<E, Errors.RequestNotPending> | ClusterUnavailable> => {
          // An interruption caught here came from the runner (the caller's own is not caught).
          // The caller's own failure (only `Respond` has one, `RequestNotPending`) is passed on.
          const failure = failureOption(cause)
          if (Option.isSome(failure) && failure.value instanceof ClusterUnavailable) return Effect.fail(failure.value)
          if (Option.isSome(failure) && Predicate.isTagged(failure.value, "RequestNotPending")) {
            return Effect.fail(failure.value as Extract<E, Errors.RequestNotPending>)
          }
          return Effect.fail(new ClusterUnavailable({ operation, sessionId, message: describe(cause) }))
        }),
        retryWhile(options.retry, (error: Extract<E, Errors.RequestNotPending> | ClusterUnavailable) => error instanceof ClusterUnavailable)
      )

    /** {@link send}, for an id the caller gave: one no session can have is `SessionNotFound` at once. */
    const call = <A, E>(
      operation: string,
      sessionId: string,
      effect: Effect.Effect<A, E>
    ): Effect.Effect<A, Extract<E, Errors.RequestNotPending> | SessionNotFound | ClusterUnavailable> =>
      isUsableId(sessionId) ? send(operation, sessionId, effect) : Effect.fail(unusable(sessionId))

    const attach: ClusterSessions.Service["attach"] = (session, maxActions, opts = {}) =>
      call(
        "attach",
        session.session_id,
        makeClient(session.session_id).Attach(
          { session, maxActions, agent: optionFromNullish(opts.agent) },
          { discard: true }
        )
      ).pipe(Effect.withSpan("ClusterSessions.attach", { attributes: { sessionId: session.session_id } }))

    const start: ClusterSessions.Service["start"] = (request, opts = {}) =>
      Effect.gen(function*() {
        const session = yield* api.createSession(request, { agent: opts.agent })
        // The cluster refuses such an id on every attempt: say so now rather than retry for minutes.
        if (!isUsableId(session.session_id)) {
          return yield* new Errors.ResponseDecodeError({
            operation: "ClusterSessions.start",
            status: 200,
            message: `the service created a session with an unusable session_id (${
              JSON.stringify(session.session_id.slice(0, 64))
            }: empty or with surrounding spaces); the cluster cannot run it, and the session may exist at the service`,
            body: ""
          })
        }
        yield* send(
          "start",
          session.session_id,
          makeClient(session.session_id).Start(
            { session, maxActions: request.max_actions, agent: optionFromNullish(opts.agent) },
            { discard: true }
          )
        )
        return session
      }).pipe(Effect.withSpan("ClusterSessions.start"))

    const status: ClusterSessions.Service["status"] = (sessionId) =>
      call("status", sessionId, makeClient(sessionId).Status())

    /** The status once the cluster knows the session, or `SessionNotFound` after `notFoundAfter`. */
    const known = (sessionId: string) =>
      status(sessionId).pipe(
        Effect.filterOrFail(
          (s) => s.run !== "unknown",
          () =>
            new SessionNotFound({
              sessionId,
              message: `no session ${JSON.stringify(sessionId.slice(0, 64))} in the cluster (no record of it after ${
                Duration.format(durationOf(options.notFoundAfter))
              })`
            })
        ),
        Effect.retry({
          schedule: Schedule.spaced("250 millis").pipe(upTo(options.notFoundAfter)),
          while: (error) => error._tag === "SessionNotFound" && isUsableId(sessionId)
        })
      )

    const events: ClusterSessions.Service["events"] = (sessionId, fromSeq = 1) =>
      Stream.unwrap(Effect.as(known(sessionId), followLog(sessionId, fromSeq)))

    const followLog = (sessionId: string, fromSeq: number) =>
      Stream.suspend(() => {
        let next = Math.max(1, Math.floor(fromSeq))
        const attempt = Stream.suspend(() => makeClient(sessionId).Events({ fromSeq: next })).pipe(
          // The runner sends a keep-alive (seq 0) every 2 seconds: silence means it is gone (killed,
          // frozen, its machine lost): resume on the next owner.
          streamTimeoutFail(silence, () =>
            new ClusterUnavailable({ operation: "events", sessionId, message: "the runner went silent" })),
          // A keep-alive, or an event at or before one already delivered (never expected): dropped.
          Stream.filter((logged) => {
            if (logged.seq !== next) return false
            next = logged.seq + 1
            return true
          }),
          // Any end but the caller's own interruption (which is not caught here), including an
          // interruption sent by a runner that gave the session's shard away: resume.
          streamCatchAllCause((cause) =>
            Stream.fail(new ClusterUnavailable({ operation: "events", sessionId, message: describe(cause) }))
          )
        )
        return Stream.retry(attempt, options.retry)
      })

    const respond: ClusterSessions.Service["respond"] = (sessionId, request, answer) =>
      call("respond", sessionId, makeClient(sessionId).Respond({ request, answer })).pipe(
        Effect.withSpan("ClusterSessions.respond", { attributes: { sessionId } })
      )

    const close: ClusterSessions.Service["close"] = (sessionId) => call("close", sessionId, makeClient(sessionId).Close())

    const outcome: ClusterSessions.Service["outcome"] = (sessionId) =>
      Effect.gen(function*() {
        const before = yield* known(sessionId)
        if (before.run === "running") yield* Stream.runDrain(followLog(sessionId, before.lastSeq + 1))
        const after = yield* status(sessionId)
        return yield* Option.match(after.outcome, {
          onSome: Effect.succeed,
          onNone: () => Effect.fail(new Errors.SessionEndedWithoutComplete({ sessionId, lastError: after.endReason }))
        })
      })

    return { start, attach, events, respond, status, outcome, close } satisfies ClusterSessions.Service
  })
