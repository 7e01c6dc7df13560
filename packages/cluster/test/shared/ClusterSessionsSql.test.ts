/**
 * The cluster on a single runner whose storage is PostgreSQL (`ClusterSessions.layerSingleSql`:
 * the cluster's SQL message and runner storage and the SQL event log), written once for both
 * cluster editions, each against its own line's cluster, on a real PostgreSQL started by the test
 * run, against the simulator (`e2eSimulatorLayer`): a session runs to completion, its request answered through the cluster, its events in
 * the log and the cluster's tables created; a runner started again on the same database (the
 * first one gone) finds the session, its events and its outcome there; a session whose runner
 * went away while it waited for an answer is taken over by the next runner's first subscriber and
 * runs on to complete, every event once; a session keeps running, on its channel, once its entity
 * is passivated (a session's run is the runner's, not its entity's); a runner that stops while a
 * session streams hands it over (its channel drained, what it received persisted) and the next
 * runner runs it on: the log is the service's script exactly.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"
import { ClusterSessions, EventLog } from "../../src/index.js"
import { Answer, PgClient, Sharding, spacedTimes, SqlClient, unwrapScopedLayer } from "../../src/internal/line.js"
import { E2eSimulator, e2eSimulatorLayer, NodeAgentSessions, startPostgres } from "../helpers/line.js"
import { followGranting } from "./fixtures/follow.js"

const request = { start_url: "https://example.com", max_actions: 5, goal: "Find the opening hours" }

/** A database for the suite: its client (each runner below opens its own on the same server). */
const PgLive = unwrapScopedLayer(
  Effect.map(startPostgres, (pg) => PgClient.layer({ url: Redacted.make(pg.url), maxConnections: 4 }))
)

/** The SDK against the suite's simulator, its event channel reconnecting every 30 ms (at most 8 times). */
const SdkLive = unwrapScopedLayer(
  Effect.map(E2eSimulator, (simulator) =>
    NodeAgentSessions.layer({
      apiKey: simulator.accountKey,
      baseUrl: simulator.baseUrl,
      wsUrl: simulator.wsUrl,
      events: { reconnect: spacedTimes("30 millis", 8) }
    }))
)

/** A runner on the suite's database, with the SDK against the suite's simulator (both outlive each runner). */
const runner = ClusterSessions.layerSingleSql({ notFoundAfter: "2 seconds" }).pipe(
  Layer.provideMerge(SdkLive)
)

/** A runner whose idle entities are passivated after 200 ms (1 minute by default). */
const briefEntities = ClusterSessions.layerSingleSql({ notFoundAfter: "2 seconds", maxIdleTime: "200 millis" }).pipe(
  Layer.provideMerge(SdkLive)
)

const SuiteLive = Layer.merge(Layer.orDie(PgLive), e2eSimulatorLayer({ actions: 3, ask: "permission", frameDelay: 1 }))

describe("ClusterSessions on a single runner on PostgreSQL", () => {
  layer(SuiteLive, { excludeTestServices: true, timeout: "120 seconds" })((it) => {
    it.effect("a session runs to complete with its storage in PostgreSQL; a runner started again on the database finds it", () =>
      Effect.gen(function*() {
        const first = Effect.gen(function*() {
          const sessions = yield* ClusterSessions.ClusterSessions
          const session = yield* sessions.start(request)
          const seen = yield* followGranting(sessions, session.session_id)
          assert.deepStrictEqual(seen.map((l) => l.seq), seen.map((_, i) => i + 1))
          assert.strictEqual(seen.at(-1)?.event._tag, "Complete")
          assert.strictEqual(seen.filter((l) => l.event._tag === "ExternalResourceGranted").length, 1)
          const log = yield* EventLog.EventLog
          assert.strictEqual((yield* log.read(session.session_id, 1, 1_000)).length, seen.length)
          return { sessionId: session.session_id, events: seen.length }
        })
        const ran = yield* first.pipe(Effect.provide(runner))
        const sql = yield* SqlClient.SqlClient
        const tables = yield* sql<{ readonly table_name: string }>`SELECT table_name FROM information_schema.tables
          WHERE table_name LIKE 'cluster\\_%' OR table_name LIKE 'agent\\_session\\_%' ORDER BY table_name`
        const names = tables.map((t) => t.table_name)
        assert.includeMembers(names, ["agent_session_events", "agent_session_sessions", "agent_session_answers"])
        assert.isAtLeast(names.filter((n) => n.startsWith("cluster_")).length, 2, names.join(", "))
        // The first runner is gone (its layer released); a second one on the same database.
        const again = yield* Effect.gen(function*() {
          const sessions = yield* ClusterSessions.ClusterSessions
          const status = yield* sessions.status(ran.sessionId)
          const outcome = yield* sessions.outcome(ran.sessionId)
          return { status, outcome }
        }).pipe(Effect.provide(runner))
        assert.strictEqual(again.status.run, "complete")
        assert.strictEqual(again.status.lastSeq, ran.events)
        assert.strictEqual(again.outcome.actions, 3)
      }))

    it.effect("a session whose runner went away while it waited for an answer is taken over by the next runner: every event once", () =>
      Effect.gen(function*() {
        const sessionId = yield* Effect.gen(function*() {
          const sessions = yield* ClusterSessions.ClusterSessions
          const session = yield* sessions.start(request)
          // Until its request is asked, unanswered.
          yield* sessions.events(session.session_id).pipe(
            Stream.takeUntil((l) => l.event._tag === "ExternalResourceRequested"),
            Stream.runDrain,
            Effect.timeout("30 seconds")
          )
          return session.session_id
        }).pipe(Effect.provide(runner))
        const seen = yield* Effect.gen(function*() {
          const sessions = yield* ClusterSessions.ClusterSessions
          return yield* followGranting(sessions, sessionId).pipe(Effect.timeout("60 seconds"))
        }).pipe(Effect.provide(runner))
        assert.deepStrictEqual(seen.map((l) => l.seq), seen.map((_, i) => i + 1))
        assert.strictEqual(seen.filter((l) => l.event._tag === "Started").length, 1)
        assert.strictEqual(seen.at(-1)?.event._tag, "Complete")
      }))

    it.effect("a session waiting for an answer runs on with no entity active, on the channel it had, and a command reaches it", () =>
      Effect.gen(function*() {
        const sessions = yield* ClusterSessions.ClusterSessions
        const sharding = yield* Sharding.Sharding
        const session = yield* sessions.start(request)
        const id = session.session_id
        // Until its request is asked (read by its status: a subscriber would keep the entity active).
        yield* sessions.status(id).pipe(
          Effect.delay("50 millis"),
          Effect.repeat({ until: (s) => s.pending.length > 0 }),
          Effect.timeout("30 seconds")
        )
        // Its entity passivated, then a while more: its run and its channel stay (an unheld session
        // would show no connection).
        const entities = yield* sharding.activeEntityCount.pipe(
          Effect.delay("100 millis"),
          Effect.repeat({ until: (n) => n === 0 }),
          Effect.timeout("10 seconds"),
          Effect.option
        )
        assert.strictEqual(entities._tag === "Some" ? entities.value : -1, 0)
        yield* Effect.sleep("1 second")
        const waiting = yield* sessions.status(id)
        assert.strictEqual(waiting.run, "running")
        assert.isTrue(waiting.connection._tag === "Some", "its channel is held")
        const seen = yield* followGranting(sessions, id).pipe(Effect.timeout("60 seconds"))
        assert.deepStrictEqual(seen.map((l) => l.seq), seen.map((_, i) => i + 1))
        assert.strictEqual(seen.filter((l) => l.event._tag === "Started").length, 1)
        assert.strictEqual(seen.at(-1)?.event._tag, "Complete")
      }).pipe(Effect.provide(briefEntities)))
  })
})

describe("a runner that stops while a session streams", () => {
  // A session that streams for about 1.5 s once answered (10 actions, 40 ms between frames).
  const StreamingLive = Layer.merge(Layer.orDie(PgLive), e2eSimulatorLayer({ actions: 10, ask: "permission", askAfter: 1, frameDelay: 40 }))
  layer(StreamingLive, { excludeTestServices: true, timeout: "120 seconds" })((it) => {
    it.effect("hands the session over: the next runner runs it on, and its log is the service's script exactly", () =>
      Effect.gen(function*() {
        const simulator = yield* E2eSimulator
        const sessionId = yield* Effect.gen(function*() {
          const sessions = yield* ClusterSessions.ClusterSessions
          const session = yield* sessions.start({ ...request, max_actions: 20 })
          const waiting = yield* sessions.status(session.session_id).pipe(
            Effect.delay("50 millis"),
            Effect.repeat({ until: (s) => s.pending.length > 0 }),
            Effect.timeout("30 seconds")
          )
          // Answered, then the runner stops while the session streams on.
          yield* sessions.respond(session.session_id, waiting.pending[0]!, Answer.grant())
          yield* Effect.sleep("300 millis")
          // Still streaming when the runner stops (its complete is a second or more away).
          assert.strictEqual((yield* sessions.status(session.session_id)).run, "running")
          return session.session_id
        }).pipe(Effect.provide(runner))
        // The stopped runner gave the session up (its log released) without ending its run.
        const sql = yield* SqlClient.SqlClient
        const row = yield* sql<{ readonly writer: string | null; readonly end_status: string | null }>`SELECT writer,
          end_status FROM agent_session_sessions WHERE session_id = ${sessionId}`
        assert.deepStrictEqual(row.map((r) => [r.writer, r.end_status]), [[null, null]])
        const seen = yield* Effect.gen(function*() {
          const sessions = yield* ClusterSessions.ClusterSessions
          return yield* sessions.events(sessionId).pipe(
            Stream.runCollect,
            Effect.map((collected) => Array.from(collected)),
            Effect.timeout("60 seconds")
          )
        }).pipe(Effect.provide(runner))
        assert.deepStrictEqual(seen.map((l) => l.seq), seen.map((_, i) => i + 1))
        const script = (yield* simulator.script(sessionId)).filter((e) => e._tag !== "Heartbeat" && e._tag !== "Connected")
        assert.deepStrictEqual(seen.map((l) => l.event), script)
        assert.strictEqual(seen.at(-1)?.event._tag, "Complete")
      }))
  })
})
