/**
 * The session entity's behaviour: one instance per session id on the runner that holds its shard.
 * Here: the run (starting, resuming, closing, handing over); the activation's state, the `Events`
 * stream, `Respond`, the ticker, the answer watch and the resumer are in their own files.
 */
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import * as SubscriptionRef from "effect/SubscriptionRef"
import {
  AgentApi,
  AgentSessions,
  cappedExponential,
  catchAll,
  Entity,
  failureOption,
  forkDaemon,
  optionFromNullish,
  type SessionEvent
} from "../../src/internal/line.js"
import { ClusterTally } from "effect-agent-session-shell"
import * as EventLog from "../EventLog.js"
import type * as SessionEntity from "../SessionEntity.js"
import { fold, makeActivation, open, recentMax, type RunPayload } from "./activation.js"
import { type AnswerWatch, waiterOf } from "./answerWatch.js"
import { isClaimLost, requestKey, toAnswer } from "./eventLogMemory.js"
import { events } from "./eventsStream.js"
import { type Gate, makeGate } from "./gate.js"
import type { Registry } from "./resumer.js"
import { respond } from "./respond.js"
import type { Ticker } from "./ticker.js"
import { activationWriter, claimLog, type Unreleased } from "./writer.js"

/** Events that describe the channel, not the session: not logged. */
const { isChannelNotice } = ClusterTally

/** Appends, ends and releases retried while the store fails: from 50 ms, at most 2 s apart, 30 times. */
const appendSchedule = cappedExponential("50 millis", "2 seconds", 30)

/**
 * How many sessions a runner starts at once (from the log's read to the channel attached), in the
 * order their messages came: a runner taking thousands of sessions over opens a bounded number of
 * channels and calls to the service at a time, and the first sessions in line run again first.
 * Measured (bench/RESULTS.md, "Starts in order"): at 10,000 sessions, 32 and 256 at a time gave
 * the same median take-over, so the bound does not limit the rate there.
 */
export const startsAtOnce = 256

/**
 * A hand-over (the activation ends: its shard moves, its runner stops): how long the channel may
 * take to drain (the service's close to come back, every event before it read), then how long
 * the run may take to persist them. Past the first the channel is closed; past the second the
 * run is stopped, and what it had not persisted is lost (docs/scale-out.md). Generous: a runner
 * gives all the sessions of its moving shards away at once, and their appends share its writers
 * (`EventLog.layerSql`); on a loaded machine 5 s each was seen to run out. The next owner waits
 * meanwhile (the log's claim), and the service holds what it has not sent.
 */
const handOverDrain = "10 seconds"
const handOverPersist = "20 seconds"

/** The end reason of a run the service reports complete while no runner held its channel. */
const completedUnheld = Option.some(
  "the service reports the session complete; its complete event never reached the cluster (it completed while no runner held its channel)"
)

export const make = (
  options: SessionEntity.Options,
  ticker: Ticker,
  starting: Gate,
  answers: AnswerWatch,
  registry: Registry,
  /** This runner's name as the writer of a log (`writer.ts`). */
  runnerWriter: string,
  unreleased: Unreleased
) =>
  Effect.gen(function*() {
    const address = yield* Entity.CurrentAddress
    const runner = yield* Entity.CurrentRunnerAddress
    const scope = yield* Scope.Scope
    const log = yield* EventLog.EventLog
    const sessions = yield* AgentSessions.AgentSessions
    const api = yield* AgentApi.AgentApi
    const sessionId = address.entityId as string
    const runnerName = `${runner.host}:${runner.port}`
    /** This activation's name as the writer of the session's log (its own: `writer.ts`). */
    const writer = activationWriter(runnerWriter)

    /** Starting and closing one at a time, in the order the messages arrived. */
    const lifecycle = yield* makeGate(1)
    const activation = yield* makeActivation(sessionId, log)
    const { bump, load, recent, tally } = activation
    const waiter = waiterOf(activation)

    /**
     * Starts asked for and not ended (waiting for the lifecycle lock or a start place, or
     * starting): the resumer sends no `Resume` to a session that runs or starts here.
     */
    let startsUnderWay = 0
    const localState = (): "running" | "starting" | undefined =>
      activation.run !== undefined ? "running" : startsUnderWay > 0 ? "starting" : undefined
    registry.set(sessionId, localState)
    yield* Scope.addFinalizer(scope, Effect.sync(() => registry.remove(sessionId, localState)))

    const status = (): Effect.Effect<SessionEntity.Status, EventLog.EventLogError> => Effect.gen(function*() {
      yield* load
      const ended = Option.flatMap(activation.record, (r) => r.ended)
      const connection = activation.running === undefined
        ? Option.none()
        : Option.some((yield* SubscriptionRef.get(activation.running.state))._tag)
      const maxActions = Option.match(activation.record, { onNone: () => 0, onSome: (r) => r.maxActions })
      return {
        sessionId,
        // A session the log knows and whose run has not ended is running, here or (during a
        // hand-over, or before its next owner picked it up) elsewhere.
        run: Option.isSome(ended) ? ended.value.status : Option.isSome(activation.record) ? "running" : "unknown",
        connection,
        runner: activation.run !== undefined ? Option.some(runnerName) : Option.none(),
        pending: open(tally).filter((r) => !tally.answered.has(requestKey(r))),
        actions: tally.session.actions,
        maxActions,
        lastSeq: tally.lastSeq,
        outcome: Option.map(optionFromNullish(tally.session.completed), ({ complete, cost }) => ({
          response: complete.response,
          type: complete.type,
          totalCost: optionFromNullish(cost),
          actions: tally.session.actions,
          maxActions
        })),
        endReason: Option.flatMap(ended, (e) => e.reason)
      }
    })

    const appendChunk = (chunk: ReadonlyArray<SessionEvent.SessionEvent>) =>
      Effect.gen(function*() {
        const events = chunk.filter((e) => !isChannelNotice(e))
        if (events.length === 0) return
        const logged = events.map((event, i) => ({ seq: tally.lastSeq + 1 + i, event }))
        // Persist before anything else sees the events; a store that stays down ends the
        // activation with a defect (the engine restarts it and the log is read again). A log
        // another runner has taken over (this runner was cut off from the database) is written
        // no more: the run stops here (`runSession`).
        yield* log.append(sessionId, logged, writer).pipe(
          Effect.retry({ schedule: appendSchedule, while: (error) => !isClaimLost(error) }),
          Effect.catchIf(isClaimLost, (error) =>
            Effect.sync(() => {
              claimLost = true
            }).pipe(Effect.andThen(Effect.die(error)))),
          Effect.orDie
        )
        for (const l of logged) {
          fold(tally, l.event)
          tally.lastSeq = l.seq
          recent.push(l)
        }
        if (recent.length > recentMax) recent.splice(0, recent.length - recentMax)
        // A request just logged may be answered through another runner (see the answer watch).
        yield* answers.watch(waiter)
        yield* bump
      })

    /** Gives the log's writer claim up; one that cannot be released now is released later (`writer.ts`). */
    const release = () => log.release(sessionId, writer).pipe(
      Effect.retry(appendSchedule),
      catchAll(() => Effect.sync(() => unreleased.add(sessionId, writer)))
    )

    /** Set when an append of the run was refused: another runner has taken the log over. */
    let claimLost = false

    const endRun = (status: EventLog.EndStatus, reason: Option.Option<string>) =>
      log.end(sessionId, status, reason).pipe(
        Effect.retry(appendSchedule),
        Effect.orDie,
        Effect.andThen(Effect.sync(() => {
          activation.record = Option.map(activation.record, (r) => ({ ...r, ended: Option.some({ status, reason }) }))
        })),
        Effect.andThen(bump)
      )

    const describe = (cause: Cause.Cause<unknown>): string =>
      Option.match(failureOption(cause), {
        onNone: () => Cause.pretty(cause),
        onSome: (error) =>
          typeof error === "object" && error !== null && "_tag" in error
            ? `${String(error._tag)}${"message" in error ? `: ${String(error.message)}` : ""}`
            : String(error)
      })

    /**
     * Whether the service says the session is complete, where its dialect can say (`getSession`:
     * the observed dialect's retrieve). Where it cannot (`AgentApi.canRetrieve` false: the
     * documented dialect), nothing is asked: the answer would be a `NotFound` made and failed, and
     * a failed span, for each session taken over (its cost: docs/scale-out.md). Any failure counts
     * as "not known to be complete".
     */
    const completeAtService = (r: EventLog.SessionRecord) =>
      api.canRetrieve
        ? api.getSession(r.sessionId, { agent: Option.getOrUndefined(r.agent) }).pipe(
          Effect.map((info) => Option.exists(info.status, (s) => s === "complete")),
          Effect.timeout("15 seconds"),
          Effect.orElseSucceed(() => false)
        )
        : Effect.succeed(false)

    /** `attached`: completed once the channel is attached (or the run ended without one). */
    const runSession = (r: EventLog.SessionRecord, learn: boolean, attached: Deferred.Deferred<void>) =>
      Effect.scoped(Effect.gen(function*() {
        // Taking a session over (or attaching one created elsewhere): it may have completed
        // while no runner held it; then there is nothing to attach to.
        if (learn && (yield* completeAtService(r))) return yield* endRun("complete", completedUnheld)
        const requests = open(tally)
        const session = yield* sessions.attach(r.info, r.maxActions, {
          ...options.connect,
          agent: Option.getOrUndefined(r.agent),
          keepEvents: false,
          pendingRequests: requests
        })
        activation.running = session
        // Requests answered but not yet settled are answered again on this channel: those in
        // the log, and those a `Respond` recorded while the channel was being attached (it saw
        // no channel to hand them to). Listed in the same step as the channel is set: a
        // `Respond` recording after it sends on the channel itself.
        const resend = requests.filter((request) => tally.answered.has(requestKey(request)))
        for (const request of resend) {
          const answer = tally.answered.get(requestKey(request))
          if (answer !== undefined) yield* Effect.ignore(session.respond(request, toAnswer(answer)))
        }
        // Requests still unanswered: their answers may be recorded by a runner that still believes
        // it holds the session (see the answer watch), after this run read the log.
        yield* answers.watch(waiter)
        if (tally.lastSeq > 0) {
          // A notice (a command line shows it at its default level): the take-over is news to an operator.
          yield* Effect.logInfo(`Took session ${r.info.session_id} over at seq ${tally.lastSeq} (runner ${runnerName})`).pipe(
            Effect.annotateLogs("notice", "takeover")
          )
        }
        yield* Deferred.succeed(attached, undefined)
        claimLost = false
        const exit = yield* Effect.exit(session.forEachBatch(appendChunk))
        activation.running = undefined
        // The log is another runner's now (it runs the session): nothing more is written here.
        if (claimLost) {
          return yield* Effect.logWarning(
            `Session ${r.info.session_id}: another runner took its log over (this runner lost the database); it stops here`
          )
        }
        // Handed over: the channel was closed to drain it (every event it had received is
        // persisted above); the run goes on elsewhere.
        if (activation.handingOver && tally.session.completed === undefined) return
        if (tally.session.completed !== undefined) return yield* endRun("complete", Option.none())
        if (yield* completeAtService(r)) return yield* endRun("complete", completedUnheld)
        yield* endRun("ended", Exit.isFailure(exit) ? Option.some(describe(exit.cause)) : Option.none())
      })).pipe(
        catchAll((error) => endRun("ended", Option.some(`${error._tag}: ${error.message}`))),
        Effect.annotateLogs({ sessionId })
      )

    /**
     * Runs the session here unless it runs here already or its run has ended; returns whether it
     * started the run. A session the log knows (a take-over, a `Start` delivered again) runs from
     * its record, with no write; one it does not know yet is registered from the payload first
     * (with none, as for `Resume`, there is nothing to run).
     *
     * Inside the session's lifecycle lock, where alone a run starts: a session already running
     * answers at once; one to start waits for one of the runner's start places, held until the
     * channel is attached (bounded: the service's answer to `getSession` by 15 s). (A `Resume`
     * or `Start` that comes second in a take-over does not wait in the runner's line of starts,
     * holding the lock, to learn that the session runs.)
     */
    const ensureRunning = (payload: RunPayload | undefined, learn: boolean) =>
      Effect.acquireUseRelease(
        Effect.sync(() => {
          startsUnderWay += 1
        }),
        () =>
          Effect.suspend(() =>
            activation.run !== undefined ? Effect.succeed(false) : starting.withPlace(start(payload, learn))
          ).pipe((self) => lifecycle.withPlace(self)),
        () =>
          Effect.sync(() => {
            startsUnderWay -= 1
          })
      )

    const start = (payload: RunPayload | undefined, learn: boolean) =>
      Effect.gen(function*() {
        // Only under the lifecycle lock, with no run (ensureRunning): none can start meanwhile.
        // One writer per log: a runner that still writes it (giving the session away, or having
        // lost its shard without knowing yet) holds its claim until it has persisted what its
        // channel received. The log is read once the claim is this runner's: every event the
        // other wrote, and its end if it ended the run.
        // A claim that failed or was interrupted may be held all the same (a statement that
        // committed before its answer was lost): given up, or left to the renewer to give up.
        yield* Effect.onError(claimLog(log, sessionId, writer), release)
        // Released here unless a run was forked, whatever ends this start (a caller that gives
        // up, such as a subscriber whose `Events` taking the session over is interrupted while
        // the channel is attached): a run holds the claim to its own end.
        return yield* Effect.onExit(
          startClaimed(payload, learn),
          () => activation.run === undefined ? release() : Effect.void
        )
      })

    /** {@link start} once the log's claim is held: released by `start` unless a run was forked. */
    const startClaimed = (payload: RunPayload | undefined, learn: boolean) =>
      Effect.gen(function*() {
        yield* load
        let r: EventLog.SessionRecord
        if (Option.isSome(activation.record)) r = activation.record.value
        else if (payload === undefined) return false
        else {
          r = yield* log.register({
            info: payload.session,
            maxActions: payload.maxActions,
            agent: payload.agent,
            shard: address.shardId.id
          })
          // Claimed while the log did not know the session (nothing was recorded): claimed now
          // that it does, before anything is appended (appends are written only by the holder).
          yield* claimLog(log, sessionId, writer)
        }
        activation.record = Option.some(r)
        if (Option.isSome(r.ended)) return false
        const done = yield* Deferred.make<void>()
        const attached = yield* Deferred.make<void>()
        const fiber = yield* runSession(r, learn || tally.lastSeq > 0, attached).pipe(
          Effect.onExit(() =>
            Effect.sync(() => {
              activation.run = undefined
              activation.running = undefined
            }).pipe(
              Effect.andThen(answers.unwatch(waiter)),
              // After every event the run received is persisted (or the run was stopped).
              Effect.andThen(release()),
              Effect.andThen(Deferred.done(attached, Exit.void)),
              Effect.andThen(Deferred.done(done, Exit.void))
            )
          ),
          // Not in the activation's scope: when it closes, the channel is drained first (below).
          forkDaemon
        )
        activation.run = { done, fiber }
        yield* Deferred.await(attached)
        return true
      })

    // When the activation ends (the shard moves to another runner, the runner stops): drain the
    // channel (the service's close answering ours comes after every event it sent this channel:
    // the next owner's channel resumes after them), let the run persist those events, then stop.
    // A plain close would lose the events the service had sent that were not read yet (in the
    // sockets' buffers: more of them the busier the runner), counted as sent by the service.
    yield* Scope.addFinalizer(
      scope,
      Effect.suspend(() => {
        const current = activation.run
        if (current === undefined) return Effect.void
        activation.handingOver = true
        const running = activation.running
        return Effect.andThen(
          running === undefined ? Effect.void : running.drain.pipe(
            Effect.timeout(handOverDrain),
            Effect.ignore,
            Effect.andThen(running.close)
          ),
          Deferred.await(current.done).pipe(
            Effect.timeout(handOverPersist),
            catchAll(() => Fiber.interrupt(current.fiber))
          )
        )
      })
    )

    const awaitRun = () => activation.run === undefined ? Effect.void : Deferred.await(activation.run.done)

    /**
     * Runs the session again when its run has not ended and it does not run here; a run it
     * started is held to its end (as `Start` holds it), so that the entity stays active.
     */
    const resume = () => Effect.gen(function*() {
      if (yield* ensureRunning(undefined, true)) yield* awaitRun()
      return yield* status()
    })

    /** `Start` (a session just created: nothing to learn unless the log shows it ran) or `Attach`. */
    const startLike = (learn: boolean) =>
    (
      envelope: Entity.Request<typeof SessionEntity.Start> | Entity.Request<typeof SessionEntity.Attach>
    ) => Effect.andThen(Effect.andThen(ensureRunning(envelope.payload, learn), Effect.suspend(awaitRun)), Effect.suspend(status))

    const close = () => Effect.gen(function*() {
      yield* load
      if (activation.run !== undefined) {
        yield* Fiber.interrupt(activation.run.fiber)
        activation.running = undefined
      }
      // A session the log does not know yet is recorded as closed: the `Start` that may follow
      // (it was sent before this `Close` but reached the entity after it) does not run it.
      if (Option.isNone(activation.record) || Option.isNone(activation.record.value.ended)) {
        yield* endRun("closed", Option.some("closed by a caller"))
        activation.record = yield* log.get(sessionId)
      }
      return yield* status()
    }).pipe((self) => lifecycle.withPlace(self))

    return {
      Start: startLike(false),
      Attach: startLike(true),
      Events: (envelope: Entity.Request<typeof SessionEntity.Events>) =>
        events(activation, ticker, ensureRunning)(envelope.payload.fromSeq),
      Respond: respond(activation),
      Status: status,
      Close: close,
      Resume: resume
    }
  })
