/**
 * The runner's answer watch (the cluster's `binding/internal/answerWatch.ts`, written once for
 * both cluster editions), tested on both lines, on the test clock: an answer recorded behind a
 * running session's back reaches its channel once, within two intervals; sessions that wait for
 * nothing unknown cost no read; reads are batched, bounded and tried again.
 */
import { assert, describe } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as EventLog from "../../binding/EventLog.js"
import { fold, makeActivation } from "../../binding/internal/activation.js"
import { type AnswerWatch, makeAnswerWatch, readMax, type Waiter, waiterOf } from "../../binding/internal/answerWatch.js"
import { makeMemory, requestKey } from "../../binding/internal/eventLogMemory.js"
import { respondWith } from "../../binding/internal/respond.js"
import type { DurationInput } from "../../src/internal/line.js"
import {
  type AgentSessions,
  type Answer,
  EventStream,
  forkChild,
  scoped,
  Session,
  type SessionEvent,
  TestClock
} from "../helpers/line.js"

const info = (id: string) =>
  Session.SessionInfo.make({
    session_id: Session.SessionId.make(id),
    status: Option.none(),
    start_time: Option.none(),
    end_time: Option.none(),
    error: Option.none()
  })

const ask = (id: string): SessionEvent.ExternalResourceRequested => ({
  _tag: "ExternalResourceRequested",
  resource_type: "admin_permission_request",
  reason: "approve",
  action_session_id: Session.ActionSessionId.make(id),
  field_name: Option.none()
})

const grant = { _tag: "Grant", input: Option.none() } as const

/** A memory log that counts `answersOf` reads and the sessions each asked about. */
const countingLog = () => {
  const log = makeMemory()
  const reads: Array<number> = []
  const service: EventLog.Service = {
    ...log,
    answersOf: (sessionIds) => Effect.andThen(Effect.sync(() => reads.push(sessionIds.length)), log.answersOf(sessionIds))
  }
  return { log: service, reads }
}

/** A channel that records what it is handed; the rest of a running session is not used here. */
const channel = (id: string) =>
  Effect.gen(function*() {
    const handed: Array<{ readonly request: SessionEvent.ExternalResourceRequested; readonly answer: Answer.Answer }> = []
    const running: AgentSessions.RunningSession = {
      session: info(id),
      events: Stream.die("not used"),
      forEachBatch: () => Effect.die("not used"),
      respond: (request, answer) => Effect.sync(() => void handed.push({ request, answer })),
      state: yield* SubscriptionRef.make<EventStream.ConnectionState>(EventStream.ConnectionState.Connecting()),
      opened: Effect.die("not used"),
      pending: yield* SubscriptionRef.make<ReadonlyArray<AgentSessions.PendingRequest>>([]),
      outcome: Effect.die("not used"),
      close: Effect.void,
      drain: Effect.void
    }
    return { running, handed }
  })

/** A session running on this runner whose log was read, with the given requests logged and open. */
const runningSession = (log: EventLog.Service, id: string, requests: ReadonlyArray<SessionEvent.ExternalResourceRequested>) =>
  Effect.gen(function*() {
    yield* log.register({ info: info(id), maxActions: 5, agent: Option.none() })
    const activation = yield* makeActivation(id, log)
    yield* activation.load
    for (const request of requests) fold(activation.tally, request)
    const { handed, running } = yield* channel(id)
    activation.running = running
    return { activation, handed, waiter: waiterOf(activation) }
  })

const watchOver = (log: EventLog.Service, every: DurationInput = "1 second") =>
  makeAnswerWatch(every).pipe(Effect.provideService(EventLog.EventLog, log))

/** A waiter that waits while `answered` is false and learns nothing. */
const fakeWaiter = (sessionId: string, state = { answered: false }): Waiter => ({
  sessionId,
  waiting: () => !state.answered,
  learn: () => Effect.void
})

const watchAll = (watch: AnswerWatch, waiters: ReadonlyArray<Waiter>) =>
  Effect.forEach(waiters, watch.watch, { discard: true })

describe("the answer watch", () => {
  scoped("an answer recorded behind a running session's back reaches its channel once, after one interval and within two; then nothing is read", () =>
    Effect.gen(function*() {
      const { log, reads } = countingLog()
      const watch = yield* watchOver(log)
      const { activation, handed, waiter } = yield* runningSession(log, "s1", [ask("as_1")])
      yield* watch.watch(waiter)
      // What a runner that still believes it holds the session records on a Respond.
      assert.isTrue(yield* log.saveAnswer("s1", ask("as_1"), grant))
      yield* TestClock.adjust("999 millis")
      assert.deepStrictEqual(handed, [])
      yield* TestClock.adjust("1001 millis")
      assert.deepStrictEqual(handed.map((h) => [h.request.action_session_id, h.answer._tag]), [["as_1", "Grant"]])
      assert.isTrue(activation.tally.answered.has(requestKey(ask("as_1"))))
      const readsThen = reads.length
      yield* TestClock.adjust("1 minute")
      assert.strictEqual(handed.length, 1)
      assert.strictEqual(reads.length, readsThen)
      assert.strictEqual(watch.watched(), 0)
    }))

  scoped("a runner whose sessions wait for nothing unknown reads nothing: idle, or answered through this runner within the interval", () =>
    Effect.gen(function*() {
      const { log, reads } = countingLog()
      const watch = yield* watchOver(log)
      // Idle: no request open.
      const idle = yield* runningSession(log, "idle", [])
      yield* watch.watch(idle.waiter)
      // Answered through this runner's Respond (the tally knows it) before a whole interval passed.
      const prompt = yield* runningSession(log, "prompt", [ask("as_2")])
      yield* watch.watch(prompt.waiter)
      yield* TestClock.adjust("500 millis")
      prompt.activation.tally.answered.set(requestKey(ask("as_2")), grant)
      yield* TestClock.adjust("1 minute")
      assert.deepStrictEqual(reads, [])
      assert.strictEqual(watch.watched(), 0)
    }))

  scoped("an answer is handed once, by whichever learns it first: this runner's Respond, or the watch", () =>
    Effect.gen(function*() {
      const { log } = countingLog()
      const watch = yield* watchOver(log)
      // This runner's Respond first: it keeps the answer in the tally (and hands it itself).
      const first = yield* runningSession(log, "s2", [ask("as_3")])
      yield* watch.watch(first.waiter)
      assert.isTrue(yield* log.saveAnswer("s2", ask("as_3"), grant))
      first.activation.tally.answered.set(requestKey(ask("as_3")), grant)
      yield* TestClock.adjust("5 seconds")
      assert.deepStrictEqual(first.handed, [])
      // The watch first: learning the same answers again (a later read) hands nothing more.
      const second = yield* runningSession(log, "s2b", [ask("as_3")])
      yield* watch.watch(second.waiter)
      assert.isTrue(yield* log.saveAnswer("s2b", ask("as_3"), grant))
      yield* TestClock.adjust("2 seconds")
      assert.strictEqual(second.handed.length, 1)
      yield* second.waiter.learn(yield* log.answers("s2b"))
      assert.strictEqual(second.handed.length, 1)
    }))

  scoped("this runner's Respond whose insert the watch reads before the Respond goes on: handed once", () =>
    Effect.gen(function*() {
      const memory = makeMemory()
      // The insert commits at once; its reply comes 1.5 s later (a slow round trip).
      const log: EventLog.Service = {
        ...memory,
        saveAnswer: (sessionId, request, answer) =>
          Effect.tap(memory.saveAnswer(sessionId, request, answer), () => Effect.sleep("1500 millis"))
      }
      const watch = yield* watchOver(log)
      const { handed, waiter, activation } = yield* runningSession(log, "s5", [ask("as_7")])
      yield* watch.watch(waiter)
      const responding = yield* forkChild(respondWith(activation, ask("as_7"), grant))
      // The watch reads the answer at 1 s (the session has waited an interval) and hands it.
      yield* TestClock.adjust("1 second")
      assert.strictEqual(handed.length, 1)
      yield* TestClock.adjust("1 second")
      yield* Fiber.join(responding)
      assert.strictEqual(handed.length, 1)
    }))

  scoped("two requests open, one answered elsewhere: that one is handed, the other is read for every interval until answered here", () =>
    Effect.gen(function*() {
      const { log, reads } = countingLog()
      const watch = yield* watchOver(log)
      const { activation, handed, waiter } = yield* runningSession(log, "s3", [ask("as_4"), ask("as_5")])
      yield* watch.watch(waiter)
      assert.isTrue(yield* log.saveAnswer("s3", ask("as_4"), { _tag: "Deny" }))
      yield* TestClock.adjust("2 seconds")
      assert.deepStrictEqual(handed.map((h) => [h.request.action_session_id, h.answer._tag]), [["as_4", "Deny"]])
      const before = reads.length
      yield* TestClock.adjust("3 seconds")
      assert.strictEqual(reads.length - before, 3)
      // Answered through this runner's Respond: the watch stops reading.
      activation.tally.answered.set(requestKey(ask("as_5")), grant)
      yield* TestClock.adjust("1 second")
      const after = reads.length
      yield* TestClock.adjust("1 minute")
      assert.strictEqual(reads.length, after)
      assert.strictEqual(handed.length, 1)
    }))

  scoped("the sessions waiting are read together, at most readMax a read, once an interval", () =>
    Effect.gen(function*() {
      const { log, reads } = countingLog()
      const watch = yield* watchOver(log)
      const waiters = Array.from({ length: 2 * readMax + 500 }, (_, i) => fakeWaiter(`w${i}`))
      yield* watchAll(watch, waiters)
      // Two intervals: every one of them has waited a whole interval.
      yield* TestClock.adjust("2 seconds")
      reads.length = 0
      yield* TestClock.adjust("1 second")
      assert.deepStrictEqual(reads, [readMax, readMax, 500])
    }))

  scoped("a read that fails is tried again at the next interval", () =>
    Effect.gen(function*() {
      const memory = makeMemory()
      let failures = 1
      let reads = 0
      const log: EventLog.Service = {
        ...memory,
        answersOf: (ids) =>
          Effect.suspend(() => {
            reads += 1
            if (failures === 0) return memory.answersOf(ids)
            failures -= 1
            return Effect.fail(new EventLog.EventLogError({ operation: "answersOf", message: "connection lost" }))
          })
      }
      const watch = yield* watchOver(log)
      const { handed, waiter } = yield* runningSession(log, "s4", [ask("as_6")])
      yield* watch.watch(waiter)
      assert.isTrue(yield* log.saveAnswer("s4", ask("as_6"), grant))
      yield* TestClock.adjust("3 seconds")
      assert.isAtLeast(reads, 2)
      assert.strictEqual(handed.length, 1)
    }))
})
