/**
 * The session entity's behaviour: one instance per session id on the runner that holds its shard.
 */
import * as Entity from "@effect/cluster/Entity"
import * as Sharding from "@effect/cluster/Sharding"
import * as ShardingConfig from "@effect/cluster/ShardingConfig"
import * as ShardId from "@effect/cluster/ShardId"
import * as Cause from "effect/Cause"
import * as Chunk from "effect/Chunk"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import { AgentApi } from "../../AgentApi.js"
import { AgentSessions, type RunningSession } from "../../AgentSessions.js"
import { RequestNotPending } from "../../Errors.js"
import * as SessionEvent from "../../SessionEvent.js"
import * as EventLog from "../EventLog.js"
import type * as SessionEntity from "../SessionEntity.js"
import { type AnswerEncoded, requestKey, toAnswer } from "./eventLog.js"

/** Events that describe the channel, not the session: not logged. */
const isChannelNotice = (event: SessionEvent.SessionEvent): boolean =>
  event._tag === "Heartbeat" || event._tag === "Connected"

/** How often `Events` sends a keep-alive, and the element it sends (`seq` 0: never a logged event). */
export const keepAliveEvery = "1 second"
const keepAlive: EventLog.LoggedEvent = { seq: 0, event: { _tag: "Heartbeat" } }

/** Callbacks called once, at the next call of `wake` (and then forgotten). */
class Wakers {
  private waiting = new Set<() => void>()
  add(wake: () => void): void {
    this.waiting.add(wake)
  }
  delete(wake: () => void): void {
    this.waiting.delete(wake)
  }
  wake(): void {
    if (this.waiting.size === 0) return
    const woken = this.waiting
    this.waiting = new Set()
    for (const wake of woken) wake()
  }
}

/**
 * One clock for every `Events` stream of a runner: each second it wakes the streams waiting for
 * the next event, which then send a keep-alive (or, where the session does not run on this
 * runner, read the log). One timer for the runner, not one (or two) per stream.
 */
export interface Ticker {
  readonly wakers: Wakers
}

/** The runner's {@link Ticker}, ticking for as long as the scope lasts. */
export const makeTicker: Effect.Effect<Ticker, never, Scope.Scope> = Effect.gen(function*() {
  const wakers = new Wakers()
  yield* Effect.sync(() => wakers.wake()).pipe(
    Effect.repeat(Schedule.spaced(keepAliveEvery)),
    Effect.forkScoped
  )
  return { wakers }
})

/** The page size of log reads. */
const page = 500

/** What the log says about a session, folded event by event. */
interface Tally {
  lastSeq: number
  actions: number
  complete: Option.Option<SessionEvent.Complete>
  /** Requests in arrival order, not yet settled by an `external_resource_granted`. */
  readonly open: Array<SessionEvent.ExternalResourceRequested>
  /** Keys of requests with a recorded answer. */
  readonly answered: Map<string, AnswerEncoded>
}

const fold = (tally: Tally, event: SessionEvent.SessionEvent): void => {
  switch (event._tag) {
    case "ActionRun":
      tally.actions += 1
      break
    case "Complete":
      tally.complete = Option.some(event)
      break
    case "ExternalResourceRequested":
      if (!tally.open.some((r) => requestKey(r) === requestKey(event))) tally.open.push(event)
      break
    case "ExternalResourceGranted":
      // The grant names no request: it settles the oldest open one that was answered (or the oldest).
      {
        const index = tally.open.findIndex((r) => tally.answered.has(requestKey(r)))
        tally.open.splice(index < 0 ? 0 : index, 1)
      }
      break
  }
}

const sameAnswer = (a: AnswerEncoded, b: AnswerEncoded): boolean =>
  a._tag === b._tag && (a._tag === "Deny" || (b._tag === "Grant" && Option.getEquivalence((x: string, y: string) => x === y)(a.input, b.input)))

const appendSchedule = Schedule.exponential("50 millis", 2).pipe(
  Schedule.union(Schedule.spaced("2 seconds")),
  Schedule.intersect(Schedule.recurs(30))
)

export const make = (options: SessionEntity.Options, ticker: Ticker) =>
  Effect.gen(function*() {
    const address = yield* Entity.CurrentAddress
    const runner = yield* Entity.CurrentRunnerAddress
    const scope = yield* Scope.Scope
    const log = yield* EventLog.EventLog
    const sessions = yield* AgentSessions
    const api = yield* AgentApi
    const sessionId = address.entityId as string
    const runnerName = `${runner.host}:${runner.port}`

    const tally: Tally = { lastSeq: 0, actions: 0, complete: Option.none(), open: [], answered: new Map() }
    /** Bumped after every append and at the end of a run: what live readers wait on. */
    let version = 0
    const readers = new Wakers()
    const bump = Effect.sync(() => {
      version += 1
      readers.wake()
    })
    /** The most recent events, so live readers rarely go to the store. */
    const recent: Array<EventLog.LoggedEvent> = []
    const recentMax = 256

    /** Starting and closing one at a time, in the order the messages arrived. */
    const lifecycle = yield* Effect.makeSemaphore(1)
    let record: Option.Option<EventLog.SessionRecord> = Option.none()
    let running: RunningSession | undefined
    /** Set when this activation gives the session away (its shard moves, the runner stops). */
    let handingOver = false
    let run: { readonly done: Deferred.Deferred<void>; readonly fiber: Fiber.RuntimeFiber<void> } | undefined

    // What the log knows. While this activation runs the session it is the log's only writer
    // and its tally is current; otherwise (another runner may be writing, during a hand-over)
    // every reader reads the log afresh.
    const loading = yield* Effect.makeSemaphore(1)
    const load = Effect.suspend(() => {
      if (run !== undefined) return Effect.void
      return Effect.gen(function*() {
        const fresh = yield* log.get(sessionId)
        const answers = yield* log.answers(sessionId)
        const from = tally.lastSeq + 1
        const events: Array<EventLog.LoggedEvent> = []
        let next = from
        while (true) {
          const batch = yield* log.read(sessionId, next, page)
          events.push(...batch)
          if (batch.length < page) break
          next = batch[batch.length - 1]!.seq + 1
        }
        if (run !== undefined) return
        record = fresh
        for (const a of answers) tally.answered.set(requestKey(a.request), a.answer)
        for (const logged of events) {
          fold(tally, logged.event)
          tally.lastSeq = logged.seq
          recent.push(logged)
        }
        if (recent.length > recentMax) recent.splice(0, recent.length - recentMax)
      }).pipe(loading.withPermits(1))
    })

    const status: Effect.Effect<SessionEntity.Status, EventLog.EventLogError> = Effect.gen(function*() {
      yield* load
      const ended = Option.flatMap(record, (r) => r.ended)
      const connection = running === undefined
        ? Option.none()
        : Option.some((yield* SubscriptionRef.get(running.state))._tag)
      const maxActions = Option.match(record, { onNone: () => 0, onSome: (r) => r.maxActions })
      return {
        sessionId,
        // A session the log knows and whose run has not ended is running, here or (during a
        // hand-over, or before its next owner picked it up) elsewhere.
        run: Option.isSome(ended) ? ended.value.status : Option.isSome(record) ? "running" : "unknown",
        connection,
        runner: run !== undefined ? Option.some(runnerName) : Option.none(),
        pending: tally.open.filter((r) => !tally.answered.has(requestKey(r))),
        actions: tally.actions,
        maxActions,
        lastSeq: tally.lastSeq,
        outcome: Option.map(tally.complete, (complete) => ({
          response: complete.response,
          type: complete.type,
          totalCost: SessionEvent.totalCost(complete),
          actions: tally.actions,
          maxActions
        })),
        endReason: Option.flatMap(ended, (e) => e.reason)
      }
    })

    const appendChunk = (chunk: Chunk.Chunk<SessionEvent.SessionEvent>) =>
      Effect.gen(function*() {
        const events = Chunk.toReadonlyArray(chunk).filter((e) => !isChannelNotice(e))
        if (events.length === 0) return
        const logged = events.map((event, i) => ({ seq: tally.lastSeq + 1 + i, event }))
        // Persist before anything else sees the events; a store that stays down ends the
        // activation with a defect (the engine restarts it and the log is read again).
        yield* log.append(sessionId, logged).pipe(Effect.retry(appendSchedule), Effect.orDie)
        for (const l of logged) {
          fold(tally, l.event)
          tally.lastSeq = l.seq
          recent.push(l)
        }
        if (recent.length > recentMax) recent.splice(0, recent.length - recentMax)
        yield* bump
      })

    const endRun = (status: EventLog.EndStatus, reason: Option.Option<string>) =>
      log.end(sessionId, status, reason).pipe(
        Effect.retry(appendSchedule),
        Effect.orDie,
        Effect.zipRight(Effect.sync(() => {
          record = Option.map(record, (r) => ({ ...r, ended: Option.some({ status, reason }) }))
        })),
        Effect.zipRight(bump)
      )

    const describe = (cause: Cause.Cause<unknown>): string =>
      Option.match(Cause.failureOption(cause), {
        onNone: () => Cause.pretty(cause),
        onSome: (error) =>
          typeof error === "object" && error !== null && "_tag" in error
            ? `${String(error._tag)}${"message" in error ? `: ${String(error.message)}` : ""}`
            : String(error)
      })

    /**
     * Whether the service says the session is complete, where its dialect can say (`getSession`:
     * the observed dialect's retrieve; the documented one has none and answers `NotFound` without
     * sending anything). Any failure counts as "not known to be complete".
     */
    const completeAtService = (r: EventLog.SessionRecord) =>
      api.getSession(r.sessionId, { agent: Option.getOrUndefined(r.agent) }).pipe(
        Effect.map((info) => Option.exists(info.status, (s) => s === "complete")),
        Effect.timeout("15 seconds"),
        Effect.orElseSucceed(() => false)
      )

    const completedUnheld = Option.some(
      "the service reports the session complete; its complete event never reached the cluster (it completed while no runner held its channel)"
    )

    const runSession = (r: EventLog.SessionRecord, learn: boolean) =>
      Effect.scoped(Effect.gen(function*() {
        // Taking a session over (or attaching one created elsewhere): it may have completed
        // while no runner held it; then there is nothing to attach to.
        if (learn && (yield* completeAtService(r))) return yield* endRun("complete", completedUnheld)
        // Requests answered in the log but not yet settled are answered again on this channel.
        const resend = tally.open.filter((request) => tally.answered.has(requestKey(request)))
        const session = yield* sessions.attach(r.info, r.maxActions, {
          ...options.connect,
          agent: Option.getOrUndefined(r.agent),
          keepEvents: false,
          pendingRequests: tally.open
        })
        running = session
        for (const request of resend) {
          const answer = tally.answered.get(requestKey(request))
          if (answer !== undefined) yield* Effect.ignore(session.respond(request, toAnswer(answer)))
        }
        if (tally.lastSeq > 0) {
          yield* Effect.logInfo(`Session resumed at seq ${tally.lastSeq} on ${runnerName}`)
        }
        const exit = yield* session.events.pipe(Stream.runForEachChunk(appendChunk), Effect.exit)
        running = undefined
        // Handed over: the channel was closed to drain it (every event it had received is
        // persisted above); the run goes on elsewhere.
        if (handingOver && Option.isNone(tally.complete)) return
        if (Option.isSome(tally.complete)) return yield* endRun("complete", Option.none())
        if (yield* completeAtService(r)) return yield* endRun("complete", completedUnheld)
        yield* endRun("ended", Exit.isFailure(exit) ? Option.some(describe(exit.cause)) : Option.none())
      })).pipe(
        Effect.catchAll((error) => endRun("ended", Option.some(`${error._tag}: ${error.message}`))),
        Effect.annotateLogs({ sessionId })
      )

    const ensureRunning = (payload: {
      readonly session: EventLog.SessionRecord["info"]
      readonly maxActions: number
      readonly agent: Option.Option<string>
    }, learn: boolean) =>
      Effect.gen(function*() {
        yield* load
        const r = yield* log.register({
          info: payload.session,
          maxActions: payload.maxActions,
          agent: payload.agent,
          shard: address.shardId.id
        })
        record = Option.some(r)
        if (Option.isSome(r.ended) || run !== undefined) return
        const done = yield* Deferred.make<void>()
        const fiber = yield* runSession(r, learn || tally.lastSeq > 0).pipe(
          Effect.onExit(() =>
            Effect.zipRight(
              Effect.sync(() => {
                run = undefined
                running = undefined
              }),
              Deferred.done(done, Exit.void)
            )
          ),
          // Not in the activation's scope: when it closes, the channel is drained first (below).
          Effect.forkDaemon
        )
        run = { done, fiber }
      }).pipe(lifecycle.withPermits(1))

    // When the activation ends (the shard moves to another runner, the runner stops): close the
    // channel, let the run persist the events the channel had already received, then stop.
    yield* Scope.addFinalizer(
      scope,
      Effect.suspend(() => {
        const current = run
        if (current === undefined) return Effect.void
        handingOver = true
        return Effect.zipRight(
          running === undefined ? Effect.void : running.close,
          Deferred.await(current.done).pipe(
            Effect.timeout("5 seconds"),
            Effect.catchAll(() => Fiber.interrupt(current.fiber))
          )
        )
      })
    )

    const awaitRun = Effect.suspend(() => run === undefined ? Effect.void : Deferred.await(run.done))

    /** Runs the session again when its run has not ended and it does not run here. */
    const resume = Effect.gen(function*() {
      yield* load
      const r = record
      if (Option.isNone(r) || Option.isSome(r.value.ended)) return yield* status
      if (run !== undefined) return yield* status
      yield* ensureRunning({ session: r.value.info, maxActions: r.value.maxActions, agent: r.value.agent }, true)
      yield* awaitRun
      return yield* status
    })

    /** `Start` (a session just created: nothing to learn unless the log shows it ran) or `Attach`. */
    const startLike = (learn: boolean) =>
    (
      envelope: Entity.Request<typeof SessionEntity.Start> | Entity.Request<typeof SessionEntity.Attach>
    ) => Effect.zipRight(Effect.zipRight(ensureRunning(envelope.payload, learn), awaitRun), status)

    /**
     * The log from `fromSeq`, then live (read from the log too): no gap, no duplicate. One pull at
     * a time, no fiber of its own: each pull returns what the log has after the last event
     * delivered, else waits for the next append (or the end of the run) or the runner's next
     * tick, whichever comes first; a tick with nothing new sends a keep-alive, so that a
     * subscriber whose runner died notices the silence within seconds and resumes on the next
     * owner. Where the session does not run on this runner, the log is written elsewhere (or not
     * yet): each tick reads it afresh.
     */
    const events = (fromSeq: number): Stream.Stream<EventLog.LoggedEvent, EventLog.EventLogError> => {
      let next = fromSeq
      let finished = false
      /** From what this activation appended or loaded (the log's events, contiguous), else from the log. */
      const fromTally = (): Effect.Effect<ReadonlyArray<EventLog.LoggedEvent>, EventLog.EventLogError> => {
        if (next > tally.lastSeq) return Effect.succeed([])
        const first = recent[0]
        const last = recent[recent.length - 1]
        if (first !== undefined && last !== undefined && first.seq <= next && next <= last.seq) {
          return Effect.succeed(recent.slice(next - first.seq, next - first.seq + page))
        }
        return log.read(sessionId, next, page)
      }
      // Running here: this activation is the log's writer, its tally is current. Otherwise the
      // log is read afresh first (`load` folds what is new into the tally and `recent`).
      const readFrom = Effect.suspend(() => run !== undefined ? fromTally() : Effect.zipRight(load, Effect.suspend(fromTally)))
      /**
       * A subscriber reached this activation and the session's run has not ended but does not run
       * here: this runner owns the session's shard (an activation exists only where the shard is
       * held), so it takes the session over now, as the resumer would at its next look.
       */
      const takeOver = Effect.suspend(() => {
        if (run !== undefined || handingOver) return Effect.void
        return Option.match(record, {
          onNone: () => Effect.void,
          onSome: (r) =>
            Option.isSome(r.ended)
              ? Effect.void
              : ensureRunning({ session: r.info, maxActions: r.maxActions, agent: r.agent }, true)
        })
      })
      /** Resumes at the next append or end (when `version` is still `seen`), or at the next tick. */
      const wait = (seen: number) =>
        Effect.async<"append" | "tick">((resume) => {
          if (version !== seen) return resume(Effect.succeed("append"))
          const onAppend = () => {
            ticker.wakers.delete(onTick)
            resume(Effect.succeed("append"))
          }
          const onTick = () => {
            readers.delete(onAppend)
            resume(Effect.succeed("tick"))
          }
          readers.add(onAppend)
          ticker.wakers.add(onTick)
          return Effect.sync(() => {
            readers.delete(onAppend)
            ticker.wakers.delete(onTick)
          })
        })
      const ended = () => Option.isSome(Option.flatMap(record, (r) => r.ended))
      const pull: Effect.Effect<Chunk.Chunk<EventLog.LoggedEvent>, Option.Option<EventLog.EventLogError>> = Effect.gen(
        function*() {
          if (finished) return yield* Effect.fail(Option.none())
          let woke: "first" | "append" | "tick" = "first"
          while (true) {
            // `ended` before the read: a run seen ended has appended everything, so an empty
            // read after that is the end.
            const seen = version
            const wasEnded = ended()
            const events = yield* Effect.mapError(readFrom, Option.some)
            const last = events[events.length - 1]
            if (last !== undefined) {
              next = last.seq + 1
              return Chunk.unsafeFromArray(events)
            }
            if (wasEnded) {
              finished = true
              return yield* Effect.fail(Option.none())
            }
            if (woke === "tick") return Chunk.of(keepAlive)
            woke = yield* wait(seen)
          }
        }
      )
      return Stream.unwrap(Effect.as(Effect.zipRight(load, takeOver), Stream.repeatEffectChunkOption(pull)))
    }

    const respond = (envelope: Entity.Request<typeof SessionEntity.Respond>) =>
      Effect.gen(function*() {
        yield* load
        const { answer, request } = envelope.payload
        const key = requestKey(request)
        const refuse = (reason: "never-received" | "already-answered") =>
          new RequestNotPending({
            resourceType: SessionEvent.resourceTypeRaw(request.resource_type),
            actionSessionId: request.action_session_id,
            reason
          })
        // Looked up before the open requests: a caller retrying after losing the reply (or the
        // cluster delivering the message again) may arrive after the grant settled the request.
        const previous = tally.answered.get(key)
        if (previous !== undefined) {
          // The same answer again: done already; a different one: the first answer stands.
          if (sameAnswer(previous, answer)) return
          return yield* refuse("already-answered")
        }
        if (!tally.open.some((r) => requestKey(r) === key)) return yield* refuse("never-received")
        const recorded = yield* log.saveAnswer(sessionId, request, answer)
        if (!recorded) {
          // Another activation recorded an answer first (a hand-over): the same one is done already.
          const stored = (yield* log.answers(sessionId)).find((a) => requestKey(a.request) === key)
          if (stored !== undefined && sameAnswer(stored.answer, answer)) return
          return yield* refuse("already-answered")
        }
        tally.answered.set(key, answer)
        // Handed to the channel when this runner holds it; otherwise the runner that takes the
        // session sends it (it is in the log).
        if (running !== undefined) yield* Effect.ignore(running.respond(request, toAnswer(answer)))
      })

    const close = Effect.gen(function*() {
      yield* load
      if (run !== undefined) {
        yield* Fiber.interrupt(run.fiber)
        running = undefined
      }
      // A session the log does not know yet is recorded as closed: the `Start` that may follow
      // (it was sent before this `Close` but reached the entity after it) does not run it.
      if (Option.isNone(record) || Option.isNone(record.value.ended)) {
        yield* endRun("closed", Option.some("closed by a caller"))
        record = yield* log.get(sessionId)
      }
      return yield* status
    }).pipe(lifecycle.withPermits(1))

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

/** How many sessions one query of the resumer reads. */
const resumePage = 1_000

/**
 * The resumer, on every runner: every interval it looks at which shards this runner owns; for
 * the shards it gained since the last look (all of them at the first look), it sends `Resume` to
 * their sessions whose run has not ended, so that a session whose shard moved between live
 * runners (the engine then records its interrupted `Start` as done) runs again here. Its work
 * grows with the shards taken over and their sessions, not with the sessions of the cluster; a
 * session that ended costs nothing. A look that fails is tried again at the next one.
 */
export const resumer = (
  entity: typeof SessionEntity.SessionEntity,
  options: SessionEntity.Options
) =>
  Effect.gen(function*() {
    const sharding = yield* Sharding.Sharding
    const config = yield* ShardingConfig.ShardingConfig
    const log = yield* EventLog.EventLog
    const makeClient = yield* entity.client
    const every = options.resumeInterval ?? "250 millis"
    const group = "default"
    let owned = new Set<number>()
    let first = true

    const resumeAll = (shards: ReadonlyArray<number>, unsharded: boolean) =>
      Effect.gen(function*() {
        let after = ""
        while (true) {
          const ids = yield* log.unendedIn(shards, { unsharded, after, limit: resumePage })
          yield* Effect.forEach(
            ids,
            (id) => Effect.ignore(makeClient(id).Resume(undefined, { discard: true })),
            { concurrency: 50, discard: true }
          )
          if (ids.length < resumePage) return
          after = ids[ids.length - 1]!
        }
      })

    const look = Effect.gen(function*() {
      const now = new Set<number>()
      for (let id = 1; id <= config.shardsPerGroup; id++) {
        if (sharding.hasShardId(ShardId.make(group, id))) now.add(id)
      }
      const gained = [...now].filter((id) => !owned.has(id))
      if (gained.length > 0 || first) yield* resumeAll(gained, first)
      owned = now
      first = false
    })

    yield* look.pipe(
      Effect.catchAll((error) => Effect.logWarning(`Resumer: ${error.message}`)),
      Effect.delay(every),
      Effect.forever
    )
  })
