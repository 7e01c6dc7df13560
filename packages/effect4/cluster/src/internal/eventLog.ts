/**
 * The event log's store in memory.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { ClusterTally } from "effect-agent-session-shell"
import * as Session from "../../../src/Session.js"
import type * as EventLog from "../EventLog.js"
import { EventLogError } from "../ClusterErrors.js"

interface MemorySession {
  record: EventLog.SessionRecord
  endedAt: number | undefined
  readonly events: Array<EventLog.LoggedEvent>
  /** By the core's request key. */
  readonly answers: Map<string, EventLog.RecordedAnswer>
}

const refused = (operation: string, message: string) => new EventLogError({ operation, message })

/** The record of a session the log learns of by its end alone (closed before it was started). */
const unknownRecord = (sessionId: string): EventLog.SessionRecord => ({
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

export const makeMemory = (): EventLog.Service => {
  const sessions = new Map<string, MemorySession>()
  const read = (sessionId: string, fromSeq: number, limit: number) => {
    const events = sessions.get(sessionId)?.events ?? []
    const start = Math.max(0, fromSeq - 1)
    return events.slice(start, start + limit)
  }
  const answers = (sessionId: string) => [...(sessions.get(sessionId)?.answers.values() ?? [])]
  const get = (sessionId: string) => Option.map(Option.fromNullishOr(sessions.get(sessionId)), (s) => s.record)
  return {
    register: ({ agent, info, maxActions }) =>
      Effect.sync(() => {
        const existing = sessions.get(info.session_id)
        if (existing !== undefined) return existing.record
        const record: EventLog.SessionRecord = { sessionId: info.session_id, info, maxActions, agent, ended: Option.none() }
        sessions.set(info.session_id, { record, endedAt: undefined, events: [], answers: new Map() })
        return record
      }),
    get: (sessionId) => Effect.sync(() => get(sessionId)),
    append: (sessionId, events) =>
      Effect.suspend(() => {
        const session = sessions.get(sessionId)
        if (session === undefined) return Effect.fail(refused("append", "unknown session"))
        for (const [i, logged] of events.entries()) {
          if (logged.seq !== session.events.length + 1 + i) {
            return Effect.fail(refused("append", `sequence ${logged.seq} is taken or leaves a gap`))
          }
        }
        for (const logged of events) session.events.push(logged)
        return Effect.void
      }),
    read: (sessionId, fromSeq, limit) => Effect.sync(() => read(sessionId, fromSeq, limit)),
    end: (sessionId, status, reason) =>
      Effect.sync(() => {
        const session = sessions.get(sessionId)
        const ended = Option.some({ status, reason })
        if (session === undefined) {
          sessions.set(sessionId, {
            record: { ...unknownRecord(sessionId), ended },
            endedAt: Date.now(),
            events: [],
            answers: new Map()
          })
          return
        }
        if (Option.isSome(session.record.ended)) return
        session.record = { ...session.record, ended }
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
    answers: (sessionId) => Effect.sync(() => answers(sessionId)),
    snapshot: (sessionId, fromSeq, limit) =>
      Effect.sync(() => ({ record: get(sessionId), answers: answers(sessionId), events: read(sessionId, fromSeq, limit) })),
    unended: (limit) =>
      Effect.sync(() =>
        [...sessions.values()].filter((s) => Option.isNone(s.record.ended)).slice(0, limit).map((s) => s.record.sessionId)
      ),
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
      })
  }
}
