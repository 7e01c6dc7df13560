/**
 * The session entity's `Events`, served from a reply mailbox (the cluster's
 * `binding/internal/eventsStream.ts`, written once for both cluster editions; a `Mailbox` on
 * Effect 3, a `Queue` on Effect 4), tested on both lines: a slow subscriber holds at most a page,
 * a tick offers a keep-alive only when nothing waits, a closed subscription is forgotten, the
 * recent events are kept only while a subscriber is open.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import * as EventLog from "../../binding/EventLog.js"
import { makeActivation, page } from "../../binding/internal/activation.js"
import { events } from "../../binding/internal/eventsStream.js"
import { Wakers } from "../../binding/internal/ticker.js"
import type { ReplyMailbox } from "../../src/internal/line.js"
import { awaitEnd, extendScope, forkChild, Session, type SessionEvent, sizeOf, takeAll, yieldNow } from "../helpers/line.js"

const sessionId = "ses_events"

const info = Session.SessionInfo.make({
  session_id: Session.SessionId.make(sessionId),
  status: Option.none(),
  start_time: Option.some("2026-11-26T04:00:00Z"),
  end_time: Option.none(),
  error: Option.none()
})

const event = (n: number): SessionEvent.SessionEvent => ({
  _tag: "Started",
  sessionId: Session.SessionId.make(sessionId),
  start_url: `https://example.com/${n}`
})

/** Lets the subscription's short-lived readers run (no clock involved: the log is in memory). */
const settle = Effect.forEach(Array.from({ length: 50 }), () => yieldNow(), { discard: true })

/** A session logged elsewhere (not running here): `n` events in the log; the subscription and its ticker. */
const setUp = (n: number) =>
  Effect.gen(function*() {
    const log = yield* EventLog.EventLog
    yield* log.register({ info, maxActions: 10, agent: Option.none() })
    yield* log.append(sessionId, Array.from({ length: n }, (_, i) => ({ seq: i + 1, event: event(i + 1) })))
    const activation = yield* makeActivation(sessionId, log)
    const ticker = { wakers: new Wakers() }
    const takeOvers: Array<boolean> = []
    const scope = yield* Scope.make()
    const mailbox = yield* events(activation, ticker, (_payload, learn) => Effect.sync(() => void takeOvers.push(learn)))(1).pipe(
      extendScope(scope)
    )
    return { log, activation, ticker, takeOvers, scope, mailbox }
  })

/** Takes what waits (waiting for something when nothing does). */
const take = (mailbox: ReplyMailbox<EventLog.LoggedEvent, EventLog.EventLogError>) =>
  Effect.map(takeAll(mailbox), ([taken, done]) => ({ seqs: taken.map((l) => l.seq), done }))

const size = (mailbox: ReplyMailbox<EventLog.LoggedEvent, EventLog.EventLogError>) => sizeOf(mailbox)

describe("the entity's Events, from a mailbox", () => {
  it.effect("a slow subscriber holds at most one page; the rest comes from the log as it takes, in order, once", () =>
    Effect.gen(function*() {
      const { log, mailbox, ticker, takeOvers } = yield* setUp(page * 2 + 137)
      // The session's run has not ended and does not run here: the subscriber takes it over.
      assert.deepStrictEqual(takeOvers, [true])
      // Nothing taken yet: one page waits, however many appends and ticks come.
      yield* settle
      assert.strictEqual(yield* size(mailbox), page)
      for (let i = 0; i < 5; i++) ticker.wakers.wake()
      yield* settle
      assert.strictEqual(yield* size(mailbox), page)
      const seqs: Array<number> = []
      while (seqs.length < page * 2 + 137) {
        const taken = yield* take(mailbox)
        assert.isFalse(taken.done)
        assert.isAtMost(taken.seqs.length, page)
        seqs.push(...taken.seqs.filter((s) => s > 0))
        ticker.wakers.wake()
      }
      assert.deepStrictEqual(seqs, Array.from({ length: page * 2 + 137 }, (_, i) => i + 1))
      // The run ends: what the log has after is delivered, then the end.
      yield* log.append(sessionId, [{ seq: page * 2 + 138, event: event(0) }])
      yield* log.end(sessionId, "complete", Option.none())
      ticker.wakers.wake()
      const last = yield* take(mailbox)
      assert.deepStrictEqual(last.seqs.filter((s) => s > 0), [page * 2 + 138])
      ticker.wakers.wake()
      yield* awaitEnd(mailbox)
      assert.deepStrictEqual(yield* take(mailbox), { seqs: [], done: true })
    }).pipe(Effect.provide(EventLog.layerMemory()), Effect.scoped))

  it.effect("a tick with nothing new offers one keep-alive (seq 0); a tick with events waiting offers none", () =>
    Effect.gen(function*() {
      const { log, mailbox, ticker } = yield* setUp(3)
      assert.deepStrictEqual((yield* take(mailbox)).seqs, [1, 2, 3])
      ticker.wakers.wake()
      assert.deepStrictEqual((yield* take(mailbox)).seqs, [0])
      // An event reaches the log and waits, not taken: the next tick adds it, not a keep-alive.
      yield* log.append(sessionId, [{ seq: 4, event: event(4) }])
      ticker.wakers.wake()
      yield* settle
      ticker.wakers.wake()
      yield* settle
      assert.deepStrictEqual((yield* take(mailbox)).seqs, [4])
    }).pipe(Effect.provide(EventLog.layerMemory()), Effect.scoped))

  it.effect("a closed subscription is forgotten: later ticks offer nothing and read nothing", () =>
    Effect.gen(function*() {
      const { activation, mailbox, scope, ticker } = yield* setUp(2)
      assert.deepStrictEqual((yield* take(mailbox)).seqs, [1, 2])
      // As if the session ran here: a tick then needs no read of the log (nothing is forked).
      activation.run = { done: yield* Deferred.make<void>(), fiber: yield* forkChild(Effect.never) }
      ticker.wakers.wake()
      assert.deepStrictEqual((yield* take(mailbox)).seqs, [0])
      yield* Scope.close(scope, Exit.void)
      ticker.wakers.wake()
      yield* settle
      assert.strictEqual(yield* size(mailbox), 0)
    }).pipe(Effect.provide(EventLog.layerMemory()), Effect.scoped))

  it.effect("the recent events are kept only while a subscriber is open; one that opens gets every event once, in order", () =>
    Effect.gen(function*() {
      const log = yield* EventLog.EventLog
      yield* log.register({ info, maxActions: 10, agent: Option.none() })
      const logged = Array.from({ length: 5 }, (_, i) => ({ seq: i + 1, event: event(i + 1) }))
      yield* log.append(sessionId, logged)
      const activation = yield* makeActivation(sessionId, log)
      // The session runs here, and nobody reads: its events are folded, none is kept.
      activation.run = { done: yield* Deferred.make<void>(), fiber: yield* forkChild(Effect.never) }
      activation.keep(logged)
      assert.deepStrictEqual([activation.tally.lastSeq, activation.recent.length], [5, 0])
      const ticker = { wakers: new Wakers() }
      const scope = yield* Scope.make()
      const mailbox = yield* events(activation, ticker, () => Effect.void)(1).pipe(extendScope(scope))
      // What came before the subscriber is read from the log.
      assert.deepStrictEqual((yield* take(mailbox)).seqs, [1, 2, 3, 4, 5])
      // What comes after is kept and offered from memory: seq 6 is not in the log.
      activation.keep([{ seq: 6, event: event(6) }])
      yield* activation.bump
      assert.deepStrictEqual((yield* take(mailbox)).seqs, [6])
      assert.deepStrictEqual(activation.recent.map((l) => l.seq), [6])
      // The subscriber is gone: nothing is kept any more.
      yield* Scope.close(scope, Exit.void)
      assert.deepStrictEqual([activation.subscribers, activation.recent.length], [0, 0])
      activation.keep([{ seq: 7, event: event(7) }])
      assert.deepStrictEqual([activation.tally.lastSeq, activation.recent.length], [7, 0])
    }).pipe(Effect.provide(EventLog.layerMemory()), Effect.scoped))
})
