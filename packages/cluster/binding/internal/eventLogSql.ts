/**
 * The event log's store in PostgreSQL: written once for both cluster editions (the SQL client,
 * its migrator and `@effect/sql-pg`'s client come from each line's `internal/line.ts`); the store
 * in memory, and the helpers both share, are `eventLogMemory.ts`.
 */
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import { Ledger } from "effect-agent-session-core"
import { ConnectionShell } from "effect-agent-session-shell"
import type * as EventLog from "../../src/EventLog.js"
import { type EventLogError } from "../../src/EventLog.js"
import {
  catchAllCause,
  isMigrationLocked,
  Migrator,
  optionFromNullish,
  PgClient,
  retryWhile,
  Session,
  SessionEvent,
  spacedTimes,
  SqlClient,
  type SqlConnection,
  type SqlError
} from "../../src/internal/line.js"
import { parseJson } from "../../src/internal/lineSchema.js"
import {
  AnswerSchema,
  claimLost,
  claimRetryHints,
  fail,
  runnerOf,
  unknownRecord
} from "./eventLogMemory.js"
import { makeGate } from "./gate.js"

/**
 * The key a request is answered by: the protocol core's (`Ledger.requestKey`: its action session
 * and raw resource type; bounded), the same as the connection's and the session's. Stored
 * as `Ledger.storageKey` of it (PostgreSQL text holds no U+0000, the key's separator).
 */
export const requestKey: (request: SessionEvent.ExternalResourceRequested) => string = ConnectionShell.keyOf

const eventJson = parseJson(SessionEvent.SessionEvent)
const encodeEvent = Schema.encodeSync(eventJson)
const decodeEvent = Schema.decodeUnknownSync(eventJson)
const requestJson = parseJson(SessionEvent.ExternalResourceRequested)
const encodeRequest = Schema.encodeSync(requestJson)
const decodeRequest = Schema.decodeUnknownSync(requestJson)
const decodeRequestOption = Schema.decodeUnknownOption(requestJson)
const answerJson = parseJson(AnswerSchema)
const encodeAnswer = Schema.encodeSync(answerJson)
const decodeAnswer = Schema.decodeUnknownSync(answerJson)
const infoJson = parseJson(Session.SessionInfo)
const encodeInfo = Schema.encodeSync(infoJson)
const decodeInfo = Schema.decodeUnknownSync(infoJson)

/** The first key of the writers' locks (`live`): "ASWR". */
const writerLockSpace = 0x41535752

// ---------------------------------------------------------------------------
// SQL
// ---------------------------------------------------------------------------

const migration0001 = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE IF NOT EXISTS agent_session_sessions (
    session_id text PRIMARY KEY,
    info text NOT NULL,
    max_actions integer NOT NULL,
    agent text,
    end_status text,
    end_reason text,
    created_at timestamptz NOT NULL DEFAULT now(),
    ended_at timestamptz
  )`
  yield* sql`CREATE TABLE IF NOT EXISTS agent_session_events (
    session_id text NOT NULL,
    seq integer NOT NULL,
    event text NOT NULL,
    logged_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (session_id, seq)
  )`
  yield* sql`CREATE TABLE IF NOT EXISTS agent_session_answers (
    session_id text NOT NULL,
    request_key text NOT NULL,
    request text NOT NULL,
    answer text NOT NULL,
    answered_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (session_id, request_key)
  )`
  yield* sql`CREATE INDEX IF NOT EXISTS agent_session_sessions_ended_at ON agent_session_sessions (ended_at)`
  yield* sql`CREATE INDEX IF NOT EXISTS agent_session_sessions_unended ON agent_session_sessions (created_at)
    WHERE end_status IS NULL`
})

/** Each session's shard, so that a runner taking shards over finds their sessions without scanning all. */
const migration0002 = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE agent_session_sessions ADD COLUMN IF NOT EXISTS shard integer`
  yield* sql`CREATE INDEX IF NOT EXISTS agent_session_sessions_unended_shard ON agent_session_sessions (shard, session_id)
    WHERE end_status IS NULL`
})

/**
 * Answers keyed by the core's request key, stored as `Ledger.storageKey`: the rows
 * written under the earlier key (`action_session_id/resource_type`: unbounded, so a long id could
 * not be indexed, and the same for two requests when either part held a `/`) are keyed anew; of
 * two rows of a session that now share a key, the first answered stays (as `saveAnswer` would
 * have kept it). A new key holds U+0001 (a separator escaped) and an earlier one held none unless
 * an id or a type did, so no row is moved onto a key another row still holds.
 */
export const migration0003 = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<{ readonly session_id: string; readonly request_key: string; readonly request: string }>`
    SELECT session_id, request_key, request FROM agent_session_answers ORDER BY answered_at, session_id, request_key`
  const kept = new Set<string>()
  for (const row of rows) {
    // A row whose request does not decode (none is written so) is left as it is.
    const request = Option.getOrUndefined(decodeRequestOption(row.request))
    if (request === undefined) continue
    const key = Ledger.storageKey(requestKey(request))
    const id = JSON.stringify([row.session_id, key])
    if (kept.has(id)) {
      yield* sql`DELETE FROM agent_session_answers WHERE session_id = ${row.session_id} AND request_key = ${row.request_key}`
      continue
    }
    kept.add(id)
    if (key === row.request_key) continue
    yield* sql`UPDATE agent_session_answers SET request_key = ${key}
      WHERE session_id = ${row.session_id} AND request_key = ${row.request_key}`
  }
})

/**
 * Who writes each session's log, and until when unless renewed (`EventLog.Service.claim`): a
 * runner that takes a session over waits for the claim of a runner that still writes it.
 */
const migration0004 = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE agent_session_sessions ADD COLUMN IF NOT EXISTS writer text`
  yield* sql`ALTER TABLE agent_session_sessions ADD COLUMN IF NOT EXISTS writer_until timestamptz`
})

/** Runs the migrations; retried while another process holds the migration lock. */
export const migrate: Effect.Effect<void, EventLogError, SqlClient.SqlClient> = Migrator.make({})({
  loader: Migrator.fromRecord({
    "0001_create_event_log": migration0001,
    "0002_session_shard": migration0002,
    "0003_core_request_key": migration0003,
    "0004_session_writer": migration0004
  }),
  table: "agent_session_migrations"
}).pipe(
  retryWhile(spacedTimes("200 millis", 50), isMigrationLocked),
  Effect.asVoid,
  Effect.mapError(fail("migrate"))
)

/** A row of `agent_session_events` as written. */
type EventRow = {
  readonly session_id: string
  readonly seq: number
  readonly event: string
}

/** How many appends are written at once, and how many rows one statement writes at most. */
const appendWriters = 2
const appendRows = 1_000

/** How many sessions one renewal statement names at most. */
const renewSessions = 1_000


/** How many snapshot reads run at once, and how many sessions one read asks about at most. */
const snapshotReaders = 2
const snapshotSessions = 500

/** How many claim statements run at once, and how many sessions one asks about at most. */
const claimers = 2
const claimSessions = 500
/** How many claims of a batch whose statements failed are asked for at once, each on its own. */
const claimFallback = 10


interface SessionRow {
  readonly session_id: string
  readonly info: string
  readonly max_actions: number
  readonly agent: string | null
  readonly end_status: string | null
  readonly end_reason: string | null
}

/** The row of `snapshot`: JSON the driver has parsed (the record's columns, and arrays of text). */
interface SnapshotRow {
  readonly record: SessionRow | null
  readonly answers: ReadonlyArray<readonly [string, string]> | null
  readonly events: ReadonlyArray<readonly [number, string]> | null
}

/** A row of the batched `snapshot` read: a {@link SnapshotRow} and the index of its request. */
interface SnapshotBatchRow extends SnapshotRow {
  readonly i: number
}

/** A logged event from its stored columns (the event as JSON text). */
const toLogged = (seq: number | string, event: string): EventLog.LoggedEvent => ({ seq: Number(seq), event: decodeEvent(event) })

/** A recorded answer from its stored columns (JSON text). */
const toRecorded = (request: string, answer: string): EventLog.RecordedAnswer => ({
  request: decodeRequest(request),
  answer: decodeAnswer(answer)
})

const isEndStatus = (s: string): s is EventLog.EndStatus => s === "complete" || s === "ended" || s === "closed"

const toRecord = (row: SessionRow): EventLog.SessionRecord => ({
  sessionId: Session.SessionId.make(row.session_id),
  info: decodeInfo(row.info),
  maxActions: row.max_actions,
  agent: optionFromNullish(row.agent),
  ended: row.end_status !== null && isEndStatus(row.end_status)
    ? Option.some({ status: row.end_status, reason: optionFromNullish(row.end_reason) })
    : Option.none()
})

/**
 * A connection outside the pool of `sql`, for as long as the scope lasts: the pool never hands it
 * to a query of its own, and a pool whose every connection is busy does not keep it from the
 * lock it holds. On PostgreSQL through `@effect/sql-pg` (the cluster's store), a client of its
 * own with the pool's settings (two connections at most: the second, opened on demand, is where
 * a query given up on the first is cancelled); on any other client, a connection reserved from
 * the pool.
 */
const dedicatedConnection = (
  sql: SqlClient.SqlClient,
  pg: Option.Option<PgClient.PgClient>
): Effect.Effect<SqlConnection.Connection, SqlError, Scope.Scope> =>
  Option.match(pg, {
    onNone: () => sql.reserve,
    onSome: (client) =>
      Layer.build(PgClient.layer({
        ...client.config,
        maxConnections: 2,
        minConnections: undefined,
        connectionTTL: undefined,
        applicationName: "effect-agent-session writer lock"
      })).pipe(Effect.flatMap((context) => Context.get(context, PgClient.PgClient).reserve))
  })

/**
 * Holds, for as long as the scope lasts, the lock of `writer`'s name on a connection of its own
 * (`live`). PostgreSQL releases a session's advisory locks when its connection ends: at once for
 * a process killed (its socket closed by its kernel); for a machine gone, once the server's
 * keep-alive probes (set on this connection: 5 s idle, then 5 probes 1 s apart) or its
 * unacknowledged writes (`tcp_user_timeout`, 10 s) give up on it. A process stalled on a live
 * machine keeps it (its kernel answers the probes). The connection is pinged every second; when
 * it fails (the database restarted, the network cut), a second later the lock is taken again on
 * a new one. Returns once the lock is first held (or after 30 s, still trying).
 */
const holdWriterLock = (
  open: Effect.Effect<SqlConnection.Connection, SqlError, Scope.Scope>,
  writer: string
): Effect.Effect<void, never, Scope.Scope> =>
  Effect.gen(function*() {
    const held = yield* Deferred.make<void>()
    const holding = Effect.scoped(Effect.gen(function*() {
      const connection = yield* open
      yield* connection.executeRaw(
        `SELECT set_config('tcp_keepalives_idle', '5', false), set_config('tcp_keepalives_interval', '1', false),
          set_config('tcp_keepalives_count', '5', false), set_config('tcp_user_timeout', '10000', false)`,
        []
      ).pipe(Effect.ignore)
      yield* connection.executeRaw(`SELECT pg_advisory_lock($1, hashtext($2))`, [writerLockSpace, writer])
      yield* Deferred.succeed(held, undefined)
      return yield* connection.executeRaw(`SELECT 1`, []).pipe(Effect.delay("1 second"), Effect.forever)
    }))
    yield* holding.pipe(
      catchAllCause((cause) =>
        Effect.logWarning(
          `Event log: the lock that shows runner ${writer} alive is not held (taken again in a second): ${
            Cause.pretty(cause).split("\n")[0]
          }`
        ).pipe(Effect.andThen(Effect.sleep("1 second")))
      ),
      Effect.forever,
      Effect.forkScoped
    )
    yield* Deferred.await(held).pipe(Effect.timeout("30 seconds"), Effect.ignore)
  })

/**
 * The log on the line's SQL client. Each operation, once it has asked the pool for a connection,
 * runs to its end (a few milliseconds), even when its caller gives up (interrupted, timed out).
 * Why, as seen on Effect 3's `@effect/sql-pg` (over the `pg` driver; Effect 4's speaks the protocol
 * itself; the rule holds there too, not yet measured at that scale):
 * - Interrupting a query in flight makes `@effect/sql-pg` cancel it with a query of its own
 *   (`pg_cancel_backend`) on a second connection of the pool, waiting up to 5 s for one.
 * - Interrupting a wait for a connection leaves an abandoned waiter in the `pg` pool's queue,
 *   which `@effect/sql-pg` releases as soon as the pool hands it a connection; the pool then
 *   hands the connection to the next waiter, recursively.
 * At 10,000 sessions, thousands of log reads given up by re-subscribing subscribers made both
 * happen: a runner died of `RangeError: Maximum call stack size exceeded` there
 * (docs/scale-out.md). Not interruptible, a log operation takes one connection and frees it.
 */
export const makeSql: Effect.Effect<EventLog.Service, never, SqlClient.SqlClient> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const connectionOfItsOwn = dedicatedConnection(sql, yield* Effect.serviceOption(PgClient.PgClient))
  /** Runs an operation to its end once started (see above). */
  const whole = <A, E>(operation: Effect.Effect<A, E>): Effect.Effect<A, E> => Effect.uninterruptible(operation)

  // Appends, written together: each append joins the line, and whoever gets one of the
  // `appendWriters` places writes everything waiting (up to `appendRows` rows) in one statement.
  // A runner holding thousands of sessions appends hundreds of times a second; one statement per
  // append was most of its queries, and each query's round trip costs the runner CPU (the
  // socket write alone was a seventh of a runner's time during a take-over: bench/RESULTS.md).
  // Idle, an append is written at once, alone; busy, the appends that came during a write share
  // the next one.
  interface WaitingAppend {
    readonly rows: ReadonlyArray<EventRow>
    /** The writer that must hold the session's log for the rows to be written (none: unchecked). */
    readonly writer: string | undefined
    readonly done: Deferred.Deferred<void, EventLogError>
    /** Taken into a write (by whichever append held a place). */
    taken: boolean
  }
  const waiting: Array<WaitingAppend> = []
  const writers = yield* makeGate(appendWriters)
  /** Inserts rows (none: nothing to do; the SQL client's `insert` takes one row at least). */
  const insertEvents = ([first, ...rest]: ReadonlyArray<EventRow>) =>
    first === undefined
      ? Effect.void
      : sql`INSERT INTO agent_session_events ${sql.insert([first, ...rest])}`.pipe(
        Effect.asVoid,
        Effect.mapError(fail("append"))
      )
  /**
   * Inserts the rows of appends whose writer holds its session's log, in one statement; returns
   * the rows written (`session_id/seq`). The session's row is locked `FOR KEY SHARE` while the
   * rows go in: a take-over of the claim (`claim`, which locks it `FOR UPDATE`) waits for this
   * statement to commit, and this statement, once a take-over has committed, finds the claim
   * gone (PostgreSQL reads the row anew after the wait). So the next writer reads every row this
   * one wrote, and this one writes nothing after it. (Renewals do not wait on it: an update
   * of a column that is no key does not conflict with `FOR KEY SHARE`.)
   */
  const insertHeld = (appends: ReadonlyArray<WaitingAppend>) =>
    sql<{ readonly session_id: string; readonly seq: number }>`INSERT INTO agent_session_events (session_id, seq, event)
      SELECT r.session_id, r.seq, r.event FROM (SELECT r.session_id, r.seq, r.event FROM json_to_recordset(${
      JSON.stringify(appends.flatMap((a) => a.rows.map((row) => ({ ...row, writer: a.writer }))))
    }::json) AS r(session_id text, seq integer, event text, writer text)
        JOIN agent_session_sessions s ON s.session_id = r.session_id AND s.writer = r.writer
        ORDER BY r.session_id, r.seq FOR KEY SHARE OF s) r
      RETURNING session_id, seq`.pipe(
      Effect.map((rows) => new Set(rows.map((row) => `${row.session_id}/${row.seq}`))),
      Effect.mapError(fail("append"))
    )
  const settle = (append: WaitingAppend) => (exit: Exit.Exit<void, EventLogError>) => Deferred.done(append.done, exit)
  /** Each append of a batch whose statement succeeded: written, or refused (its writer lost the log). */
  const settleHeld = (batch: ReadonlyArray<WaitingAppend>, written: ReadonlySet<string>) =>
    Effect.forEach(batch, (append) =>
      append.rows.every((row) => written.has(`${row.session_id}/${row.seq}`))
        ? settle(append)(Exit.void)
        : settle(append)(Exit.fail(claimLost(append.rows[0]?.session_id ?? "", append.writer ?? ""))), { discard: true })
  /**
   * Writes a batch in one statement (two when it mixes appends with and without a writer). A
   * statement is all or nothing: when it fails (a sequence number taken, by another runner's
   * write), each half is written on its own, down to the appends that fail alone, each with its
   * own answer.
   */
  const writeBatch = (batch: ReadonlyArray<WaitingAppend>): Effect.Effect<void> => {
    const held = batch.filter((a) => a.writer !== undefined)
    const free = batch.filter((a) => a.writer === undefined)
    if (held.length > 0 && free.length > 0) return Effect.andThen(writeBatch(held), writeBatch(free))
    const halves = Effect.suspend(() =>
      Effect.andThen(writeBatch(batch.slice(0, batch.length >> 1)), writeBatch(batch.slice(batch.length >> 1)))
    )
    if (held.length > 0) {
      return Effect.flatMap(Effect.exit(insertHeld(held)), (exit) =>
        Exit.isSuccess(exit)
          ? settleHeld(held, exit.value)
          : batch.length === 1
          ? settle(batch[0]!)(Exit.asVoid(exit))
          : halves)
    }
    return Effect.flatMap(Effect.exit(insertEvents(batch.length === 1 ? batch[0]!.rows : batch.flatMap((a) => a.rows))), (exit) =>
      Exit.isSuccess(exit) || batch.length === 1
        ? Effect.forEach(batch, (append) => settle(append)(exit), { discard: true })
        : halves)
  }
  /** Takes what waits, from the front, up to `appendRows` rows (at least one append). */
  const takeBatch = (): Array<WaitingAppend> => {
    let rows = 0
    let n = 0
    while (n < waiting.length && (n === 0 || rows + waiting[n]!.rows.length <= appendRows)) {
      rows += waiting[n]!.rows.length
      n += 1
    }
    const batch = waiting.splice(0, n)
    for (const append of batch) append.taken = true
    return batch
  }
  // Every append still waiting is followed by one write of what waits (an append another write
  // has taken asks for no place): the line is empty once the last write ends.
  const write = writers.withPlace(Effect.suspend(() => waiting.length === 0 ? Effect.void : writeBatch(takeBatch())))
  const append = (rows: ReadonlyArray<EventRow>, writer: string | undefined) =>
    Effect.flatMap(Deferred.make<void, EventLogError>(), (done) => {
      const entry: WaitingAppend = { rows, writer, done, taken: false }
      waiting.push(entry)
      return Effect.andThen(Effect.suspend(() => entry.taken ? Effect.void : write), Deferred.await(done))
    })

  // Snapshots, read together in the same way: a runner taking sessions over starts up to
  // `startsAtOnce` of them at a time (entity.ts), each reading its snapshot first; one query
  // per session was one round trip, one parse and one pool checkout each. Idle, a snapshot is
  // read at once, alone; busy, the snapshots asked for during a read share the next one.
  interface WaitingSnapshot {
    readonly sessionId: string
    readonly fromSeq: number
    readonly limit: number
    readonly done: Deferred.Deferred<EventLog.Snapshot, EventLogError>
    taken: boolean
  }
  const snapshotsWaiting: Array<WaitingSnapshot> = []
  const readers = yield* makeGate(snapshotReaders)
  const toSnapshot = (row: SnapshotRow | undefined): EventLog.Snapshot => ({
    record: Option.map(optionFromNullish(row?.record), toRecord),
    answers: (row?.answers ?? []).map(([request, answer]) => toRecorded(request, answer)),
    events: (row?.events ?? []).map(([seq, event]) => toLogged(seq, event))
  })
  /**
   * One row per session asked about (the index of its request in `i`): the record as JSON (null
   * when unknown), its answers and its page of events as JSON arrays of [request, answer] and
   * [seq, event] (the columns hold JSON text). The requests are one JSON parameter.
   */
  const readSnapshots = (batch: ReadonlyArray<WaitingSnapshot>) =>
    sql<SnapshotBatchRow>`SELECT q.i,
        (SELECT row_to_json(s) FROM (SELECT session_id, info, max_actions, agent, end_status, end_reason
          FROM agent_session_sessions WHERE session_id = q.session_id) s) AS record,
        (SELECT coalesce(json_agg(json_build_array(request, answer) ORDER BY answered_at), '[]'::json)
          FROM agent_session_answers WHERE session_id = q.session_id) AS answers,
        (SELECT coalesce(json_agg(json_build_array(seq, event) ORDER BY seq), '[]'::json)
          FROM (SELECT seq, event FROM agent_session_events WHERE session_id = q.session_id AND seq >= q.from_seq
            ORDER BY seq LIMIT q.lim) e) AS events
      FROM json_to_recordset(${
      JSON.stringify(batch.map((w, i) => ({ i, session_id: w.sessionId, from_seq: w.fromSeq, lim: w.limit })))
    }::json) AS q(i integer, session_id text, from_seq integer, lim integer)`.pipe(
      Effect.mapError(fail("snapshot")),
      Effect.exit,
      Effect.flatMap((exit) => {
        const rows: Array<SnapshotRow | undefined> = []
        if (Exit.isSuccess(exit)) for (const row of exit.value) rows[Number(row.i)] = row
        return Effect.forEach(batch, (waiting, i) => {
          if (Exit.isFailure(exit)) return Deferred.failCause(waiting.done, exit.cause)
          // Decoded one by one: a row that does not decode fails its own read only.
          const row = rows[i]
          return Deferred.complete(waiting.done, Effect.try({ try: () => toSnapshot(row), catch: fail("snapshot") }))
        }, { discard: true })
      })
    )
  const readWaiting = readers.withPlace(Effect.suspend(() => {
    if (snapshotsWaiting.length === 0) return Effect.void
    const batch = snapshotsWaiting.splice(0, snapshotSessions)
    for (const waiting of batch) waiting.taken = true
    return readSnapshots(batch)
  }))
  const snapshot = (sessionId: string, fromSeq: number, limit: number) =>
    Effect.flatMap(Deferred.make<EventLog.Snapshot, EventLogError>(), (done) => {
      const entry: WaitingSnapshot = { sessionId, fromSeq, limit, done, taken: false }
      snapshotsWaiting.push(entry)
      return Effect.andThen(Effect.suspend(() => entry.taken ? Effect.void : readWaiting), Deferred.await(done))
    })

  /** One claim on its own (a batch whose statements failed is claimed so, one by one). */
  const claimOne = (sessionId: string, writer: string, leaseMillis: number) =>
      Effect.gen(function*() {
        const until = sql`now() + (${leaseMillis}::integer * interval '1 millisecond')`
        // Unclaimed, or this writer's already.
        const claimed = yield* sql<{ readonly session_id: string }>`UPDATE agent_session_sessions
          SET writer = ${writer}, writer_until = ${until}
          WHERE session_id = ${sessionId} AND (writer IS NULL OR writer = ${writer})
          RETURNING session_id`
        if (claimed.length > 0) return true
        const held = yield* sql<{ readonly writer: string; readonly lapsed: boolean }>`SELECT writer,
          writer_until < now() AS lapsed FROM agent_session_sessions WHERE session_id = ${sessionId}`
        const holder = held[0]
        if (holder === undefined) return true
        if (!holder.lapsed) return false
        // Lapsed: taken only when its holder's runner is gone: the lock of its name is free
        // (taken and given back in one statement, on one connection).
        const gone = yield* sql<{ readonly gone: boolean }>`SELECT CASE
          WHEN pg_try_advisory_lock(${writerLockSpace}, hashtext(${runnerOf(holder.writer)}))
          THEN pg_advisory_unlock(${writerLockSpace}, hashtext(${runnerOf(holder.writer)})) ELSE false END AS gone`
        if (gone[0]?.gone !== true) return false
        // The row locked first: an append of the writer gone that is under way (`insertHeld`
        // locks the row `FOR KEY SHARE`) commits before the claim moves, and none follows it.
        return yield* sql.withTransaction(Effect.gen(function*() {
          const still = yield* sql<{ readonly session_id: string }>`SELECT session_id FROM agent_session_sessions
            WHERE session_id = ${sessionId} AND writer = ${holder.writer} AND writer_until < now() FOR UPDATE`
          if (still.length === 0) return false
          yield* sql`UPDATE agent_session_sessions SET writer = ${writer}, writer_until = ${until}
            WHERE session_id = ${sessionId}`
          return true
        }))
      }).pipe(Effect.mapError(fail("claim")))

  // Claims, asked together in the same way: a runner taking sessions over claims each one's log
  // before it reads it (entity.ts), and a take-over after a runner's death finds every claim
  // still held until it lapses. One statement of each step per batch instead of per session.
  interface WaitingClaim {
    readonly sessionId: string
    readonly writer: string
    readonly leaseMillis: number
    readonly done: Deferred.Deferred<boolean, EventLogError>
    taken: boolean
  }
  const claimsWaiting: Array<WaitingClaim> = []
  const claimGate = yield* makeGate(claimers)
  /** Refused claims that cannot succeed before their holder's lease lapses: the local time to try again. */
  const retryAt = new Map<string, number>()
  const hintKey = (sessionId: string, writer: string) => `${sessionId}\u0000${writer}`
  /**
   * Step one, for every claim of the batch in one statement: the claim taken where the session is
   * unclaimed or this writer's already (as `claimOne`'s first statement); for the others, the
   * holder as it stood, whether its lease lapsed and how long it has left, and whether its
   * runner is gone (the lock of its name free: taken and given back in the same evaluation, on
   * this statement's connection).
   */
  const claimStep = (batch: ReadonlyArray<WaitingClaim>) =>
    sql<{
      readonly i: number
      readonly claimed: boolean
      readonly known: boolean
      readonly writer: string | null
      readonly lapsed: boolean | null
      readonly remaining: number | null
      readonly gone: boolean | null
    }>`WITH q AS (SELECT * FROM json_to_recordset(${
      JSON.stringify(batch.map((w, i) => ({ i, session_id: w.sessionId, writer: w.writer, lease: w.leaseMillis })))
    }::json) AS q(i integer, session_id text, writer text, lease integer)),
      taken AS (UPDATE agent_session_sessions s SET writer = q.writer,
          writer_until = now() + (q.lease * interval '1 millisecond')
        FROM q WHERE s.session_id = q.session_id AND (s.writer IS NULL OR s.writer = q.writer)
        RETURNING s.session_id, s.writer)
      SELECT q.i, taken.session_id IS NOT NULL AS claimed, s.session_id IS NOT NULL AS known, s.writer,
        s.writer_until < now() AS lapsed,
        (extract(epoch FROM (s.writer_until - now())) * 1000)::float8 AS remaining,
        CASE WHEN taken.session_id IS NULL AND s.writer IS NOT NULL THEN
          CASE WHEN pg_try_advisory_lock(${writerLockSpace}, hashtext(split_part(s.writer, '#', 1)))
          THEN pg_advisory_unlock(${writerLockSpace}, hashtext(split_part(s.writer, '#', 1))) ELSE false END
        END AS gone
      FROM q LEFT JOIN taken ON taken.session_id = q.session_id AND taken.writer = q.writer
        LEFT JOIN agent_session_sessions s ON s.session_id = q.session_id`
  /**
   * Step two: the lapsed claims whose runner is gone, taken in one transaction, their rows locked
   * first (`FOR UPDATE`, in the order appends lock them: an append of the writer gone that is
   * under way commits before the claim moves, and none follows it).
   */
  const takeLapsed = (batch: ReadonlyArray<{ readonly i: number; readonly claim: WaitingClaim; readonly holder: string }>) =>
    sql.withTransaction(Effect.gen(function*() {
      const wanted = JSON.stringify(batch.map(({ claim, holder, i }) => ({ i, session_id: claim.sessionId, holder, writer: claim.writer, lease: claim.leaseMillis })))
      const still = yield* sql<{ readonly i: number }>`SELECT q.i FROM agent_session_sessions s
        JOIN json_to_recordset(${wanted}::json) AS q(i integer, session_id text, holder text, writer text, lease integer)
          ON s.session_id = q.session_id AND s.writer = q.holder AND s.writer_until < now()
        ORDER BY s.session_id FOR UPDATE OF s`
      if (still.length === 0) return new Set<number>()
      const chosen = new Set(still.map((row) => Number(row.i)))
      yield* sql`UPDATE agent_session_sessions s SET writer = q.writer,
          writer_until = now() + (q.lease * interval '1 millisecond')
        FROM json_to_recordset(${
        JSON.stringify(batch.filter(({ i }) => chosen.has(i)).map(({ claim, i }) => ({ i, session_id: claim.sessionId, writer: claim.writer, lease: claim.leaseMillis })))
      }::json) AS q(i integer, session_id text, writer text, lease integer)
        WHERE s.session_id = q.session_id`
      return chosen
    }))
  /**
   * Claims on their own (`claimOne`), as many at once as the claims were asked for before they
   * were batched: each claim's wait is bounded by its statements' (a connection lost costs the
   * connect time-out per ten claims, not per claim).
   */
  const claimEach = (claims: ReadonlyArray<WaitingClaim>) =>
    Effect.forEach(claims, (claim) =>
      Effect.exit(claimOne(claim.sessionId, claim.writer, claim.leaseMillis)).pipe(
        Effect.flatMap((exit) => Deferred.done(claim.done, exit))
      ), { concurrency: claimFallback, discard: true })
  /** Forgets the hints whose time has come (left by a claim that nobody asked the hint of). */
  const forgetPassedHints = (now: number) => {
    for (const [key, at] of retryAt) if (at <= now) retryAt.delete(key)
  }
  const claimBatch = (batch: ReadonlyArray<WaitingClaim>): Effect.Effect<void> =>
    Effect.gen(function*() {
      const stepOne = yield* Effect.exit(claimStep(batch))
      // The statement failed as a whole (a statement of another runner's in its way): each claim on its own.
      if (Exit.isFailure(stepOne)) return yield* claimEach(batch)
      const answers = new Map<number, boolean>()
      const lapsed: Array<{ readonly i: number; readonly claim: WaitingClaim; readonly holder: string }> = []
      /** Sessions of the batch already given to the lapsed step. */
      const toLapse = new Set<string>()
      const now = Date.now()
      forgetPassedHints(now)
      for (const row of stepOne.value) {
        const i = Number(row.i)
        const claim = batch[i]!
        if (row.claimed) answers.set(i, true)
        // Unknown to the log: nothing to hold (as `claimOne`).
        else if (!row.known) answers.set(i, true)
        else if (row.writer === null) answers.set(i, false)
        else if (row.lapsed === true && row.gone === true) {
          // A lapsed claim goes to one writer of the batch; the others are refused, as they
          // would be if asked just after it.
          if (toLapse.has(claim.sessionId)) answers.set(i, false)
          else {
            toLapse.add(claim.sessionId)
            lapsed.push({ i, claim, holder: row.writer })
          }
        } else {
          answers.set(i, false)
          // Held by a runner that is gone: only its lapse frees it (or its holder's release).
          if (row.gone === true && row.remaining !== null && row.remaining > 0) {
            retryAt.set(hintKey(claim.sessionId, claim.writer), now + Math.ceil(row.remaining))
          }
        }
      }
      // Step one committed on its own: its answers are given now, whatever the lapsed step does
      // (a claim without a row, none expected, is refused).
      const lapsing = new Set(lapsed.map(({ i }) => i))
      yield* Effect.forEach(batch, (claim, i) =>
        lapsing.has(i) ? Effect.void : Deferred.succeed(claim.done, answers.get(i) ?? false), { discard: true })
      if (lapsed.length === 0) return
      const taken = yield* Effect.exit(takeLapsed(lapsed))
      // The lapsed step failed (its transaction rolled back, or its commit not acknowledged):
      // its claims on their own.
      if (Exit.isFailure(taken)) return yield* claimEach(lapsed.map(({ claim }) => claim))
      yield* Effect.forEach(lapsed, ({ claim, i }) => Deferred.succeed(claim.done, taken.value.has(i)), { discard: true })
    }).pipe(
      // Interrupted (its asker's fiber): the claims not answered yet fail, none waits for ever.
      Effect.onInterrupt(() =>
        Effect.forEach(batch, (claim) => Deferred.fail(claim.done, fail("claim")("the claims' batch was interrupted")), {
          discard: true
        })
      )
    )
  const claimWaiting = claimGate.withPlace(Effect.suspend(() => {
    if (claimsWaiting.length === 0) return Effect.void
    const batch = claimsWaiting.splice(0, claimSessions)
    for (const waiting of batch) waiting.taken = true
    return claimBatch(batch)
  }))
  const claim = (sessionId: string, writer: string, leaseMillis: number) =>
    Effect.flatMap(Deferred.make<boolean, EventLogError>(), (done) => {
      const entry: WaitingClaim = { sessionId, writer, leaseMillis, done, taken: false }
      claimsWaiting.push(entry)
      return Effect.andThen(Effect.suspend(() => entry.taken ? Effect.void : claimWaiting), Deferred.await(done))
    })

  const getRecord = (sessionId: string) =>
    sql<SessionRow>`SELECT session_id, info, max_actions, agent, end_status, end_reason
      FROM agent_session_sessions WHERE session_id = ${sessionId}`.pipe(
      Effect.map((rows) => Option.map(optionFromNullish(rows[0]), toRecord)),
      Effect.mapError(fail("get"))
    )

  const operations: EventLog.Service = {
    register: ({ agent, info, maxActions, shard }) =>
      sql`INSERT INTO agent_session_sessions (session_id, info, max_actions, agent, shard)
        VALUES (${info.session_id}, ${encodeInfo(info)}, ${maxActions}, ${Option.getOrNull(agent)}, ${shard ?? null})
        ON CONFLICT (session_id) DO NOTHING`.pipe(
        Effect.mapError(fail("register")),
        Effect.andThen(getRecord(info.session_id)),
        Effect.flatMap(Option.match({
          onNone: () => Effect.fail(fail("register")(`session ${info.session_id} vanished`)),
          onSome: Effect.succeed
        }))
      ),
    get: getRecord,
    append: (sessionId, events, writer) =>
      events.length === 0
        ? Effect.void
        : Effect.try({
          try: () =>
            events.map((logged): EventRow => ({ session_id: sessionId, seq: logged.seq, event: encodeEvent(logged.event) })),
          catch: fail("append")
        }).pipe(Effect.flatMap((rows) => append(rows, writer))),
    read: (sessionId, fromSeq, limit) =>
      sql<{ readonly seq: number; readonly event: string }>`SELECT seq, event FROM agent_session_events
        WHERE session_id = ${sessionId} AND seq >= ${fromSeq} ORDER BY seq LIMIT ${limit}`.pipe(
        Effect.mapError(fail("read")),
        Effect.flatMap((rows) =>
          Effect.try({
            try: () => rows.map((row) => toLogged(row.seq, row.event)),
            catch: fail("read")
          })
        )
      ),
    end: (sessionId, status, reason) =>
      sql`INSERT INTO agent_session_sessions (session_id, info, max_actions, end_status, end_reason, ended_at)
        VALUES (${sessionId}, ${encodeInfo(unknownRecord(sessionId).info)}, 0, ${status}, ${Option.getOrNull(reason)}, now())
        ON CONFLICT (session_id) DO UPDATE SET end_status = EXCLUDED.end_status, end_reason = EXCLUDED.end_reason,
        ended_at = EXCLUDED.ended_at WHERE agent_session_sessions.end_status IS NULL`.pipe(
        Effect.asVoid,
        Effect.mapError(fail("end"))
      ),
    saveAnswer: (sessionId, request, answer) =>
      sql<{ readonly request_key: string }>`INSERT INTO agent_session_answers (session_id, request_key, request, answer)
        VALUES (${sessionId}, ${Ledger.storageKey(requestKey(request))}, ${encodeRequest(request)}, ${encodeAnswer(answer)})
        ON CONFLICT (session_id, request_key) DO NOTHING RETURNING request_key`.pipe(
        Effect.map((rows) => rows.length > 0),
        Effect.mapError(fail("saveAnswer"))
      ),
    answers: (sessionId) =>
      sql<{ readonly request: string; readonly answer: string }>`SELECT request, answer FROM agent_session_answers
        WHERE session_id = ${sessionId} ORDER BY answered_at`.pipe(
        Effect.mapError(fail("answers")),
        Effect.flatMap((rows) =>
          Effect.try({
            try: () => rows.map((row) => toRecorded(row.request, row.answer)),
            catch: fail("answers")
          })
        )
      ),
    answersOf: (sessionIds) =>
      sessionIds.length === 0
        ? Effect.succeed(new Map<string, ReadonlyArray<EventLog.RecordedAnswer>>())
        : sql<{ readonly session_id: string; readonly request: string; readonly answer: string }>`SELECT session_id,
          request, answer FROM agent_session_answers WHERE ${sql.in("session_id", sessionIds)}
          ORDER BY answered_at`.pipe(
          Effect.mapError(fail("answersOf")),
          Effect.flatMap((rows) =>
            Effect.try({
              try: (): ReadonlyMap<string, ReadonlyArray<EventLog.RecordedAnswer>> => {
                const found = new Map<string, Array<EventLog.RecordedAnswer>>()
                for (const row of rows) {
                  const answers = found.get(row.session_id)
                  const recorded = toRecorded(row.request, row.answer)
                  if (answers === undefined) found.set(row.session_id, [recorded])
                  else answers.push(recorded)
                }
                return found
              },
              catch: fail("answersOf")
            })
          )
        ),
    snapshot,
    unended: (limit) =>
      sql<{ readonly session_id: string }>`SELECT session_id FROM agent_session_sessions
        WHERE end_status IS NULL ORDER BY created_at LIMIT ${limit}`.pipe(
        Effect.map((rows) => rows.map((row) => row.session_id)),
        Effect.mapError(fail("unended"))
      ),
    unendedIn: (shards, { after, limit, unsharded }) =>
      (shards.length === 0 && !unsharded
        ? Effect.succeed<ReadonlyArray<{ readonly session_id: string }>>([])
        : sql<{ readonly session_id: string }>`SELECT session_id FROM agent_session_sessions
        WHERE end_status IS NULL AND session_id > ${after} AND (${
          shards.length === 0 ? sql`false` : sql.in("shard", shards)
        }${unsharded ? sql` OR shard IS NULL` : sql``})
        ORDER BY session_id LIMIT ${limit}`).pipe(
        Effect.map((rows) => rows.map((row) => row.session_id)),
        Effect.mapError(fail("unendedIn"))
      ),
    purge: (before) =>
      sql.withTransaction(Effect.gen(function*() {
        const ended = yield* sql<{ readonly session_id: string }>`DELETE FROM agent_session_sessions
          WHERE ended_at IS NOT NULL AND ended_at < ${before} RETURNING session_id`
        const ids = ended.map((row) => row.session_id)
        if (ids.length > 0) {
          yield* sql`DELETE FROM agent_session_events WHERE ${sql.in("session_id", ids)}`
          yield* sql`DELETE FROM agent_session_answers WHERE ${sql.in("session_id", ids)}`
        }
        return ids.length
      })).pipe(Effect.mapError(fail("purge"))),
    claim,

    renew: (writer, sessionIds, leaseMillis) =>
      Effect.forEach(
        Array.from({ length: Math.ceil(sessionIds.length / renewSessions) }, (_, i) =>
          sessionIds.slice(i * renewSessions, (i + 1) * renewSessions)),
        (ids) =>
          sql`UPDATE agent_session_sessions
            SET writer_until = now() + (${leaseMillis}::integer * interval '1 millisecond')
            WHERE (writer = ${writer} OR starts_with(writer, ${`${writer}#`})) AND ${sql.in("session_id", ids)}`,
        { discard: true }
      ).pipe(Effect.mapError(fail("renew"))),
    release: (sessionId, writer) =>
      sql`UPDATE agent_session_sessions SET writer = NULL, writer_until = NULL
        WHERE session_id = ${sessionId} AND writer = ${writer}`.pipe(
        Effect.asVoid,
        Effect.mapError(fail("release"))
      ),
    live: (writer) => holdWriterLock(connectionOfItsOwn, writer)
  }
  const service: EventLog.Service = {
    register: (record) => whole(operations.register(record)),
    get: (sessionId) => whole(operations.get(sessionId)),
    append: (sessionId, events, writer) => whole(operations.append(sessionId, events, writer)),
    read: (sessionId, fromSeq, limit) => whole(operations.read(sessionId, fromSeq, limit)),
    end: (sessionId, status, reason) => whole(operations.end(sessionId, status, reason)),
    saveAnswer: (sessionId, request, answer) => whole(operations.saveAnswer(sessionId, request, answer)),
    answers: (sessionId) => whole(operations.answers(sessionId)),
    answersOf: (sessionIds) => whole(operations.answersOf(sessionIds)),
    snapshot: (sessionId, fromSeq, limit) => whole(operations.snapshot(sessionId, fromSeq, limit)),
    unended: (limit) => whole(operations.unended(limit)),
    unendedIn: (shards, options) => whole(operations.unendedIn(shards, options)),
    purge: (before) => whole(operations.purge(before)),
    claim: (sessionId, writer, leaseMillis) => whole(operations.claim(sessionId, writer, leaseMillis)),
    renew: (writer, sessionIds, leaseMillis) => whole(operations.renew(writer, sessionIds, leaseMillis)),
    release: (sessionId, writer) => whole(operations.release(sessionId, writer)),
    live: (writer) => holdWriterLock(connectionOfItsOwn, writer)
  }
  claimRetryHints.set(service, (sessionId, writer) => {
    const key = hintKey(sessionId, writer)
    const at = retryAt.get(key)
    if (at === undefined) return undefined
    retryAt.delete(key)
    return Math.max(0, at - Date.now())
  })
  return service
})
