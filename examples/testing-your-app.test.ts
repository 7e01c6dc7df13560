/**
 * The test of `examples/testing-your-app.ts`, with `@effect/vitest` and the SDK's test kit.
 *
 * `AgentSessionsTest.layer({ script })` provides `AgentSessions` (the real façade) over in-memory
 * services that play a script of events: no sockets, no key, and `sleep` steps follow the
 * `TestClock`. `AgentSessionsTest.answers` gives every answer the application sent.
 *
 * In your own project, import the kit as `effect-agent-session/testing`.
 *
 *   npx vitest run examples/testing-your-app.test.ts
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as TestClock from "effect/TestClock"
import { Answer, Errors, Session } from "effect-agent-session"
import { AgentSessionsTest } from "effect-agent-session/testing"
import { bookTable } from "./testing-your-app.js"

const booking = { restaurantUrl: "https://example.com/reservations", partySize: 4, email: "jane@example.com" }

const sessionId = Session.SessionId.make("test-session")
const actionSessionId = Session.ActionSessionId.make("action-1")

/** A hand-written script: the agent asks to pay a deposit, then completes. */
const depositScript: ReadonlyArray<AgentSessionsTest.Step> = [
  AgentSessionsTest.Step.emit({ _tag: "Started", sessionId, start_url: booking.restaurantUrl }),
  AgentSessionsTest.Step.emit({ _tag: "ActionRun", name: "click", action_session_id: actionSessionId, content: "Open the form" }),
  AgentSessionsTest.Step.emit({
    _tag: "ExternalResourceRequested",
    resource_type: "admin_permission_request",
    reason: "The restaurant asks to pay a deposit of 20 EUR",
    action_session_id: actionSessionId,
    field_name: Option.none()
  }),
  AgentSessionsTest.Step.awaitAnswer(),
  AgentSessionsTest.Step.emit({
    _tag: "Complete",
    response: "Booked without a deposit",
    type: "STRING",
    total_cost: Option.some(0.01),
    cost_summary: Option.none(),
    session_id: sessionId
  })
]

describe("bookTable", () => {
  it.effect("fills in the customer's email when the agent asks for it", () =>
    Effect.gen(function*() {
      const result = yield* bookTable(booking)

      assert.strictEqual(result._tag, "Booked")
      const answers = yield* AgentSessionsTest.answers
      assert.strictEqual(answers.length, 1)
      assert.strictEqual(answers[0]?.request.resource_type, "request_user_input")
      assert.deepStrictEqual(answers[0]?.answer, Answer.grant(booking.email))
    }).pipe(
      Effect.provide(AgentSessionsTest.layer({ script: AgentSessionsTest.session({ actions: 4, ask: "input" }) }))
    ))

  it.effect("creates one session, with the goal and the start page", () =>
    Effect.gen(function*() {
      yield* bookTable(booking)
      const created = yield* AgentSessionsTest.sessionsCreated
      assert.strictEqual(created.length, 1)
      assert.strictEqual(created[0]?.start_url, booking.restaurantUrl)
      assert.include(created[0]?.goal ?? "", "for 4")
    }).pipe(Effect.provide(AgentSessionsTest.layer())))

  it.effect("refuses to pay a deposit", () =>
    Effect.gen(function*() {
      const result = yield* bookTable(booking)
      const answers = yield* AgentSessionsTest.answers
      assert.deepStrictEqual(answers.map((recorded) => recorded.answer._tag), ["Deny"])
      assert.deepStrictEqual(result, { _tag: "Booked", summary: "Booked without a deposit", actions: 1, cost: 0.01 })
    }).pipe(Effect.provide(AgentSessionsTest.layer({ script: depositScript }))))

  it.effect("reports a session that ends before complete as abandoned", () =>
    Effect.gen(function*() {
      const result = yield* bookTable(booking)
      assert.deepStrictEqual(result, { _tag: "Abandoned", reason: "The restaurant's site is down" })
    }).pipe(
      Effect.provide(AgentSessionsTest.layer({
        script: [
          AgentSessionsTest.Step.emit({ _tag: "Started", sessionId, start_url: booking.restaurantUrl }),
          AgentSessionsTest.Step.emit({ _tag: "AgentError", error: "The restaurant's site is down" }),
          AgentSessionsTest.Step.end
        ]
      }))
    ))

  it.effect("lets a refused key surface as Unauthorized", () =>
    Effect.gen(function*() {
      yield* AgentSessionsTest.failNextCreate(
        new Errors.Unauthorized({
          status: 401,
          message: "invalid API key",
          body: "",
          requestId: Option.none(),
          operation: "AgentApi.createSession"
        })
      )
      const error = yield* Effect.flip(bookTable(booking))
      assert.strictEqual(error._tag, "Unauthorized")
    }).pipe(Effect.provide(AgentSessionsTest.layer())))

  it.effect("waits for a slow agent on the TestClock, not the wall clock", () =>
    Effect.gen(function*() {
      const fiber = yield* Effect.fork(bookTable(booking))
      // The agent thinks for ten minutes: advance virtual time instead of waiting.
      yield* TestClock.adjust("10 minutes")
      const result = yield* Fiber.join(fiber)
      assert.strictEqual(result._tag, "Booked")
    }).pipe(
      Effect.provide(AgentSessionsTest.layer({
        script: [
          AgentSessionsTest.Step.emit({ _tag: "Started", sessionId, start_url: booking.restaurantUrl }),
          AgentSessionsTest.Step.sleep("10 minutes"),
          AgentSessionsTest.Step.emit({
            _tag: "Complete",
            response: "Booked",
            type: "STRING",
            total_cost: Option.some(0),
            cost_summary: Option.none(),
            session_id: sessionId
          })
        ]
      }))
    ))
})
