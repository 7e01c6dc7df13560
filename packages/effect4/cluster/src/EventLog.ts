/**
 * The sessions' event log: every event a session's channel received, numbered from 1, with the
 * session's record (what to run it from, how its run ended) and the answers given to its
 * requests. What `Events` streams and a runner taking a session over reads. This edition holds
 * it in memory (`layerMemory`: one machine, nothing survives the process); the Effect 3 cluster
 * edition also stores it in PostgreSQL.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type * as Session from "../../src/Session.js"
import * as SessionEvent from "../../src/SessionEvent.js"
import * as ClusterErrors from "./ClusterErrors.js"
import * as internal from "./internal/eventLog.js"

/**
 * An event of a session's log with its sequence number (from 1; 0 is a keep-alive of `Events`,
 * never logged).
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
 * How a session's run ended: `complete`, `ended` (without `complete`), or `closed` by a caller.
 *
 * @since 0.1.0
 * @category models
 */
export const EndStatus = Schema.Literals(["complete", "ended", "closed"])

/**
 * @since 0.1.0
 * @category models
 */
export type EndStatus = typeof EndStatus.Type

/**
 * An answer as the cluster carries and records it.
 *
 * @since 0.1.0
 * @category models
 */
export const Answer = Schema.Union([
  Schema.Struct({ _tag: Schema.Literal("Grant"), input: Schema.OptionFromNullOr(Schema.String) }),
  Schema.Struct({ _tag: Schema.Literal("Deny") })
])

/**
 * @since 0.1.0
 * @category models
 */
export type Answer = typeof Answer.Type

/**
 * A session as the log records it.
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
 * An answer recorded for a request.
 *
 * @since 0.1.0
 * @category models
 */
export interface RecordedAnswer {
  readonly request: SessionEvent.ExternalResourceRequested
  readonly answer: Answer
}

/**
 * What a runner reads of a session in one read: its record, its answers and its events from a
 * sequence number.
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
 * The log failed (`ClusterErrors.EventLogError`).
 *
 * @since 0.1.0
 * @category errors
 */
export const EventLogError = ClusterErrors.EventLogError

/**
 * @since 0.1.0
 * @category errors
 */
export type EventLogError = ClusterErrors.EventLogError

/**
 * The log's operations.
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
  }) => Effect.Effect<SessionRecord, EventLogError>
  /** The record of a session. */
  readonly get: (sessionId: string) => Effect.Effect<Option.Option<SessionRecord>, EventLogError>
  /** Appends events with the given sequence numbers; a sequence number taken or a gap fails. */
  readonly append: (sessionId: string, events: ReadonlyArray<LoggedEvent>) => Effect.Effect<void, EventLogError>
  /** Events with `seq >= fromSeq`, in order, at most `limit`. */
  readonly read: (sessionId: string, fromSeq: number, limit: number) => Effect.Effect<ReadonlyArray<LoggedEvent>, EventLogError>
  /**
   * Marks the end of the session's run (the first end wins). A session the log does not know is
   * recorded as ended, with no run (`maxActions` 0): a later `register` keeps that record.
   */
  readonly end: (sessionId: string, status: EndStatus, reason: Option.Option<string>) => Effect.Effect<void, EventLogError>
  /** Records the answer to a request (the first answer wins; returns whether this one was recorded). */
  readonly saveAnswer: (
    sessionId: string,
    request: SessionEvent.ExternalResourceRequested,
    answer: Answer
  ) => Effect.Effect<boolean, EventLogError>
  /** The answers recorded for a session. */
  readonly answers: (sessionId: string) => Effect.Effect<ReadonlyArray<RecordedAnswer>, EventLogError>
  /** The record, the answers and the events from `fromSeq` (at most `limit`), in one read. */
  readonly snapshot: (sessionId: string, fromSeq: number, limit: number) => Effect.Effect<Snapshot, EventLogError>
  /** The ids of sessions whose run has not ended (at most `limit`, oldest first). */
  readonly unended: (limit: number) => Effect.Effect<ReadonlyArray<string>, EventLogError>
  /** Deletes sessions (record, events, answers) that ended before `before`; returns how many. */
  readonly purge: (before: Date) => Effect.Effect<number, EventLogError>
}

/**
 * The log.
 *
 * @since 0.1.0
 * @category tags
 */
export class EventLog extends Context.Service<EventLog, Service>()("effect-agent-session/cluster/EventLog") {}

/**
 * A log in memory (one process; nothing survives it).
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeMemory: () => Service = internal.makeMemory

/**
 * The log in memory, as a layer.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerMemory: Layer.Layer<EventLog> = Layer.sync(EventLog, makeMemory)
