/**
 * The session entity's behaviour: one instance per session id on the runner that holds its shard.
 * Its knowledge of the session is the shared glue's `ClusterTally` (the core's fold, request key
 * and open requests), as the Effect 3 cluster edition's is.
 */
import * as Entity from "effect/cluster/Entity"
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Schedule from "effect/Schedule"
import * as Scope from "effect/Scope"
import * as Semaphore from "effect/Semaphore"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import { ClusterTally } from "effect-agent-session-shell"
import { AgentApi } from "../../../src/AgentApi.js"
import { AgentSessions, type RunningSession } from "../../../src/AgentSessions.js"
import { RequestNotPending } from "../../../src/Errors.js"
import * as SessionEvent from "../../../src/SessionEvent.js"
import { toAnswer } from "../../binding/internal/eventLogMemory.js"
import * as EventLog from "../EventLog.js"
import type * as SessionEntity from "../SessionEntity.js"

type Tally = ClusterTally.Tally<
  SessionEvent.SessionEvent,
  SessionEvent.ExternalResourceRequested,
  SessionEvent.Complete,
  EventLog.Answer
>

/** The page size of log reads, and how many events a subscriber's queue holds before it waits. */
const page = 500

/** How often a silent `Events` stream sends a keep-alive, and the element it sends (`seq` 0: never a logged event). */
const keepAliveEvery = "2 seconds"
const keepAlive: EventLog.LoggedEvent = { seq: 0, event: { _tag: "Heartbeat" } }

/** Appends and ends retried while the store fails: bounded, then the activation dies (the engine restarts it). */
const storeRetry = {
  schedule: Schedule.min([Schedule.exponential("50 millis", 2), Schedule.spaced("2 seconds")]),
  times: 30
} as const

/** A hand-over (the activation ends): how long the channel may take to drain, then the run to persist. */
const handOverDrain = "10 seconds"
const handOverPersist = "20 seconds"

/** How long asking the service whether a session completed may take. */
const retrieveTimeout = "15 seconds"

const describe = (cause: Cause.Cause<unknown>): string =>
  Option.match(Cause.findErrorOption(cause), {
    onNone: () => Cause.pretty(cause).split("\n")[0] ?? "defect",
    onSome: (error) =>
      typeof error === "object" && error !== null && "_tag" in error
        ? `${String(error._tag)}${"message" in error ? `: ${String(error.message)}` : ""}`
        : String(error)
  })

/** The payload of `Start` and `Attach`: the session to run. */
interface RunPayload {
  readonly session: EventLog.SessionRecord["info"]
  readonly maxActions: number
  readonly agent: Option.Option<string>
}

export const make = (options: SessionEntity.Options) =>
  Effect.gen(function*() {
    const address = yield* Entity.CurrentAddress
    const runner = yield* Entity.CurrentRunnerAddress
    const scope = yield* Scope.Scope
    const log = yield* EventLog.EventLog
    const sessions = yield* AgentSessions
    const api = yield* AgentApi
    const sessionId = address.entityId as string
    const runnerName = `${runner.host}:${runner.port}`

    const tally: Tally = ClusterTally.make()
    /** Woken at every append and at the end of the run: the live readers. */
    const readers = new ClusterTally.Wakers()
    let version = 0
    const bump = Effect.sync(() => {
      version += 1
      readers.wake()
    })
    let record: Option.Option<EventLog.SessionRecord> = Option.none()
    let running: RunningSession | undefined = undefined
    let run: { readonly done: Deferred.Deferred<void>; readonly fiber: Fiber.Fiber<void> } | undefined = undefined
    let handingOver = false
    /** Starting and closing one at a time, in the order the messages arrived. */
    const lifecycle = yield* Semaphore.make(1)
    const loading = yield* Semaphore.make(1)

    /** Folds what the log has that the tally has not seen (nothing while the session runs here). */
    const load: Effect.Effect<void, EventLog.EventLogError> = Effect.suspend(() => {
      if (run !== undefined) return Effect.void
      return Effect.gen(function*() {
        const fresh = yield* log.snapshot(sessionId, tally.lastSeq + 1, page)
        const events: Array<EventLog.LoggedEvent> = [...fresh.events]
        let batch = fresh.events
        while (batch.length === page) {
          batch = yield* log.read(sessionId, tally.lastSeq + 1 + events.length, page)
          events.push(...batch)
        }
        if (run !== undefined) return
        record = fresh.record
        for (const a of fresh.answers) tally.answered.set(ClusterTally.requestKey(a.request), a.answer)
        for (const logged of events) {
          ClusterTally.fold(tally, logged.event)
          tally.lastSeq = logged.seq
        }
      }).pipe(loading.withPermits(1))
    })

    const status: Effect.Effect<SessionEntity.Status, EventLog.EventLogError> = Effect.gen(function*() {
      yield* load
      const ended = Option.flatMap(record, (r) => r.ended)
      const connection = running === undefined ? Option.none() : Option.some((yield* SubscriptionRef.get(running.state))._tag)
      const maxActions = Option.match(record, { onNone: () => 0, onSome: (r) => r.maxActions })
      const completed = tally.session.completed
      return {
        sessionId,
        run: Option.isSome(ended) ? ended.value.status : Option.isSome(record) ? "running" : "unknown",
        connection,
        runner: run !== undefined ? Option.some(runnerName) : Option.none(),
        pending: ClusterTally.unanswered(tally),
        actions: tally.session.actions,
        maxActions,
        lastSeq: tally.lastSeq,
        outcome: completed === undefined ? Option.none() : Option.some({
          response: completed.complete.response,
          type: completed.complete.type,
          totalCost: Option.fromNullishOr(completed.cost),
          actions: tally.session.actions,
          maxActions
        }),
        endReason: Option.flatMap(ended, (e) => e.reason)
      } as const
    })

    const appendArray = (received: ReadonlyArray<SessionEvent.SessionEvent>) =>
      Effect.gen(function*() {
        const events = received.filter((e) => !ClusterTally.isChannelNotice(e))
        if (events.length === 0) return
        const logged = events.map((event, i) => ({ seq: tally.lastSeq + 1 + i, event }))
        // Persisted before anything else sees the events; a store that stays down ends the
        // activation with a defect (the engine restarts it and the log is read again).
        yield* log.append(sessionId, logged).pipe(Effect.retry(storeRetry), Effect.orDie)
        for (const l of logged) {
          ClusterTally.fold(tally, l.event)
          tally.lastSeq = l.seq
        }
        yield* bump
      })

    const endRun = (endStatus: EventLog.EndStatus, reason: Option.Option<string>) =>
      log.end(sessionId, endStatus, reason).pipe(
        Effect.retry(storeRetry),
        Effect.orDie,
        Effect.andThen(Effect.sync(() => {
          record = Option.map(record, (r) => ({ ...r, ended: Option.some({ status: endStatus, reason }) }))
        })),
        Effect.andThen(bump)
      )

    /**
     * Whether the service says the session is complete, where its dialect can say (`getSession`);
     * any failure counts as "not known to be complete".
     */
    const completeAtService = (r: EventLog.SessionRecord) =>
      api.canRetrieve
        ? api.getSession(r.sessionId, { agent: Option.getOrUndefined(r.agent) }).pipe(
          Effect.map((info) => Option.exists(info.status, (s) => s === "complete")),
          Effect.timeout(retrieveTimeout),
          Effect.orElseSucceed(() => false)
        )
        : Effect.succeed(false)

    const completedUnheld = Option.some(
      "the service reports the session complete; its complete event never reached the cluster (it completed while no runner held its channel)"
    )

    /** `attached`: completed once the channel is attached (or the run ended without one). */
    const runSession = (r: EventLog.SessionRecord, learn: boolean, attached: Deferred.Deferred<void>) =>
      Effect.scoped(Effect.gen(function*() {
        if (learn && (yield* completeAtService(r))) return yield* endRun("complete", completedUnheld)
        const requests = ClusterTally.open(tally)
        const session = yield* sessions.attach(r.info, r.maxActions, {
          ...options.connect,
          agent: Option.getOrUndefined(r.agent),
          keepEvents: false,
          pendingRequests: requests
        })
        running = session
        // Requests answered but not settled are answered again on this channel.
        for (const request of requests) {
          const answer = tally.answered.get(ClusterTally.requestKey(request))
          if (answer !== undefined) yield* Effect.ignore(session.respond(request, toAnswer(answer)))
        }
        if (tally.lastSeq > 0) {
          yield* Effect.logInfo(`Took session ${r.info.session_id} over at seq ${tally.lastSeq} (runner ${runnerName})`).pipe(
            Effect.annotateLogs("notice", "takeover")
          )
        }
        yield* Deferred.succeed(attached, undefined)
        const exit = yield* session.events.pipe(Stream.runForEachArray(appendArray), Effect.exit)
        running = undefined
        if (handingOver && tally.session.completed === undefined) return
        if (tally.session.completed !== undefined) return yield* endRun("complete", Option.none())
        if (yield* completeAtService(r)) return yield* endRun("complete", completedUnheld)
        yield* endRun("ended", Exit.isFailure(exit) ? Option.some(describe(exit.cause)) : Option.none())
      })).pipe(
        Effect.catch((error) => endRun("ended", Option.some(`${error._tag}: ${error.message}`))),
        Effect.annotateLogs({ sessionId })
      )

    /** Runs the session here unless it runs here already or its run has ended; whether it started. */
    const start = (payload: RunPayload | undefined, learn: boolean) =>
      Effect.gen(function*() {
        yield* load
        let r: EventLog.SessionRecord
        if (Option.isSome(record)) r = record.value
        else if (payload === undefined) return false
        else r = yield* log.register({ info: payload.session, maxActions: payload.maxActions, agent: payload.agent })
        record = Option.some(r)
        if (Option.isSome(r.ended)) return false
        const done = yield* Deferred.make<void>()
        const attached = yield* Deferred.make<void>()
        const fiber = yield* runSession(r, learn || tally.lastSeq > 0, attached).pipe(
          Effect.onExit(() =>
            Effect.sync(() => {
              run = undefined
              running = undefined
            }).pipe(
              Effect.andThen(Deferred.done(attached, Exit.void)),
              Effect.andThen(Deferred.done(done, Exit.void))
            )
          ),
          // Not in the activation's scope: when it closes, the channel is drained first (below).
          Effect.forkDetach
        )
        run = { done, fiber }
        yield* Deferred.await(attached)
        return true
      })

    const ensureRunning = (payload: RunPayload | undefined, learn: boolean) =>
      Effect.suspend(() => run !== undefined ? Effect.succeed(false) : start(payload, learn)).pipe(
        lifecycle.withPermits(1)
      )

    // When the activation ends (the shard moves, the runner stops): drain the channel (the
    // service's close answering ours comes after every event it sent), let the run persist those
    // events, then stop.
    yield* Scope.addFinalizer(
      scope,
      Effect.suspend(() => {
        const current = run
        if (current === undefined) return Effect.void
        handingOver = true
        const channel = running
        return Effect.andThen(
          channel === undefined
            ? Effect.void
            : channel.drain.pipe(Effect.timeout(handOverDrain), Effect.ignore, Effect.andThen(channel.close)),
          Deferred.await(current.done).pipe(
            Effect.timeout(handOverPersist),
            Effect.catch(() => Fiber.interrupt(current.fiber))
          )
        )
      })
    )

    const awaitRun = Effect.suspend(() => run === undefined ? Effect.void : Deferred.await(run.done))

    const startLike = (learn: boolean) =>
    (
      envelope: Entity.Request<typeof SessionEntity.Start> | Entity.Request<typeof SessionEntity.Attach>
    ) => ensureRunning(envelope.payload, learn).pipe(Effect.andThen(awaitRun), Effect.andThen(status))

    /**
     * `Resume`: runs the session again when its run has not ended and it does not run here; a
     * run it started is held to its end (as `Start` holds it), so that the entity stays active.
     */
    const resume = ensureRunning(undefined, true).pipe(
      Effect.flatMap((started) => started ? awaitRun : Effect.void),
      Effect.andThen(status)
    )

    const close = Effect.gen(function*() {
      yield* load
      const current = run
      if (current !== undefined) {
        yield* Fiber.interrupt(current.fiber)
        running = undefined
      }
      // A session the log does not know yet is recorded as closed: a `Start` that reaches it
      // afterwards does not run it.
      if (Option.isNone(record) || Option.isNone(record.value.ended)) {
        yield* endRun("closed", Option.some("closed by a caller"))
        record = yield* log.get(sessionId)
      }
      return yield* status
    }).pipe(lifecycle.withPermits(1))

    /** The log from `fromSeq`, then live (read from the log too): no gap, no duplicate. */
    const events = (fromSeq: number): Stream.Stream<EventLog.LoggedEvent, EventLog.EventLogError> =>
      Stream.callback<EventLog.LoggedEvent, EventLog.EventLogError>((queue) =>
        Effect.gen(function*() {
          yield* load
          // A subscriber reached the session's owner while its run has not ended and it does not
          // run here: this runner takes the session over now.
          if (run === undefined && !handingOver && Option.isSome(record) && Option.isNone(record.value.ended)) {
            yield* ensureRunning(undefined, true)
          }
          let next = fromSeq
          while (true) {
            const seen = version
            const wasEnded = Option.isSome(Option.flatMap(record, (r) => r.ended))
            yield* Effect.suspend(() => run !== undefined ? Effect.void : load)
            const batch = yield* log.read(sessionId, next, page)
            const last = batch[batch.length - 1]
            if (last !== undefined) {
              next = last.seq + 1
              yield* Queue.offerAll(queue, batch)
              continue
            }
            if (wasEnded) return yield* Queue.end(queue)
            if (version !== seen) continue
            const woken = yield* Effect.callback<boolean>((resume) => {
              const wake = () => resume(Effect.succeed(true))
              readers.add(wake)
              return Effect.sync(() => readers.delete(wake))
            }).pipe(Effect.timeoutOption(keepAliveEvery))
            if (Option.isNone(woken)) yield* Queue.offer(queue, keepAlive)
          }
        }), { bufferSize: page })

    const respond = (envelope: Entity.Request<typeof SessionEntity.Respond>) =>
      Effect.gen(function*() {
        const { answer, request } = envelope.payload
        yield* load
        const key = ClusterTally.requestKey(request)
        const refuse = (reason: "never-received" | "already-answered") =>
          new RequestNotPending({
            resourceType: SessionEvent.resourceTypeRaw(request.resource_type),
            actionSessionId: request.action_session_id,
            reason
          })
        // Looked up before the open requests: a caller retrying after losing the reply may arrive
        // after the grant settled the request. The same answer again: done already.
        const decision = ClusterTally.decideAnswer(tally, request, answer)
        if (decision === "known") return
        if (decision !== "record") return yield* refuse(decision)
        if (!(yield* log.saveAnswer(sessionId, request, answer))) {
          const stored = (yield* log.answers(sessionId)).find((a) => ClusterTally.requestKey(a.request) === key)
          if (stored === undefined || !ClusterTally.sameAnswer(stored.answer, answer)) return yield* refuse("already-answered")
        }
        if (tally.answered.has(key)) return
        tally.answered.set(key, answer)
        // Handed to the channel when this runner holds it; otherwise the runner that takes the
        // session over sends it (it is in the log).
        if (running !== undefined) yield* Effect.ignore(running.respond(request, toAnswer(answer)))
      })

    return {
      Start: startLike(false),
      Attach: startLike(true),
      Events: (envelope: Entity.Request<typeof SessionEntity.Events>) => events(envelope.payload.fromSeq),
      Respond: respond,
      Status: () => status,
      Close: () => close,
      Resume: () => resume
    }
  })
