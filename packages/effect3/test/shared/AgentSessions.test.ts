import { assert, describe } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Logger from "effect/Logger"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import { AgentApi, AgentSessions, Answer, Errors, SessionEvent } from "../../src/index.js"
import { ActionSessionId, SessionId } from "../../src/Session.js"
import { AgentSessionsTest } from "../../src/testing/index.js"
import {
  failureOf,
  forkChild,
  interrupted,
  interruptedOnly,
  isWarning,
  loggerLayer,
  pollNow,
  scoped,
  TestClock,
  yieldNow
} from "../helpers/line.js"

const request = { start_url: "https://example.com", max_actions: 5, goal: "Find the price" }
const { Step } = AgentSessionsTest

const sessionId = SessionId.make("test-session")
const actionSessionId = ActionSessionId.make("as-1")
const action = (n: number): SessionEvent.SessionEvent => ({
  _tag: "ActionRun",
  name: `a${n}`,
  action_session_id: actionSessionId,
  content: `step ${n}`
})
const complete: SessionEvent.SessionEvent = {
  _tag: "Complete",
  response: "{\"price\": 3}",
  type: "JSON",
  total_cost: Option.some(0.03),
  cost_summary: Option.none(),
  session_id: sessionId
}

const withKit = (options?: AgentSessionsTest.Options) => Effect.provide(AgentSessionsTest.layer(options))

/** Compares an exit's failure with an expected error by tag and fields (spans annotate errors). */
const assertFailsWith = <A, E>(exit: Exit.Exit<A, E>, expected: Errors.AgentSessionError) => {
  assert.isTrue(Exit.isFailure(exit), "expected a failure")
  if (Exit.isFailure(exit)) {
    const error = failureOf(exit.cause)
    assert.isTrue(Option.isSome(error), "expected a typed failure, not a defect")
    if (Option.isSome(error)) {
      assert.strictEqual((error.value as { _tag: string })._tag, expected._tag)
      assert.deepStrictEqual(JSON.parse(JSON.stringify(error.value)), JSON.parse(JSON.stringify(expected)))
    }
  }
}

describe("AgentSessions over the test kit", () => {
  scoped("runs a whole session to its outcome", () =>
    Effect.gen(function*() {
      const outcome = yield* AgentSessions.run(request)
      assert.strictEqual(outcome.response, "Done")
      assert.strictEqual(outcome.actions, 3)
      assert.strictEqual(outcome.maxActions, 5)
      assert.deepStrictEqual(outcome.totalCost, Option.some(0.03))
      assert.strictEqual(outcome.events[0]?._tag, "Started")
      assert.strictEqual(outcome.events.at(-1)?._tag, "Complete")
      assert.isTrue(Option.isNone(outcome.budgetExceeded))
      const created = yield* AgentSessionsTest.sessionsCreated
      assert.strictEqual(created.length, 1)
      assert.strictEqual(created[0]?.goal, "Find the price")
    }).pipe(withKit()))

  scoped("U16 answers a request with onRequest and the agent sees the answer", () =>
    Effect.gen(function*() {
      const outcome = yield* AgentSessions.run(request, {
        onRequest: (req) => Effect.succeed(Answer.grant(req.resource_type === "request_user_input" ? "a@b.c" : undefined))
      })
      const answers = yield* AgentSessionsTest.answers
      assert.strictEqual(answers.length, 1)
      assert.deepStrictEqual(answers[0]?.answer, Answer.grant("a@b.c"))
      const granted = outcome.events.find(SessionEvent.$is("ExternalResourceGranted"))
      assert.deepStrictEqual(granted?.input, Option.some("a@b.c"))
      assert.isTrue(granted?.granted)
    }).pipe(withKit({ script: AgentSessionsTest.session({ ask: "input", actions: 2 }) })))

  scoped("U16 without onRequest a request is denied, never left hanging", () =>
    Effect.gen(function*() {
      const outcome = yield* AgentSessions.run(request)
      const answers = yield* AgentSessionsTest.answers
      assert.deepStrictEqual(answers.map((a) => a.answer._tag), ["Deny"])
      assert.isFalse(outcome.events.find(SessionEvent.$is("ExternalResourceGranted"))?.granted)
    }).pipe(withKit({ script: AgentSessionsTest.session({ ask: "permission" }) })))

  scoped("U20 fails with ActionBudgetExceeded past max_actions and stops watching", () =>
    Effect.gen(function*() {
      const seen: Array<string> = []
      const exit = yield* Effect.exit(
        AgentSessions.run({ ...request, max_actions: 2 }, {
          onEvent: (event) => Effect.sync(() => seen.push(event._tag))
        })
      )
      assertFailsWith(exit, new Errors.ActionBudgetExceeded({ sessionId: "test-session", maxActions: 2, actions: 3, mayStillBeRunning: true })
      )
      // The offending action is delivered; nothing after it is watched.
      assert.deepStrictEqual(seen, ["Started", "ActionRun", "ActionRun", "ActionRun"])
    }).pipe(withKit({
      script: [
        Step.emit({ _tag: "Started", sessionId, start_url: "https://example.com" }),
        Step.emit(action(1)),
        Step.emit(action(2)),
        Step.emit(action(3)),
        Step.emit(action(4)),
        Step.emit(complete)
      ]
    })))

  scoped("U20 with onBudgetExceeded report the run completes and records the overrun", () =>
    Effect.gen(function*() {
      const outcome = yield* AgentSessions.run({ ...request, max_actions: 1 }, { onBudgetExceeded: "report" })
      assert.strictEqual(outcome.actions, 2)
      assert.deepStrictEqual(
        outcome.budgetExceeded,
        Option.some(new Errors.ActionBudgetExceeded({ sessionId: "test-session", maxActions: 1, actions: 2, mayStillBeRunning: false }))
      )
      assert.strictEqual(outcome.response, "{\"price\": 3}")
    }).pipe(withKit({ script: [Step.emit(action(1)), Step.emit(action(2)), Step.emit(complete)] })))

  scoped("U17 a channel that ends before complete is SessionEndedWithoutComplete with the last error", () =>
    Effect.gen(function*() {
      const exit = yield* Effect.exit(AgentSessions.run(request))
      assertFailsWith(exit, new Errors.SessionEndedWithoutComplete({ sessionId: "test-session", lastError: Option.some("boom"), mayStillBeRunning: true })
      )
    }).pipe(withKit({
      script: [Step.emit(action(1)), Step.emit({ _tag: "AgentError", error: "boom" }), Step.end, Step.emit(complete)]
    })))

  scoped("U17 an error event does not end the run by itself", () =>
    Effect.gen(function*() {
      const outcome = yield* AgentSessions.run(request)
      assert.deepStrictEqual(outcome.events.map((e) => e._tag), ["AgentError", "ActionRun", "Complete"])
    }).pipe(withKit({
      script: [Step.emit({ _tag: "AgentError", error: "transient" }), Step.emit(action(1)), Step.emit(complete)]
    })))

  scoped("U17 with endOnError the run ends at the error event", () =>
    Effect.gen(function*() {
      const exit = yield* Effect.exit(AgentSessions.run(request, { endOnError: true }))
      assertFailsWith(exit, new Errors.SessionEndedWithoutComplete({ sessionId: "test-session", lastError: Option.some("fatal"), mayStillBeRunning: true })
      )
    }).pipe(withKit({
      script: [Step.emit({ _tag: "AgentError", error: "fatal" }), Step.emit(action(1)), Step.emit(complete)]
    })))

  const injected: ReadonlyArray<Errors.EventStreamError> = [
    new Errors.ConnectionLost({ attempts: 11, lastError: "socket closed with 1006" }),
    new Errors.HandshakeRejected({ code: 1008, reason: "bad key" }),
    new Errors.MalformedFrame({ raw: "nope", message: "not JSON" }),
    new Errors.NeverConnected({ sessionId: "test-session", attempts: 3, lastError: "refused" })
  ]
  for (const error of injected) {
    scoped(`an injected ${error._tag} surfaces as itself`, () =>
      Effect.gen(function*() {
        const exit = yield* Effect.exit(AgentSessions.run(request))
        assertFailsWith(exit, error)
      }).pipe(withKit({ script: [Step.emit(action(1)), Step.fail(error), Step.emit(complete)] })))
  }

  // Built from the fields that matter: the rest (status, body, request id) are the defaults.
  const createErrors: ReadonlyArray<Errors.CreateSessionError> = [
    new Errors.Unauthorized({ message: "no", operation: "x" }),
    new Errors.RateLimited({ message: "slow", operation: "x", retryAfter: Option.some(Duration.seconds(2)) })
  ]
  for (const error of createErrors) {
    scoped(`an injected ${error._tag} on create surfaces as itself and nothing connects`, () =>
      Effect.gen(function*() {
        yield* AgentSessionsTest.failNextCreate(error)
        const exit = yield* Effect.exit(AgentSessions.run(request))
        assertFailsWith(exit, error)
        assert.deepStrictEqual(yield* AgentSessionsTest.connections, [])
      }).pipe(withKit()))
  }

  scoped("U20 an invalid request fails with InvalidRequest and creates nothing", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(AgentSessions.run({ ...request, max_actions: 0 }))
      assert.strictEqual(error._tag, "InvalidRequest")
      assert.deepStrictEqual(yield* AgentSessionsTest.sessionsCreated, [])
    }).pipe(withKit()))

  scoped("start gives events, respond and outcome; outcome completes with complete", () =>
    Effect.gen(function*() {
      const running = yield* AgentSessions.start(request)
      const tags = yield* running.events.pipe(
        Stream.tap((event) =>
          event._tag === "ExternalResourceRequested" ? running.respond(event, Answer.deny()) : Effect.void
        ),
        Stream.map((event) => event._tag),
        Stream.runCollect
      )
      assert.strictEqual(Array.from(tags).at(-1), "Complete")
      const outcome = yield* running.outcome
      assert.strictEqual(outcome.actions, 3)
      // Answering twice is refused.
      const request2 = outcome.events.find(SessionEvent.$is("ExternalResourceRequested"))
      assert.isDefined(request2)
      if (request2 !== undefined) {
        const again = yield* Effect.flip(running.respond(request2, Answer.grant()))
        assert.strictEqual(again._tag, "RequestNotPending")
        assert.strictEqual(again._tag === "RequestNotPending" ? again.reason : undefined, "already-answered")
      }
    }).pipe(withKit({ script: AgentSessionsTest.session({ ask: "permission" }) })))

  scoped("U18 a running session shows its session only: logged or inspected, never its connection or socket", () =>
    Effect.gen(function*() {
      const running = yield* AgentSessions.start(request)
      assert.deepStrictEqual(Reflect.ownKeys(running), ["session"])
      const outcome = yield* running.outcome
      assert.strictEqual(outcome.actions, 3)
    }).pipe(withKit()))

  scoped("outcome alone drains the events", () =>
    Effect.gen(function*() {
      const running = yield* AgentSessions.start(request)
      const outcome = yield* running.outcome
      assert.strictEqual(outcome.events.length, 4)
    }).pipe(withKit({ script: [Step.emit(action(1)), Step.emit(action(2)), Step.emit(action(3)), Step.emit(complete)] })))

  scoped("outcome completes as soon as complete is seen, before the consumer's scope closes", () =>
    Effect.gen(function*() {
      const running = yield* AgentSessions.start(request)
      // Pull in this scope (as Stream.partition or broadcast do): the stream's finalizers wait for it.
      const pull = yield* Stream.toPull(running.events)
      let seenComplete = false
      while (!seenComplete) {
        const chunk = yield* pull
        seenComplete = Array.from(chunk).some(SessionEvent.isTerminal)
      }
      const outcome = yield* running.outcome
      assert.strictEqual(outcome.response, "{\"price\": 3}")
    }).pipe(withKit({ script: [Step.emit(action(1)), Step.emit(complete)] })))

  describe("forEachBatch: the events run batch by batch in the calling fiber", () => {
    const script = [Step.emit(action(1)), Step.emit(action(2)), Step.emit(complete)]

    scoped("the same events as `events`, in order, each batch non-empty; the outcome follows", () =>
      Effect.gen(function*() {
        const running = yield* AgentSessions.start(request)
        const batches: Array<ReadonlyArray<string>> = []
        yield* running.forEachBatch((batch) => Effect.sync(() => void batches.push(batch.map((event) => event._tag))))
        assert.isTrue(batches.every((batch) => batch.length > 0))
        assert.deepStrictEqual(batches.flat(), ["Started", "ActionRun", "ActionRun", "Complete"])
        const outcome = yield* running.outcome
        assert.strictEqual(outcome.actions, 2)
        assert.strictEqual(outcome.response, "{\"price\": 3}")
      }).pipe(withKit({ script: [Step.emit({ _tag: "Started", sessionId, start_url: "https://example.com" }), ...script] })))

    scoped("U20 fails with ActionBudgetExceeded as `events` does, the offending action delivered", () =>
      Effect.gen(function*() {
        const running = yield* AgentSessions.start({ ...request, max_actions: 1 })
        const seen: Array<string> = []
        const exit = yield* Effect.exit(running.forEachBatch((batch) => Effect.sync(() => seen.push(...batch.map((e) => e._tag)))))
        assertFailsWith(exit, new Errors.ActionBudgetExceeded({ sessionId: "test-session", maxActions: 1, actions: 2, mayStillBeRunning: true }))
        assert.deepStrictEqual(seen, ["ActionRun", "ActionRun"])
      }).pipe(withKit({ script })))

    scoped("U17 fails with the function's own error; the outcome is SessionEndedWithoutComplete", () =>
      Effect.gen(function*() {
        const running = yield* AgentSessions.start(request)
        const consumed = yield* Effect.exit(running.forEachBatch(() => Effect.fail("the app's own error" as const)))
        assert.isTrue(Exit.isFailure(consumed))
        if (Exit.isFailure(consumed)) assert.strictEqual(Option.getOrUndefined(failureOf(consumed.cause)), "the app's own error")
        const error = yield* Effect.flip(running.outcome)
        assert.strictEqual(error._tag, "SessionEndedWithoutComplete")
      }).pipe(withKit({ script })))

    scoped("the events are consumed once: `events` after `forEachBatch` (and the reverse) is a defect", () =>
      Effect.gen(function*() {
        const first = yield* AgentSessions.start(request)
        yield* first.forEachBatch(() => Effect.void)
        const again = yield* Effect.exit(Stream.runDrain(first.events))
        assert.isTrue(Exit.isFailure(again) && Option.isNone(failureOf(again.cause)), "a defect, not a typed failure")
        const second = yield* AgentSessions.start(request)
        yield* Stream.runDrain(second.events)
        const twice = yield* Effect.exit(second.forEachBatch(() => Effect.void))
        assert.isTrue(Exit.isFailure(twice) && Option.isNone(failureOf(twice.cause)), "a defect, not a typed failure")
      }).pipe(withKit({ script })))
  })

  scoped("U17 a consumer that stops with its own error leaves outcome a typed SessionEndedWithoutComplete", () =>
    Effect.gen(function*() {
      const running = yield* AgentSessions.start(request)
      const consumed = yield* Effect.exit(
        running.events.pipe(
          Stream.runForEach((event) => event._tag === "ActionRun" ? Effect.fail("the app's own error" as const) : Effect.void)
        )
      )
      assert.isTrue(Exit.isFailure(consumed))
      const outcome = yield* Effect.exit(running.outcome)
      assert.isTrue(Exit.isFailure(outcome))
      if (Exit.isFailure(outcome)) {
        assert.isFalse(interruptedOnly(outcome.cause))
        const error = failureOf(outcome.cause)
        assert.isTrue(Option.isSome(error) && Errors.isAgentSessionError(error.value))
        assert.strictEqual(Option.isSome(error) ? error.value._tag : undefined, "SessionEndedWithoutComplete")
      }
    }).pipe(withKit({ script: [Step.emit(action(1)), Step.emit(action(2)), Step.emit(complete)] })))

  scoped("U17 a consumer that fails with an SDK error of its own (a refused answer) leaves outcome SessionEndedWithoutComplete", () =>
    Effect.gen(function*() {
      const running = yield* AgentSessions.start(request)
      const asked: SessionEvent.ExternalResourceRequested = {
        _tag: "ExternalResourceRequested",
        resource_type: "admin_permission_request",
        reason: "May I?",
        action_session_id: actionSessionId,
        field_name: Option.none()
      }
      // The consumer answers a request the session never asked: `respond` fails, and so does it.
      const consumed = yield* Effect.exit(
        running.events.pipe(
          Stream.runForEach((event) =>
            event._tag === "ActionRun"
              ? running.respond(asked, Answer.deny())
              : Effect.void
          )
        )
      )
      assertFailsWith(consumed, new Errors.RequestNotPending({ resourceType: "admin_permission_request", actionSessionId, reason: "never-received" }))
      // That failure is the consumer's: `outcome` is typed with the events' own errors only.
      const error = yield* Effect.flip(running.outcome)
      assert.strictEqual(error._tag, "SessionEndedWithoutComplete")
    }).pipe(withKit({ script: [Step.emit(action(1)), Step.emit(action(2)), Step.emit(complete)] })))

  scoped("U17 an interrupted consumer leaves outcome a typed failure, not an interruption", () =>
    Effect.gen(function*() {
      const running = yield* AgentSessions.start(request)
      const fiber = yield* forkChild(Stream.runDrain(running.events))
      yield* TestClock.adjust(Duration.seconds(1))
      yield* Fiber.interrupt(fiber)
      const outcome = yield* Effect.exit(running.outcome)
      assert.isTrue(Exit.isFailure(outcome))
      if (Exit.isFailure(outcome)) {
        assert.isFalse(interrupted(outcome.cause))
        const error = failureOf(outcome.cause)
        assert.strictEqual(Option.isSome(error) ? error.value._tag : undefined, "SessionEndedWithoutComplete")
      }
    }).pipe(withKit({ script: [Step.emit(action(1)), Step.sleep("1 hour"), Step.emit(complete)] })))

  scoped("attach watches an existing session with the same budget guard", () =>
    Effect.gen(function*() {
      const api = yield* AgentApi.AgentApi
      const session = yield* api.createSession(request)
      const running = yield* AgentSessions.attach(session, 1)
      const error = yield* Effect.flip(running.outcome)
      assert.strictEqual(error._tag, "ActionBudgetExceeded")
      assert.deepStrictEqual(yield* AgentSessionsTest.connections, ["test-session"])
    }).pipe(withKit({ script: [Step.emit(action(1)), Step.emit(action(2)), Step.emit(complete)] })))

  scoped("an injected onboard error surfaces as itself", () =>
    Effect.gen(function*() {
      const conflict = new Errors.Conflict({
        status: 409,
        message: "name taken",
        body: "{\"error\":\"name taken\"}",
        requestId: Option.none(),
        operation: "AgentApi.onboard"
      })
      yield* AgentSessionsTest.failNextOnboard(conflict)
      const error = yield* Effect.flip(AgentSessions.onboard({ name: "a", website: "https://a.example", domain: "sales" }))
      assert.strictEqual(error._tag, "Conflict")
      assert.deepStrictEqual(yield* AgentSessionsTest.agentsOnboarded, [])
      const agent = yield* AgentSessions.onboard({ name: "a", website: "https://a.example", domain: "sales" })
      assert.strictEqual(agent.name, "a")
      assert.strictEqual((yield* AgentSessionsTest.agentsOnboarded).length, 1)
    }).pipe(withKit()))

  scoped("the test kit follows the TestClock", () =>
    Effect.gen(function*() {
      const fiber = yield* forkChild(AgentSessions.run(request))
      // Up to the script's sleep (the fork starts on the next turn).
      for (let i = 0; i < 20; i++) yield* yieldNow()
      yield* TestClock.adjust(Duration.seconds(59))
      assert.isUndefined(pollNow(fiber))
      yield* TestClock.adjust(Duration.seconds(1))
      const outcome = yield* Fiber.join(fiber)
      assert.strictEqual(outcome.actions, 1)
    }).pipe(withKit({ script: [Step.emit(action(1)), Step.sleep("60 seconds"), Step.emit(complete)] })))

  scoped("the test kit waits for the answer to the latest request, whatever was answered before", () =>
    Effect.gen(function*() {
      const requestFor = (id: string, resource_type: "request_user_input" | "admin_permission_request") =>
        Step.emit({
          _tag: "ExternalResourceRequested",
          resource_type,
          reason: "needed",
          action_session_id: ActionSessionId.make(id),
          field_name: Option.none()
        })
      yield* AgentSessionsTest.setScript([
        requestFor("as-a", "request_user_input"),
        requestFor("as-b", "admin_permission_request"),
        Step.awaitAnswer(),
        Step.emit(complete)
      ])
      const running = yield* AgentSessions.start(request)
      const seen: Array<SessionEvent.SessionEvent> = []
      const fiber = yield* forkChild(Stream.runForEach(running.events, (event) => Effect.sync(() => seen.push(event))))
      for (let i = 0; i < 100 && seen.length < 2; i++) yield* yieldNow()
      const [first, second] = seen.filter(SessionEvent.$is("ExternalResourceRequested"))
      assert.isDefined(first)
      assert.isDefined(second)
      if (first === undefined || second === undefined) return
      // Answering the older request does not release the wait for the latest one.
      yield* running.respond(first, Answer.grant("for a"))
      for (let i = 0; i < 100; i++) yield* yieldNow()
      assert.deepStrictEqual(seen.map((event) => event._tag), ["ExternalResourceRequested", "ExternalResourceRequested"])
      yield* running.respond(second, Answer.deny())
      yield* Fiber.join(fiber)
      const echo = seen.find(SessionEvent.$is("ExternalResourceGranted"))
      assert.strictEqual(echo?.granted, false)
      assert.deepStrictEqual(echo?.input, Option.none())
    }).pipe(withKit()))

  scoped("issue 13: pending requests are visible, and one waiting past 30 s is a warning with its type and wait", () => {
    const logs: Array<string> = []
    const logger = Logger.make(({ logLevel, message }) => {
      if (isWarning(logLevel)) logs.push(String(Array.isArray(message) ? message.join(" ") : message))
    })
    return Effect.gen(function*() {
      yield* AgentSessionsTest.setScript([
        Step.emit({
          _tag: "ExternalResourceRequested",
          resource_type: "admin_permission_request",
          reason: "needed",
          action_session_id: ActionSessionId.make("as-p"),
          field_name: Option.none()
        }),
        Step.awaitAnswer(),
        Step.emit(complete)
      ])
      const running = yield* AgentSessions.start(request)
      const seen: Array<SessionEvent.SessionEvent> = []
      const fiber = yield* forkChild(Stream.runForEach(running.events, (event) => Effect.sync(() => seen.push(event))))
      for (let i = 0; i < 100 && seen.length < 1; i++) yield* yieldNow()
      const waiting = yield* SubscriptionRef.get(running.pending)
      assert.strictEqual(waiting.length, 1)
      const first = waiting[0]
      assert.strictEqual(first?.request.action_session_id, "as-p")
      yield* TestClock.adjust("29 seconds")
      assert.deepStrictEqual(logs, [])
      yield* TestClock.adjust("1 second")
      for (let i = 0; i < 20; i++) yield* yieldNow()
      assert.strictEqual(logs.length, 1)
      assert.include(logs[0], "admin_permission_request")
      assert.include(logs[0], "30s")
      if (first !== undefined) yield* running.respond(first.request, Answer.grant())
      assert.deepStrictEqual(yield* SubscriptionRef.get(running.pending), [])
      yield* Fiber.join(fiber)
      yield* TestClock.adjust("1 minute")
      assert.strictEqual(logs.length, 1, "an answered request is not reported again")
    }).pipe(
      Effect.provide(loggerLayer(logger)),
      withKit()
    )
  })

  scoped("the test kit's state ends with the reason the real channel gives", () =>
    Effect.gen(function*() {
      const reasonAfter = (script: ReadonlyArray<AgentSessionsTest.Step>, options?: AgentSessions.StartOptions) =>
        Effect.gen(function*() {
          yield* AgentSessionsTest.setScript(script)
          const running = yield* AgentSessions.start(request, options)
          yield* Effect.exit(running.outcome)
          const state = yield* SubscriptionRef.get(running.state)
          return state._tag === "Closed" ? state.reason : state._tag
        })
      assert.strictEqual(yield* reasonAfter([Step.emit(action(1)), Step.emit(complete)]), "complete")
      assert.strictEqual(yield* reasonAfter([Step.emit(action(1)), Step.end]), "closed-by-service")
      assert.strictEqual(yield* reasonAfter([Step.emit(action(1))]), "closed-by-service")
      assert.strictEqual(
        yield* reasonAfter([Step.fail(new Errors.ConnectionLost({ attempts: 3, lastError: "1006" }))]),
        "connection-lost"
      )
      assert.strictEqual(
        yield* reasonAfter([Step.fail(new Errors.HandshakeRejected({ code: 4401, reason: "" }))]),
        "handshake-rejected"
      )
      assert.strictEqual(
        yield* reasonAfter([Step.fail(new Errors.MalformedFrame({ raw: "x", message: "not JSON" }))]),
        "failed"
      )
      assert.strictEqual(
        yield* reasonAfter([Step.fail(new Errors.Superseded({ reason: "superseded" }))]),
        "superseded"
      )
      assert.strictEqual(
        yield* reasonAfter([Step.emit({ _tag: "AgentError", error: "boom" }), Step.emit(complete)], { endOnError: true }),
        "error-event"
      )
    }).pipe(withKit()))

  describe("keepEvents is bounded by default (issue 12, defect 15)", () => {
    const thoughts = (n: number): SessionEvent.SessionEvent => ({
      _tag: "ThoughtsAndMemories",
      thought: `t${n}`,
      memory: "m"
    })
    const long = [
      Step.emit({ _tag: "Started", sessionId, start_url: "https://example.com" }),
      ...Array.from({ length: 1_500 }, (_, i) => Step.emit(thoughts(i))),
      Step.emit(complete)
    ]
    const bigRequest = { ...request, max_actions: 10 }

    scoped("by default the outcome keeps the last 100 events only", () =>
      Effect.gen(function*() {
        const outcome = yield* AgentSessions.run(bigRequest)
        assert.strictEqual(AgentSessions.defaultKeepEvents, 100)
        assert.strictEqual(outcome.events.length, 100)
        assert.strictEqual(outcome.events.at(-1)?._tag, "Complete")
        assert.strictEqual(outcome.events.at(0)?._tag, "ThoughtsAndMemories")
      }).pipe(withKit({ script: long })))

    scoped("a number keeps that many; true keeps every event", () =>
      Effect.gen(function*() {
        const three = yield* AgentSessions.run(bigRequest, { keepEvents: 3 })
        assert.strictEqual(three.events.length, 3)
        assert.strictEqual(three.events.at(-1)?._tag, "Complete")
        const all = yield* AgentSessions.run(bigRequest, { keepEvents: true })
        assert.strictEqual(all.events.length, 1_502)
        const none = yield* AgentSessions.run(bigRequest, { keepEvents: 0 })
        assert.deepStrictEqual(none.events, [])
      }).pipe(withKit({ script: long })))
  })

  scoped("keepEvents false keeps no events in the outcome", () =>
    Effect.gen(function*() {
      const outcome = yield* AgentSessions.run(request, { keepEvents: false })
      assert.deepStrictEqual(outcome.events, [])
      assert.strictEqual(outcome.actions, 3)
    }).pipe(withKit()))
})
