/**
 * The cluster façade: entity clients with bounded retries, and the resuming event stream.
 */
import * as Cause from "effect/Cause"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import { AgentApi } from "../../AgentApi.js"
import { type RequestNotPending, ResponseDecodeError, SessionEndedWithoutComplete } from "../../Errors.js"
import { ClusterUnavailable, SessionNotFound } from "../ClusterErrors.js"
import type * as ClusterSessions from "../ClusterSessions.js"
import { SessionEntity } from "../SessionEntity.js"

const describe = (cause: Cause.Cause<unknown>): string =>
  Option.match(Cause.findErrorOption(cause), {
    onNone: () => Cause.pretty(cause).split("\n")[0] ?? "defect",
    onSome: (error) =>
      typeof error === "object" && error !== null && "_tag" in error
        ? `${String(error._tag)}${"message" in error && error.message !== "" ? `: ${String(error.message)}` : ""}`
        : String(error)
  })

/** An id a session can have in the cluster: not empty, no surrounding spaces. */
const isUsableId = (id: string): boolean => id.length > 0 && id.trim() === id

/**
 * How long a subscriber waits for an event or a keep-alive (one every 2 s) before it resumes:
 * the runner holding the session is gone or its shard moved.
 */
const silence = Duration.seconds(6)

const unusable = (sessionId: string) =>
  new SessionNotFound({
    sessionId,
    message: `no session can have the id ${JSON.stringify(sessionId.slice(0, 64))} (empty, or with surrounding spaces)`
  })

export const make = (options: {
  readonly retry: Schedule.Schedule<unknown, unknown>
  readonly notFoundAfter: Duration.Input
  readonly attemptTimeout: Duration.Input
}) =>
  Effect.gen(function*() {
    const makeClient = yield* SessionEntity.client
    const api = yield* AgentApi

    /**
     * A call to the cluster: failures that are not the caller's (no runner yet, mailbox full,
     * storage, a runner gone mid-call) are retried on the schedule, then `ClusterUnavailable`.
     */
    const send = <A, E>(
      operation: string,
      sessionId: string,
      effect: Effect.Effect<A, E>
    ): Effect.Effect<A, Extract<E, RequestNotPending> | ClusterUnavailable> =>
      effect.pipe(
        Effect.timeoutOrElse({
          duration: options.attemptTimeout,
          orElse: () =>
            Effect.fail(
              new ClusterUnavailable({
                operation,
                sessionId,
                message: `no runner took the call within ${Duration.format(Duration.fromInputUnsafe(options.attemptTimeout))}`
              })
            )
        }),
        Effect.catchCause((cause): Effect.Effect<never, Extract<E, RequestNotPending> | ClusterUnavailable> => {
          const failure = Cause.findErrorOption(cause)
          if (Option.isSome(failure) && failure.value instanceof ClusterUnavailable) return Effect.fail(failure.value)
          if (Option.isSome(failure) && Predicate.isTagged(failure.value, "RequestNotPending")) {
            return Effect.fail(failure.value as Extract<E, RequestNotPending>)
          }
          return Effect.fail(new ClusterUnavailable({ operation, sessionId, message: describe(cause) }))
        }),
        Effect.retry({ schedule: options.retry, while: (error) => error instanceof ClusterUnavailable })
      )

    /** {@link send}, for an id the caller gave: one no session can have is `SessionNotFound` at once. */
    const call = <A, E>(
      operation: string,
      sessionId: string,
      effect: Effect.Effect<A, E>
    ): Effect.Effect<A, Extract<E, RequestNotPending> | SessionNotFound | ClusterUnavailable> =>
      isUsableId(sessionId) ? send(operation, sessionId, effect) : Effect.fail(unusable(sessionId))

    const attach: ClusterSessions.Service["attach"] = (session, maxActions, opts = {}) =>
      call(
        "attach",
        session.session_id,
        makeClient(session.session_id).Attach(
          { session, maxActions, agent: Option.fromNullishOr(opts.agent) },
          { discard: true }
        )
      ).pipe(Effect.withSpan("ClusterSessions.attach", { attributes: { sessionId: session.session_id } }))

    const start: ClusterSessions.Service["start"] = (request, opts = {}) =>
      Effect.gen(function*() {
        const session = yield* api.createSession(request, { agent: opts.agent })
        // The cluster would refuse such an id on every attempt: say so now rather than retry for minutes.
        if (!isUsableId(session.session_id)) {
          return yield* new ResponseDecodeError({
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
            { session, maxActions: request.max_actions, agent: Option.fromNullishOr(opts.agent) },
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
                Duration.format(Duration.fromInputUnsafe(options.notFoundAfter))
              })`
            })
        ),
        Effect.retry({
          schedule: Schedule.spaced(Duration.millis(250)).pipe(Schedule.upTo({ duration: options.notFoundAfter })),
          while: (error) => error._tag === "SessionNotFound" && isUsableId(sessionId)
        })
      )

    const followLog = (sessionId: string, fromSeq: number) =>
      Stream.suspend(() => {
        let next = Math.max(1, Math.floor(fromSeq))
        const attempt = Stream.suspend(() => makeClient(sessionId).Events({ fromSeq: next })).pipe(
          // The runner sends a keep-alive (seq 0) every 2 seconds: silence means it is gone.
          Stream.timeoutOrElse({
            duration: silence,
            orElse: () => Stream.fail(new ClusterUnavailable({ operation: "events", sessionId, message: "the runner went silent" }))
          }),
          // A keep-alive, or an event at or before one already delivered: dropped.
          Stream.filter((logged) => {
            if (logged.seq !== next) return false
            next = logged.seq + 1
            return true
          }),
          Stream.catchCause((cause) =>
            Stream.fail(new ClusterUnavailable({ operation: "events", sessionId, message: describe(cause) }))
          )
        )
        return Stream.retry(attempt, options.retry)
      })

    const events: ClusterSessions.Service["events"] = (sessionId, fromSeq = 1) =>
      Stream.unwrap(Effect.as(known(sessionId), followLog(sessionId, fromSeq)))

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
          onNone: () => Effect.fail(new SessionEndedWithoutComplete({ sessionId, lastError: after.endReason }))
        })
      })

    return { start, attach, events, respond, status, outcome, close } satisfies ClusterSessions.Service
  })
