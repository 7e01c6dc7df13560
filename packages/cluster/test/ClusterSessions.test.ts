import { assert, describe, layer } from "@effect/vitest"
import * as Net from "node:net"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import * as MessageStorage from "@effect/cluster/MessageStorage"
import * as RunnerHealth from "@effect/cluster/RunnerHealth"
import * as Runners from "@effect/cluster/Runners"
import * as RunnerStorage from "@effect/cluster/RunnerStorage"
import * as Sharding from "@effect/cluster/Sharding"
import * as ShardingConfig from "@effect/cluster/ShardingConfig"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Ref from "effect/Ref"
import { ClusterSessions, EventLog, SessionEntity } from "../src/index.js"
import { AgentApi, AgentSessions, Answer, Dialect, EventStream, NodeAgentSessions, Session, type SessionEvent } from "effect-agent-session"
import * as Simulator from "effect-agent-session-simulator/Simulator"

const fastReconnect = Schedule.spaced("20 millis").pipe(Schedule.intersect(Schedule.recurs(10)))

const SimulatorLive = Simulator.layer({
  port: 0,
  scenario: { actions: 3, ask: "permission", frameDelay: "1 millis" }
})

const SdkLive = Layer.unwrapEffect(
  Effect.map(Simulator.Simulator, (simulator) =>
    NodeAgentSessions.layer({
      apiKey: simulator.accountKey,
      baseUrl: simulator.baseUrl,
      wsUrl: simulator.wsUrl,
      dialect: simulator.dialect,
      events: { reconnect: fastReconnect }
    }))
)

/** The embedded cluster with these options, over the SDK and the simulator, logging errors only. */
const embedded = (options: ClusterSessions.EmbeddedOptions) =>
  ClusterSessions.layerEmbedded(options).pipe(
    Layer.provideMerge(SdkLive),
    Layer.provideMerge(SimulatorLive),
    Layer.provide(Logger.minimumLogLevel(LogLevel.Error))
  )

// The answer watch reads every 200 ms here (2 s by default): its tests wait for it.
const ClusterLive = embedded({ notFoundAfter: "2 seconds", answerCheckInterval: "200 millis" })

const request = { start_url: "https://example.com", max_actions: 5, goal: "Find the opening hours" }

const meaningful = (events: ReadonlyArray<SessionEvent.SessionEvent>) =>
  events.filter((event) => event._tag !== "Heartbeat" && event._tag !== "Connected")

/** Follows a session's events; answers its request with a grant; returns what it saw. */
/**
 * A session created at the service and registered in the log as another runner would have done
 * (no runner of this process has run it): what the take-over tests start from, with the services
 * they use.
 */
const registeredElsewhere = Effect.gen(function*() {
  const api = yield* AgentApi.AgentApi
  const log = yield* EventLog.EventLog
  const session = yield* api.createSession(request)
  yield* log.register({ info: session, maxActions: request.max_actions, agent: Option.none() })
  return {
    id: session.session_id,
    log,
    simulator: yield* Simulator.Simulator,
    makeClient: yield* SessionEntity.SessionEntity.client
  }
})

const follow = (sessionId: string, fromSeq = 1, answer = true) =>
  Effect.gen(function*() {
    const sessions = yield* ClusterSessions.ClusterSessions
    return yield* sessions.events(sessionId, fromSeq).pipe(
      Stream.tap((logged) =>
        answer && logged.event._tag === "ExternalResourceRequested"
          ? sessions.respond(sessionId, logged.event, Answer.grant())
          : Effect.void
      ),
      Stream.runCollect,
      Effect.map(Chunk.toReadonlyArray)
    )
  })

/** The session's first request, from its events. */
const firstRequest = (sessions: ClusterSessions.Service, sessionId: string) =>
  sessions.events(sessionId).pipe(
    Stream.filterMap((l) => l.event._tag === "ExternalResourceRequested" ? Option.some(l.event) : Option.none()),
    Stream.runHead,
    Effect.map(Option.getOrThrow)
  )

describe("ClusterSessions on the embedded single runner", () => {
  layer(ClusterLive, { excludeTestServices: true, timeout: 60_000 })((it) => {
    it.effect("a started session runs on its entity: the log has every scripted event once, in order, seqs 1..n", () =>
      Effect.gen(function*() {
        const sessions = yield* ClusterSessions.ClusterSessions
        const simulator = yield* Simulator.Simulator
        const session = yield* sessions.start(request)
        const seen = yield* follow(session.session_id)
        assert.deepStrictEqual(seen.map((l) => l.seq), seen.map((_, i) => i + 1))
        const script = meaningful(yield* simulator.script(session.session_id))
        assert.deepStrictEqual(seen.map((l) => l.event), script)
        assert.strictEqual(seen.at(-1)?.event._tag, "Complete")
        const answers = yield* simulator.answers(session.session_id)
        assert.strictEqual(answers.length, 1)
        const outcome = yield* sessions.outcome(session.session_id)
        assert.strictEqual(outcome.actions, 3)
        const status = yield* sessions.status(session.session_id)
        assert.strictEqual(status.run, "complete")
        assert.strictEqual(status.lastSeq, seen.length)
        assert.deepStrictEqual(status.pending, [])
      }))

    it.effect("Events from any seq replays the log then ends; a second subscriber sees the same log", () =>
      Effect.gen(function*() {
        const sessions = yield* ClusterSessions.ClusterSessions
        const session = yield* sessions.start(request)
        const all = yield* follow(session.session_id)
        const tail = yield* follow(session.session_id, 4, false)
        assert.deepStrictEqual(tail, all.slice(3))
        const again = yield* follow(session.session_id, 1, false)
        assert.deepStrictEqual(again, all)
      }))

    it.effect("a retried Start never creates a second session: Attach and Start again join the same run", () =>
      Effect.gen(function*() {
        const sessions = yield* ClusterSessions.ClusterSessions
        const simulator = yield* Simulator.Simulator
        const before = yield* simulator.httpRequests
        const session = yield* sessions.start(request)
        yield* sessions.attach(session, request.max_actions)
        yield* sessions.attach(session, request.max_actions)
        const seen = yield* follow(session.session_id)
        assert.strictEqual(seen.filter((l) => l.event._tag === "Complete").length, 1)
        // One POST (create) for the session: attaching sends nothing to the service's HTTP API.
        assert.strictEqual((yield* simulator.httpRequests) - before, 1)
        assert.strictEqual(yield* simulator.connections(session.session_id), 1)
      }))

    it.effect("Start replies once the session's channel is open, and the session runs on that one connection", () =>
      Effect.gen(function*() {
        const api = yield* AgentApi.AgentApi
        const simulator = yield* Simulator.Simulator
        const makeClient = yield* SessionEntity.SessionEntity.client
        const session = yield* api.createSession(request)
        const started = yield* makeClient(session.session_id).Start({
          session,
          maxActions: request.max_actions,
          agent: Option.none()
        })
        assert.strictEqual(started.run, "running")
        assert.deepStrictEqual(started.connection, Option.some("Open"))
        const seen = yield* follow(session.session_id)
        assert.strictEqual(seen.at(-1)?.event._tag, "Complete")
        // The channel Start waited for is the one the session ran on: no second connection.
        assert.strictEqual(yield* simulator.connections(session.session_id), 1)
      }))

    it.effect("Respond: an unknown request is RequestNotPending; the same answer again is accepted, a different one refused", () =>
      Effect.gen(function*() {
        const sessions = yield* ClusterSessions.ClusterSessions
        const session = yield* sessions.start(request)
        const request_ = yield* firstRequest(sessions, session.session_id)
        const pending = yield* sessions.status(session.session_id)
        assert.deepStrictEqual(pending.pending, [request_])
        const unknown = yield* Effect.flip(
          sessions.respond(session.session_id, { ...request_, action_session_id: "nope" as typeof request_.action_session_id }, Answer.deny())
        )
        assert.strictEqual(unknown._tag, "RequestNotPending")
        yield* sessions.respond(session.session_id, request_, Answer.deny())
        // The same answer again (a retry) is accepted; a different one is refused.
        yield* sessions.respond(session.session_id, request_, Answer.deny())
        const other = yield* Effect.flip(sessions.respond(session.session_id, request_, Answer.grant()))
        assert.strictEqual(other._tag, "RequestNotPending")
        const outcome = yield* sessions.outcome(session.session_id)
        assert.isString(outcome.response)
      }))

    it.effect("Respond again after the grant settled the request (a retry, a message delivered twice): the same answer is accepted, a different one is already-answered", () =>
      Effect.gen(function*() {
        const sessions = yield* ClusterSessions.ClusterSessions
        const session = yield* sessions.start(request)
        const logged = yield* follow(session.session_id)
        const request_ = logged.map((l) => l.event).find((e): e is SessionEvent.ExternalResourceRequested =>
          e._tag === "ExternalResourceRequested"
        )!
        // The grant arrived and settled it: nothing is pending any more.
        assert.isTrue(logged.some((l) => l.event._tag === "ExternalResourceGranted"))
        assert.deepStrictEqual((yield* sessions.status(session.session_id)).pending, [])
        yield* sessions.respond(session.session_id, request_, Answer.grant())
        const other = yield* Effect.flip(sessions.respond(session.session_id, request_, Answer.deny()))
        assert.strictEqual(other._tag, "RequestNotPending")
        assert.strictEqual(other._tag === "RequestNotPending" ? other.reason : undefined, "already-answered")
      }))

    it.effect("Respond whose answer an earlier attempt recorded (its reply lost, interrupted after the insert): the answer still reaches the channel and the session completes", () =>
      Effect.gen(function*() {
        const sessions = yield* ClusterSessions.ClusterSessions
        const log = yield* EventLog.EventLog
        const session = yield* sessions.start(request)
        const request_ = yield* firstRequest(sessions, session.session_id)
        // The earlier attempt: its insert committed, then it was interrupted (nothing sent).
        assert.isTrue(yield* log.saveAnswer(session.session_id, request_, { _tag: "Grant", input: Option.none() }))
        // The retry: accepted, and the answer handed to the channel (the session would otherwise
        // wait for it forever).
        yield* sessions.respond(session.session_id, request_, Answer.grant())
        const outcome = yield* sessions.outcome(session.session_id).pipe(Effect.timeout("10 seconds"))
        assert.isString(outcome.response)
      }))

    it.effect("an answer recorded behind the running session's back (a stale runner's Respond, after this runner read the log): the session reads it from the log, the service gets it once, the session completes", () =>
      Effect.gen(function*() {
        const sessions = yield* ClusterSessions.ClusterSessions
        const simulator = yield* Simulator.Simulator
        const log = yield* EventLog.EventLog
        const session = yield* sessions.start(request)
        // The request is in the log: the running activation read the log at its start, long before.
        const request_ = yield* firstRequest(sessions, session.session_id)
        // What a runner that still believes it holds the shard does on a Respond: the answer is
        // recorded, the caller told it succeeded; this runner is not told, and nobody retries.
        assert.isTrue(yield* log.saveAnswer(session.session_id, request_, { _tag: "Grant", input: Option.none() }))
        const outcome = yield* sessions.outcome(session.session_id).pipe(Effect.timeout("10 seconds"))
        assert.isString(outcome.response)
        assert.strictEqual((yield* simulator.answers(session.session_id)).length, 1)
        // The caller's Respond again (a retry reaching this runner): accepted, not sent a second time.
        yield* sessions.respond(session.session_id, request_, Answer.grant())
        assert.strictEqual((yield* simulator.answers(session.session_id)).length, 1)
        assert.deepStrictEqual((yield* sessions.status(session.session_id)).pending, [])
      }))

    it.effect("a session taken over with its request open, then answered through the runner it left (recorded after the take-over read the log): the service gets the answer once, the session completes", () =>
      Effect.gen(function*() {
        const api = yield* AgentApi.AgentApi
        const channel = yield* EventStream.EventStream
        const log = yield* EventLog.EventLog
        const simulator = yield* Simulator.Simulator
        const sessions = yield* ClusterSessions.ClusterSessions
        const makeClient = yield* SessionEntity.SessionEntity.client
        const session = yield* api.createSession(request)
        const id = session.session_id
        // The runner it ran on logged its events up to the request, then froze.
        const received = meaningful(
          yield* Effect.scoped(Effect.flatMap(channel.connect(id), (connection) =>
            connection.events.pipe(
              Stream.takeUntil((event) => event._tag === "ExternalResourceRequested"),
              Stream.runCollect,
              Effect.map(Chunk.toReadonlyArray)
            )))
        )
        const request_ = received.at(-1)
        assert.strictEqual(request_?._tag, "ExternalResourceRequested")
        if (request_?._tag !== "ExternalResourceRequested") return
        yield* log.register({ info: session, maxActions: request.max_actions, agent: Option.none() })
        yield* log.append(id, received.map((event, i) => ({ seq: i + 1, event })))
        // This runner takes it over: it reads the log (the request open, no answer) and reattaches.
        yield* makeClient(id).Resume(undefined, { discard: true })
        yield* Effect.repeat(simulator.connections(id), { until: (n) => n === 2, schedule: Schedule.spaced("10 millis") }).pipe(
          Effect.timeout("10 seconds")
        )
        // The runner it left, resumed and still believing it holds the shard, records the
        // caller's answer and replies success: nobody retries, nobody tells this runner.
        assert.isTrue(yield* log.saveAnswer(id, request_, { _tag: "Grant", input: Option.none() }))
        const outcome = yield* sessions.outcome(id).pipe(Effect.timeout("10 seconds"))
        assert.isString(outcome.response)
        assert.strictEqual((yield* simulator.answers(id)).length, 1)
      }))

    it.effect("a session another runner still writes (it lost the shard and persists what its channel received) is run here only once that runner released the log: every event once", () =>
      Effect.gen(function*() {
        const channel = yield* EventStream.EventStream
        const { id, log, makeClient, simulator } = yield* registeredElsewhere
        // The other runner: it holds the log's claim and its channel received the events up to
        // the request, of which it has persisted the first two when the shard moves here.
        assert.isTrue(yield* log.claim(id, "the other runner", 60_000))
        const received = meaningful(
          yield* Effect.scoped(Effect.flatMap(channel.connect(id), (connection) =>
            connection.events.pipe(
              Stream.takeUntil((event) => event._tag === "ExternalResourceRequested"),
              Stream.runCollect,
              Effect.map(Chunk.toReadonlyArray)
            )))
        )
        yield* log.append(id, received.slice(0, 2).map((event, i) => ({ seq: i + 1, event })))
        // This runner takes the session over meanwhile: it waits for the claim.
        yield* makeClient(id).Resume(undefined, { discard: true })
        yield* Effect.sleep("500 millis")
        assert.strictEqual(yield* simulator.connections(id), 1, "no channel while the other runner writes the log")
        // The other runner persists the rest of what it received, then releases the log.
        yield* log.append(id, received.slice(2).map((event, i) => ({ seq: i + 3, event })))
        yield* log.release(id, "the other runner")
        const events = yield* follow(id).pipe(Effect.timeout("20 seconds"))
        assert.deepStrictEqual(events.map((l) => l.seq), events.map((_, i) => i + 1))
        assert.deepStrictEqual(meaningful(events.map((l) => l.event)), yield* simulator.script(id))
        assert.strictEqual(yield* simulator.connections(id), 2)
      }))

    it.effect("Close ends the run as closed and the events end", () =>
      Effect.gen(function*() {
        const sessions = yield* ClusterSessions.ClusterSessions
        const session = yield* sessions.start(request)
        const status = yield* sessions.close(session.session_id)
        assert.strictEqual(status.run, "closed")
        yield* Stream.runDrain(sessions.events(session.session_id))
        const error = yield* Effect.flip(sessions.outcome(session.session_id))
        assert.strictEqual(error._tag, "SessionEndedWithoutComplete")
      }))

    it.effect("events and outcome of a session the cluster does not know: SessionNotFound within the bound", () =>
      Effect.gen(function*() {
        const sessions = yield* ClusterSessions.ClusterSessions
        const unknown = yield* Stream.runDrain(sessions.events("ses_no_such_session")).pipe(Effect.flip, Effect.timeout("15 seconds"))
        assert.strictEqual(unknown._tag, "SessionNotFound")
        const outcome = yield* sessions.outcome("ses_no_such_session").pipe(Effect.flip, Effect.timeout("15 seconds"))
        assert.strictEqual(outcome._tag, "SessionNotFound")
        // An id no session can have: at once.
        const empty = yield* Stream.runDrain(sessions.events("")).pipe(Effect.flip, Effect.timeout("1 second"))
        assert.strictEqual(empty._tag, "SessionNotFound")
        assert.strictEqual((yield* sessions.status("ses_no_such_session")).run, "unknown")
      }))

    it.effect("Close before Start: the session is recorded closed and the Start that follows does not run it", () =>
      Effect.gen(function*() {
        const sessions = yield* ClusterSessions.ClusterSessions
        const simulator = yield* Simulator.Simulator
        const api = yield* AgentApi.AgentApi
        const session = yield* api.createSession(request)
        const closed = yield* sessions.close(session.session_id)
        assert.strictEqual(closed.run, "closed")
        yield* sessions.attach(session, request.max_actions)
        const events = yield* follow(session.session_id)
        assert.deepStrictEqual(events, [])
        const after = yield* sessions.status(session.session_id)
        assert.strictEqual(after.run, "closed")
        assert.strictEqual(yield* simulator.connections(session.session_id), 0)
        const error = yield* Effect.flip(sessions.outcome(session.session_id))
        assert.strictEqual(error._tag, "SessionEndedWithoutComplete")
      }))

    it.effect("the log is retained per session and purged after it ended", () =>
      Effect.gen(function*() {
        const log = yield* EventLog.EventLog
        const sessions = yield* ClusterSessions.ClusterSessions
        const session = yield* sessions.start(request)
        yield* follow(session.session_id)
        assert.isTrue(Option.isSome(yield* log.get(session.session_id)))
        const purged = yield* log.purge(new Date(Date.now() + 1000))
        assert.isAtLeast(purged, 1)
        assert.isTrue(Option.isNone(yield* log.get(session.session_id)))
      }))
  })
})

/** The simulator's sessions, with the id the service answers replaced by `id` (a hostile service). */
const withSessionId = (id: string) =>
  Layer.unwrapEffect(Effect.map(AgentApi.AgentApi, (api) =>
    Layer.succeed(AgentApi.AgentApi, {
      ...api,
      createSession: (request, options) =>
        Effect.map(
          api.createSession(request, options),
          (session) => new Session.SessionInfo({ ...session, session_id: Session.SessionId.make(id) })
        )
    })))

/** The embedded runner over the simulator, its `AgentApi` changed by `api` (built over the SDK's). */
const embeddedOver = (api: Layer.Layer<AgentApi.AgentApi, never, AgentApi.AgentApi>) =>
  ClusterSessions.layerEmbedded().pipe(
    Layer.provide(api),
    Layer.provideMerge(SdkLive),
    Layer.provideMerge(SimulatorLive),
    Layer.provide(Logger.minimumLogLevel(LogLevel.Error))
  )

describe("ClusterSessions.start refuses an unusable session id at once", () => {
  for (const id of ["", "  ", " ses_1"]) {
    layer(
      embeddedOver(withSessionId(id)),
      { excludeTestServices: true, timeout: 30_000 }
    )((it) => {
      it.effect(`session_id ${JSON.stringify(id)}: a typed error within seconds, not two minutes of retries`, () =>
        Effect.gen(function*() {
          const sessions = yield* ClusterSessions.ClusterSessions
          const error = yield* sessions.start(request).pipe(Effect.flip, Effect.timeout("5 seconds"))
          assert.strictEqual(error._tag, "ResponseDecodeError")
          assert.include(error.message, "session_id")
        }))
    })
  }
})

/** The embedded runner's pieces, with a log that counts the resumer's scans and the reads and registrations. */
const scans = Ref.unsafeMake(0)
const reads = Ref.unsafeMake<Record<string, number>>({})
const counted = (name: string) => Ref.update(reads, (counts) => ({ ...counts, [name]: (counts[name] ?? 0) + 1 }))
const CountingLog = Layer.effect(
  EventLog.EventLog,
  Effect.map(EventLog.EventLog, (log): EventLog.Service => ({
    ...log,
    unended: (limit) => Effect.zipRight(Ref.update(scans, (n) => n + 1), log.unended(limit)),
    unendedIn: (shards, options) => Effect.zipRight(Ref.update(scans, (n) => n + 1), log.unendedIn(shards, options)),
    register: (record) => Effect.zipRight(counted("register"), log.register(record)),
    get: (sessionId) => Effect.zipRight(counted("get"), log.get(sessionId)),
    answers: (sessionId) => Effect.zipRight(counted("answers"), log.answers(sessionId)),
    read: (sessionId, fromSeq, limit) => Effect.zipRight(counted("read"), log.read(sessionId, fromSeq, limit)),
    snapshot: (sessionId, fromSeq, limit) => Effect.zipRight(counted("snapshot"), log.snapshot(sessionId, fromSeq, limit))
  }))
).pipe(Layer.provide(EventLog.layerMemory()))

const CountedLive = ClusterSessions.layer().pipe(
  Layer.provideMerge(SessionEntity.layer({ resumeInterval: "100 millis" })),
  Layer.provideMerge(CountingLog),
  Layer.provideMerge(
    Sharding.layer.pipe(
      Layer.provideMerge(Runners.layerNoop),
      Layer.provideMerge(MessageStorage.layerMemory),
      Layer.provide([RunnerStorage.layerMemory, RunnerHealth.layerNoop])
    )
  ),
  Layer.provide(ShardingConfig.layer({ entityTerminationTimeout: Duration.seconds(1) })),
  Layer.provideMerge(SdkLive),
  Layer.provideMerge(SimulatorLive),
  Layer.provide(Logger.minimumLogLevel(LogLevel.Error))
)

describe("the resumer", () => {
  layer(CountedLive, { excludeTestServices: true, timeout: 30_000 })((it) => {
    it.effect("scans the log for the shards a runner gained, not every session at every interval", () =>
      Effect.gen(function*() {
        const sessions = yield* ClusterSessions.ClusterSessions
        // Running sessions (each waits for its answer).
        yield* Effect.forEach([1, 2, 3, 4, 5], () => sessions.start(request), { concurrency: 5 })
        // The shards gained at the start are looked into at the resumer's first looks.
        yield* Effect.sleep("1 second")
        const before = yield* Ref.get(scans)
        // Thirty intervals with nothing changed: no scan.
        yield* Effect.sleep("3 seconds")
        assert.strictEqual(yield* Ref.get(scans), before)
        assert.isAtMost(before, 2)
      }))

    it.effect("a session taken over (Resume) is read from the log once, and nothing is registered again", () =>
      Effect.gen(function*() {
        const sessions = yield* ClusterSessions.ClusterSessions
        // A session that ran elsewhere: in the log with one event, held by no runner.
        const { id, log, makeClient, simulator } = yield* registeredElsewhere
        yield* log.append(id, [{ seq: 1, event: { _tag: "Started", sessionId: id, start_url: request.start_url } }])
        yield* Ref.set(reads, {})
        yield* makeClient(id).Resume(undefined, { discard: true })
        // Running here: its channel is open at the service.
        yield* Effect.repeat(simulator.connections(id), { until: (n) => n === 1, schedule: Schedule.spaced("10 millis") }).pipe(
          Effect.timeout("10 seconds")
        )
        // One read of the record, the answers and the events; no registration: a take-over of
        // thousands of sessions makes one round trip to the store for each.
        assert.deepStrictEqual(yield* Ref.get(reads), { snapshot: 1 })
        // Its events are appended after the one it had (the log's tally was read, not rebuilt).
        const status = yield* sessions.status(id).pipe(
          Effect.delay("10 millis"),
          Effect.repeat({ until: (s) => s.lastSeq >= 2 }),
          Effect.timeout("10 seconds")
        )
        assert.strictEqual(status.run, "running")
        yield* sessions.close(id)
      }))
  })
})

/** The SDK over a simulator that speaks the observed dialect (it has retrieve: `getSession`). */
const ObservedLive = SdkLive.pipe(
  Layer.provideMerge(Simulator.layer({ port: 0, dialect: Dialect.observed, scenario: { actions: 2, ask: "none", frameDelay: "1 millis" } }))
)

describe("reattach learns the session's state from the service (observed dialect: getSession)", () => {
  layer(
    ClusterSessions.layerEmbedded().pipe(Layer.provideMerge(ObservedLive), Layer.provide(Logger.minimumLogLevel(LogLevel.Error))),
    { excludeTestServices: true, timeout: 30_000 }
  )((it) => {
    it.effect("a session that completed while no runner held it ends complete, without a connection", () =>
      Effect.gen(function*() {
        const api = yield* AgentApi.AgentApi
        const plain = yield* AgentSessions.AgentSessions
        const simulator = yield* Simulator.Simulator
        const sessions = yield* ClusterSessions.ClusterSessions
        // The session runs to its end outside the cluster.
        const session = yield* api.createSession(request)
        yield* Effect.scoped(Effect.flatMap(plain.attach(session, request.max_actions), (running) => Stream.runDrain(running.events)))
        assert.strictEqual(yield* simulator.connections(session.session_id), 1)
        // Handed to the cluster afterwards: the service says it is complete; nothing to attach to.
        yield* sessions.attach(session, request.max_actions)
        yield* Stream.runDrain(sessions.events(session.session_id))
        const status = yield* sessions.status(session.session_id)
        assert.strictEqual(status.run, "complete")
        assert.include(Option.getOrElse(status.endReason, () => ""), "the service reports the session complete")
        assert.strictEqual(yield* simulator.connections(session.session_id), 1)
      }))
  })
})

/** The SDK's `AgentApi`, counting the calls of `getSession`. */
const countingGetSession = (calls: Ref.Ref<number>) =>
  Layer.unwrapEffect(Effect.map(AgentApi.AgentApi, (api) =>
    Layer.succeed(AgentApi.AgentApi, {
      ...api,
      getSession: (sessionId, options) => Effect.zipRight(Ref.update(calls, (n) => n + 1), api.getSession(sessionId, options))
    })))

describe("reattach asks the service nothing where its dialect cannot retrieve (documented dialect)", () => {
  const calls = Ref.unsafeMake(0)
  layer(embeddedOver(countingGetSession(calls)), { excludeTestServices: true, timeout: 30_000 }
  )((it) => {
    it.effect("U10 an attached session runs to complete with no getSession call (AgentApi.canRetrieve is false)", () =>
      Effect.gen(function*() {
        const api = yield* AgentApi.AgentApi
        const sessions = yield* ClusterSessions.ClusterSessions
        assert.isFalse(api.canRetrieve)
        // `attach` is a take-over's path: the entity learns from the service where it can.
        const session = yield* api.createSession(request)
        yield* sessions.attach(session, request.max_actions)
        yield* follow(session.session_id)
        const status = yield* sessions.status(session.session_id)
        assert.strictEqual(status.run, "complete")
        assert.strictEqual(yield* Ref.get(calls), 0)
      }))
  })
})

describe("AgentApi.canRetrieve follows the dialect", () => {
  layer(ObservedLive, { excludeTestServices: true, timeout: 30_000 })((it) => {
    it.effect("the observed dialect retrieves", () =>
      Effect.gen(function*() {
        assert.isTrue((yield* AgentApi.AgentApi).canRetrieve)
      }))
  })
})

describe("a session's run is the runner's, not its entity's", () => {
  // Entities idle for 200 ms are passivated (1 minute by default).
  const IdleLive = embedded({ notFoundAfter: "2 seconds", maxIdleTime: "200 millis" })
  layer(IdleLive, { excludeTestServices: true, timeout: 30_000 })((it) => {
    it.effect("a session waiting for an answer runs on with no entity active, and a command reaches it there", () =>
      Effect.gen(function*() {
        const sessions = yield* ClusterSessions.ClusterSessions
        const sharding = yield* Sharding.Sharding
        const simulator = yield* Simulator.Simulator
        const session = yield* sessions.start(request)
        const id = session.session_id
        // It runs until it asks for a permission, then waits.
        const waiting = yield* sessions.status(id).pipe(
          Effect.delay("20 millis"),
          Effect.repeat({ until: (s) => s.pending.length > 0 }),
          Effect.timeout("10 seconds")
        )
        assert.strictEqual(waiting.run, "running")
        // Once idle, its entity is passivated; its run, its channel and its state stay.
        const idle = yield* sharding.activeEntityCount.pipe(
          Effect.delay("100 millis"),
          Effect.repeat({ until: (n) => n === 0 }),
          Effect.timeout("5 seconds"),
          Effect.option
        )
        assert.deepStrictEqual(idle, Option.some(0))
        assert.strictEqual(yield* simulator.connections(id), 1)
        // The answer reaches the run through an entity activated for it: the session completes on
        // the channel it had.
        const request_ = waiting.pending[0]!
        yield* sessions.respond(id, request_, Answer.grant())
        const outcome = yield* sessions.outcome(id).pipe(Effect.timeout("10 seconds"))
        assert.isString(outcome.response)
        assert.strictEqual(yield* simulator.connections(id), 1)
      }))
  })
})

/**
 * A TCP relay to the simulator whose first connection is held and never answered (an upgrade
 * that does not open within the connect time-out, as on a loaded service); the next are relayed.
 */
class StallingRelay extends Context.Tag("test/StallingRelay")<StallingRelay, {
  readonly wsUrl: string
  readonly held: () => number
  readonly relayed: () => number
}>() {}

const StallingRelayLive = Layer.scoped(
  StallingRelay,
  Effect.gen(function*() {
    const simulator = yield* Simulator.Simulator
    const target = new URL(simulator.wsUrl)
    const sockets = new Set<Net.Socket>()
    let held = 0
    let relayed = 0
    const server = Net.createServer((socket) => {
      sockets.add(socket)
      socket.on("close", () => sockets.delete(socket))
      socket.on("error", () => socket.destroy())
      if (held === 0) {
        held += 1
        return
      }
      relayed += 1
      const upstream = Net.connect(Number(target.port), target.hostname)
      sockets.add(upstream)
      upstream.on("close", () => sockets.delete(upstream))
      upstream.on("error", () => socket.destroy())
      socket.on("close", () => upstream.destroy())
      upstream.on("close", () => socket.destroy())
      socket.pipe(upstream).pipe(socket)
    })
    const port = yield* Effect.acquireRelease(
      Effect.async<number>((resume) => {
        server.listen(0, "127.0.0.1", () => {
          const address = server.address()
          resume(Effect.succeed(typeof address === "object" && address !== null ? address.port : 0))
        })
      }),
      () =>
        Effect.async<void>((resume) => {
          for (const socket of sockets) socket.destroy()
          server.close(() => resume(Effect.void))
        })
    )
    return { wsUrl: `ws://127.0.0.1:${port}${target.pathname === "/" ? "" : target.pathname}`, held: () => held, relayed: () => relayed }
  })
)

/** The SDK with its channels through the relay, a connect time-out of 500 ms. */
const SdkThroughRelayLive = Layer.unwrapEffect(
  Effect.gen(function*() {
    const simulator = yield* Simulator.Simulator
    const relay = yield* StallingRelay
    return NodeAgentSessions.layer({
      apiKey: simulator.accountKey,
      baseUrl: simulator.baseUrl,
      wsUrl: relay.wsUrl,
      dialect: simulator.dialect,
      events: { reconnect: fastReconnect, connectTimeout: "500 millis" }
    })
  })
)

describe("a run's channel not open within the connect time-out is tried again (it resumes)", () => {
  layer(
    ClusterSessions.layerEmbedded().pipe(
      Layer.provideMerge(SdkThroughRelayLive),
      Layer.provideMerge(StallingRelayLive),
      Layer.provideMerge(SimulatorLive),
      Layer.provide(Logger.minimumLogLevel(LogLevel.Error))
    ),
    { excludeTestServices: true, timeout: 30_000 }
  )((it) => {
    it.effect("the run's first attempt times out: the run attaches again and the session completes, nothing lost", () =>
      Effect.gen(function*() {
        const sessions = yield* ClusterSessions.ClusterSessions
        const simulator = yield* Simulator.Simulator
        const relay = yield* StallingRelay
        const session = yield* sessions.start(request)
        const seen = yield* follow(session.session_id)
        // One attempt held past its connect time-out, then a channel that delivered the session.
        assert.strictEqual(relay.held(), 1)
        assert.isAtLeast(relay.relayed(), 1)
        assert.deepStrictEqual(seen.map((l) => l.event), meaningful(yield* simulator.script(session.session_id)))
        const status = yield* sessions.status(session.session_id)
        assert.strictEqual(status.run, "complete")
        assert.strictEqual((yield* sessions.outcome(session.session_id)).actions, 3)
      }))
  })
})
