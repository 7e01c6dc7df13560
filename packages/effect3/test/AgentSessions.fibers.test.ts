/**
 * Issue 15 target 1, the façade's share: an open idle session started with `AgentSessions.start`
 * or `attach` holds no fiber of the façade's own besides the caller's consumer, and the warnings
 * of pending requests are entries of the façade's one timer (not a fiber per session or per
 * request), which runs only while a request waits.
 *
 * The connection under the façade here is a stub that forks nothing (its events come from a
 * `Mailbox` the test fills, until it is closed), so every fiber counted is the façade's or the
 * consumer's. The consumer's count is measured, not assumed: the same consumer over the stub's
 * bare events. (In effect 3.22 it is two fibers: `Stream.runForEach` runs its channel in a fiber
 * of its own, `Channel.runIn`.)
 */
import { assert, describe, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Logger from "effect/Logger"
import * as Mailbox from "effect/Mailbox"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as Supervisor from "effect/Supervisor"
import * as TestClock from "effect/TestClock"
import type * as Tracer from "effect/Tracer"
import { AgentApi, AgentSessions, Answer, EventStream, SessionEvent } from "../src/index.js"
import { AgentSessionsTest } from "../src/testing/index.js"
import { spying } from "./helpers/sdk.js"

const request = { start_url: "https://example.com", max_actions: 5, goal: "Find the price" }
const sessionId = SessionEvent.Started.fields.sessionId.make("test-session")
const started: SessionEvent.SessionEvent = { _tag: "Started", sessionId, start_url: "https://example.com" }
const thought: SessionEvent.SessionEvent = { _tag: "ThoughtsAndMemories", thought: "t", memory: "m" }
const ask = (id: string): SessionEvent.ExternalResourceRequested => ({
  _tag: "ExternalResourceRequested",
  resource_type: "admin_permission_request",
  reason: "needed",
  action_session_id: SessionEvent.ActionRun.fields.action_session_id.make(id),
  field_name: Option.none()
})
const complete: SessionEvent.SessionEvent = {
  _tag: "Complete",
  response: "done",
  type: "STRING",
  total_cost: Option.none(),
  cost_summary: Option.none(),
  session_id: sessionId
}

/**
 * An event channel that forks nothing: each connection's events are a `Mailbox` the test
 * offers to (`feed`), ending after `complete` or when the connection is closed. Its first pull
 * makes a span (`Stub.start`), as the engine's connection does.
 */
const stubChannel = Effect.gen(function*() {
  const mailboxes: Array<Mailbox.Mailbox<SessionEvent.SessionEvent>> = []
  const eventStream = EventStream.EventStream.of({
    connect: (id) =>
      Effect.gen(function*() {
        const mailbox = yield* Mailbox.make<SessionEvent.SessionEvent>()
        mailboxes.push(mailbox)
        const state = yield* SubscriptionRef.make<EventStream.ConnectionState>(
          EventStream.ConnectionState.Open({ reconnects: 0, downtime: Option.none() })
        )
        return {
          sessionId: id,
          // What a connection starts on its first pull (the engine's own span) is made here.
          events: Stream.unwrap(Effect.withSpan(Effect.succeed(Mailbox.toStream(mailbox)), "Stub.start")).pipe(
            Stream.takeUntil(SessionEvent.isTerminal)
          ),
          state,
          opened: Effect.void,
          respond: () => Effect.void,
          close: Effect.asVoid(mailbox.end),
          drain: Effect.asVoid(mailbox.end)
        } satisfies EventStream.Connection
      }),
    events: () => Stream.die("not used")
  })
  const feed = (...events: ReadonlyArray<SessionEvent.SessionEvent>) =>
    Effect.suspend(() => {
      const mailbox = mailboxes.at(-1)
      return mailbox === undefined ? Effect.dieMessage("no connection") : Effect.asVoid(mailbox.offerAll(events))
    })
  return { eventStream, feed }
})

/** The façade over the stub channel (the test kit's `AgentApi` and `Credentials`). */
const setup = Effect.gen(function*() {
  const { eventStream, feed } = yield* stubChannel
  const sessions = yield* AgentSessions.make.pipe(Effect.provideService(EventStream.EventStream, eventStream))
  const api = yield* AgentApi.AgentApi
  return { sessions, feed, api }
}).pipe(Effect.provide(AgentSessionsTest.layer()))

/** Lets the other fibers run (no time passes on the TestClock). */
const settle = Effect.repeatN(Effect.yieldNow(), 50)

type Tracked = Supervisor.Supervisor<Array<Fiber.RuntimeFiber<unknown, unknown>>>

/** The fibers alive under `supervisor`. */
const alive = (supervisor: Tracked) => Effect.map(supervisor.value, (fibers) => fibers.length)

/** How many fibers a consumer (`Stream.runForEach` in a fiber of its own) holds on idle events. */
const consumerFibers = Effect.gen(function*() {
  const supervisor = yield* Supervisor.track
  return yield* Effect.scoped(Effect.gen(function*() {
    const mailbox = yield* Mailbox.make<SessionEvent.SessionEvent>()
    const seen = yield* Deferred.make<void>()
    yield* Effect.forkScoped(Stream.runForEach(Mailbox.toStream(mailbox), () => Deferred.succeed(seen, undefined)))
    yield* mailbox.offer(started)
    yield* Deferred.await(seen)
    yield* settle
    return yield* alive(supervisor)
  })).pipe(Effect.supervised(supervisor))
})

describe("AgentSessions fibers (issue 15 target 1)", () => {
  it.scoped("an open idle session adds no fiber besides the consumer (start, attach, run)", () =>
    Effect.gen(function*() {
      const { api, feed, sessions } = yield* setup
      const consumer = yield* consumerFibers
      assert.isAtLeast(consumer, 1)
      const supervisor = yield* Supervisor.track
      const seen: Array<string> = []
      yield* Effect.gen(function*() {
        for (const open of ["start", "attach"] as const) {
          const running = open === "start"
            ? yield* sessions.start(request)
            : yield* sessions.attach(yield* api.createSession(request), 5)
          const fiber = yield* Effect.fork(Stream.runForEach(running.events, (event) => Effect.sync(() => seen.push(event._tag))))
          yield* feed(started, thought)
          yield* settle
          assert.deepStrictEqual(seen.splice(0), ["Started", "ThoughtsAndMemories"])
          assert.strictEqual(yield* alive(supervisor), consumer, `${open}: no fiber of the façade's own while idle`)
          yield* feed(complete)
          yield* Fiber.join(fiber)
          assert.strictEqual((yield* running.outcome).response, "done")
          assert.deepStrictEqual(seen.splice(0), ["Complete"])
          yield* settle
          assert.strictEqual(yield* alive(supervisor), 0, `${open}: fibers left after the end`)
        }
        // `run`, its consumer its own: the caller's fiber is the consumer's.
        const fiber = yield* Effect.fork(sessions.run(request))
        yield* settle
        yield* feed(started, thought)
        yield* settle
        assert.strictEqual(yield* alive(supervisor), consumer, "run: no fiber of the façade's own while idle")
        yield* feed(complete)
        assert.strictEqual((yield* Fiber.join(fiber)).response, "done")
        yield* settle
        assert.strictEqual(yield* alive(supervisor), 0, "run: fibers left after the end")
      }).pipe(Effect.supervised(supervisor))
    }))

  it.scoped("pending requests' warnings are entries of the façade's one timer, only while one waits", () => {
    const warnings: Array<string> = []
    const logger = Logger.make(({ logLevel, message }) => {
      if (logLevel._tag === "Warning") warnings.push(String(Array.isArray(message) ? message.join(" ") : message))
    })
    return Effect.gen(function*() {
      const { feed, sessions } = yield* setup
      const consumer = yield* consumerFibers
      const supervisor = yield* Supervisor.track
      const others = (consumers: number) => Effect.map(alive(supervisor), (n) => n - consumers * consumer)
      yield* Effect.gen(function*() {
        const running = yield* sessions.start(request)
        const fiber = yield* Effect.fork(Stream.runDrain(running.events))
        // Two requests waiting: the timer runs.
        yield* feed(started, ask("as-1"))
        yield* TestClock.adjust("10 seconds")
        yield* feed(ask("as-2"))
        yield* settle
        assert.strictEqual((yield* SubscriptionRef.get(running.pending)).length, 2)
        const timer = yield* others(1)
        assert.isAbove(timer, 0, "a timer while a request waits")
        // A second session with a request waiting: the same timer, no fiber of its own.
        const second = yield* sessions.start(request)
        const secondFiber = yield* Effect.fork(Stream.runDrain(second.events))
        yield* feed(started, ask("bs-1"))
        yield* settle
        assert.strictEqual((yield* SubscriptionRef.get(second.pending)).length, 1)
        assert.strictEqual(yield* others(2), timer, "one timer for the sessions of the façade")
        // as-1 is due at 30 s, as-2 and bs-1 at 40 s: each warned once, at its time.
        yield* TestClock.adjust("20 seconds")
        yield* settle
        assert.strictEqual(warnings.length, 1)
        assert.include(warnings[0], "30s")
        yield* TestClock.adjust("10 seconds")
        yield* settle
        assert.strictEqual(warnings.length, 3)
        assert.include(warnings[1], "30s")
        assert.include(warnings[2], "30s")
        // Every waiting request warned: no timer is needed any more, though they still wait.
        assert.strictEqual(yield* others(2), 0, "no timer once every waiting request was warned")
        // A new request (to the second session): a timer again, gone once it is answered (not at
        // its warning time).
        yield* feed(ask("bs-2"))
        yield* settle
        assert.strictEqual(yield* others(2), timer)
        yield* second.respond(ask("bs-2"), Answer.grant())
        yield* settle
        assert.strictEqual(yield* others(2), 0, "no timer once the request was answered")
        yield* TestClock.adjust("1 minute")
        yield* settle
        assert.strictEqual(warnings.length, 3, "an answered request is not reported")
        // The events end while a request waits: its entry ends with them.
        yield* feed(ask("bs-3"))
        yield* settle
        assert.strictEqual(yield* others(2), timer)
        yield* second.close
        yield* Fiber.await(secondFiber)
        yield* running.close
        yield* Fiber.await(fiber)
        yield* settle
        assert.strictEqual(yield* alive(supervisor), 0, "no fiber left once the events ended")
        assert.deepStrictEqual(yield* SubscriptionRef.get(second.pending), [])
      }).pipe(Effect.supervised(supervisor))
    }).pipe(Effect.provide(Logger.replace(Logger.defaultLogger, logger)))
  })

  it.scoped("pendingWarningAfter infinity takes no timer at all", () =>
    Effect.gen(function*() {
      const { feed, sessions } = yield* setup
      const consumer = yield* consumerFibers
      const supervisor = yield* Supervisor.track
      yield* Effect.gen(function*() {
        const running = yield* sessions.start(request, { pendingWarningAfter: Duration.infinity })
        yield* Effect.fork(Stream.runDrain(running.events))
        yield* feed(started, ask("as-1"))
        yield* settle
        assert.strictEqual((yield* SubscriptionRef.get(running.pending)).length, 1)
        assert.strictEqual(yield* alive(supervisor), consumer)
      }).pipe(Effect.supervised(supervisor))
    }))

  it.scoped("the AgentSessions.events span: parent of what the connection starts, not of the consumer's work", () =>
    Effect.gen(function*() {
      const spans: Array<Tracer.Span> = []
      const tracer = yield* spying(spans)
      const { feed, sessions } = yield* setup
      const named = (name: string) => spans.filter((span) => span.name === name)
      yield* Effect.gen(function*() {
        const running = yield* sessions.start(request)
        const consumer = yield* Effect.fork(
          Stream.runForEach(running.events, () => Effect.withSpan(Effect.void, "Consumer.event"))
        )
        yield* feed(started, thought)
        yield* settle
        yield* feed(thought)
        yield* settle
        yield* running.close
        const exit = yield* Fiber.await(consumer)
        assert.isTrue(Exit.isFailure(exit), "closed before complete: SessionEndedWithoutComplete")
      }).pipe(Effect.withSpan("Test.outer"), Effect.withTracer(tracer))
      const [events] = named("AgentSessions.events")
      const [outer] = named("Test.outer")
      const [stub] = named("Stub.start")
      assert.isDefined(events)
      assert.isDefined(outer)
      assert.isDefined(stub)
      if (events === undefined || outer === undefined || stub === undefined) return
      assert.strictEqual(named("AgentSessions.events").length, 1, "one span per stream")
      assert.deepStrictEqual(events.attributes.get("sessionId"), "test-session")
      // What the connection starts on its first pull nests under the events' span...
      assert.strictEqual(Option.getOrUndefined(stub.parent)?.spanId, events.spanId)
      // ... the events' span under the caller's ...
      assert.strictEqual(Option.getOrUndefined(events.parent)?.spanId, outer.spanId)
      // ... and the consumer's own work stays under the caller's span, as with Stream.withSpan.
      const consumed = named("Consumer.event")
      assert.strictEqual(consumed.length, 3)
      for (const span of consumed) assert.strictEqual(Option.getOrUndefined(span.parent)?.spanId, outer.spanId)
      // The span ended with the stream, with its failure.
      assert.strictEqual(events.status._tag, "Ended")
      if (events.status._tag === "Ended") {
        const exit = events.status.exit
        assert.isTrue(Exit.isFailure(exit))
      }
    }))

  const wrappers: ReadonlyArray<
    readonly [string, (events: Stream.Stream<SessionEvent.SessionEvent, unknown>) => Stream.Stream<SessionEvent.SessionEvent, unknown>]
  > = [
    ["as they come", (events) => events],
    ["wrapped in the consumer's own span", (events) => Stream.withSpan(events, "Consumer.stream")]
  ]
  for (const [name, wrap] of wrappers) {
    it.scoped(`the caller's context is left as it was, events consumed ${name}`, () =>
      Effect.gen(function*() {
        const { feed, sessions } = yield* setup
        const spans: Array<Tracer.Span> = []
        const tracer = yield* spying(spans)
        const currentSpan = Effect.map(Effect.option(Effect.currentSpan), (span) => Option.getOrUndefined(span)?.name)
        let spanOnInterrupt: string | undefined
        yield* Effect.gen(function*() {
          // Interrupted while waiting for the first event: its own finalizer runs in its context.
          const running = yield* sessions.start(request)
          const ready = yield* Deferred.make<void>()
          const consumer = yield* Effect.fork(
            Effect.zipRight(Deferred.succeed(ready, undefined), Stream.runDrain(wrap(running.events))).pipe(
              Effect.onInterrupt(() =>
                Effect.map(currentSpan, (span) => {
                  spanOnInterrupt = span
                })
              )
            )
          )
          yield* Deferred.await(ready)
          yield* settle
          yield* Fiber.interrupt(consumer)
          // Consumed to the end in this fiber: its context afterwards is what it was.
          const next = yield* sessions.start(request)
          yield* feed(started, complete)
          yield* Stream.runDrain(wrap(next.events))
          assert.strictEqual(yield* currentSpan, "Test.outer")
        }).pipe(Effect.withSpan("Test.outer"), Effect.withTracer(tracer))
        assert.strictEqual(spanOnInterrupt, "Test.outer")
        const events = spans.filter((span) => span.name === "AgentSessions.events")
        assert.strictEqual(events.length, 2)
        for (const span of events) assert.strictEqual(span.status._tag, "Ended")
      }))
  }
})
