/**
 * The event log of clustered sessions: every event of a session persisted once, in order, with a
 * per-session sequence number (1, 2, 3, ...), the session's record (how it was started, how it
 * ended) and the answers given to its requests. Subscribers replay it; the outcome is derived
 * from it.
 *
 * Written once for both cluster editions: the models, the service, the store in memory
 * (`layerMemory`) and the store in PostgreSQL (`layerSql`: tables created by a migration the layer
 * runs).
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import type * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as Schema from "effect/Schema"
import {
  type DurationInput,
  scopedContextLayer,
  ServiceTag,
  type Session,
  SessionEvent,
  type SqlClient
} from "../src/internal/line.js"
import { literals } from "../src/internal/lineSchema.js"
import * as ClusterErrors from "./ClusterErrors.js"
import * as internal from "./internal/eventLogMemory.js"
import * as sql from "./internal/eventLogSql.js"

/**
 * One event of a session's log with its sequence number (from 1, contiguous).
 *
 * @since 0.1.0
 * @category models
 */
export const LoggedEvent = Schema.Struct({
  seq: Schema.Int,
  event: SessionEvent.SessionEvent
})

/**
 * @since 0.1.0
 * @category models
 */
export interface LoggedEvent extends Schema.Schema.Type<typeof LoggedEvent> {}

/**
 * How a session's run ended: `complete` (the `complete` event is in the log), `ended` (the
 * channel ended without `complete`; `reason` says why) or `closed` (a caller closed it).
 *
 * @since 0.1.0
 * @category models
 */
export const EndStatus = literals(["complete", "ended", "closed"])

/**
 * @since 0.1.0
 * @category models
 */
export type EndStatus = typeof EndStatus.Type

/**
 * A session as the log knows it.
 *
 * @since 0.1.0
 * @category models
 */
export interface SessionRecord {
  readonly sessionId: Session.SessionId
  readonly info: Session.SessionInfo
  readonly maxActions: number
  readonly agent: Option.Option<string>
  /** `None` while it runs. */
  readonly ended: Option.Option<{ readonly status: EndStatus; readonly reason: Option.Option<string> }>
}

/**
 * An answer recorded for a request of a session.
 *
 * @since 0.1.0
 * @category models
 */
export interface RecordedAnswer {
  readonly request: SessionEvent.ExternalResourceRequested
  readonly answer: internal.AnswerEncoded
}

/**
 * A session's record, answers and a page of its events, read together ({@link Service.snapshot}).
 *
 * @since 0.1.0
 * @category models
 */
export interface Snapshot {
  readonly record: Option.Option<SessionRecord>
  readonly answers: ReadonlyArray<RecordedAnswer>
  readonly events: ReadonlyArray<LoggedEvent>
}

/**
 * An answer as the cluster carries and records it (`Grant` with its input, or `Deny`).
 *
 * @since 0.1.0
 * @category models
 */
export const Answer = internal.AnswerSchema

/**
 * @since 0.1.0
 * @category models
 */
export type Answer = internal.AnswerEncoded

/**
 * The log's store failed (the database is unreachable, a statement failed):
 * `ClusterErrors.EventLogError`.
 *
 * @since 0.1.0
 * @category errors
 */
export const EventLogError = ClusterErrors.EventLogError

/**
 * The type of {@link EventLogError}.
 *
 * @since 0.1.0
 * @category errors
 */
export type EventLogError = ClusterErrors.EventLogError

/**
 * The operations of the log.
 *
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /** Records a session if it is not known yet; returns the record as stored (the first one wins). */
  readonly register: (record: {
    readonly info: Session.SessionInfo
    readonly maxActions: number
    readonly agent: Option.Option<string>
    /** The session's shard (its number in the entity's shard group), for {@link Service.unendedIn}. */
    readonly shard?: number | undefined
  }) => Effect.Effect<SessionRecord, EventLogError>
  /** The record of a session. */
  readonly get: (sessionId: string) => Effect.Effect<Option.Option<SessionRecord>, EventLogError>
  /**
   * Appends events with the given sequence numbers, in one transaction. A sequence number that
   * is already taken fails (`EventLogError`): one writer per session. With `writer`, the events
   * are written only while `writer` holds the session's log ({@link Service.claim}); once
   * another writer has taken it, the append fails with `EventLogError` of `operation: "claim"`
   * (the check that failed; trying again cannot succeed) and writes nothing (on PostgreSQL the check and the write are one statement, and a take-over
   * waits for an append under way to commit).
   */
  readonly append: (
    sessionId: string,
    events: ReadonlyArray<LoggedEvent>,
    writer?: string | undefined
  ) => Effect.Effect<void, EventLogError>
  /** Events with `seq >= fromSeq`, in order, at most `limit`. */
  readonly read: (
    sessionId: string,
    fromSeq: number,
    limit: number
  ) => Effect.Effect<ReadonlyArray<LoggedEvent>, EventLogError>
  /**
   * Marks the end of the session's run (the first end wins). A session the log does not know is
   * recorded as ended, with no run (`maxActions` 0): a later `register` keeps that record.
   */
  readonly end: (
    sessionId: string,
    status: EndStatus,
    reason: Option.Option<string>
  ) => Effect.Effect<void, EventLogError>
  /** Records the answer to a request (the first answer to a request wins; returns whether this one was recorded). */
  readonly saveAnswer: (
    sessionId: string,
    request: SessionEvent.ExternalResourceRequested,
    answer: internal.AnswerEncoded
  ) => Effect.Effect<boolean, EventLogError>
  /** The answers recorded for a session. */
  readonly answers: (sessionId: string) => Effect.Effect<ReadonlyArray<RecordedAnswer>, EventLogError>
  /**
   * The answers recorded for each of the given sessions, in one read of the store (a session
   * with none is absent from the map): what a runner reads, for all the sessions it holds that
   * wait for an answer, to learn of answers another runner recorded.
   */
  readonly answersOf: (
    sessionIds: ReadonlyArray<string>
  ) => Effect.Effect<ReadonlyMap<string, ReadonlyArray<RecordedAnswer>>, EventLogError>
  /**
   * What a runner reads to take a session over, in one read of the store: its record, its
   * answers and its events with `seq >= fromSeq` (at most `limit`). As `get`, `answers` and
   * `read`, in one round trip instead of three (a take-over of thousands of sessions reads this
   * for each).
   */
  readonly snapshot: (sessionId: string, fromSeq: number, limit: number) => Effect.Effect<Snapshot, EventLogError>
  /** The ids of sessions whose run has not ended (at most `limit`, oldest first). */
  readonly unended: (limit: number) => Effect.Effect<ReadonlyArray<string>, EventLogError>
  /**
   * The ids of sessions whose run has not ended, in the given shards (and, with `unsharded`,
   * those registered without a shard), after `after` in id order, at most `limit`: the work of
   * a runner that takes shards over, proportional to the sessions of those shards.
   */
  readonly unendedIn: (
    shards: ReadonlyArray<number>,
    options: { readonly unsharded: boolean; readonly after: string; readonly limit: number }
  ) => Effect.Effect<ReadonlyArray<string>, EventLogError>
  /** Deletes sessions (record, events, answers) that ended before `before`; returns how many. */
  readonly purge: (before: Date) => Effect.Effect<number, EventLogError>
  /**
   * Claims the writing of a session's log for `writer` (a runner's activation of the session,
   * `runner#n`) for `leaseMillis` from now. True when the session is unclaimed, claimed by
   * `writer` already, or the log does not know the session, or its claim lapsed (not renewed
   * for its lease) and its holder's runner is gone ({@link Service.live}: the runner is not shown
   * alive); false otherwise. So a claim holds for as long as its runner lives: a runner stalled
   * past its renewals (on a loaded machine) keeps its sessions' logs, and its appends go on once
   * it wakes; a runner killed, or cut off from the database, loses them once they lapse, and its
   * appends (with `writer`) are refused from then on.
   */
  readonly claim: (sessionId: string, writer: string, leaseMillis: number) => Effect.Effect<boolean, EventLogError>
  /**
   * Extends the claims of the given sessions held by `writer`, or by a writer named after it
   * (`writer#...`: one of its activations), to `leaseMillis` from now (its heartbeat).
   */
  readonly renew: (
    writer: string,
    sessionIds: ReadonlyArray<string>,
    leaseMillis: number
  ) => Effect.Effect<void, EventLogError>
  /** Gives up `writer`'s claim of a session (nothing when another writer holds it). */
  readonly release: (sessionId: string, writer: string) => Effect.Effect<void, EventLogError>
  /**
   * Shows, for as long as the scope lasts, that the runner `writer` lives (and so holds the claims
   * of the writers named after it, `writer#...`). On PostgreSQL: a lock of its name held on a
   * connection of its own, outside the pool (released by the server when that connection ends:
   * the process killed, its machine gone; not when the process merely stalls), taken again
   * whenever the connection fails. In memory: for as long as the scope lasts. Returns once the
   * runner is shown alive.
   */
  readonly live: (writer: string) => Effect.Effect<void, never, Scope.Scope>
}

/**
 * The event log service.
 *
 * @since 0.1.0
 * @category tags
 */
export class EventLog extends ServiceTag<EventLog, Service>()("effect-agent-session/cluster/EventLog") {}

/**
 * Options of the log layers.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /**
   * How long a session's log is kept after the session ended; a sweep deletes older ones every
   * `retention / 4` (at most hourly). Default: kept forever.
   */
  readonly retention?: DurationInput | undefined
}

/**
 * The log in memory: one process, lost when it exits (the embedded default).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerMemory = (options: Options = {}): Layer.Layer<EventLog> =>
  scopedContextLayer(
    Effect.gen(function*() {
      const log = internal.makeMemory()
      const context = Context.make(EventLog, log)
      yield* internal.sweeper(log, options)
      return context
    })
  )


/**
 * The log in PostgreSQL (through the line's SQL client, `SqlClient`: `@effect/sql` on Effect 3,
 * `effect/sql` on Effect 4, with `@effect/sql-pg`'s `PgClient`). The layer runs the migration
 * that creates its tables (`agent_session_sessions`, `agent_session_events`,
 * `agent_session_answers`; migrations recorded in `agent_session_migrations`), retried while
 * another process holds the migration lock.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerSql = (options: Options = {}): Layer.Layer<EventLog, EventLogError, SqlClient.SqlClient> =>
  scopedContextLayer(
    Effect.gen(function*() {
      yield* sql.migrate
      const log = yield* sql.makeSql
      const context = Context.make(EventLog, log)
      yield* internal.sweeper(log, options)
      return context
    })
  )
