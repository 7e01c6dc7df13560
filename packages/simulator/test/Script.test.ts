import { assert, describe, it } from "@effect/vitest"
import * as FastCheck from "effect/FastCheck"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as SessionEvent from "effect-agent-session/SessionEvent"
import { Script } from "../src/index.js"

const isSessionEvent = Schema.is(SessionEvent.SessionEvent)

const base: Script.Input = {
  sessionId: "ses_abc",
  goal: "compare three laptops",
  startUrl: "https://shop.example.com/",
  maxActions: 10,
  actions: 5,
  ask: "none"
}

const inputArb = FastCheck.record({
  goal: FastCheck.string({ minLength: 1, maxLength: 40 }),
  maxActions: FastCheck.integer({ min: 1, max: 30 }),
  actions: FastCheck.integer({ min: 0, max: 30 }),
  extraActions: FastCheck.integer({ min: 0, max: 3 }),
  ask: FastCheck.constantFrom<Script.Ask>("none", "input", "permission"),
  costSummary: FastCheck.boolean()
})

describe("Simulator Script", () => {
  it.prop(
    "U20 U14 a script is valid events: started, browser_started, min(actions, max) action_run (max + extra with the fault), complete at 0.01 each",
    [inputArb],
    ([generated]) => {
      const input: Script.Input = { ...base, ...generated }
      const answer = { granted: true, resource_type: "request_user_input", input: "x@example.com" }
      const events = Script.events(input, answer)
      assert.isTrue(events.every(isSessionEvent))
      assert.deepStrictEqual(events.slice(0, 2).map((e) => e._tag), ["Started", "BrowserStarted"])
      const extra = input.extraActions ?? 0
      const actions = extra > 0 ? input.maxActions + extra : Math.min(input.actions, input.maxActions)
      assert.strictEqual(events.filter(SessionEvent.isChargeable).length, actions)
      const complete = events[events.length - 1]
      assert.strictEqual(complete?._tag, "Complete")
      if (complete?._tag === "Complete") {
        assert.deepStrictEqual(complete.total_cost, Option.some(Math.round(actions) / 100))
        assert.strictEqual(complete.session_id, input.sessionId)
        assert.strictEqual(Option.isSome(complete.cost_summary), input.costSummary === true)
        if (SessionEvent.responseTypeRaw(complete.type) === "JSON") {
          assert.isTrue(SessionEvent.parseJsonResponse(complete)._tag === "Right")
        }
      }
      const requests = events.filter(SessionEvent.$is("ExternalResourceRequested"))
      assert.strictEqual(requests.length, input.ask === "none" ? 0 : 1)
      // The script is a function of its input.
      assert.deepStrictEqual(Script.events(input, answer), events)
    },
    { fastCheck: { numRuns: 200, seed: 7 } }
  )

  it("U16 with a request, the script stops at it until the answer; the answer is echoed", () => {
    const input: Script.Input = { ...base, ask: "input" }
    const head = Script.events(input)
    const last = head[head.length - 1]
    assert.strictEqual(last?._tag, "ExternalResourceRequested")
    assert.strictEqual(head.filter(SessionEvent.isChargeable).length, 2)
    const denied = Script.events(input, { granted: false, resource_type: "request_user_input", input: "ignored" })
    assert.deepStrictEqual(denied.slice(0, head.length), head)
    const echo = denied[head.length]
    assert.isTrue(echo?._tag === "ExternalResourceGranted" && !echo.granted && Option.isNone(echo.input))
    const thought = denied[head.length + 1]
    assert.isTrue(thought?._tag === "ThoughtsAndMemories" && thought.thought.includes("denied"))
  })

  it("different goals give different actions or responses; the complete type varies across goals", () => {
    const types = new Set<string>()
    for (const goal of ["a", "b", "c", "d", "e", "f", "g", "h"]) {
      const complete = Script.events({ ...base, goal }).find(SessionEvent.isTerminal)
      if (complete !== undefined) types.add(SessionEvent.responseTypeRaw(complete.type))
    }
    assert.isAbove(types.size, 1)
  })

  it("a bulk plan computes its frames on demand and omits complete when asked", () => {
    const plan = Script.plan({ ...base, bulkActions: 100_000 })
    assert.strictEqual(plan.head.length, 100_003)
    const action = plan.head.at(50_001)
    assert.isTrue(action._tag === "ActionRun" && action.content === Script.bulkContent(50_000))
    const complete = plan.head.at(100_002)
    assert.isTrue(complete._tag === "Complete" && Option.getOrNull(complete.total_cost) === 1000)
    const cut = Script.events({ ...base, complete: false })
    assert.isFalse(cut.some(SessionEvent.isTerminal))
  })
})
