import * as PgClient from "@effect/sql-pg/PgClient"
import { assert, describe, layer } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { EventLog } from "../../src/cluster/index.js"
import { type SessionEvent, Session } from "../../src/index.js"
import * as Postgres from "../helpers/Postgres.js"

const PgLive = Layer.unwrapScoped(
  Effect.map(Postgres.start, (pg) => PgClient.layer({ url: Redacted.make(pg.url), maxConnections: 4 }))
)

// Two log layers on one database: the migration runs twice (the second finds it done).
const LogLive = Layer.merge(EventLog.layerSql(), Layer.fresh(EventLog.layerSql())).pipe(
  Layer.provideMerge(Layer.orDie(PgLive))
)

const info = (id: string) => Session.SessionInfo.make({
  session_id: Session.SessionId.make(id),
  status: Option.none(),
  start_time: Option.some("2026-11-22T10:00:00Z"),
  end_time: Option.none(),
  error: Option.none()
})

const started = (n: number): SessionEvent.SessionEvent => ({
  _tag: "Started",
  sessionId: Session.SessionId.make(`s1`),
  start_url: `https://example.com/${n}`
})

describe("EventLog on PostgreSQL", () => {
  layer(LogLive, { excludeTestServices: true, timeout: 60_000 })((it) => {
    it.effect("register keeps the first record; append and read keep order and sequence numbers", () =>
      Effect.gen(function*() {
        const log = yield* EventLog.EventLog
        const first = yield* log.register({ info: info("s1"), maxActions: 5, agent: Option.none() })
        const second = yield* log.register({ info: info("s1"), maxActions: 9, agent: Option.some("a") })
        assert.strictEqual(first.maxActions, 5)
        assert.strictEqual(second.maxActions, 5)
        assert.deepStrictEqual(second.info.session_id, "s1")
        const events = [1, 2, 3].map((seq) => ({ seq, event: started(seq) }))
        yield* log.append("s1", events)
        const read = yield* log.read("s1", 2, 10)
        assert.deepStrictEqual(read.map((l) => l.seq), [2, 3])
        assert.deepStrictEqual(read[0]!.event, events[1]!.event)
        // A sequence number is taken once: a second writer fails instead of duplicating.
        const taken = yield* Effect.flip(log.append("s1", [{ seq: 3, event: events[0]!.event }]))
        assert.strictEqual(taken._tag, "EventLogError")
        assert.strictEqual((yield* log.read("s1", 1, 10)).length, 3)
      }))

    it.effect("answers: the first answer to a request wins; end and purge", () =>
      Effect.gen(function*() {
        const log = yield* EventLog.EventLog
        yield* log.register({ info: info("s2"), maxActions: 5, agent: Option.none() })
        const request: SessionEvent.ExternalResourceRequested = {
          _tag: "ExternalResourceRequested",
          resource_type: "admin_permission_request",
          reason: "approve",
          action_session_id: Session.ActionSessionId.make("as_1"),
          field_name: Option.none()
        }
        assert.isTrue(yield* log.saveAnswer("s2", request, { _tag: "Deny" }))
        assert.isFalse(yield* log.saveAnswer("s2", request, { _tag: "Grant", input: Option.none() }))
        const answers = yield* log.answers("s2")
        assert.deepStrictEqual(answers.map((a) => a.answer._tag), ["Deny"])
        assert.deepStrictEqual(answers[0]!.request, request)
        yield* log.end("s2", "complete", Option.none())
        const record = yield* log.get("s2")
        assert.deepStrictEqual(Option.map(Option.flatMap(record, (r) => r.ended), (e) => e.status), Option.some("complete"))
        assert.strictEqual(yield* log.purge(new Date(Date.now() - 60_000)), 0)
        assert.isAtLeast(yield* log.purge(new Date(Date.now() + 60_000)), 1)
        assert.isTrue(Option.isNone(yield* log.get("s2")))
        assert.deepStrictEqual(yield* log.answers("s2"), [])
      }))

    it.effect("unendedIn: the unended sessions of the given shards, in id order, by pages", () =>
      Effect.gen(function*() {
        const log = yield* EventLog.EventLog
        for (const [id, shard] of [["u1", 7], ["u2", 7], ["u3", 8], ["u4", 9]] as const) {
          yield* log.register({ info: info(id), maxActions: 5, agent: Option.none(), shard })
        }
        yield* log.register({ info: info("u5"), maxActions: 5, agent: Option.none() })
        yield* log.end("u2", "complete", Option.none())
        assert.deepStrictEqual(yield* log.unendedIn([7, 8], { unsharded: false, after: "", limit: 10 }), ["u1", "u3"])
        assert.deepStrictEqual(yield* log.unendedIn([7, 8], { unsharded: false, after: "u1", limit: 10 }), ["u3"])
        assert.deepStrictEqual(yield* log.unendedIn([9], { unsharded: false, after: "", limit: 1 }), ["u4"])
        assert.deepStrictEqual(yield* log.unendedIn([], { unsharded: true, after: "u", limit: 10 }), ["u5"])
        assert.deepStrictEqual(yield* log.unendedIn([], { unsharded: false, after: "", limit: 10 }), [])
      }))

    it.effect("end of a session the log does not know records it ended; register then keeps that record", () =>
      Effect.gen(function*() {
        const log = yield* EventLog.EventLog
        yield* log.end("s3", "closed", Option.some("closed by a caller"))
        const registered = yield* log.register({ info: info("s3"), maxActions: 5, agent: Option.none() })
        assert.deepStrictEqual(Option.map(registered.ended, (e) => e.status), Option.some("closed"))
        assert.strictEqual(registered.maxActions, 0)
        // The first end wins.
        yield* log.end("s3", "complete", Option.none())
        const record = yield* log.get("s3")
        assert.deepStrictEqual(Option.map(Option.flatMap(record, (r) => r.ended), (e) => e.status), Option.some("closed"))
      }))
  })
})

/**
 * The log's gate (`maxConcurrentQueries`): at most that many of its operations reach the pool; a
 * burst of callers who give up while waiting leaves the process standing. Without the gate, 3,000
 * reads interrupted while queued in the `pg` pool made it hand each released connection to the
 * next waiter, which `@effect/sql-pg` released at once, recursively, until `RangeError: Maximum
 * call stack size exceeded` killed the process (a runner at 10,000 sessions).
 */
describe("EventLog on PostgreSQL: its operations in flight are bounded", () => {
  const GatedLive = Layer.unwrapScoped(Effect.map(Postgres.start, (pg) =>
    EventLog.layerSql({ maxConcurrentQueries: 2 }).pipe(
      Layer.provideMerge(Layer.orDie(PgClient.layer({ url: Redacted.make(pg.url), maxConnections: 4 })))
    )
  ))

  layer(GatedLive, { excludeTestServices: true, timeout: 120_000 })((it) => {
    it.effect("appends blocked in the database: two reach it, the rest wait in the process, and all finish", () =>
      Effect.gen(function*() {
        const log = yield* EventLog.EventLog
        const sql = yield* SqlClient.SqlClient
        yield* log.register({ info: info("g1"), maxActions: 5, agent: Option.none() })
        // A transaction inserts seq 1 and stays open: appends of seq 1 wait on its lock.
        const held = yield* Deferred.make<void>()
        const release = yield* Deferred.make<void>()
        yield* sql.withTransaction(Effect.gen(function*() {
          yield* sql`INSERT INTO agent_session_events (session_id, seq, event) VALUES ('g1', 1, '{}')`
          yield* Deferred.succeed(held, undefined)
          yield* Deferred.await(release)
          return yield* Effect.fail("rolled back")
        })).pipe(Effect.either, Effect.fork)
        yield* Deferred.await(held)
        const appends = yield* Effect.forEach(
          Array.from({ length: 10 }, () => log.append("g1", [{ seq: 1, event: started(1) }]).pipe(Effect.either)),
          (append) => Effect.fork(append)
        )
        const waiting = sql<{ readonly n: string }>`SELECT count(*) AS n FROM pg_stat_activity
          WHERE wait_event_type = 'Lock' AND query LIKE 'INSERT INTO agent_session_events%'`.pipe(
          Effect.map((rows) => Number(rows[0]?.n ?? 0))
        )
        // Wait until the database sees the blocked ones (a bounded wait: 100 looks, 50 ms apart).
        let blocked = 0
        for (let i = 0; i < 100 && blocked < 2; i++) {
          blocked = yield* waiting
          if (blocked < 2) yield* Effect.sleep("50 millis")
        }
        yield* Effect.sleep("300 millis")
        assert.strictEqual(yield* waiting, 2)
        // Released (rolled back): every append goes through in turn; one wins seq 1, the others
        // fail (one writer per session), none is lost in a queue.
        yield* Deferred.succeed(release, undefined)
        const results = yield* Effect.forEach(appends, Fiber.join)
        assert.strictEqual(results.filter((r) => r._tag === "Right").length, 1)
        assert.strictEqual(results.filter((r) => r._tag === "Left").length, 9)
      }).pipe(Effect.scoped))

    it.effect("3,000 reads that give up while they wait: the process stands and the log still answers", () =>
      Effect.gen(function*() {
        const log = yield* EventLog.EventLog
        yield* log.register({ info: info("g2"), maxActions: 5, agent: Option.none() })
        yield* log.append("g2", [{ seq: 1, event: started(1) }])
        // Each read gives up after 1 ms, most of them while they wait their turn.
        yield* Effect.forEach(
          Array.from({ length: 3_000 }, () => log.read("g2", 1, 10).pipe(Effect.timeout("1 millis"), Effect.ignore)),
          (read) => read,
          { concurrency: "unbounded", discard: true }
        )
        yield* Effect.sleep("500 millis")
        const events = yield* log.read("g2", 1, 10)
        assert.deepStrictEqual(events.map((e) => e.seq), [1])
      }))
  })
})
