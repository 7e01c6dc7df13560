import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import { AgentApi } from "../../src/AgentApi.js"
import * as AgentSessions from "../../src/AgentSessions.js"
import * as Credentials from "../../src/Credentials.js"
import * as Errors from "../../src/Errors.js"
import { AgentSessionsTest } from "../../src/testing/index.js"

const request = { start_url: "https://example.com", max_actions: 3, goal: "Find the price" }

describe("AgentSessionsTest (the test kit, layer-swapped)", () => {
  it.effect("the in-memory AgentApi records what the application asked for, and validates it the same way", () =>
    Effect.gen(function*() {
      const api = yield* AgentApi
      const first = yield* api.createSession(request)
      const second = yield* api.createSession({ ...request, goal: "Another" })
      assert.deepStrictEqual([first.session_id, second.session_id], ["test-session", "test-session-2"])
      const agent = yield* api.onboard({ name: "scout", website: "https://example.com", domain: "research" })
      assert.deepStrictEqual(Option.map(agent.apiKey, Redacted.value), Option.some("test-agent-key-scout"))
      const invalid = yield* Effect.flip(api.createSession({ ...request, max_actions: 0 }))
      assert.strictEqual(invalid._tag, "InvalidRequest")
      assert.deepStrictEqual((yield* AgentSessionsTest.sessionsCreated).map((r) => r.goal), ["Find the price", "Another"])
      assert.deepStrictEqual((yield* AgentSessionsTest.agentsOnboarded).map((r) => r.name), ["scout"])
      const key = yield* Effect.flatMap(Effect.service(Credentials.Credentials), (c) => c.keyFor("onboard"))
      assert.strictEqual(Redacted.value(key), "test-account-key")
      // It keeps no sessions to retrieve: `getSession` is NotFound, and says so beforehand.
      assert.isFalse(api.canRetrieve)
    }).pipe(Effect.provide(AgentSessionsTest.layer())))

  it.effect("failNextCreate and failNextOnboard fail the next call once, with the typed error given", () =>
    Effect.gen(function*() {
      const api = yield* AgentApi
      yield* AgentSessionsTest.failNextCreate(new Errors.Unauthorized({
        status: 401,
        message: "nope",
        body: "",
        requestId: Option.none(),
        operation: "AgentApi.createSession"
      }))
      assert.strictEqual((yield* Effect.flip(api.createSession(request)))._tag, "Unauthorized")
      assert.strictEqual((yield* api.createSession(request)).session_id, "fixed")
      yield* AgentSessionsTest.failNextOnboard(new Errors.TransportError({ operation: "AgentApi.onboard", message: "down" }))
      const failed = yield* Effect.flip(api.onboard({ name: "a", website: "https://a.example", domain: "sales" }))
      assert.strictEqual(failed._tag, "TransportError")
      assert.strictEqual((yield* AgentSessionsTest.sessionsCreated).length, 1)
    }).pipe(Effect.provide(AgentSessionsTest.layer({ sessionId: "fixed" }))))

  it.effect("two test kit layers in one program: each façade runs over its own services, not the first one built", () =>
    Effect.gen(function*() {
      const outer = yield* AgentSessions.run(request)
      const inner = yield* AgentSessions.run(request).pipe(Effect.provide(AgentSessionsTest.layer({ sessionId: "inner" })))
      assert.deepStrictEqual([outer.sessionId, inner.sessionId], ["outer", "inner"])
    }).pipe(Effect.provide(AgentSessionsTest.layer({ sessionId: "outer" }))))

  it("session() scripts a run: started, browser, actions with thoughts, the request and its answer, complete", () => {
    const steps = AgentSessionsTest.session({ actions: 2, ask: "input", sessionId: "s-1" })
    const tags = steps.map((step) => (step._tag === "Emit" ? step.event._tag : step._tag))
    assert.deepStrictEqual(tags, [
      "Started",
      "BrowserStarted",
      "ThoughtsAndMemories",
      "ActionRun",
      "ExternalResourceRequested",
      "AwaitAnswer",
      "ThoughtsAndMemories",
      "ActionRun",
      "Complete"
    ])
    const complete = steps.at(-1)
    assert.isTrue(complete?._tag === "Emit" && complete.event._tag === "Complete" && complete.event.session_id === "s-1")
  })

  it.effect("drain on a scripted session is close (nothing is in flight): its events end before complete, the state is closed by the caller", () =>
    Effect.gen(function*() {
      yield* AgentSessionsTest.setScript(AgentSessionsTest.session({ actions: 2, ask: "input" }))
      const running = yield* AgentSessions.start(request)
      const events = yield* Effect.forkChild(Stream.runCollect(Stream.result(running.events)))
      // The script waits for the answer to its request: the session runs when it is drained.
      yield* SubscriptionRef.changes(running.pending).pipe(Stream.filter((pending) => pending.length > 0), Stream.runHead)
      yield* running.drain
      const tags = (yield* Fiber.join(events)).map((r) => Result.isSuccess(r) ? r.success._tag : `!${r.failure._tag}`)
      assert.deepStrictEqual(tags.slice(-2), ["ExternalResourceRequested", "!SessionEndedWithoutComplete"])
      assert.deepStrictEqual(yield* SubscriptionRef.get(running.state), {
        _tag: "Closed",
        reason: "closed-by-caller"
      })
    }).pipe(Effect.scoped, Effect.provide(AgentSessionsTest.layer())))

  it.effect("setScript replaces the script of the sessions created from now on", () =>
    Effect.gen(function*() {
      const control = yield* AgentSessionsTest.AgentSessionsTestControl
      yield* AgentSessionsTest.setScript([AgentSessionsTest.Step.end])
      assert.deepStrictEqual(yield* control.script, [AgentSessionsTest.Step.end])
    }).pipe(Effect.provide(AgentSessionsTest.layer())))
})
