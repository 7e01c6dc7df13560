/**
 * The connection's public state (packages/core/src/Connection.ts: `state`, `publishOpen`,
 * `publishReconnecting`, `finish`; `follows`), driven as an edition's loop drives it: the open
 * published once the loop sees the attempt open, `Reconnecting` once the reconnect schedule
 * decides to try again (never on the first-connect schedule), `Closed` at the end. Random runs of
 * inputs (opens, new events, keep-alives, drops, connect time-outs, ends, the caller's close, time
 * passing, the schedule's decisions) publish states that follow the allowed graph, with counts
 * that agree with the run.
 */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { Connection, type Ledger } from "../src/index.js"
import { driven, quietPort } from "./driven.js"

interface Event {
  readonly kind: Connection.EventKind
}

const make = () =>
  driven<Event, string>(
    { bufferSize: 64, answerBufferSize: 4, idleTimeoutMillis: 60_000, endOnError: false, failOnFrameError: true },
    { kind: (event) => event.kind, requestKey: () => "k", message: (error) => error, chargeable: () => false },
    quietPort<Event, string>()
  )

type Op =
  | { readonly _tag: "open" }
  | { readonly _tag: "event" }
  | { readonly _tag: "keep-alive" }
  | { readonly _tag: "drop" }
  | { readonly _tag: "connect-timeout" }
  | { readonly _tag: "end" }
  | { readonly _tag: "fatal" }
  | { readonly _tag: "close" }
  | { readonly _tag: "advance"; readonly millis: number }

const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: fc.constant({ _tag: "open" as const }) },
  { weight: 3, arbitrary: fc.constant({ _tag: "event" as const }) },
  { weight: 1, arbitrary: fc.constant({ _tag: "keep-alive" as const }) },
  { weight: 4, arbitrary: fc.constant({ _tag: "drop" as const }) },
  { weight: 1, arbitrary: fc.constant({ _tag: "connect-timeout" as const }) },
  { weight: 1, arbitrary: fc.constant({ _tag: "end" as const }) },
  { weight: 1, arbitrary: fc.constant({ _tag: "fatal" as const }) },
  { weight: 1, arbitrary: fc.constant({ _tag: "close" as const }) },
  { weight: 2, arbitrary: fc.record({ _tag: fc.constant("advance" as const), millis: fc.integer({ min: 0, max: 5_000 }) }) }
)

/**
 * Plays `ops` as the transport and the service, and the loop as an edition runs it (`retries`:
 * the schedule's decisions, in turn, `true` to try again; past their end it gives up). Returns
 * every state published, the first being the initial one, and what the run saw.
 */
const play = (ops: ReadonlyArray<Op>, retries: ReadonlyArray<boolean>) => {
  const c = make()
  const published: Array<Connection.State> = [c.state]
  const publish = (state: Connection.State | undefined) => {
    if (state !== undefined) published.push(state)
  }
  let now = 0
  let decisions = 0
  let unsent: ReadonlyArray<Ledger.UnsentAnswer> | undefined
  const finish = (reason: Connection.CloseReason) => {
    unsent = c.finish(reason)
    if (unsent !== undefined) publish(c.state)
  }
  let id = c.begin(now)
  // The loop's fiber wakes once the attempt opened (or ended): an open is published once.
  let opened = false
  let seenOpen = false
  const wake = () => {
    if (!opened || seenOpen) return
    seenOpen = true
    publish(c.publishOpen())
  }
  for (const step of ops) {
    if (c.isFinished) break
    switch (step._tag) {
      case "open":
        if (c.phase(id) === "connecting") opened = true
        c.opened(id, now)
        break
      case "event":
      case "keep-alive":
        // A transport hands over frames once open (both transports do).
        if (opened) c.frameArrived(id, now, { kind: step._tag }, undefined)
        break
      case "drop":
        c.closed(id, { _tag: "Retry", error: "closed with code 1006" })
        break
      case "connect-timeout":
        if (c.phase(id) === "connecting") c.closed(id, { _tag: "Retry", error: "connect time-out", connectTimeout: true })
        break
      case "end":
        c.closed(id, { _tag: "End", reason: "closed-by-service" })
        break
      case "fatal":
        c.closed(id, { _tag: "Fatal", error: "refused", reason: "handshake-rejected" })
        break
      case "close":
        finish("closed-by-caller")
        continue
      case "advance":
        now += step.millis
        break
    }
    wake()
    if (c.phase(id) !== "ended") continue
    const next = c.attemptEnded(id, now)
    if (next._tag === "Finish") {
      finish(next.reason)
      continue
    }
    if (next.schedule === "first-connect") {
      // Never open: the state stays `Connecting` through these retries.
      if (next.giveUp || retries[decisions++] !== true) {
        finish("connection-lost")
        continue
      }
    } else {
      if (retries[decisions++] !== true) {
        finish("connection-lost")
        continue
      }
      publish(c.publishReconnecting())
    }
    now += 100
    id = c.begin(now)
    seenOpen = false
    opened = false
  }
  finish("closed-by-caller")
  return { published, unsent, connection: c }
}

describe("Connection's public state", () => {
  it("follows the allowed graph, with counts that agree with the run", () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 60 }), fc.array(fc.boolean(), { maxLength: 20 }), (ops, retries) => {
        const { connection, published, unsent } = play(ops, retries)
        expect(published[0]).toEqual({ _tag: "Connecting" })
        for (let i = 1; i < published.length; i++) {
          expect(Connection.follows(published[i - 1]!, published[i]!), JSON.stringify(published.slice(0, i + 1))).toBe(
            true
          )
        }
        // Closed once, last.
        const last = published[published.length - 1]!
        expect(last._tag).toBe("Closed")
        expect(published.filter((state) => state._tag === "Closed")).toHaveLength(1)
        expect(connection.state).toBe(last)
        if (last._tag === "Closed") expect(last.unsent ?? []).toEqual(unsent ?? [])
        // Each open counts the opens before it; the first has no downtime, a reopening has one.
        let opens = 0
        for (const state of published) {
          if (state._tag !== "Open") continue
          expect(state.reconnects).toBe(opens)
          expect(state.downtimeMillis === undefined).toBe(opens === 0)
          opens += 1
        }
        // Nothing is decided once closed.
        expect(connection.publishOpen()).toBeUndefined()
        expect(connection.publishReconnecting()).toBeUndefined()
        expect(connection.finish("failed")).toBeUndefined()
        expect(connection.state).toBe(last)
      }),
      { numRuns: 400 }
    )
  })

  it("Connecting, Open, Reconnecting from 1, Open again with the downtime, Closed with the reason", () => {
    const c = make()
    expect(c.state).toEqual({ _tag: "Connecting" })
    const first = c.begin(0)
    c.opened(first, 10)
    expect(c.publishOpen()).toEqual({ _tag: "Open", reconnects: 0, downtimeMillis: undefined })
    c.closed(first, { _tag: "Retry", error: "closed with code 1006" })
    expect(c.attemptEnded(first, 50)).toMatchObject({ _tag: "Retry", schedule: "reconnect" })
    expect(c.publishReconnecting()).toEqual({ _tag: "Reconnecting", attempt: 1, lastError: "closed with code 1006" })
    const second = c.begin(150)
    c.closed(second, { _tag: "Retry", error: "open failed: ECONNREFUSED" })
    c.attemptEnded(second, 160)
    expect(c.publishReconnecting()).toEqual({ _tag: "Reconnecting", attempt: 2, lastError: "open failed: ECONNREFUSED" })
    const third = c.begin(400)
    c.opened(third, 420)
    expect(c.publishOpen()).toEqual({ _tag: "Open", reconnects: 1, downtimeMillis: 370 })
    expect(c.state).toEqual({ _tag: "Open", reconnects: 1, downtimeMillis: 370 })
    expect(c.finish("closed-by-caller")).toEqual([])
    expect(c.state).toEqual({ _tag: "Closed", reason: "closed-by-caller" })
  })

  it("stays Connecting through the first-connect retries, and names the unsent answers when closed", () => {
    const c = make()
    const first = c.begin(0)
    c.closed(first, { _tag: "Retry", error: "open failed: ECONNREFUSED" })
    expect(c.attemptEnded(first, 5)).toMatchObject({ _tag: "Retry", schedule: "first-connect" })
    expect(c.state).toEqual({ _tag: "Connecting" })
    const second = c.begin(10)
    c.frameArrived(second, 11, { kind: "request" }, undefined)
    expect(c.answer({ key: "k", frame: "answer k", data: { granted: true, resource_type: "t" } })).toBeUndefined()
    const unsent = c.finish("connection-lost")
    expect(unsent).toHaveLength(1)
    expect(c.state).toEqual({ _tag: "Closed", reason: "connection-lost", unsent })
  })

  it("follows: the graph", () => {
    const connecting: Connection.State = { _tag: "Connecting" }
    const open: Connection.State = { _tag: "Open", reconnects: 0, downtimeMillis: undefined }
    const retry = (attempt: number): Connection.State => ({ _tag: "Reconnecting", attempt, lastError: "" })
    const closed: Connection.State = { _tag: "Closed", reason: "complete" }
    expect(Connection.follows(connecting, open)).toBe(true)
    expect(Connection.follows(connecting, closed)).toBe(true)
    expect(Connection.follows(connecting, retry(1))).toBe(false)
    expect(Connection.follows(open, retry(3))).toBe(true)
    expect(Connection.follows(open, open)).toBe(false)
    expect(Connection.follows(retry(1), retry(2))).toBe(true)
    expect(Connection.follows(retry(2), retry(1))).toBe(false)
    expect(Connection.follows(retry(2), open)).toBe(true)
    expect(Connection.follows(retry(2), closed)).toBe(true)
    expect(Connection.follows(open, connecting)).toBe(false)
    expect(Connection.follows(closed, open)).toBe(false)
    expect(Connection.follows(closed, closed)).toBe(false)
  })
})
