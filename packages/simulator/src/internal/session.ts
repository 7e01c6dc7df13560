/**
 * The simulator's sessions: the script cursor, the answers, and the pump that sends a session's
 * frames to whatever transport is attached (WebSocket or SSE), with the faults.
 *
 * Per-frame work is plain JavaScript (no Effect per frame on the bulk path): the benchmarks push
 * hundreds of thousands of frames through it.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import type * as Dialect from "effect-agent-session/Dialect"
import * as SessionEvent from "effect-agent-session/SessionEvent"
import type * as Wire from "effect-agent-session/Wire"
import * as Script from "../Script.js"
import type { WsFaults } from "../Simulator.js"

/** The fault options a session runs with (snapshotted when the session is created). */
export type SessionFaults = Omit<WsFaults, "rejectHandshake">

/** What a pump writes: a scripted or injected event, or raw text (the malformed frame). */
export type Outgoing =
  | {
    readonly _tag: "Event"
    readonly event: SessionEvent.SessionEvent
    /** For a bulk `action_run`: its number, whose content is `Script.bulkContent(bulk)`. */
    readonly bulk?: number | undefined
  }
  | { readonly _tag: "Raw"; readonly name: string; readonly text: string }

/** A transport as the pump sees it. */
export interface Sink {
  /** Bytes written but not yet flushed to the socket. */
  readonly buffered: () => number
  /** Writes one frame; `onFlushed(true)` once it is handed to the OS, `false` if it never will be. */
  readonly write: (item: Outgoing, onFlushed?: (ok: boolean) => void) => void
  /** The normal end (WebSocket close 1000, SSE end of response). */
  readonly end: () => void
  /** An end with an error code (WebSocket close `code`, SSE end of response). */
  readonly fail: (code: number, reason: string) => void
  /** An abrupt end: the TCP socket is destroyed, no close frame (1006 for a WebSocket client). */
  readonly drop: () => void
}

/** One accepted connection of a session. */
export interface Connection {
  readonly sink: Sink
  /** The principal that opened it (`"account"` or an agent id). */
  readonly principal: string
  closed: boolean
  /** True while a `stall` fault holds the frames (heartbeats pause too). */
  stalling: boolean
  ackWaiter: { readonly target: number; readonly resume: (ok: boolean) => void } | undefined
}

/** The settings of a session's run. */
interface RunSettings {
  readonly actions: number
  readonly frameDelay: Duration.Duration
  readonly ask: Script.Ask
  readonly askAfter?: number | undefined
  readonly bulkActions: number | undefined
  readonly actionSessionId?: string | undefined
}

/** The high-water mark of a burst: past this many buffered bytes the pump waits for a flush. */
const highWaterMark = 1024 * 1024

/** The most frames a burst writes before it yields to the event loop (waiting for the flush). */
const burstFrames = 512

/** What became of an answer. */
type AnswerOutcome =
  /** Recorded; `matched` when it answered the pending request (and unblocked the agent). */
  | { readonly _tag: "Recorded"; readonly matched: boolean }
  /** Refused: the session already holds `maxAnswersPerRequest` answers. */
  | { readonly _tag: "TooMany"; readonly limit: number }

/** A session of the simulator. */
export class SessionState {
  readonly plan: Script.Plan
  readonly startTime: string
  endTime: string | undefined = undefined
  /** Events after the answer, once it arrived. */
  private tail: ReadonlyArray<SessionEvent.SessionEvent> | undefined = undefined
  /** Script events flushed to some connection (the resume point). */
  cursor = 0
  connections = 0
  readonly answers: Array<Wire.AnswerData> = []
  /** Whether the request has been written (an answer after it unblocks the agent). */
  requestWritten = false
  current: Connection | undefined = undefined
  readonly injected = { malformed: false, unknown: false, oversize: false }
  stalled = false
  readonly dropsUsed = new Set<number>()
  private readonly waiters = new Set<() => void>()
  /** The index after the last bulk action frame (0 without bulk actions). */
  readonly bulkEnd: number

  constructor(
    readonly id: string,
    /** The principal that created it: `"account"` or an agent id. */
    readonly principal: string,
    readonly goal: string,
    readonly startUrl: string,
    readonly maxActions: number,
    readonly settings: RunSettings,
    readonly faults: SessionFaults,
    dialect: Dialect.Dialect,
    now: Date,
    readonly maxAnswers: number = 4
  ) {
    this.startTime = now.toISOString()
    this.plan = Script.plan({
      sessionId: id,
      goal,
      startUrl,
      maxActions,
      actions: settings.actions,
      ask: settings.ask,
      askAfter: settings.askAfter,
      extraActions: faults.exceedMaxActions,
      bulkActions: settings.bulkActions,
      actionSessionId: settings.actionSessionId,
      costSummary: dialect.costSummary,
      complete: faults.closeBeforeComplete !== true
    })
    // Bulk action frames are sent without the frame delay: indices 2 .. 2 + bulk - 1.
    this.bulkEnd = settings.bulkActions === undefined ? 0 : 2 + this.plan.actions
  }

  /** Events known so far. */
  get length(): number {
    return this.plan.head.length + (this.tail?.length ?? 0)
  }

  /** Whether the whole script is known (no answer awaited). */
  get done(): boolean {
    return Option.isNone(this.plan.request) || this.tail !== undefined
  }

  /** Whether the session has sent `complete` (or, with `closeBeforeComplete`, its last event). */
  get finished(): boolean {
    return this.done && this.cursor >= this.length
  }

  at(index: number): SessionEvent.SessionEvent {
    const headLength = this.plan.head.length
    return index < headLength
      ? this.plan.head.at(index)
      : (this.tail?.[index - headLength] as SessionEvent.SessionEvent)
  }

  isBulk(index: number): boolean {
    return index >= 2 && index < this.bulkEnd
  }

  /** The events known so far, in order. */
  script(): ReadonlyArray<SessionEvent.SessionEvent> {
    const out: Array<SessionEvent.SessionEvent> = []
    const length = this.length
    for (let i = 0; i < length; i++) out.push(this.at(i))
    return out
  }

  /** A frame was flushed: advance the resume point. */
  ack(index: number, connection: Connection): void {
    if (index + 1 > this.cursor) {
      this.cursor = index + 1
      if (this.finished && this.endTime === undefined) this.endTime = new Date().toISOString()
    }
    const waiter = connection.ackWaiter
    if (waiter !== undefined && this.cursor >= waiter.target) {
      connection.ackWaiter = undefined
      waiter.resume(true)
    }
  }

  /**
   * Records an answer, up to `maxAnswers`. An answer matches the pending request when its
   * `resource_type` is the request's and its `action_session_id`, when it has one, is the
   * request's (the observed client sends neither `action_session_id` nor `field_name`); the first
   * matching answer after the request was written unblocks the agent.
   */
  answer(data: Wire.AnswerData): AnswerOutcome {
    if (this.answers.length >= this.maxAnswers) return { _tag: "TooMany", limit: this.maxAnswers }
    this.answers.push(data)
    const request = this.plan.request
    if (this.requestWritten && this.tail === undefined && Option.isSome(request) && matches(request.value, data)) {
      this.tail = this.plan.tail(data)
      this.wake()
      return { _tag: "Recorded", matched: true }
    }
    return { _tag: "Recorded", matched: false }
  }

  /** The session's status, as retrieve reports it. */
  get status(): "started" | "in_progress" | "complete" {
    return this.finished ? "complete" : this.cursor > 0 ? "in_progress" : "started"
  }

  private wake(): void {
    const waiters = [...this.waiters]
    this.waiters.clear()
    for (const resume of waiters) resume()
  }

  /** Waits until more than `known` events are known or the script is done. */
  waitForMore(known: number): Effect.Effect<void> {
    return Effect.async<void>((resume) => {
      if (this.length > known || this.done) return resume(Effect.void)
      const waiter = () => resume(Effect.void)
      this.waiters.add(waiter)
      return Effect.sync(() => {
        this.waiters.delete(waiter)
      })
    })
  }

  /** Whether a connection is open. */
  get connected(): boolean {
    return this.current !== undefined && !this.current.closed
  }

  /** Whether `principal` may open a connection now: none is open, or the open one is its own. */
  maySupersede(principal: string): boolean {
    return !this.connected || this.current?.principal === principal
  }

  /**
   * Makes a connection the current one, closing the one it supersedes (4000). Only the principal
   * of the open connection may supersede it: for another, `undefined` (the caller refuses).
   */
  attach(sink: Sink, principal: string): Connection | undefined {
    if (!this.maySupersede(principal)) return undefined
    const previous = this.current
    if (previous !== undefined && !previous.closed) {
      detach(this, previous)
      previous.sink.fail(4000, "superseded by a newer connection")
    }
    this.connections += 1
    const connection: Connection = { sink, principal, closed: false, stalling: false, ackWaiter: undefined }
    this.current = connection
    return connection
  }
}

/** Whether an answer answers a request: same `resource_type`, and same `action_session_id` when given. */
const matches = (request: SessionEvent.ExternalResourceRequested, data: Wire.AnswerData): boolean =>
  data.resource_type === SessionEvent.resourceTypeRaw(request.resource_type) &&
  (data.action_session_id === undefined || data.action_session_id === request.action_session_id)

/** Marks a connection closed (the transport closed or the pump ended it). */
export const detach = (session: SessionState, connection: Connection): void => {
  connection.closed = true
  const waiter = connection.ackWaiter
  connection.ackWaiter = undefined
  if (waiter !== undefined) waiter.resume(false)
  if (session.current === connection) session.current = undefined
}

const awaitAck = (session: SessionState, connection: Connection, target: number): Effect.Effect<boolean> =>
  Effect.async<boolean>((resume) => {
    if (session.cursor >= target) return resume(Effect.succeed(true))
    if (connection.closed) return resume(Effect.succeed(false))
    connection.ackWaiter = { target, resume: (ok) => resume(Effect.succeed(ok)) }
    return Effect.sync(() => {
      connection.ackWaiter = undefined
    })
  })

const writeEvent = (session: SessionState, connection: Connection, index: number): void => {
  const event = session.at(index)
  if (event._tag === "ExternalResourceRequested") session.requestWritten = true
  const item: Outgoing = session.isBulk(index) ? { _tag: "Event", event, bulk: index - 1 } : { _tag: "Event", event }
  connection.sink.write(item, (ok) => {
    if (ok) session.ack(index, connection)
    else if (connection.ackWaiter !== undefined) {
      const waiter = connection.ackWaiter
      connection.ackWaiter = undefined
      waiter.resume(false)
    }
  })
}

const malformedFrame: Outgoing = { _tag: "Raw", name: "action_run", text: "{not json: this frame is malformed" }

const unknownFrame: Outgoing = {
  _tag: "Event",
  event: {
    _tag: "Unrecognized",
    event: "mystery_event",
    payload: { note: "an event the SDK does not know", level: 3 }
  }
}

/** A valid-shaped `thoughts_and_memories` frame padded to `bytes` (ASCII) in the given encoding. */
const oversizeFrame = (bytes: number, measure: (event: SessionEvent.SessionEvent) => number): Outgoing => {
  const base: SessionEvent.ThoughtsAndMemories = { _tag: "ThoughtsAndMemories", thought: "", memory: "oversize" }
  const padding = Math.max(0, bytes - measure(base))
  return { _tag: "Event", event: { ...base, thought: "x".repeat(padding) } }
}

/** The options of a pump. */
interface PumpOptions {
  readonly heartbeats: boolean
  readonly heartbeatInterval: Duration.Duration
  /** The size of an event as the transport frames it (for the oversize fault). */
  readonly measure: (event: SessionEvent.SessionEvent) => number
}

/** The 1-based event number `n` of the faults as a 0-based index of the next event. */
const injectionsBefore = (session: SessionState, index: number, measure: PumpOptions["measure"]): Array<Outgoing> => {
  const n = index + 1
  const faults = session.faults
  const out: Array<Outgoing> = []
  if (faults.malformedAt === n && !session.injected.malformed) {
    session.injected.malformed = true
    out.push(malformedFrame)
  }
  if (faults.unknownEventAt === n && !session.injected.unknown) {
    session.injected.unknown = true
    out.push(unknownFrame)
  }
  if (faults.oversize !== undefined && faults.oversize.at === n && !session.injected.oversize) {
    session.injected.oversize = true
    out.push(oversizeFrame(faults.oversize.bytes, measure))
  }
  return out
}

/** The first index at or after `from` where the bulk burst must stop for a fault. */
const burstLimit = (session: SessionState, from: number, end: number): number => {
  let limit = end
  const faults = session.faults
  const consider = (index: number) => {
    if (index >= from && index < limit) limit = index
  }
  if (!session.injected.malformed && faults.malformedAt !== undefined) consider(faults.malformedAt - 1)
  if (!session.injected.unknown && faults.unknownEventAt !== undefined) consider(faults.unknownEventAt - 1)
  if (!session.injected.oversize && faults.oversize !== undefined) consider(faults.oversize.at - 1)
  if (!session.stalled && faults.stall !== undefined) consider(faults.stall.after)
  // A drop after the d-th frame: the burst ends after writing index d - 1.
  for (const d of faults.dropAfter ?? []) if (!session.dropsUsed.has(d) && d > from) consider(d)
  return limit === from ? from + 1 : limit
}

/**
 * Sends a session's frames from its resume point to a connection until the script ends (close
 * 1000, or 1011 with `closeBeforeComplete`), a fault drops it, or the connection closes.
 */
export const pump = (session: SessionState, connection: Connection, options: PumpOptions): Effect.Effect<void> =>
  Effect.gen(function*() {
    const sink = connection.sink
    const live = () => !connection.closed && session.current === connection
    if (options.heartbeats) {
      sink.write({ _tag: "Event", event: { _tag: "Connected" } })
      yield* Effect.sync(() => {
        // A client that does not read gets no more heartbeats piling up in its buffer.
        if (live() && !connection.stalling && sink.buffered() < highWaterMark) {
          sink.write({ _tag: "Event", event: { _tag: "Heartbeat" } })
        }
      }).pipe(
        Effect.delay(options.heartbeatInterval),
        Effect.repeat(Schedule.spaced(options.heartbeatInterval)),
        Effect.forkScoped
      )
    }
    const faults = session.faults
    // A reopened connection resumes at the cursor, or N events before it with `replayOnReconnect`.
    const replay = session.connections > 1 ? Math.max(0, Math.floor(faults.replayOnReconnect ?? 0)) : 0
    let next = Math.max(0, session.cursor - replay)
    while (live()) {
      if (next >= session.length) {
        if (!session.done) {
          yield* session.waitForMore(next)
          continue
        }
        if (session.cursor < next) {
          // Wait for the last frame to flush before closing.
          if (!(yield* awaitAck(session, connection, next))) return
        }
        detach(session, connection)
        if (faults.closeBeforeComplete === true) sink.fail(1011, "the agent stopped before completing")
        else sink.end()
        return
      }
      if (faults.stall !== undefined && !session.stalled && next === faults.stall.after) {
        session.stalled = true
        connection.stalling = true
        yield* Effect.sleep(faults.stall.duration)
        // `stalling` stays set until the next event frame is written: nothing comes in between.
        continue
      }
      for (const item of injectionsBefore(session, next, options.measure)) sink.write(item)
      if (session.isBulk(next)) {
        // A burst: write until the high-water mark or the next fault, then wait for the flush.
        const limit = Math.min(burstLimit(session, next, Math.min(session.length, session.bulkEnd)), next + burstFrames)
        while (next < limit && sink.buffered() < highWaterMark) {
          writeEvent(session, connection, next)
          next += 1
        }
        connection.stalling = false
        if (!(yield* awaitAck(session, connection, next))) return
      } else {
        if (Duration.toMillis(session.settings.frameDelay) > 0) {
          yield* Effect.sleep(session.settings.frameDelay)
          if (!live()) return
        }
        writeEvent(session, connection, next)
        connection.stalling = false
        next += 1
        if (!(yield* awaitAck(session, connection, next))) return
      }
      if ((faults.dropAfter ?? []).includes(next) && !session.dropsUsed.has(next)) {
        session.dropsUsed.add(next)
        detach(session, connection)
        sink.drop()
        return
      }
    }
  }).pipe(Effect.scoped)

