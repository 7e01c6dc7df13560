/**
 * The connection state machine without Effect or sockets: a harness plays the shell (a port that
 * records what it is asked, a deadline queue on a clock of its own, a writer) and a service (new
 * events, keep-alives, requests, replays of what it sent after a reconnect), and random sequences
 * of inputs (opens, frames, bad frames, takes, answers, writes and their failures, time passing,
 * drops, closes) drive it, with the service known to replay or not. The properties the shells
 * rely on:
 * - nothing is lost across reconnects: not known to replay, every frame received is delivered, in
 *   order; known to replay, what is delivered is what was received, in order, less frames that
 *   are copies of events delivered before (a replay), and every new event is delivered once;
 * - an answer is written again only until it is confirmed, and every accepted answer ends once:
 *   confirmed, refused, or listed unsent at the end (or written, when only a repeated frame or a
 *   clean end could have confirmed it);
 * - reading is paused only while the buffer is full (resumed at half);
 * - every deadline is cleared when its attempt ends, and none is left at the end.
 */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { Connection, Ledger } from "../src/index.js"
import { DeadlineQueue, driven, quietPort, type TestPort } from "./driven.js"

interface Event {
  readonly kind: Connection.EventKind
  /** The service's id of the event (unique per event sent as new). */
  readonly id: number
  readonly key?: string
}

type Op =
  | { readonly _tag: "open"; readonly replay: number }
  | { readonly _tag: "frame"; readonly kind: "event" | "keep-alive" | "request" | "complete" | "error" }
  | { readonly _tag: "bad-frame" }
  | { readonly _tag: "take"; readonly share: number }
  | { readonly _tag: "answer"; readonly pick: number }
  | { readonly _tag: "write"; readonly how: "written" | "confirmed" | "retry" | "refused" | "closing" }
  | { readonly _tag: "advance"; readonly millis: number }
  | { readonly _tag: "drop" }
  | { readonly _tag: "end" }

const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 2, arbitrary: fc.record({ _tag: fc.constant("open" as const), replay: fc.nat(6) }) },
  {
    weight: 10,
    arbitrary: fc.record({
      _tag: fc.constant("frame" as const),
      kind: fc.constantFrom<"event" | "keep-alive" | "request" | "complete" | "error">(
        "event",
        "event",
        "event",
        "keep-alive",
        "request",
        "complete",
        "error"
      )
    })
  },
  { weight: 1, arbitrary: fc.constant({ _tag: "bad-frame" as const }) },
  { weight: 3, arbitrary: fc.record({ _tag: fc.constant("take" as const), share: fc.double({ min: 0, max: 1, noNaN: true }) }) },
  { weight: 3, arbitrary: fc.record({ _tag: fc.constant("answer" as const), pick: fc.nat() }) },
  {
    weight: 4,
    arbitrary: fc.record({
      _tag: fc.constant("write" as const),
      how: fc.constantFrom<"written" | "confirmed" | "retry" | "refused" | "closing">(
        "written",
        "written",
        "confirmed",
        "retry",
        "refused",
        "closing"
      )
    })
  },
  { weight: 2, arbitrary: fc.record({ _tag: fc.constant("advance" as const), millis: fc.integer({ min: 0, max: 4000 }) }) },
  { weight: 1, arbitrary: fc.constant({ _tag: "drop" as const }) },
  { weight: 1, arbitrary: fc.constant({ _tag: "end" as const }) }
)

const options = (
  bufferSize: number,
  endOnError: boolean,
  failOnFrameError: boolean,
  replaysOnReconnect = false
): Connection.Options => ({
  bufferSize,
  answerBufferSize: 3,
  idleTimeoutMillis: 5_000,
  endOnError,
  failOnFrameError,
  replaysOnReconnect,
  replayHoldMillis: 1_000
})

const run = (
  ops: ReadonlyArray<Op>,
  bufferSize: number,
  endOnError: boolean,
  failOnFrameError: boolean,
  replays: boolean
) => {
  let now = 0
  const queue = new DeadlineQueue()
  const delivered: Array<Event> = []
  const deliveredIds = new Set<number>()
  const received: Array<{ readonly event: Event; readonly print: string | undefined }> = []
  let paused = false
  let pauses = 0
  let aborts = 0
  let replayDropped = 0
  let writerAsked = false
  let woken = 0
  const lowWater = Math.floor(bufferSize / 2)
  // The connection, created below; the port checks against it.
  const holder: { connection?: Connection.Connection<Event, string> } = {}
  const port: TestPort<Event, string> = {
    deliver: (event) => {
      delivered.push(event)
      // A new event (its first delivery) is progress: the answers written before it got through.
      if (event.kind !== "keep-alive" && !deliveredIds.has(event.id)) {
        deliveredIds.add(event.id)
        confirmWritten()
      }
    },
    pause: () => {
      // Paused only while full (or again, after an open, while still paused).
      expect(paused || holder.connection!.buffered >= bufferSize).toBe(true)
      paused = true
      pauses += 1
    },
    resume: () => {
      expect(paused).toBe(true)
      expect(holder.connection!.buffered).toBeLessThanOrEqual(lowWater)
      paused = false
    },
    abort: () => {
      aborts += 1
    },
    write: () => {
      writerAsked = true
    },
    skipped: () => {},
    forgot: () => {},
    wake: () => {
      woken += 1
    },
    schedule: (at, check) => queue.schedule(at, check)
  }
  const c = driven<Event, string>(
    options(bufferSize, endOnError, failOnFrameError, replays),
    { kind: (event) => event.kind, requestKey: (event) => event.key ?? "", message: (error) => error, chargeable: (error) => error === "chargeable" },
    port
  )
  holder.connection = c

  // The service: the events it sent as new, in order, and what it replays after a reconnect.
  const sent: Array<Event> = []
  let replaying: Array<Event> = []
  let nextId = 0
  // The answers: their fates.
  const accepted = new Map<string, Ledger.QueuedAnswer>()
  const confirmed = new Set<string>()
  const refused = new Set<string>()
  let writtenOnAttempt: Array<string> = []
  const everWritten = new Set<string>()
  const answerable: Array<string> = []
  function confirmWritten(): void {
    for (const key of writtenOnAttempt) confirmed.add(key)
    writtenOnAttempt = []
  }

  let attempt = c.begin(now)
  let finished: ReadonlyArray<Ledger.UnsentAnswer> | undefined
  let attempts = 1
  const finishWith = (reason: Connection.CloseReason) => {
    // A clean end: what was written went out before the close, on the wire.
    if (reason !== "connection-lost" && reason !== "failed" && reason !== "handshake-rejected") confirmWritten()
    finished = c.finish(reason)
  }
  const afterStep = () => {
    // An attempt that ended: every deadline of it cleared; the decision taken, as the shell would.
    while (finished === undefined && c.phase(attempt) === "ended") {
      expect(queue.size).toBe(0)
      const next = c.attemptEnded(attempt, now)
      replayDropped += next.replayDropped
      if (next._tag === "Finish") {
        finishWith(next.reason)
        return
      }
      writtenOnAttempt = []
      if (next.giveUp || attempts > 40) {
        finishWith("connection-lost")
        return
      }
      attempts += 1
      attempt = c.begin(now)
      paused = false
      writerAsked = false
    }
    if (paused) expect(c.buffered).toBeGreaterThan(lowWater)
  }

  for (const o of ops) {
    if (finished !== undefined) break
    const phase = c.phase(attempt)
    switch (o._tag) {
      case "open":
        if (phase !== "connecting") break
        // The service replays up to `replay` of the last events it sent (never a request).
        replaying = sent.slice(-o.replay).filter((event) => event.kind !== "request")
        c.opened(attempt, now)
        break
      case "frame": {
        if (phase !== "open") break
        let event: Event
        if (replaying.length > 0) {
          event = replaying.shift()!
        } else if (o.kind === "keep-alive") {
          event = { kind: "keep-alive", id: -1 - nextId++ }
        } else {
          const id = nextId++
          event = o.kind === "request" ? { kind: "request", id, key: Ledger.requestKey(`as${id}`, "t") } : { kind: o.kind, id }
          sent.push(event)
          if (event.key !== undefined) answerable.push(event.key)
        }
        const print = event.kind === "keep-alive" ? undefined : `frame-${event.id}`
        received.push({ event, print })
        c.frameArrived(attempt, now, event, print)
        break
      }
      case "bad-frame":
        if (phase === "open") c.frameFailed(attempt, now, "malformed")
        break
      case "take": {
        const count = Math.floor(o.share * c.buffered)
        if (count > 0) c.taken(count, now)
        break
      }
      case "answer": {
        if (answerable.length === 0) break
        const key = answerable[o.pick % answerable.length]!
        const answer: Ledger.QueuedAnswer = { key, frame: `answer ${key}`, data: { granted: true, resource_type: "t" } }
        const refusal = c.answer(answer)
        if (refusal === undefined) {
          expect(accepted.has(key) && !refused.has(key)).toBe(false)
          accepted.set(key, answer)
          refused.delete(key)
        }
        break
      }
      case "write": {
        if (!writerAsked) break
        const head = c.nextAnswer(attempt)
        if (head === undefined) {
          writerAsked = false
          break
        }
        // Never written again once it got through.
        expect(confirmed.has(head.key)).toBe(false)
        if (o.how === "written") {
          c.answerWritten(attempt, "written")
          writtenOnAttempt.push(head.key)
          everWritten.add(head.key)
        } else if (o.how === "confirmed") {
          c.answerWritten(attempt, "confirmed")
          confirmed.add(head.key)
        } else {
          const result = c.answerFailed(attempt, now, {
            retry: o.how !== "refused",
            closing: o.how === "closing",
            message: o.how
          })
          if (result === "refused") refused.add(head.key)
          else writerAsked = false
        }
        break
      }
      case "advance":
        now += o.millis
        queue.runDue(now, (defect) => {
          throw defect
        })
        break
      case "drop":
        if (phase === "connecting" || phase === "open") c.closed(attempt, { _tag: "Retry", error: "closed with code 1006" })
        break
      case "end":
        if (phase === "connecting" || phase === "open") c.closed(attempt, { _tag: "End", reason: "closed-by-service" })
        break
    }
    afterStep()
  }
  if (finished === undefined) finishWith("closed-by-caller")
  const unsent = finished ?? []
  return {
    delivered,
    sent,
    accepted,
    confirmed,
    refused,
    unsent,
    received,
    deliveredIds,
    everWritten,
    queue,
    woken,
    reached: { pauses, aborts, replayDropped, attempts }
  }
}

/** A connection of four events' buffer, nothing chargeable, on a port that does nothing. */
const quietConnection = () =>
  driven<Event, string>(
    options(4, false, true),
    { kind: (event) => event.kind, requestKey: () => "", message: (error) => error, chargeable: () => false },
    quietPort<Event, string>()
  )

describe("Connection", () => {
  it("random inputs: nothing lost across reconnects, a replay dropped only as a copy, answers settled once, paused only while full, no deadline left (property)", () => {
    fc.assert(
      fc.property(
        fc.array(op, { minLength: 20, maxLength: 200 }),
        fc.integer({ min: 1, max: 6 }),
        fc.boolean(),
        fc.boolean(),
        fc.boolean(),
        (ops, bufferSize, endOnError, failOnFrameError, replays) => {
          const result = run(ops, bufferSize, endOnError, failOnFrameError, replays)
          if (!replays) {
            // Not known to replay: exactly what was received, in order.
            expect(result.delivered).toEqual(result.received.map((r) => r.event))
          } else {
            // Known to replay: what was received, in order, less copies of events delivered before.
            let i = 0
            const deliveredPrints = new Set<string | undefined>()
            for (const r of result.received) {
              if (result.delivered[i] === r.event) {
                if (r.event.kind !== "keep-alive") deliveredPrints.add(r.print)
                i += 1
                continue
              }
              expect(r.event.kind, "a keep-alive is never dropped").not.toBe("keep-alive")
              expect(deliveredPrints.has(r.print), `${r.print} dropped, not a copy`).toBe(true)
            }
            expect(i, "nothing delivered that was not received").toBe(result.delivered.length)
          }
          // Every new event the service sent is delivered.
          for (const event of result.sent) expect(result.deliveredIds.has(event.id), `event ${event.id}`).toBe(true)
          // Every accepted answer ends once: confirmed, refused (pending again), or unsent; an answer
          // written may also have been confirmed by a repeated frame or a clean end.
          const unsent = result.unsent.map((answer) => Ledger.requestKey(answer.actionSessionId, answer.resourceType))
          expect(new Set(unsent).size).toBe(unsent.length)
          for (const key of result.accepted.keys()) {
            const fates = [result.confirmed.has(key), result.refused.has(key), unsent.includes(key)].filter(Boolean)
            expect(fates.length, key).toBeLessThanOrEqual(1)
            if (fates.length === 0) expect(result.everWritten.has(key), `${key} neither settled nor written`).toBe(true)
          }
          // No deadline left.
          expect(result.queue.size).toBe(0)
          expect(result.queue.nextDue()).toBeUndefined()
        }
      ),
      { numRuns: 400 }
    )
  })

  it("the generated runs reach every case: pauses, replays dropped, idle time-outs, reconnects, answers of every fate", () => {
    const reached = new Set<string>()
    const runs = fc.sample(
      fc.tuple(
        fc.array(op, { minLength: 20, maxLength: 200 }),
        fc.integer({ min: 1, max: 6 }),
        fc.boolean(),
        fc.boolean(),
        fc.boolean()
      ),
      { numRuns: 400, seed: 24 }
    )
    for (const [ops, bufferSize, endOnError, failOnFrameError, replays] of runs) {
      const result = run(ops, bufferSize, endOnError, failOnFrameError, replays)
      if (result.reached.pauses > 0) reached.add("paused")
      if (result.reached.replayDropped > 0) reached.add("replay dropped")
      if (result.reached.aborts > 0) reached.add("idle time-out")
      if (result.reached.attempts > 2) reached.add("reconnects")
      if (result.confirmed.size > 0) reached.add("confirmed")
      if (result.refused.size > 0) reached.add("refused")
      if (result.unsent.length > 0) reached.add("unsent")
    }
    expect([...reached].sort()).toEqual(
      ["confirmed", "idle time-out", "paused", "reconnects", "refused", "replay dropped", "unsent"]
    )
  })

  /** A connection that delivered 1, 2, 3 and dropped, reopened at 10 ms: what it delivers of `frames`. */
  const afterReconnect = (replays: boolean, frames: ReadonlyArray<Event>) => {
    const seen: Array<number> = []
    const c = driven<Event, string>(
      options(100, false, true, replays),
      { kind: (event) => event.kind, requestKey: () => "", message: (error) => error, chargeable: () => false },
      { ...quietPort<Event, string>(), deliver: (event) => seen.push(event.id) }
    )
    const first = c.begin(0)
    c.opened(first, 0)
    for (const id of [1, 2, 3]) c.frameArrived(first, 0, { kind: "event", id }, `f${id}`)
    c.closed(first, { _tag: "Retry", error: "drop" })
    expect(c.attemptEnded(first, 0)).toMatchObject({ _tag: "Retry", schedule: "reconnect", reset: true, attempts: 1 })
    const second = c.begin(0)
    c.opened(second, 10)
    expect(c.lastOpen).toEqual({ reconnects: 1, downtimeMillis: 10, reopened: true })
    for (const event of frames) c.frameArrived(second, 0, event, event.kind === "keep-alive" ? undefined : `f${event.id}`)
    c.closed(second, { _tag: "End", reason: "closed-by-service" })
    const next = c.attemptEnded(second, 0)
    return { seen, dropped: next.replayDropped }
  }
  const event = (id: number): Event => ({ kind: "event", id })
  const keepAlive: Event = { kind: "keep-alive", id: -1 }

  it("known to replay: a reopened connection's first events that repeat the tail delivered are dropped; then everything is delivered", () => {
    expect(afterReconnect(true, [event(2), event(3), event(4), event(2)])).toEqual({ seen: [1, 2, 3, 4, 2], dropped: 2 })
    // Not a whole tail (the run does not end where the delivered ones end): new, delivered.
    expect(afterReconnect(true, [event(2), event(4)])).toEqual({ seen: [1, 2, 3, 2, 4], dropped: 0 })
    // A keep-alive ends the burst: what was held is judged with what had arrived.
    expect(afterReconnect(true, [event(2), keepAlive, event(3)])).toEqual({ seen: [1, 2, 3, 2, -1, 3], dropped: 0 })
    // The attempt's end decides what is held: a whole tail is a replay.
    expect(afterReconnect(true, [event(3)])).toEqual({ seen: [1, 2, 3], dropped: 1 })
  })

  it("not known to replay: every frame received is delivered, repeats included", () => {
    expect(afterReconnect(false, [event(2), event(3), event(4), event(2)])).toEqual({ seen: [1, 2, 3, 2, 3, 4, 2], dropped: 0 })
  })

  it("known to replay: frames held are judged when the hold time after the open is over", () => {
    const queue = new DeadlineQueue()
    const seen: Array<number> = []
    const c = driven<Event, string>(
      options(100, false, true, true),
      { kind: (event) => event.kind, requestKey: () => "", message: (error) => error, chargeable: () => false },
      { ...quietPort<Event, string>(), deliver: (event) => seen.push(event.id), schedule: (at, check) => queue.schedule(at, check) }
    )
    const first = c.begin(0)
    c.opened(first, 0)
    for (const id of [1, 2, 3]) c.frameArrived(first, 0, event(id), `f${id}`)
    c.closed(first, { _tag: "Retry", error: "drop" })
    c.attemptEnded(first, 0)
    const second = c.begin(100)
    c.opened(second, 100)
    c.frameArrived(second, 200, event(2), "f2")
    queue.runDue(1099, () => {})
    expect(seen).toEqual([1, 2, 3])
    queue.runDue(1100, () => {})
    expect(seen).toEqual([1, 2, 3, 2])
  })

  it("a frame error of a chargeable event is never skipped, whatever failOnFrameError says", () => {
    const skipped: Array<string> = []
    const c = driven<Event, string>(
      options(100, false, false),
      { kind: (event) => event.kind, requestKey: () => "", message: (error) => error, chargeable: (error) => error === "action_run" },
      { ...quietPort<Event, string>(), skipped: (error) => skipped.push(error) }
    )
    const attempt = c.begin(0)
    c.opened(attempt, 0)
    c.frameFailed(attempt, 0, "malformed")
    expect([skipped, c.phase(attempt)]).toEqual([["malformed"], "open"])
    c.frameFailed(attempt, 0, "action_run")
    expect(c.endingOf(attempt)).toEqual({ _tag: "Fatal", error: "action_run", reason: "failed" })
  })

  it("an attempt's reports are taken until it ends or another begins; a wait is over when it opens, or only when it ends", () => {
    const c = quietConnection()
    const first = c.begin(0)
    expect([c.takes(first), c.settled(first, false), c.settled(first, true)]).toEqual([true, false, false])
    c.opened(first, 0)
    expect([c.takes(first), c.settled(first, false), c.settled(first, true)]).toEqual([true, true, false])
    c.closed(first, { _tag: "Retry", error: "dropped" })
    expect([c.takes(first), c.settled(first, false), c.settled(first, true)]).toEqual([false, true, true])
    c.attemptEnded(first, 0)
    const second = c.begin(0)
    expect([c.takes(first), c.settled(first, true), c.takes(second)]).toEqual([false, true, true])
  })

  it("never open: the first-connect schedule; a whole connect time-out is not tried again", () => {
    const c = quietConnection()
    const first = c.begin(0)
    c.closed(first, { _tag: "Retry", error: "refused" })
    expect(c.attemptEnded(first, 0)).toMatchObject({ schedule: "first-connect", giveUp: false, attempts: 1 })
    const second = c.begin(0)
    c.closed(second, { _tag: "Retry", error: "timed out", connectTimeout: true })
    expect(c.attemptEnded(second, 0)).toMatchObject({ schedule: "first-connect", giveUp: true, attempts: 2, lastError: "timed out" })
    expect(c.gaveUp()).toEqual({ neverOpen: true, attempts: 2, lastError: "timed out" })
  })

  it("never open, resuming a channel watched before: the reconnect schedule, a whole connect time-out tried again", () => {
    const c = driven<Event, string>(
      { ...options(4, false, true), resumes: true },
      { kind: (event) => event.kind, requestKey: () => "", message: (error) => error, chargeable: () => false },
      quietPort<Event, string>()
    )
    const first = c.begin(0)
    c.closed(first, { _tag: "Retry", error: "timed out", connectTimeout: true })
    expect(c.attemptEnded(first, 0)).toMatchObject({ schedule: "reconnect", giveUp: false, reset: false, attempts: 1 })
    const second = c.begin(0)
    c.closed(second, { _tag: "Retry", error: "refused" })
    expect(c.attemptEnded(second, 0)).toMatchObject({ schedule: "reconnect", giveUp: false, attempts: 2, lastError: "refused" })
    // Should the reconnect schedule give up now, the channel never connected.
    expect(c.gaveUp()).toEqual({ neverOpen: true, attempts: 2, lastError: "refused" })
    const third = c.begin(0)
    c.opened(third, 0)
    expect(c.publishOpen()).toMatchObject({ _tag: "Open" })
  })

  // Guards: the retry count kept across a reconnect that delivered (a fresh bout would start its
  // schedule's log at the old count), and the bout's attempts likewise.
  it("the reconnect bout: the retries and attempts count from the last attempt that delivered a new event, against a model (property)", () => {
    type Fate = "refused" | "opened" | "keep-alive" | "delivered"
    const fate = fc.constantFrom<Fate>("refused", "opened", "keep-alive", "delivered")
    fc.assert(fc.property(fc.array(fate, { minLength: 1, maxLength: 30 }), fc.boolean(), (fates, replays) => {
      const c = driven<Event, string>(
        options(100, false, true, replays),
        { kind: (event) => event.kind, requestKey: () => "", message: (error) => error, chargeable: () => false },
        quietPort<Event, string>()
      )
      // The model: attempts since (and with) the last one that delivered; retries decided since it.
      let attempts = 0
      let retries = 0
      let opens = 0
      let id = 0
      let now = 0
      for (const f of fates) {
        const attempt = c.begin(now)
        attempts += 1
        expect(c.attemptNumber).toBe(attempts)
        if (f !== "refused") {
          c.opened(attempt, now)
          opens += 1
          expect(c.lastOpen.reconnects).toBe(opens - 1)
        }
        if (f === "keep-alive") c.frameArrived(attempt, now, { kind: "keep-alive", id: -1 }, undefined)
        // A new event each time (never a repeat of what was delivered): progress.
        if (f === "delivered") c.frameArrived(attempt, now, { kind: "event", id: ++id }, `f${id}`)
        c.closed(attempt, { _tag: "Retry", error: `drop ${now}` })
        now += 1000
        const next = c.attemptEnded(attempt, now)
        const reset = f === "delivered"
        if (reset) {
          attempts = 1
          retries = 0
        }
        expect(next).toMatchObject({
          _tag: "Retry",
          schedule: opens > 0 ? "reconnect" : "first-connect",
          reset,
          attempts,
          lastError: `drop ${now - 1000}`
        })
        // The shell's schedule decides to retry: the retry's number in this bout.
        retries += 1
        expect(c.retrying()).toEqual({ attempt: retries, lastError: `drop ${now - 1000}` })
      }
      expect(c.gaveUp()).toMatchObject({ neverOpen: opens === 0, attempts })
    }), { numRuns: 500 })
  })

  it("a reconnect that delivered starts the retries afresh: 1, 2, then 1 again", () => {
    const c = quietConnection()
    const retryAfter = (deliver: boolean, id: number) => {
      const attempt = c.begin(0)
      c.opened(attempt, 0)
      if (deliver) c.frameArrived(attempt, 0, { kind: "event", id }, `f${id}`)
      c.closed(attempt, { _tag: "Retry", error: `drop ${id}` })
      const next = c.attemptEnded(attempt, 0)
      return { reset: next._tag === "Retry" && next.reset, ...c.retrying() }
    }
    expect(retryAfter(true, 1)).toEqual({ reset: true, attempt: 1, lastError: "drop 1" })
    expect(retryAfter(false, 2)).toEqual({ reset: false, attempt: 2, lastError: "drop 2" })
    expect(retryAfter(true, 3)).toEqual({ reset: true, attempt: 1, lastError: "drop 3" })
  })

  // Guards: `opened` acted on for an attempt already over (a late open after its connect time-out
  // would arm deadlines on a dead attempt, count a reconnect, and turn NeverConnected into a reconnect).
  it("an attempt that opens after it ended (its connect time-out) is ignored: no deadline, no write, no reconnect counted, still never connected", () => {
    const scheduled: Array<number> = []
    let writes = 0
    let wakes = 0
    const c = driven<Event, string>(
      // A request pending from an earlier connection, so that an answer can wait for the open.
      { ...options(4, false, true), pendingRequests: ["k"] },
      { kind: (event) => event.kind, requestKey: () => "", message: (error) => error, chargeable: () => false },
      {
        ...quietPort<Event, string>(),
        schedule: (at) => {
          scheduled.push(at)
          return { cancel: () => {} }
        },
        write: () => {
          writes += 1
        },
        wake: () => {
          wakes += 1
        }
      }
    )
    expect(c.answer({ key: "k", frame: "answer k", data: { granted: true, resource_type: "t" } })).toBeUndefined()
    const first = c.begin(0)
    c.closed(first, { _tag: "Retry", error: "connect timed out", connectTimeout: true })
    const wakesAtEnd = wakes
    // The socket opens at last, after its attempt was given up.
    c.opened(first, 30_000)
    expect([scheduled, writes, wakes - wakesAtEnd, c.phase(first)]).toEqual([[], 0, 0, "ended"])
    expect(c.lastOpen).toEqual({ reconnects: 0, downtimeMillis: undefined, reopened: false })
    expect(c.nextAnswer(first)).toBeUndefined()
    expect(c.attemptEnded(first, 30_000)).toMatchObject({ _tag: "Retry", schedule: "first-connect", giveUp: true })
    expect(c.gaveUp()).toEqual({ neverOpen: true, attempts: 1, lastError: "connect timed out" })
  })

  it("a reconnect's attempt that opens after its connect time-out counts no reconnect", () => {
    const c = quietConnection()
    const first = c.begin(0)
    c.opened(first, 0)
    c.closed(first, { _tag: "Retry", error: "dropped" })
    c.attemptEnded(first, 100)
    const second = c.begin(100)
    c.closed(second, { _tag: "Retry", error: "connect timed out", connectTimeout: true })
    c.opened(second, 10_000)
    expect([c.phase(second), c.lastOpen]).toEqual(["ended", { reconnects: 0, downtimeMillis: undefined, reopened: false }])
    expect(c.attemptEnded(second, 10_000)).toMatchObject({ _tag: "Retry", schedule: "reconnect", reset: false, attempts: 2 })
    const third = c.begin(10_000)
    c.opened(third, 10_500)
    expect(c.lastOpen).toEqual({ reconnects: 1, downtimeMillis: 10_400, reopened: true })
  })

  it("an open attempt silent for the idle time-out is dropped, not while reading is paused", () => {
    const queue = new DeadlineQueue()
    let aborted = 0
    const c = driven<Event, string>(
      options(1, false, true),
      { kind: (event) => event.kind, requestKey: () => "", message: (error) => error, chargeable: () => false },
      {
        ...quietPort<Event, string>(),
        abort: () => {
          aborted += 1
        },
        schedule: (at, check) => queue.schedule(at, check)
      }
    )
    const attempt = c.begin(0)
    c.opened(attempt, 0)
    c.frameArrived(attempt, 1000, { kind: "event", id: 1 }, "f1")
    // The buffer of one is full: reading is paused, the silence is not the service's.
    queue.runDue(20_000, () => {})
    expect(c.phase(attempt)).toBe("open")
    c.taken(1, 20_000)
    queue.runDue(24_999, () => {})
    expect(c.phase(attempt)).toBe("open")
    queue.runDue(25_000, () => {})
    expect([c.phase(attempt), aborted, queue.size]).toEqual(["ended", 1, 0])
    expect(c.endingOf(attempt)).toEqual({ _tag: "Retry", error: "no frame for 5s (idle time-out)" })
  })
})

describe("Connection: decisions returned, not called back", () => {
  const make = (bufferSize: number) =>
    new Connection.Connection<Event, string>(
      options(bufferSize, false, true),
      { kind: (event) => event.kind, requestKey: () => "", message: (error) => error, chargeable: () => false }
    )
  const drain = (c: Connection.Connection<Event, string>) => {
    const actions: Array<Connection.Action<Event, string>> = []
    for (let action = c.poll(); action !== undefined; action = c.poll()) actions.push(action)
    return actions
  }
  const event = (id: number, kind: Connection.EventKind = "event"): Event => ({ kind, id })

  it("each input's actions are polled in the order decided, each once", () => {
    const c = make(2)
    const attempt = c.begin(0)
    expect(c.poll()).toBeUndefined()
    c.opened(attempt, 0)
    expect(drain(c)).toEqual([{ _tag: "Wake" }])
    c.frameArrived(attempt, 1, event(1), "f1")
    c.frameArrived(attempt, 2, event(2), "f2")
    expect(drain(c)).toEqual([
      { _tag: "Deliver", event: event(1) },
      { _tag: "Deliver", event: event(2) },
      { _tag: "Pause" }
    ])
    expect(c.poll()).toBeUndefined()
    c.taken(2, 3)
    expect(drain(c)).toEqual([{ _tag: "Resume" }])
    c.frameArrived(attempt, 4, event(3, "complete"), "f3")
    expect(drain(c)).toEqual([{ _tag: "Deliver", event: event(3, "complete") }, { _tag: "Wake" }])
  })

  it("a closing socket's grace: from the first failed write, not extended by a later one", () => {
    const c = new Connection.Connection<Event, string>(
      { ...options(100, false, true), pendingRequests: ["a", "b"] },
      { kind: (event) => event.kind, requestKey: () => "", message: (error) => error, chargeable: () => false }
    )
    const attempt = c.begin(0)
    c.opened(attempt, 0)
    const closing = { retry: true, message: "socket closing", closing: true }
    expect(c.answer({ key: "a", frame: "answer a", data: { granted: true, resource_type: "t" } })).toBeUndefined()
    expect(c.nextAnswer(attempt)?.key).toBe("a")
    expect(c.answerFailed(attempt, 1_000, closing)).toBe("stop")
    expect(c.nextDeadline()).toBe(3_000)
    expect(c.answer({ key: "b", frame: "answer b", data: { granted: true, resource_type: "t" } })).toBeUndefined()
    expect(c.nextAnswer(attempt)?.key).toBe("a")
    expect(c.answerFailed(attempt, 2_500, closing)).toBe("stop")
    expect(c.nextDeadline()).toBe(3_000)
    drain(c)
    c.timeout(3_000)
    expect([drain(c), c.endingOf(attempt)]).toEqual([[{ _tag: "Wake" }], { _tag: "Retry", error: "answer not written: socket closing" }])
  })

  it("the deadline: set by the open, not moved by frames, acted on by timeout, gone with the attempt", () => {
    const c = make(100)
    expect(c.nextDeadline()).toBeUndefined()
    const attempt = c.begin(0)
    expect(c.nextDeadline()).toBeUndefined()
    c.opened(attempt, 0)
    expect(c.nextDeadline()).toBe(5_000)
    c.frameArrived(attempt, 1_000, event(1), "f1")
    expect(c.nextDeadline()).toBe(5_000)
    drain(c)
    c.timeout(4_999)
    expect([c.nextDeadline(), c.poll()]).toEqual([5_000, undefined])
    // The last frame came at 1 s: look again at 6 s.
    c.timeout(5_000)
    expect([c.nextDeadline(), c.poll()]).toEqual([6_000, undefined])
    c.timeout(6_000)
    expect(drain(c)).toEqual([{ _tag: "Abort" }, { _tag: "Wake" }])
    expect([c.nextDeadline(), c.endingOf(attempt)]).toEqual([
      undefined,
      { _tag: "Retry", error: "no frame for 5s (idle time-out)" }
    ])
  })
})

describe("Connection.drain", () => {
  type Event = { readonly kind: "event" | "keep-alive"; readonly id: number }
  const classifier: Connection.Classifier<Event, string> = {
    kind: (event) => event.kind,
    requestKey: () => "",
    message: (error) => error,
    chargeable: () => false
  }
  // No idle time-out within the tests' times: only the drain's grace ends an attempt.
  const open = () => {
    const c = new Connection.Connection<Event, string>({ ...options(100, false, true), idleTimeoutMillis: 60_000 }, classifier)
    const attempt = c.begin(0)
    c.opened(attempt, 0)
    return { c, attempt }
  }

  it("the service's close answering the drain finishes the connection as the caller's close, not a reconnect", () => {
    const { attempt, c } = open()
    expect(c.drain(attempt, 5)).toBe(true)
    c.closed(attempt, { _tag: "End", reason: "closed-by-service" })
    expect(c.attemptEnded(attempt, 6)).toMatchObject({ _tag: "Finish", reason: "closed-by-caller" })
  })

  it("a drop while draining finishes it as the caller's close too", () => {
    const { attempt, c } = open()
    c.drain(attempt, 5)
    c.closed(attempt, { _tag: "Retry", error: "1006" })
    expect(c.attemptEnded(attempt, 6)).toMatchObject({ _tag: "Finish", reason: "closed-by-caller" })
  })

  it("an end the service decided itself stays what it is", () => {
    const { attempt, c } = open()
    c.drain(attempt, 5)
    c.closed(attempt, { _tag: "End", reason: "complete" })
    expect(c.attemptEnded(attempt, 6)).toMatchObject({ _tag: "Finish", reason: "complete" })
  })

  it("no close within 10 s: the attempt is ended at the grace's end, and the connection finishes", () => {
    const { attempt, c } = open()
    c.drain(attempt, 1_000)
    expect(c.nextDeadline()).toBeLessThanOrEqual(11_000)
    c.timeout(10_999)
    expect(c.phase(attempt)).toBe("open")
    c.timeout(11_000)
    expect(c.phase(attempt)).toBe("ended")
    expect(c.attemptEnded(attempt, 11_000)).toMatchObject({ _tag: "Finish", reason: "closed-by-caller" })
  })

  it("an attempt not open cannot be drained (the shell closes instead); without a drain a drop reconnects", () => {
    const c = new Connection.Connection<Event, string>(options(100, false, true), classifier)
    const attempt = c.begin(0)
    expect(c.drain(attempt, 0)).toBe(false)
    c.opened(attempt, 1)
    expect(c.drain(attempt + 1, 1)).toBe(false)
    c.closed(attempt, { _tag: "Retry", error: "1006" })
    expect(c.drain(attempt, 2)).toBe(false)
    expect(c.attemptEnded(attempt, 2)).toMatchObject({ _tag: "Retry" })
  })
})
