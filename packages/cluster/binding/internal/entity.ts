/**
 * The session entity's behaviour: the runner's sessions ({@link Runs}), each session's run
 * (starting, resuming, closing, handing over), and the entity, a front for their commands. The
 * run's state, the `Events` stream, `Respond`, the ticker, the answer watch and the resumer are in
 * their own files.
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
  type AgentApi,
  type AgentSessions,
  cappedExponential,
  catchAll,
  Entity,
  failureOption,
  forkDaemon,
  optionFromNullish,
  type SessionEvent
} from "../../src/internal/line.js"
import { ClusterTally } from "effect-agent-session-shell"
import type * as EventLog from "../EventLog.js"
import type * as SessionEntity from "../SessionEntity.js"
import { type Activation, activationOf, open, type RunPayload } from "./activation.js"
import { type AnswerWatch, type Waiter, waiterOf } from "./answerWatch.js"
import { isClaimLost, requestKey, toAnswer } from "./eventLogMemory.js"
import { events } from "./eventsStream.js"
import { type Gate, gate } from "./gate.js"
import type { Local } from "./resumer.js"
import { respondWith } from "./respond.js"
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

/** What every run of a runner shares: made once a runner. */
interface RunnerParts {
  readonly options: SessionEntity.Options
  /** The runner's line of starts ({@link startsAtOnce} places). */
  readonly starting: Gate
  readonly answers: AnswerWatch
  /** This runner's name as the writer of a log (`writer.ts`). */
  readonly runnerWriter: string
  /** This runner's `host:port`. */
  readonly runnerName: string
  readonly unreleased: Unreleased
  readonly log: EventLog.Service
  readonly sessions: AgentSessions.Service
  readonly api: AgentApi.Service
  /** The shard of a session id (its number in the entity's shard group). */
  readonly shardOf: (sessionId: string) => number
  /** Told when a run ends: a session nobody uses any more is let go. */
  readonly ended: (run: SessionRun) => void
}

/**
 * The sessions of a runner: one {@link SessionRun} a session id, kept while the session runs here
 * or a command or subscriber uses it, let go once neither holds.
 *
 * The runs belong to the runner, not to the session's entity: a session runs on the runner that
 * owns its shard, started there by the session's commands (`Start`, `Attach`, a subscriber that
 * finds it unheld) or by the runner's watch of its shards (`resumer.ts`), which also hands over
 * the runs of the shards the runner loses. The entity is a front for commands, active only while
 * one is handled: a held session keeps no entity (no `@effect/cluster` state of its own on the
 * runner), and a take-over moves none.
 */
export class Runs implements Local {
  private readonly byId = new Map<string, SessionRun>()
  /** Runs given away and not yet ended (their channel draining, their events being persisted). */
  private readonly leaving = new Set<SessionRun>()
  private readonly parts: RunnerParts

  constructor(parts: Omit<RunnerParts, "ended">) {
    this.parts = { ...parts, ended: (run) => this.ended(run) }
  }

  get unreleased(): Unreleased {
    return this.parts.unreleased
  }

  state(sessionId: string): "running" | "starting" | undefined {
    return this.byId.get(sessionId)?.localState()
  }

  /** The sessions whose run is here, or leaves (their log's writer claims are renewed: `writer.ts`). */
  running(): ReadonlyArray<string> {
    const ids: Array<string> = []
    for (const [id, run] of this.byId) if (run.activation.run !== undefined) ids.push(id)
    for (const run of this.leaving) ids.push(run.sessionId)
    return ids
  }

  /** Runs `f` with the session's run (made if the runner has none), held meanwhile. */
  use<A, E>(sessionId: string, f: (run: SessionRun) => Effect.Effect<A, E>): Effect.Effect<A, E> {
    return Effect.acquireUseRelease(Effect.sync(() => this.hold(sessionId)), f, (run) => Effect.sync(() => this.letGo(run)))
  }

  /** The session's run, held until {@link Runs.letGo}. */
  hold(sessionId: string): SessionRun {
    let run = this.byId.get(sessionId)
    if (run === undefined) {
      run = new SessionRun(this.parts, this.parts.shardOf(sessionId), activationOf(sessionId, this.parts.log), gate(1))
      this.byId.set(sessionId, run)
    }
    run.users += 1
    return run
  }

  letGo(run: SessionRun): void {
    run.users -= 1
    this.forgetIfIdle(run)
  }

  /** Runs the session here unless it runs or starts here already, or its run has ended. */
  ensure(sessionId: string): Effect.Effect<void, EventLog.EventLogError> {
    return this.use(sessionId, (run) => Effect.asVoid(run.ensureRunning(undefined, true)))
  }

  /**
   * Hands over the runs of the shards this runner no longer owns: each is let go at once (a
   * command that reaches this runner for it again makes a new run, which waits for the log's
   * claim), its channel drained and its events persisted in the background.
   */
  handOverLost(owns: (shard: number) => boolean): Effect.Effect<void> {
    const lost: Array<SessionRun> = []
    for (const run of this.byId.values()) {
      if (run.activation.run !== undefined && !owns(run.shard)) lost.push(run)
    }
    return lost.length === 0 ? Effect.void : Effect.asVoid(forkDaemon(Effect.forEach(lost, (run) => this.handOver(run), {
      concurrency: "unbounded",
      discard: true
    })))
  }

  /** The runner stops: every run here is handed over (and every one leaving ends), together. */
  handOverAll(): Effect.Effect<void> {
    return Effect.forEach(
      [...[...this.byId.values()].filter((run) => run.activation.run !== undefined), ...this.leaving],
      (run) => this.leaving.has(run) ? run.awaitRun().pipe(Effect.timeout(handOverPersist), Effect.ignore) : this.handOver(run),
      { concurrency: "unbounded", discard: true }
    )
  }

  /**
   * Gives a run away (its shard moves to another runner, or the runner stops): drains the channel
   * (the service's close answering ours comes after every event it sent this channel: the next
   * owner's channel resumes after them), lets the run persist those events, then stops it. A
   * plain close would lose the events the service had sent that were not read yet (in the
   * sockets' buffers: more of them the busier the runner), counted as sent by the service.
   */
  private handOver(run: SessionRun): Effect.Effect<void> {
    return Effect.suspend(() => {
      if (this.byId.get(run.sessionId) === run) this.byId.delete(run.sessionId)
      this.leaving.add(run)
      return Effect.ensuring(run.handOver(), Effect.sync(() => this.leaving.delete(run)))
    })
  }

  private ended(run: SessionRun): void {
    this.leaving.delete(run)
    this.forgetIfIdle(run)
  }

  private forgetIfIdle(run: SessionRun): void {
    if (run.users === 0 && run.localState() === undefined && this.byId.get(run.sessionId) === run) {
      this.byId.delete(run.sessionId)
    }
  }
}

/**
 * The session entity: a front for the session's commands, each handled by the session's run on
 * this runner ({@link Runs}).
 */
export const make = (runs: Runs, ticker: Ticker) =>
  Effect.map(Entity.CurrentAddress, (address) => {
    const sessionId = address.entityId as string
    const use = <A, E>(f: (run: SessionRun) => Effect.Effect<A, E>) => runs.use(sessionId, f)
    return {
      Start: (envelope: Entity.Request<typeof SessionEntity.Start>) => use((run) => run.startLike(envelope.payload, false)),
      Attach: (envelope: Entity.Request<typeof SessionEntity.Attach>) => use((run) => run.startLike(envelope.payload, true)),
      // Held for as long as the subscriber is.
      Events: (envelope: Entity.Request<typeof SessionEntity.Events>) =>
        Effect.flatMap(
          Effect.acquireRelease(Effect.sync(() => runs.hold(sessionId)), (run) => Effect.sync(() => runs.letGo(run))),
          (run) => events(run.activation, ticker, (payload, learn) => run.ensureRunning(payload, learn))(envelope.payload.fromSeq)
        ),
      Respond: (envelope: Entity.Request<typeof SessionEntity.Respond>) =>
        use((run) => respondWith(run.activation, envelope.payload.request, envelope.payload.answer)),
      Status: () => use((run) => run.status()),
      Close: () => use((run) => run.close()),
      Resume: () => use((run) => run.resume())
    }
  })

/**
 * A session's run on this runner: starting, resuming, closing and handing the session over. One
 * object with its methods on the prototype: a runner holds one for every session it holds, for
 * the whole run (its heap is counted in bench/RESULTS.md, "What a held session keeps").
 */
export class SessionRun {
  /** This run's name as the writer of the session's log (its own: `writer.ts`). */
  readonly writer: string
  readonly waiter: Waiter
  /**
   * Starts asked for and not ended (waiting for the lifecycle lock or a start place, or
   * starting): the resumer sends no `Resume` to a session that runs or starts here.
   */
  startsUnderWay = 0
  /** Set when an append of the run was refused: another runner has taken the log over. */
  claimLost = false
  /** Commands and subscribers using this run ({@link Runs}). */
  users = 0

  constructor(
    readonly parts: RunnerParts,
    /** The session's shard. */
    readonly shard: number,
    readonly activation: Activation,
    /** Starting and closing one at a time, in the order the messages arrived. */
    readonly lifecycle: Gate
  ) {
    this.writer = activationWriter(parts.runnerWriter)
    this.waiter = waiterOf(activation)
  }

  get sessionId(): string {
    return this.activation.sessionId
  }

  get log(): EventLog.Service {
    return this.activation.log
  }

  get runnerName(): string {
    return this.parts.runnerName
  }

  /** Whether the session runs or starts here (the runner's watch of its shards asks: `resumer.ts`). */
  localState(): "running" | "starting" | undefined {
    return this.activation.run !== undefined ? "running" : this.startsUnderWay > 0 ? "starting" : undefined
  }

  get sessions(): AgentSessions.Service {
    return this.parts.sessions
  }

  get api(): AgentApi.Service {
    return this.parts.api
  }

  status(): Effect.Effect<SessionEntity.Status, EventLog.EventLogError> {
    const { activation, sessionId } = this
    const { tally } = activation
    const runnerName = this.runnerName
    return Effect.gen(function*() {
      yield* activation.load
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
  }

  appendChunk(chunk: ReadonlyArray<SessionEvent.SessionEvent>): Effect.Effect<void> {
    return Effect.suspend(() => this.appendNow(chunk))
  }

  private appendNow(chunk: ReadonlyArray<SessionEvent.SessionEvent>): Effect.Effect<void> {
    const events = chunk.filter((e) => !isChannelNotice(e))
    if (events.length === 0) return Effect.void
    const { activation } = this
    const logged = events.map((event, i) => ({ seq: activation.tally.lastSeq + 1 + i, event }))
    // Persist before anything else sees the events; a store that stays down ends the
    // channel with a defect, and the run with it (`runSession`). A log
    // another runner has taken over (this runner was cut off from the database) is written
    // no more: the run stops here (`runSession`).
    return this.log.append(this.sessionId, logged, this.writer).pipe(
      Effect.retry({ schedule: appendSchedule, while: (error) => !isClaimLost(error) }),
      Effect.catchIf(isClaimLost, (error) =>
        Effect.sync(() => {
          this.claimLost = true
        }).pipe(Effect.andThen(Effect.die(error)))),
      Effect.orDie,
      Effect.andThen(Effect.suspend(() => {
        activation.keep(logged)
        // A request just logged may be answered through another runner (see the answer watch).
        return Effect.andThen(this.parts.answers.watch(this.waiter), activation.bump)
      }))
    )
  }

  /** Gives the log's writer claim up; one that cannot be released now is released later (`writer.ts`). */
  release(): Effect.Effect<void> {
    return this.log.release(this.sessionId, this.writer).pipe(
      Effect.retry(appendSchedule),
      catchAll(() => Effect.sync(() => this.parts.unreleased.add(this.sessionId, this.writer)))
    )
  }

  endRun(status: EventLog.EndStatus, reason: Option.Option<string>): Effect.Effect<void> {
    const { activation } = this
    return this.log.end(this.sessionId, status, reason).pipe(
      Effect.retry(appendSchedule),
      Effect.orDie,
      Effect.andThen(Effect.sync(() => {
        activation.record = Option.map(activation.record, (r) => ({ ...r, ended: Option.some({ status, reason }) }))
      })),
      Effect.andThen(activation.bump)
    )
  }

  /**
   * Whether the service says the session is complete, where its dialect can say (`getSession`:
   * the observed dialect's retrieve). Where it cannot (`AgentApi.canRetrieve` false: the
   * documented dialect), nothing is asked: the answer would be a `NotFound` made and failed, and
   * a failed span, for each session taken over (its cost: docs/scale-out.md). Any failure counts
   * as "not known to be complete".
   */
  completeAtService(r: EventLog.SessionRecord): Effect.Effect<boolean> {
    return this.api.canRetrieve
      ? this.api.getSession(r.sessionId, { agent: Option.getOrUndefined(r.agent) }).pipe(
        Effect.map((info) => Option.exists(info.status, (s) => s === "complete")),
        Effect.timeout("15 seconds"),
        Effect.orElseSucceed(() => false)
      )
      : Effect.succeed(false)
  }

  /**
   * `attached`: completed with the session once its channel is attached (with nothing if the run
   * ends without one). The channel is the run's scope's (`startClaimed`).
   */
  runSession(
    r: EventLog.SessionRecord,
    learn: boolean,
    attached: Deferred.Deferred<AgentSessions.RunningSession | undefined>
  ): Effect.Effect<void, never, Scope.Scope> {
    const { activation, parts } = this
    const { tally } = activation
    return Effect.gen(function*(this: SessionRun) {
      // Taking a session over (or attaching one created elsewhere): it may have completed
      // while no runner held it; then there is nothing to attach to.
      if (learn && (yield* this.completeAtService(r))) return yield* this.endRun("complete", completedUnheld)
      const requests = open(tally)
      // The session exists at the service and may be under way: a channel slow to open (a
      // loaded runner or service) is retried on the reconnect schedule, not given up after one
      // connect time-out, which would end the run of a session still running.
      const session = yield* this.sessions.attach(r.info, r.maxActions, {
        resumes: true,
        ...parts.options.connect,
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
      yield* parts.answers.watch(this.waiter)
      // The starter waits for the channel to open (its socket opens as the run below starts
      // reading) or to end, which the run's end brings (its scope closes the channel).
      yield* Deferred.succeed(attached, session)
      this.claimLost = false
      const exit = yield* Effect.exit(session.forEachBatch((chunk) => this.appendChunk(chunk)))
      activation.running = undefined
      // The log is another runner's now (it runs the session): nothing more is written here.
      if (this.claimLost) {
        return yield* Effect.logWarning(
          `Session ${r.info.session_id}: another runner took its log over (this runner lost the database); it stops here`
        )
      }
      // Handed over: the channel was closed to drain it (every event it had received is
      // persisted above); the run goes on elsewhere.
      if (activation.handingOver && tally.session.completed === undefined) return
      if (tally.session.completed !== undefined) return yield* this.endRun("complete", Option.none())
      if (yield* this.completeAtService(r)) return yield* this.endRun("complete", completedUnheld)
      yield* this.endRun("ended", Exit.isFailure(exit) ? Option.some(describe(exit.cause)) : Option.none())
    }.bind(this)).pipe(
      catchAll((error) => this.endRun("ended", Option.some(`${error._tag}: ${error.message}`)))
    )
  }

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
  ensureRunning(payload: RunPayload | undefined, learn: boolean): Effect.Effect<boolean, EventLog.EventLogError> {
    return Effect.acquireUseRelease(
      Effect.sync(() => {
        this.startsUnderWay += 1
      }),
      () =>
        this.lifecycle.withPlace(Effect.suspend(() =>
          this.activation.run !== undefined
            ? Effect.succeed(false)
            : this.parts.starting.withPlace(this.start(payload, learn))
        )),
      () =>
        Effect.sync(() => {
          this.startsUnderWay -= 1
        })
    )
  }

  start(payload: RunPayload | undefined, learn: boolean): Effect.Effect<boolean, EventLog.EventLogError> {
    // Only under the lifecycle lock, with no run (ensureRunning): none can start meanwhile.
    // One writer per log: a runner that still writes it (giving the session away, or having
    // lost its shard without knowing yet) holds its claim until it has persisted what its
    // channel received. The log is read once the claim is this runner's: every event the
    // other wrote, and its end if it ended the run.
    // A claim that failed or was interrupted may be held all the same (a statement that
    // committed before its answer was lost): given up, or left to the renewer to give up.
    return Effect.andThen(
      Effect.onError(claimLog(this.log, this.sessionId, this.writer), () => this.release()),
      // Released here unless a run was forked, whatever ends this start (a caller that gives
      // up, such as a subscriber whose `Events` taking the session over is interrupted while
      // the channel is attached): a run holds the claim to its own end.
      Effect.onExit(
        this.startClaimed(payload, learn),
        () => this.activation.run === undefined ? this.release() : Effect.void
      )
    )
  }

  /** {@link SessionRun.start} once the log's claim is held: released by `start` unless a run was forked. */
  startClaimed(payload: RunPayload | undefined, learn: boolean): Effect.Effect<boolean, EventLog.EventLogError> {
    const { activation, log, parts, sessionId, writer } = this
    return Effect.gen(function*(this: SessionRun) {
      yield* activation.load
      let r: EventLog.SessionRecord
      if (Option.isSome(activation.record)) r = activation.record.value
      else if (payload === undefined) return false
      else {
        r = yield* log.register({
          info: payload.session,
          maxActions: payload.maxActions,
          agent: payload.agent,
          shard: this.shard
        })
        // Claimed while the log did not know the session (nothing was recorded): claimed now
        // that it does, before anything is appended (appends are written only by the holder).
        yield* claimLog(log, sessionId, writer)
      }
      activation.record = Option.some(r)
      if (Option.isSome(r.ended)) return false
      const done = yield* Deferred.make<void>()
      const attached = yield* Deferred.make<AgentSessions.RunningSession | undefined>()
      /** The run's scope: its channel's, closed when the run ends, before anything else. */
      const scope = yield* Scope.make()
      // Where the log ends: a run that resumes after an event takes the session over.
      const resumedAt = activation.tally.lastSeq
      const fiber = yield* this.runSession(r, learn || resumedAt > 0, attached).pipe(
        Effect.onExit((exit) =>
          Scope.close(scope, exit).pipe(
            Effect.andThen(Effect.sync(() => {
              activation.run = undefined
              activation.running = undefined
            })),
            Effect.andThen(parts.answers.unwatch(this.waiter)),
            // After every event the run received is persisted (or the run was stopped).
            Effect.andThen(this.release()),
            Effect.andThen(Deferred.done(attached, Exit.succeed(undefined))),
            Effect.andThen(Deferred.done(done, Exit.void)),
            Effect.andThen(Effect.sync(() => parts.ended(this)))
          )
        ),
        // The runner's, not a command's: it outlives the command that started it (`Runs`).
        forkDaemon,
        // Given to the run's fiber as it is forked (it inherits them), not wrapped around the run:
        // a wrapper would stay on its stack, in the heap of every session held, for the whole run.
        Effect.provideService(Scope.Scope, scope),
        Effect.annotateLogs({ sessionId })
      )
      activation.run = { done, fiber }
      // The start's place in the runner's line is held until the channel opens, or ends without
      // opening (the run's end closes it): the line bounds the channels opening at once, not only
      // the reads of the log. Opened faster than the service accepts them, channels would wait
      // past their connect time-out.
      const session = yield* Deferred.await(attached)
      if (session === undefined) return true
      yield* session.opened
      // A notice (a command line shows it at its default level): the take-over is news to an operator.
      if (resumedAt > 0 && activation.run?.fiber === fiber) {
        yield* Effect.logInfo(`Took session ${sessionId} over at seq ${resumedAt} (runner ${parts.runnerName})`).pipe(
          Effect.annotateLogs({ notice: "takeover", sessionId })
        )
      }
      return true
    }.bind(this))
  }

  /** The run given away: the channel drained, the run's events persisted, then stopped. */
  handOver(): Effect.Effect<void> {
    const { activation } = this
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
  }

  awaitRun(): Effect.Effect<void> {
    const run = this.activation.run
    return run === undefined ? Effect.void : Deferred.await(run.done)
  }

  /** Runs the session again when its run has not ended and it does not run here; replies once it runs. */
  resume(): Effect.Effect<SessionEntity.Status, EventLog.EventLogError> {
    return this.ensureRunning(undefined, true).pipe(Effect.andThen(Effect.suspend(() => this.status())))
  }

  /**
   * `Start` (a session just created: nothing to learn unless the log shows it ran) or `Attach`:
   * replies once the session runs (its channel attached) or its run has ended.
   */
  startLike(payload: RunPayload, learn: boolean): Effect.Effect<SessionEntity.Status, EventLog.EventLogError> {
    return this.ensureRunning(payload, learn).pipe(Effect.andThen(Effect.suspend(() => this.status())))
  }

  close(): Effect.Effect<SessionEntity.Status, EventLog.EventLogError> {
    const { activation } = this
    return this.lifecycle.withPlace(Effect.gen(function*(this: SessionRun) {
      yield* activation.load
      if (activation.run !== undefined) {
        yield* Fiber.interrupt(activation.run.fiber)
        activation.running = undefined
      }
      // A session the log does not know yet is recorded as closed: the `Start` that may follow
      // (it was sent before this `Close` but reached the entity after it) does not run it.
      if (Option.isNone(activation.record) || Option.isNone(activation.record.value.ended)) {
        yield* this.endRun("closed", Option.some("closed by a caller"))
        activation.record = yield* this.log.get(this.sessionId)
      }
      return yield* this.status()
    }.bind(this)))
  }
}

const describe = (cause: Cause.Cause<unknown>): string =>
  Option.match(failureOption(cause), {
    onNone: () => Cause.pretty(cause),
    onSome: (error) =>
      typeof error === "object" && error !== null && "_tag" in error
        ? `${String(error._tag)}${"message" in error ? `: ${String(error.message)}` : ""}`
        : String(error)
  })
