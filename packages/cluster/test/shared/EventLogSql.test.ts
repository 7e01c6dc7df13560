/**
 * The event log's stores (in memory and in PostgreSQL, a real server started by the test run):
 * written once for both cluster editions, run by each against its own line's stores.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Scope from "effect/Scope"
import * as EventLog from "../../src/EventLog.js"
import { failureOption, PgClient, SqlClient, unwrapScopedLayer } from "../../src/internal/line.js"
import { migration0003 } from "../../binding/internal/eventLogSql.js"
import { claimRetryHints } from "../../binding/internal/eventLogMemory.js"
import { claimHintMaxMillis, claimLog } from "../../binding/internal/writer.js"
import { extendScope, forkChild, Session, type SessionEvent, startPostgres } from "../helpers/line.js"

const PgLive = unwrapScopedLayer(
  Effect.map(startPostgres, (pg) => PgClient.layer({ url: Redacted.make(pg.url), maxConnections: 4 }))
)

// Two log layers on one database: the migration runs twice (the second finds it done).
const LogLive = Layer.merge(EventLog.layerSql(), Layer.fresh(EventLog.layerSql())).pipe(
  Layer.provideMerge(Layer.orDie(PgLive))
)

/** An append's outcome: `undefined` when written, else its failure. */
const appendOutcome = <E>(self: Effect.Effect<void, E>): Effect.Effect<E | undefined> =>
  Effect.map(Effect.exit(self), (exit) => Exit.isSuccess(exit) ? undefined : Option.getOrUndefined(failureOption(exit.cause)))

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

/**
 * `snapshot` gives what `get`, `answers` and `read` give, for a session with events and answers,
 * from its start and from a later sequence number, for a page shorter than the log, for an ended
 * session and for an unknown one.
 */
const snapshotAgrees = Effect.gen(function*() {
  const log = yield* EventLog.EventLog
  const request: SessionEvent.ExternalResourceRequested = {
    _tag: "ExternalResourceRequested",
    resource_type: "request_user_input",
    reason: "a name",
    action_session_id: Session.ActionSessionId.make("as_snap"),
    field_name: Option.some("name")
  }
  yield* log.register({ info: info("snap"), maxActions: 7, agent: Option.some("agent-1"), shard: 3 })
  yield* log.append("snap", [1, 2, 3, 4, 5].map((seq) => ({ seq, event: started(seq) })))
  yield* log.saveAnswer("snap", request, { _tag: "Grant", input: Option.some("Ada") })
  const agrees = (sessionId: string, fromSeq: number, limit: number) =>
    Effect.gen(function*() {
      const snapshot = yield* log.snapshot(sessionId, fromSeq, limit)
      assert.deepStrictEqual(snapshot.record, yield* log.get(sessionId))
      assert.deepStrictEqual(snapshot.answers, yield* log.answers(sessionId))
      assert.deepStrictEqual(snapshot.events, yield* log.read(sessionId, fromSeq, limit))
      return snapshot
    })
  const whole = yield* agrees("snap", 1, 10)
  assert.deepStrictEqual(whole.events.map((l) => l.seq), [1, 2, 3, 4, 5])
  assert.deepStrictEqual(whole.answers.map((a) => a.answer), [{ _tag: "Grant", input: Option.some("Ada") }])
  assert.deepStrictEqual(Option.map(whole.record, (r) => [r.maxActions, r.agent]), Option.some([7, Option.some("agent-1")]))
  assert.deepStrictEqual((yield* agrees("snap", 3, 2)).events.map((l) => l.seq), [3, 4])
  assert.deepStrictEqual((yield* agrees("snap", 6, 10)).events, [])
  yield* log.end("snap", "ended", Option.some("a reason"))
  const ended = yield* agrees("snap", 1, 1)
  assert.deepStrictEqual(
    Option.map(Option.flatMap(ended.record, (r) => r.ended), (e) => e.reason),
    Option.some(Option.some("a reason"))
  )
  const unknown = yield* agrees("nobody", 1, 10)
  assert.isTrue(Option.isNone(unknown.record))
  assert.deepStrictEqual([unknown.answers, unknown.events], [[], []])
})

/**
 * Snapshots asked for at once (the store reads them together, in batches): each gives what
 * `get`, `answers` and `read` give for its own session and page, whichever sessions share its
 * read (sessions of different lengths, from different sequence numbers, unknown ones).
 */
const snapshotsAtOnceAgree = Effect.gen(function*() {
  const log = yield* EventLog.EventLog
  const ids = Array.from({ length: 60 }, (_, i) => `many-${i}`)
  yield* Effect.forEach(ids, (id, i) =>
    Effect.gen(function*() {
      yield* log.register({ info: info(id), maxActions: i + 1, agent: Option.none(), shard: i % 4 })
      if (i % 3 !== 0) yield* log.append(id, Array.from({ length: i % 7 + 1 }, (_, k) => ({ seq: k + 1, event: started(i * 10 + k) })))
      if (i % 5 === 0) {
        yield* log.saveAnswer(id, {
          _tag: "ExternalResourceRequested",
          resource_type: "admin_permission_request",
          reason: "a permission",
          action_session_id: Session.ActionSessionId.make(`as_${id}`),
          field_name: Option.none()
        }, { _tag: "Deny" })
      }
    }), { discard: true })
  const asked = [...ids, "many-unknown-1", "many-unknown-2"].map((id, i) => ({ id, fromSeq: 1 + (i % 3), limit: 1 + (i % 4) }))
  const snapshots = yield* Effect.forEach(asked, ({ fromSeq, id, limit }) => log.snapshot(id, fromSeq, limit), {
    concurrency: "unbounded"
  })
  for (const [i, { fromSeq, id, limit }] of asked.entries()) {
    const snapshot = snapshots[i]!
    assert.deepStrictEqual(snapshot.record, yield* log.get(id))
    assert.deepStrictEqual(snapshot.answers, yield* log.answers(id))
    assert.deepStrictEqual(snapshot.events, yield* log.read(id, fromSeq, limit))
  }
  assert.isTrue(snapshots.some((s) => s.events.length > 1))
  assert.isTrue(snapshots.some((s) => s.answers.length === 1))
  assert.isTrue(Option.isNone(snapshots[snapshots.length - 1]!.record))
})

/**
 * `answersOf` gives, in one read, what `answers` gives for each session: sessions with answers
 * (one with two), and none for a session without answers, an unknown one, or no session at all.
 */
const answersOfAgrees = Effect.gen(function*() {
  const log = yield* EventLog.EventLog
  const ask = (id: string): SessionEvent.ExternalResourceRequested => ({
    _tag: "ExternalResourceRequested",
    resource_type: "request_user_input",
    reason: "a name",
    action_session_id: Session.ActionSessionId.make(id),
    field_name: Option.none()
  })
  for (const id of ["of-1", "of-2", "of-3"]) yield* log.register({ info: info(id), maxActions: 5, agent: Option.none() })
  yield* log.saveAnswer("of-1", ask("as_a"), { _tag: "Deny" })
  yield* log.saveAnswer("of-2", ask("as_b"), { _tag: "Grant", input: Option.some("Ada") })
  yield* log.saveAnswer("of-2", ask("as_c"), { _tag: "Deny" })
  const found = yield* log.answersOf(["of-1", "of-2", "of-3", "nobody"])
  assert.deepStrictEqual([...found.keys()].sort(), ["of-1", "of-2"])
  for (const id of ["of-1", "of-2"]) assert.deepStrictEqual(found.get(id), yield* log.answers(id))
  assert.strictEqual(found.get("of-2")?.length, 2)
  assert.strictEqual((yield* log.answersOf([])).size, 0)
})

/** Waits on the wall clock (claims lapse by it, whatever the test's clock). */
const wallClockSleep = (millis: number) => Effect.promise(() => new Promise((resolve) => setTimeout(resolve, millis)))

/**
 * One writer per log: a claim holds against other writers until released or lapsed (not
 * renewed); renewed, it holds on; the holder claims again freely; an unknown session is claimable.
 */
const claimsHold = Effect.gen(function*() {
  const log = yield* EventLog.EventLog
  yield* log.register({ info: info("claimed"), maxActions: 3, agent: Option.none() })
  yield* log.register({ info: info("lapsing"), maxActions: 3, agent: Option.none() })
  assert.isTrue(yield* log.claim("claimed", "runner-a", 60_000))
  assert.isTrue(yield* log.claim("claimed", "runner-a", 60_000))
  assert.isFalse(yield* log.claim("claimed", "runner-b", 60_000))
  // Another writer's release does nothing; the holder's frees the log.
  yield* log.release("claimed", "runner-b")
  assert.isFalse(yield* log.claim("claimed", "runner-b", 60_000))
  yield* log.release("claimed", "runner-a")
  assert.isTrue(yield* log.claim("claimed", "runner-b", 60_000))
  // A claim not renewed lapses; renewed, it holds.
  assert.isTrue(yield* log.claim("lapsing", "runner-a", 300))
  yield* log.renew("runner-a", ["lapsing"], 1_500)
  yield* wallClockSleep(600)
  assert.isFalse(yield* log.claim("lapsing", "runner-b", 60_000))
  yield* wallClockSleep(1_200)
  assert.isTrue(yield* log.claim("lapsing", "runner-b", 60_000))
  // A runner's renewal extends its activations' claims (`runner#n`).
  yield* log.register({ info: info("activation"), maxActions: 3, agent: Option.none() })
  assert.isTrue(yield* log.claim("activation", "runner-c#1", 300))
  yield* log.renew("runner-c", ["activation"], 1_500)
  yield* wallClockSleep(600)
  assert.isFalse(yield* log.claim("activation", "runner-c#2", 60_000))
  // A renewal by a writer that does not hold the claim changes nothing.
  yield* log.renew("runner-a", ["lapsing", "claimed"], 60_000)
  assert.isFalse(yield* log.claim("lapsing", "runner-a", 60_000))
  assert.isTrue(yield* log.claim("nobody", "runner-a", 60_000))
})

/**
 * A claim holds for as long as its runner lives: lapsed (not renewed), it is not taken while the
 * runner is shown alive (`live`: a runner stalled past its renewals), and is taken once the runner
 * is gone. Appends with a writer are written only while that writer holds the log: another
 * writer's are refused (operation `claim`) and write nothing, before and after a take-over.
 */
const claimsFollowLiveness = Effect.gen(function*() {
  const log = yield* EventLog.EventLog
  yield* log.register({ info: info("stalled"), maxActions: 3, agent: Option.none() })
  const alive = yield* Scope.make()
  yield* extendScope(alive)(log.live("runner-stalled"))
  assert.isTrue(yield* log.claim("stalled", "runner-stalled#1", 200))
  yield* log.append("stalled", [{ seq: 1, event: started(1) }], "runner-stalled#1")
  const refused = yield* Effect.flip(log.append("stalled", [{ seq: 2, event: started(2) }], "runner-next#1"))
  assert.strictEqual(refused.operation, "claim")
  // Lapsed while its runner lives: held.
  yield* wallClockSleep(600)
  assert.isFalse(yield* log.claim("stalled", "runner-next#1", 60_000))
  // Awake again, it still writes.
  yield* log.append("stalled", [{ seq: 2, event: started(2) }], "runner-stalled#1")
  // Gone (its connection closed, as when its process is killed): the lapsed claim is taken, and
  // the writer gone writes no more.
  yield* Scope.close(alive, Exit.void)
  yield* wallClockSleep(300)
  assert.isTrue(yield* log.claim("stalled", "runner-next#1", 60_000))
  const late = yield* Effect.flip(log.append("stalled", [{ seq: 3, event: started(3) }], "runner-stalled#1"))
  assert.strictEqual(late.operation, "claim")
  yield* log.append("stalled", [{ seq: 3, event: started(4) }], "runner-next#1")
  assert.deepStrictEqual((yield* log.read("stalled", 1, 10)).map((l) => l.event), [started(1), started(2), started(4)])
  // An append with a writer to a log nobody holds is refused too.
  yield* log.register({ info: info("nobody-holds"), maxActions: 3, agent: Option.none() })
  assert.strictEqual((yield* Effect.flip(log.append("nobody-holds", [{ seq: 1, event: started(1) }], "runner-next#1"))).operation, "claim")
  assert.deepStrictEqual(yield* log.read("nobody-holds", 1, 10), [])
})

/**
 * Claims that come together (read together on PostgreSQL): each answered as it would be alone.
 * Unclaimed, the writer's own, unknown: taken; held by a live runner, lapsed or not: refused;
 * held by a runner that is gone: refused until it lapses (the SQL store says when to ask again),
 * then taken; two writers of one session at once: one of them.
 */
const claimsAtOnce = (hinted: boolean) => Effect.gen(function*() {
  const log = yield* EventLog.EventLog
  const ids = ["at-free-1", "at-free-2", "at-mine", "at-live", "at-live-lapsed", "at-gone", "at-gone-lapsed", "at-twice"]
  for (const id of ids) yield* log.register({ info: info(id), maxActions: 3, agent: Option.none() })
  const alive = yield* Scope.make()
  yield* extendScope(alive)(log.live("at-runner-live"))
  assert.isTrue(yield* log.claim("at-mine", "at-runner-next#1", 60_000))
  assert.isTrue(yield* log.claim("at-live", "at-runner-live#1", 60_000))
  assert.isTrue(yield* log.claim("at-live-lapsed", "at-runner-live#2", 200))
  assert.isTrue(yield* log.claim("at-gone", "at-runner-gone#1", 60_000))
  assert.isTrue(yield* log.claim("at-gone-lapsed", "at-runner-gone#2", 200))
  yield* wallClockSleep(400)
  const asked: ReadonlyArray<readonly [string, string]> = [
    ["at-free-1", "at-runner-next#1"],
    ["at-free-2", "at-runner-next#2"],
    ["at-mine", "at-runner-next#1"],
    ["at-live", "at-runner-next#3"],
    ["at-live-lapsed", "at-runner-next#4"],
    ["at-gone", "at-runner-next#5"],
    ["at-gone-lapsed", "at-runner-next#6"],
    ["at-unknown", "at-runner-next#7"],
    ["at-twice", "at-runner-next#8"],
    ["at-twice", "at-runner-other#1"]
  ]
  const claimed = yield* Effect.forEach(asked, ([id, writer]) => log.claim(id, writer, 60_000), { concurrency: "unbounded" })
  assert.deepStrictEqual(claimed.slice(0, 8), [true, true, true, false, false, false, true, true])
  assert.strictEqual(claimed.slice(8).filter((c) => c).length, 1)
  // Appends follow the claims as taken.
  yield* log.append("at-gone-lapsed", [{ seq: 1, event: started(1) }], "at-runner-next#6")
  assert.strictEqual((yield* Effect.flip(log.append("at-gone", [{ seq: 1, event: started(1) }], "at-runner-next#5"))).operation, "claim")
  // On PostgreSQL, the claim held by a runner that is gone is asked for again once it lapses.
  const hint = claimRetryHints.get(log)
  if (hinted) {
    assert.isDefined(hint, "the SQL store registers its retry hints")
    const wait = hint?.("at-gone", "at-runner-next#5")
    assert.isTrue(wait !== undefined && wait > 50_000 && wait <= 60_000, `waits ${wait}`)
    assert.isUndefined(hint?.("at-gone", "at-runner-next#5"))
    assert.isUndefined(hint?.("at-live", "at-runner-next#3"))
  } else assert.isUndefined(hint)
  yield* Scope.close(alive, Exit.void)
})

/**
 * Two writers asking at once (in one batch) for a session whose claim lapsed and whose
 * runner is gone: one of them takes it, as when asked one after the other. Two claims fill the
 * `claimers` places first, so that the two asked for the same session wait and go in one batch.
 */
const lapsedClaimTakenOnce = Effect.gen(function*() {
  const log = yield* EventLog.EventLog
  const ids = ["rv-fill-1", "rv-fill-2", "rv-fill-3", "rv-fill-4", "rv-lapsed"]
  for (const id of ids) yield* log.register({ info: info(id), maxActions: 3, agent: Option.none() })
  assert.isTrue(yield* log.claim("rv-lapsed", "rv-runner-gone#1", 200))
  yield* wallClockSleep(400)
  const asked: ReadonlyArray<readonly [string, string]> = [
    ["rv-fill-1", "rv-runner-a#1"],
    ["rv-fill-2", "rv-runner-a#2"],
    ["rv-fill-3", "rv-runner-a#3"],
    ["rv-fill-4", "rv-runner-a#4"],
    ["rv-lapsed", "rv-runner-a#5"],
    ["rv-lapsed", "rv-runner-a#6"]
  ]
  const claimed = yield* Effect.forEach(asked, ([id, writer]) => log.claim(id, writer, 60_000), { concurrency: "unbounded" })
  assert.deepStrictEqual(claimed.slice(0, 4), [true, true, true, true])
  // Each writer told it holds the log reads it and appends: only one may be told so.
  assert.strictEqual(claimed.slice(4).filter((c) => c).length, 1, `both told they hold it: ${claimed.slice(4)}`)
})

/**
 * A claim whose holder's lock is free (its runner gone, or alive while its lock's connection is
 * being opened again: a database restart, `live` returning after 30 s still trying) and whose
 * lease has not lapsed, released by its holder: a writer waiting in `claimLog` on the store's
 * hint (the lease's lapse, 4 s on) takes it within about a second of the release
 * (`claimHintMaxMillis`), not at the lapse.
 */
const releasedClaimTakenSoon = Effect.gen(function*() {
  const log = yield* EventLog.EventLog
  yield* log.register({ info: info("rv-released"), maxActions: 3, agent: Option.none() })
  assert.isTrue(yield* log.claim("rv-released", "rv-runner-unlocked#1", 4_000))
  const waiter = yield* forkChild(claimLog(log, "rv-released", "rv-runner-b#1"))
  yield* wallClockSleep(300)
  yield* log.release("rv-released", "rv-runner-unlocked#1")
  const released = Date.now()
  yield* Fiber.join(waiter)
  const waited = Date.now() - released
  assert.isTrue(waited < claimHintMaxMillis + 200, `taken ${waited} ms after its release`)
})

describe("EventLog in memory", () => {
  layer(EventLog.layerMemory())((it) => {
    it.effect("claim: one writer per log until released or lapsed", () => claimsHold)
    it.effect("claim: a lapsed claim holds while its runner lives, not once it is gone; appends only by the holder", () =>
      claimsFollowLiveness)
    it.effect("snapshot: the record, the answers and a page of events, as get, answers and read", () => snapshotAgrees)
    it.effect("answersOf: the answers of several sessions in one read, as answers gives them", () => answersOfAgrees)
    it.effect("snapshots asked for at once: each as get, answers and read give it", () => snapshotsAtOnceAgree)
    it.effect("claims asked for at once: each as it would be alone", () => claimsAtOnce(false))
    it.effect("claims asked for at once: a lapsed claim asked for twice is taken once", () => lapsedClaimTakenOnce)
  })
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

    it.effect("snapshot: the record, the answers and a page of events in one read, as get, answers and read", () =>
      snapshotAgrees)

    it.effect("claim: one writer per log until released or lapsed", () => claimsHold)

    it.effect("claim: a lapsed claim holds while its runner lives, not once it is gone; appends only by the holder", () =>
      claimsFollowLiveness)

    it.effect("a runner whose lock connection is cut: its claims are taken once lapsed, its appends refused; the lock is taken again", () =>
      Effect.gen(function*() {
        const log = yield* EventLog.EventLog
        const sql = yield* SqlClient.SqlClient
        yield* log.register({ info: info("cut"), maxActions: 3, agent: Option.none() })
        const alive = yield* Scope.make()
        yield* extendScope(alive)(log.live("runner-cut"))
        // The lock is on a connection of its own, outside the pool (the pool has 4).
        const lockHolders = sql<{ readonly pid: number }>`SELECT pid FROM pg_stat_activity
          WHERE application_name = 'effect-agent-session writer lock'`
        assert.strictEqual((yield* lockHolders).length, 1)
        assert.isTrue(yield* log.claim("cut", "runner-cut#1", 300))
        yield* log.append("cut", [{ seq: 1, event: started(1) }], "runner-cut#1")
        // Its connection cut by the server (as when the database restarts or the network fails).
        yield* sql`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
          WHERE application_name = 'effect-agent-session writer lock'`
        yield* wallClockSleep(400)
        // Lapsed, its runner not shown alive: taken; the runner cut off writes no more.
        assert.isTrue(yield* log.claim("cut", "runner-other#1", 60_000))
        assert.strictEqual(
          (yield* Effect.flip(log.append("cut", [{ seq: 2, event: started(2) }], "runner-cut#1"))).operation,
          "claim"
        )
        yield* log.renew("runner-cut", ["cut"], 60_000)
        assert.strictEqual(
          (yield* Effect.flip(log.append("cut", [{ seq: 2, event: started(2) }], "runner-cut#1"))).operation,
          "claim"
        )
        assert.deepStrictEqual((yield* log.read("cut", 1, 10)).map((l) => l.seq), [1])
        // Within a second or two the lock is held again, on a new connection: a lapsed claim of
        // the runner holds again.
        yield* wallClockSleep(2_500)
        assert.strictEqual((yield* lockHolders).length, 1)
        yield* log.register({ info: info("cut-2"), maxActions: 3, agent: Option.none() })
        assert.isTrue(yield* log.claim("cut-2", "runner-cut#2", 200))
        yield* wallClockSleep(500)
        assert.isFalse(yield* log.claim("cut-2", "runner-other#2", 60_000))
        yield* Scope.close(alive, Exit.void)
        yield* wallClockSleep(300)
        assert.strictEqual((yield* lockHolders).length, 0)
        assert.isTrue(yield* log.claim("cut-2", "runner-other#2", 60_000))
      }))

    it.effect("answersOf: the answers of several sessions in one read, as answers gives them", () => answersOfAgrees)
    it.effect("snapshots asked for at once, read together: each as get, answers and read give it", () => snapshotsAtOnceAgree)
    it.effect("claims asked for at once, asked together: each as it would be alone; one held by a runner gone is asked again once it lapses", () =>
      claimsAtOnce(true))
    it.effect("claims asked for at once: a lapsed claim asked for twice is taken once", () => lapsedClaimTakenOnce)
    it.effect("a claim released is taken within about a second, whatever the hint said", () => releasedClaimTakenSoon)

    it.effect("appends that come together are written together; one whose sequence is taken fails alone", () =>
      Effect.gen(function*() {
        const log = yield* EventLog.EventLog
        const sql = yield* SqlClient.SqlClient
        const ids = Array.from({ length: 200 }, (_, i) => `batch-${String(i).padStart(3, "0")}`)
        yield* Effect.forEach(ids, (id) => log.register({ info: info(id), maxActions: 5, agent: Option.none() }), {
          discard: true
        })
        const appendAll = (seqOf: (id: string) => number) =>
          Effect.forEach(ids, (id) => appendOutcome(log.append(id, [{ seq: seqOf(id), event: started(seqOf(id)) }])), {
            concurrency: "unbounded"
          })
        // 200 appends at once: all written, in a handful of statements (rows written by one
        // statement share its transaction's start time, `logged_at`), not 200.
        const first = yield* appendAll(() => 1)
        assert.isTrue(first.every((result) => result === undefined))
        const statements = yield* sql<{ readonly n: number }>`SELECT count(DISTINCT logged_at)::int AS n
          FROM agent_session_events WHERE session_id LIKE 'batch-%'`
        assert.isBelow(statements[0]!.n, 20)
        // 200 again, batch-100's with its sequence number 1 again: it fails, alone.
        const second = yield* appendAll((id) => id === "batch-100" ? 1 : 2)
        assert.deepStrictEqual(ids.filter((_, i) => second[i] !== undefined), ["batch-100"])
        assert.strictEqual(second[100]?._tag, "EventLogError")
        const seqs = yield* Effect.forEach(ids, (id) => Effect.map(log.read(id, 1, 10), (events) => events.map((e) => e.seq)))
        ids.forEach((id, i) => assert.deepStrictEqual(seqs[i], id === "batch-100" ? [1] : [1, 2], id))
      }))

    it.effect("appends with a writer that come together are written together; one whose writer lost the log is refused alone", () =>
      Effect.gen(function*() {
        const log = yield* EventLog.EventLog
        const sql = yield* SqlClient.SqlClient
        const ids = Array.from({ length: 200 }, (_, i) => `held-${String(i).padStart(3, "0")}`)
        yield* Effect.forEach(ids, (id) =>
          Effect.andThen(
            log.register({ info: info(id), maxActions: 5, agent: Option.none() }),
            log.claim(id, `${id}-writer`, 60_000)
          ), { discard: true })
        const appendAll = (seq: number, writerOf: (id: string) => string | undefined) =>
          Effect.forEach(ids, (id) => appendOutcome(log.append(id, [{ seq, event: started(seq) }], writerOf(id))), {
            concurrency: "unbounded"
          })
        const first = yield* appendAll(1, (id) => `${id}-writer`)
        assert.isTrue(first.every((result) => result === undefined))
        const statements = yield* sql<{ readonly n: number }>`SELECT count(DISTINCT logged_at)::int AS n
          FROM agent_session_events WHERE session_id LIKE 'held-%'`
        assert.isBelow(statements[0]!.n, 20)
        // held-050 by a writer that does not hold it, held-150 with no writer (not checked): the
        // first is refused alone, the second written.
        const second = yield* appendAll(2, (id) => id === "held-050" ? "someone-else" : id === "held-150" ? undefined : `${id}-writer`)
        assert.deepStrictEqual(ids.filter((_, i) => second[i] !== undefined), ["held-050"])
        assert.strictEqual(second[50]?.operation, "claim")
        const seqs = yield* Effect.forEach(ids, (id) => Effect.map(log.read(id, 1, 10), (events) => events.map((e) => e.seq)))
        ids.forEach((id, i) => assert.deepStrictEqual(seqs[i], id === "held-050" ? [1] : [1, 2], id))
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

    it.effect("migration 0003: an answer stored under the earlier key (id/type) is keyed anew; a second answer is refused", () =>
      Effect.gen(function*() {
        const log = yield* EventLog.EventLog
        const sql = yield* SqlClient.SqlClient
        yield* log.register({ info: info("m1"), maxActions: 5, agent: Option.none() })
        const request: SessionEvent.ExternalResourceRequested = {
          _tag: "ExternalResourceRequested",
          resource_type: "request_user_input",
          reason: "a name",
          action_session_id: Session.ActionSessionId.make("as_m1"),
          field_name: Option.none()
        }
        const encoded = JSON.stringify({ ...request, field_name: null, _tag: "ExternalResourceRequested" })
        yield* sql`INSERT INTO agent_session_answers (session_id, request_key, request, answer)
          VALUES ('m1', 'as_m1/request_user_input', ${encoded}, ${JSON.stringify({ _tag: "Deny" })})`
        // Keyed anew, the answer recorded under the earlier key keeps a second one out.
        yield* migration0003
        assert.isFalse(yield* log.saveAnswer("m1", request, { _tag: "Grant", input: Option.none() }))
        const answers = yield* log.answers("m1")
        assert.deepStrictEqual(answers.map((a) => [a.request.action_session_id, a.answer._tag]), [["as_m1", "Deny"]])
        const keys = yield* sql<{ readonly request_key: string }>`SELECT request_key FROM agent_session_answers
          WHERE session_id = 'm1'`
        assert.deepStrictEqual(keys.map((k) => k.request_key), ["as_m1\u00010request_user_input"])
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
 * A log operation runs to its end once started, even when its caller gives up. Before, 3,000
 * reads that gave up while they waited for a connection made the `pg` pool hand each released
 * connection to the next abandoned waiter, which `@effect/sql-pg` released at once, recursively,
 * until `RangeError: Maximum call stack size exceeded` killed the process (a runner at 10,000
 * sessions).
 */
describe("EventLog on PostgreSQL: operations whose callers give up", () => {
  const SmallPoolLive = unwrapScopedLayer(Effect.map(startPostgres, (pg) =>
    EventLog.layerSql().pipe(
      Layer.provideMerge(Layer.orDie(PgClient.layer({ url: Redacted.make(pg.url), maxConnections: 4 })))
    )
  ))

  layer(SmallPoolLive, { excludeTestServices: true, timeout: 120_000 })((it) => {
    it.effect("3,000 reads that give up while they wait: the process stands and the log still answers", () =>
      Effect.gen(function*() {
        const log = yield* EventLog.EventLog
        yield* log.register({ info: info("g2"), maxActions: 5, agent: Option.none() })
        yield* log.append("g2", [{ seq: 1, event: started(1) }])
        // Each read gives up after 1 ms, most of them while they wait for a connection.
        yield* Effect.forEach(
          Array.from({ length: 3_000 }, () => log.read("g2", 1, 10).pipe(Effect.timeout("1 millis"), Effect.ignore)),
          (read) => read,
          { concurrency: "unbounded", discard: true }
        )
        const events = yield* log.read("g2", 1, 10)
        assert.deepStrictEqual(events.map((e) => e.seq), [1])
      }))
  })
})
