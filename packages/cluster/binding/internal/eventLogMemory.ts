/**
 * The event log's store in memory (one process: the embedded default), and the helpers the
 * stores share: written once for both cluster editions.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import { ClusterTally } from "effect-agent-session-shell"
import type * as EventLog from "../../src/EventLog.js"
import { Answer, catchAll, durationOf, optionFromNullish, Session, type SessionEvent } from "../../src/internal/line.js"
import { union } from "../../src/internal/lineSchema.js"
import { EventLogError } from "../ClusterErrors.js"

/** The answer on the wire of the cluster and in the log. */
export const AnswerSchema = union([
  Schema.Struct({ _tag: Schema.Literal("Grant"), input: Schema.OptionFromNullOr(Schema.String) }),
  Schema.Struct({ _tag: Schema.Literal("Deny") })
])
export type AnswerEncoded = typeof AnswerSchema.Type

/**
 * The key a request is answered by: the protocol core's (`Ledger.requestKey`: its action session
 * and raw resource type; bounded), the same as the connection's and the session's.
 */
export const requestKey: (request: SessionEvent.ExternalResourceRequested) => string = ClusterTally.requestKey

/**
 * When a claim refused may be tried again, for the SQL store's claims: by the session and the
 * writer that asked, the milliseconds to wait. Set by the store when it refuses a claim whose
 * holder's runner is gone (its lock free) and whose lease has not lapsed yet: mostly nothing but
 * the lapse frees it (a runner gone does not renew or release it any more), so asking often
 * before then costs queries for nothing. A holder that lives while its lock is briefly free (its
 * lock's connection opened again) may still release it: the writer's wait (`writer.ts`), which
 * reads (and forgets) the hint, waits at most a second on it. A hint never read is forgotten once
 * its time has passed, when the store sets the next ones.
 */
export const claimRetryHints = new WeakMap<EventLog.Service, (sessionId: string, writer: string) => number | undefined>()

/** The SDK's answer of a recorded one. */
export const toAnswer = (answer: AnswerEncoded): Answer.Answer =>
  answer._tag === "Grant" ? Answer.grant(Option.getOrUndefined(answer.input)) : Answer.deny()

export const fail = (operation: string) => (cause: unknown) =>
  new EventLogError({ operation, message: cause instanceof Error ? cause.message : String(cause) })

/**
 * An append refused: `writer` does not hold the session's log (another writer took it over). Its
 * operation is `claim`, the check that failed (an append's own failures say `append`).
 */
export const claimLost = (sessionId: string, writer: string) =>
  new EventLogError({
    operation: "claim",
    message: `the log of session ${sessionId} is not held by ${writer} (another writer took it over)`
  })

/**
 * Whether an append failed because its writer no longer holds the log (trying again cannot
 * succeed): of an append, only that failure says `claim`.
 */
export const isClaimLost = (error: EventLogError): boolean => error.operation === "claim"

/** The runner's writer name in an activation's (`runner#n`: `writer.ts`), whose lock shows it alive. */
export const runnerOf = (writer: string): string => writer.split("#")[0] ?? writer

/** The record of a session ended before the log heard of it (a `Close` before its `Start`). */
export const unknownRecord = (sessionId: string): EventLog.SessionRecord => ({
  sessionId: Session.SessionId.make(sessionId),
  info: Session.SessionInfo.make({
    session_id: Session.SessionId.make(sessionId),
    status: Option.none(),
    start_time: Option.none(),
    end_time: Option.none(),
    error: Option.none()
  }),
  maxActions: 0,
  agent: Option.none(),
  ended: Option.none()
})

// ---------------------------------------------------------------------------
// Memory
// ---------------------------------------------------------------------------

interface MemorySession {
  record: EventLog.SessionRecord
  shard: number | undefined
  endedAt: number | undefined
  /** Who writes the log, and until when (ms since the epoch) unless renewed. */
  writer: { readonly id: string; until: number } | undefined
  readonly events: Array<EventLog.LoggedEvent>
  readonly answers: Map<string, EventLog.RecordedAnswer>
}

export const makeMemory = (): EventLog.Service => {
  const sessions = new Map<string, MemorySession>()
  /** The runners shown alive (`live`), with how many scopes show each. */
  const living = new Map<string, number>()
  const log: EventLog.Service = {
    register: ({ agent, info, maxActions, shard }) =>
      Effect.sync(() => {
        const existing = sessions.get(info.session_id)
        if (existing !== undefined) return existing.record
        const record: EventLog.SessionRecord = {
          sessionId: info.session_id,
          info,
          maxActions,
          agent,
          ended: Option.none()
        }
        sessions.set(info.session_id, { record, shard, endedAt: undefined, writer: undefined, events: [], answers: new Map() })
        return record
      }),
    get: (sessionId) => Effect.sync(() => Option.map(optionFromNullish(sessions.get(sessionId)), (s) => s.record)),
    append: (sessionId, events, writer) =>
      Effect.suspend(() => {
        const session = sessions.get(sessionId)
        if (session === undefined) return Effect.fail(fail("append")(`unknown session ${sessionId}`))
        if (writer !== undefined && session.writer?.id !== writer) return Effect.fail(claimLost(sessionId, writer))
        for (const [i, logged] of events.entries()) {
          if (logged.seq !== session.events.length + 1 + i) {
            return Effect.fail(fail("append")(`sequence ${logged.seq} is taken or leaves a gap`))
          }
        }
        for (const logged of events) session.events.push(logged)
        return Effect.void
      }),
    read: (sessionId, fromSeq, limit) =>
      Effect.sync(() => {
        const events = sessions.get(sessionId)?.events ?? []
        const start = Math.max(0, fromSeq - 1)
        return events.slice(start, start + limit)
      }),
    end: (sessionId, status, reason) =>
      Effect.sync(() => {
        const session = sessions.get(sessionId)
        if (session === undefined) {
          const record: EventLog.SessionRecord = {
            ...unknownRecord(sessionId),
            ended: Option.some({ status, reason })
          }
          sessions.set(sessionId, {
            record,
            shard: undefined,
            endedAt: Date.now(),
            writer: undefined,
            events: [],
            answers: new Map()
          })
          return
        }
        if (Option.isSome(session.record.ended)) return
        session.record = { ...session.record, ended: Option.some({ status, reason }) }
        session.endedAt = Date.now()
      }),
    saveAnswer: (sessionId, request, answer) =>
      Effect.sync(() => {
        const session = sessions.get(sessionId)
        if (session === undefined) return false
        const key = ClusterTally.requestKey(request)
        if (session.answers.has(key)) return false
        session.answers.set(key, { request, answer })
        return true
      }),
    answers: (sessionId) => Effect.sync(() => [...(sessions.get(sessionId)?.answers.values() ?? [])]),
    answersOf: (sessionIds) =>
      Effect.sync(() => {
        const found = new Map<string, ReadonlyArray<EventLog.RecordedAnswer>>()
        for (const sessionId of sessionIds) {
          const answers = sessions.get(sessionId)?.answers
          if (answers !== undefined && answers.size > 0) found.set(sessionId, [...answers.values()])
        }
        return found
      }),
    snapshot: (sessionId, fromSeq, limit) =>
      Effect.all({ record: log.get(sessionId), answers: log.answers(sessionId), events: log.read(sessionId, fromSeq, limit) }),
    unended: (limit) =>
      Effect.sync(() =>
        [...sessions.values()].filter((s) => Option.isNone(s.record.ended)).slice(0, limit).map((s) => s.record.sessionId)
      ),
    unendedIn: (shards, { after, limit, unsharded }) =>
      Effect.sync(() => {
        const wanted = new Set(shards)
        return [...sessions.values()]
          .filter((s) =>
            Option.isNone(s.record.ended) && s.record.sessionId > after &&
            (s.shard === undefined ? unsharded : wanted.has(s.shard))
          )
          .map((s) => s.record.sessionId as string)
          .sort()
          .slice(0, limit)
      }),
    purge: (before) =>
      Effect.sync(() => {
        let n = 0
        for (const [id, session] of sessions) {
          if (session.endedAt !== undefined && session.endedAt < before.getTime()) {
            sessions.delete(id)
            n += 1
          }
        }
        return n
      }),
    claim: (sessionId, writer, leaseMillis) =>
      Effect.sync(() => {
        const session = sessions.get(sessionId)
        if (session === undefined) return true
        const now = Date.now()
        const holder = session.writer
        if (
          holder !== undefined && holder.id !== writer &&
          (holder.until >= now || living.has(runnerOf(holder.id)))
        ) return false
        session.writer = { id: writer, until: now + leaseMillis }
        return true
      }),
    renew: (writer, sessionIds, leaseMillis) =>
      Effect.sync(() => {
        const until = Date.now() + leaseMillis
        for (const sessionId of sessionIds) {
          const holder = sessions.get(sessionId)?.writer
          if (holder !== undefined && (holder.id === writer || holder.id.startsWith(`${writer}#`))) holder.until = until
        }
      }),
    release: (sessionId, writer) =>
      Effect.sync(() => {
        const session = sessions.get(sessionId)
        if (session?.writer?.id === writer) session.writer = undefined
      }),
    live: (writer) =>
      Effect.acquireRelease(
        Effect.sync(() => {
          living.set(writer, (living.get(writer) ?? 0) + 1)
        }),
        () =>
          Effect.sync(() => {
            const n = (living.get(writer) ?? 1) - 1
            if (n === 0) living.delete(writer)
            else living.set(writer, n)
          })
      )
  }
  return log
}

/** Deletes the sessions ended past `retention` every `retention / 4` (at most hourly), for as long as the scope lasts. */
export const sweeper = (log: EventLog.Service, options: EventLog.Options) =>
  Effect.gen(function*() {
    if (options.retention === undefined) return
    const retention = durationOf(options.retention)
    const every = Duration.min(Duration.hours(1), Duration.times(retention, 0.25))
    yield* Effect.suspend(() => log.purge(new Date(Date.now() - Duration.toMillis(retention)))).pipe(
      Effect.tap((n) => n > 0 ? Effect.logInfo(`Event log: purged ${n} sessions past retention`) : Effect.void),
      catchAll((error: EventLogError) => Effect.logWarning(`Event log: purge failed: ${error.message}`)),
      Effect.repeat(Schedule.spaced(every)),
      Effect.delay(every),
      Effect.forkScoped
    )
  })
