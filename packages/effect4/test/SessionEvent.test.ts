import { assert, describe, it } from "@effect/vitest"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import type * as Session from "../src/Session.js"
import * as SessionEvent from "../src/SessionEvent.js"

/** Decodes a known event's payload, failing the test unless it decodes. */
const decodeOk = (event: string, data: unknown): SessionEvent.SessionEvent => {
  const decoded = SessionEvent.decodePayload(event, data)
  if (Option.isNone(decoded)) return assert.fail(`${event} is not a known event`)
  if (Result.isFailure(decoded.value)) return assert.fail(`expected an event, got: ${decoded.value.failure}`)
  return decoded.value.success
}

/** Decodes a known event's payload, failing the test unless it is refused; the reason. */
const decodeError = (event: string, data: unknown): string => {
  const decoded = SessionEvent.decodePayload(event, data)
  if (Option.isNone(decoded)) return assert.fail(`${event} is not a known event`)
  if (Result.isSuccess(decoded.value)) return assert.fail(`expected a refusal, got ${JSON.stringify(decoded.value.success)}`)
  return decoded.value.failure
}

const asComplete = (event: SessionEvent.SessionEvent): SessionEvent.Complete => {
  if (!SessionEvent.isTerminal(event)) return assert.fail(`expected Complete, got ${event._tag}`)
  return event
}

const asRequest = (event: SessionEvent.SessionEvent): SessionEvent.ExternalResourceRequested => {
  if (!SessionEvent.$is("ExternalResourceRequested")(event)) {
    return assert.fail(`expected ExternalResourceRequested, got ${event._tag}`)
  }
  return event
}

const completeData = (fields: Record<string, unknown>) => ({
  response: "done",
  type: "STRING",
  session_id: "s-1",
  ...fields
})

const examples: ReadonlyArray<readonly [string, unknown, SessionEvent.Tag]> = [
  ["started", { sessionId: "s-1", start_url: "https://example.com" }, "Started"],
  ["browser_started", { url: "https://example.com", action_session_id: "a-1" }, "BrowserStarted"],
  ["action_run", { name: "click", action_session_id: "a-1", content: "clicking" }, "ActionRun"],
  ["thoughts_and_memories", { thought: "t", memory: "m" }, "ThoughtsAndMemories"],
  ["complete", completeData({ total_cost: 1.5 }), "Complete"],
  ["error", { error: "boom" }, "AgentError"],
  [
    "external_resource_requested",
    { resource_type: "request_user_input", reason: "r", action_session_id: "a-1", field_name: "email" },
    "ExternalResourceRequested"
  ],
  ["external_resource_granted", { granted: true, input: "x" }, "ExternalResourceGranted"],
  ["heartbeat", {}, "Heartbeat"],
  ["connected", {}, "Connected"]
]

const unrecognized: SessionEvent.SessionEvent = { _tag: "Unrecognized", event: "something_new", payload: { anything: [1, 2] } }

describe("SessionEvent", () => {
  describe("the union", () => {
    it("decodes every documented event by its wire name, with the names used exactly as listed", () => {
      for (const [name, data, tag] of examples) {
        assert.strictEqual(decodeOk(name, data)._tag, tag, name)
      }
      const started = decodeOk("started", { sessionId: "s-1", start_url: "https://example.com" })
      assert.deepStrictEqual(started, { _tag: "Started", sessionId: "s-1", start_url: "https://example.com" } as never)
    })

    it("names every known tag on the wire, and knows no other name", () => {
      for (const [tag, name] of Object.entries(SessionEvent.wireNames)) {
        assert.isTrue(SessionEvent.isWireName(name), tag)
        assert.isTrue(Option.isSome(SessionEvent.decodePayload(name, {})), name)
      }
      assert.isFalse(SessionEvent.isWireName("something_new"))
      assert.isTrue(Option.isNone(SessionEvent.decodePayload("something_new", {})))
    })

    it("U01 ignores fields the document does not name", () => {
      const event = decodeOk("action_run", { name: "click", action_session_id: "a-1", content: "c", extra: 1 })
      assert.deepStrictEqual(Object.keys(event).sort(), ["_tag", "action_session_id", "content", "name"])
    })

    it("a payload that is not an object is refused with a reason", () => {
      for (const payload of [null, 3, "text", [1]]) {
        assert.isAbove(decodeError("action_run", payload).length, 0, JSON.stringify(payload))
      }
    })

    it("a payload is decoded by its own event's schema: a refusal names no other event", () => {
      for (const payload of [null, [], { name: 1 }]) {
        assert.notInclude(decodeError("action_run", payload), "Started", JSON.stringify(payload))
        assert.notInclude(decodeError("heartbeat", payload === null ? 1 : [payload]), "ActionRun")
      }
    })

    it("a payload nested 10,000 deep is refused with a reason, not a stack overflow", () => {
      let deep: unknown = 1
      for (let i = 0; i < 10_000; i++) deep = [deep]
      assert.include(decodeError("action_run", { name: deep, action_session_id: "a", content: "c" }), "name")
    })

    it.prop(
      "toWire then decodePayload is the identity for every known event (as JSON carries it)",
      [Schema.toType(SessionEvent.SessionEvent)],
      ([event]) => {
        const { event: name, payload } = SessionEvent.toWire(event)
        const decoded = SessionEvent.decodePayload(name, JSON.parse(JSON.stringify(payload)))
        if (event._tag === "Unrecognized") {
          assert.strictEqual(name, event.event)
          assert.isTrue(Option.isNone(decoded))
          return
        }
        assert.strictEqual(name, SessionEvent.wireNames[event._tag])
        if (Option.isNone(decoded)) return assert.fail(`${name} is not known`)
        if (Result.isFailure(decoded.value)) return assert.fail(decoded.value.failure)
        // The same event, as JSON carries it (JSON has no -0: a cost of -0 comes back as 0).
        assert.strictEqual(decoded.value.success._tag, event._tag)
        assert.deepStrictEqual(
          JSON.parse(JSON.stringify(SessionEvent.toWire(decoded.value.success))),
          JSON.parse(JSON.stringify(SessionEvent.toWire(event)))
        )
      },
      { arbitrary: { runs: 500, seed: 7 } }
    )

    it("Unrecognized keeps a non-empty name the SDK does not know, and its payload as sent", () => {
      const is = Schema.is(SessionEvent.Unrecognized)
      assert.isTrue(is({ _tag: "Unrecognized", event: "new_event", payload: null }))
      assert.isFalse(is({ _tag: "Unrecognized", event: "", payload: null }))
      assert.isFalse(is({ _tag: "Unrecognized", event: "complete", payload: null }))
      assert.deepStrictEqual(SessionEvent.toWire(unrecognized), { event: "something_new", payload: { anything: [1, 2] } })
    })
  })

  describe("U03 action sessions", () => {
    it("U03 action_session_id is a branded string, the only field of an action session", () => {
      const event = decodeOk("browser_started", { url: "https://example.com", action_session_id: "a-42" })
      if (!SessionEvent.$is("BrowserStarted")(event)) return assert.fail(event._tag)
      const id: Session.ActionSessionId = event.action_session_id
      assert.strictEqual(id, "a-42")
      // @ts-expect-error a plain string is not an ActionSessionId
      const plain: Session.ActionSessionId = "a-42"
      assert.strictEqual(plain, id)
    })

    it("U03 a non-string action_session_id is refused, naming the field", () => {
      assert.include(decodeError("action_run", { name: "n", action_session_id: 7, content: "c" }), "action_session_id")
    })
  })

  describe("U13 complete.type", () => {
    it("U13 decodes STRING, JSON and MARKDOWN as literals", () => {
      for (const type of ["STRING", "JSON", "MARKDOWN"] as const) {
        const complete = asComplete(decodeOk("complete", completeData({ type, total_cost: 0 })))
        assert.strictEqual(complete.type, type)
        assert.strictEqual(SessionEvent.responseTypeRaw(complete.type), type)
      }
    })

    it("U13 any other type is Unrecognized(raw), and encodes back to the raw string", () => {
      const complete = asComplete(decodeOk("complete", completeData({ type: "HTML", total_cost: 0 })))
      assert.deepStrictEqual(complete.type, { _tag: "Unrecognized", raw: "HTML" })
      assert.strictEqual(SessionEvent.responseTypeRaw(complete.type), "HTML")
      assert.propertyVal(SessionEvent.toWire(complete).payload, "type", "HTML")
      const lower = asComplete(decodeOk("complete", completeData({ type: "json", total_cost: 0 })))
      assert.deepStrictEqual(lower.type, { _tag: "Unrecognized", raw: "json" })
    })

    it("U13 a type that is not a string is refused", () => {
      decodeError("complete", completeData({ type: 3, total_cost: 0 }))
      decodeError("complete", completeData({ type: null, total_cost: 0 }))
    })

    it("U13 parseJsonResponse parses a JSON response on demand", () => {
      const complete = asComplete(
        decodeOk("complete", completeData({ type: "JSON", response: "{\"items\":[1,2]}", total_cost: 1 }))
      )
      assert.deepStrictEqual(SessionEvent.parseJsonResponse(complete), Result.succeed({ items: [1, 2] }))
      assert.deepStrictEqual(SessionEvent.Complete.parseJson(complete), Result.succeed({ items: [1, 2] }))
      const text = asComplete(decodeOk("complete", completeData({ response: "42", total_cost: 1 })))
      assert.deepStrictEqual(SessionEvent.parseJsonResponse(text), Result.succeed(42))
    })

    it("U13 a response that is not JSON fails with ResponseParseError, raw cut to 4 KiB", () => {
      const complete = asComplete(decodeOk("complete", completeData({ type: "JSON", response: "{not json", total_cost: 1 })))
      const result = SessionEvent.Complete.parseJson(complete)
      if (Result.isSuccess(result)) return assert.fail("expected ResponseParseError")
      assert.strictEqual(result.failure._tag, "ResponseParseError")
      assert.strictEqual(result.failure.raw, "{not json")
      assert.isAbove(result.failure.message.length, 0)
      const long = asComplete(decodeOk("complete", completeData({ response: "x".repeat(10_000), total_cost: 1 })))
      const longResult = SessionEvent.parseJsonResponse(long)
      if (Result.isSuccess(longResult)) return assert.fail("expected ResponseParseError")
      assert.strictEqual(longResult.failure.raw.length, 4096)
    })
  })

  describe("U14 total_cost", () => {
    it("U14 accepts a non-negative finite number, zero included, with no unit", () => {
      for (const cost of [0, 0.0001, 12.5, 1e9]) {
        const complete = asComplete(decodeOk("complete", completeData({ total_cost: cost })))
        assert.deepStrictEqual(complete.total_cost, Option.some(cost))
        assert.deepStrictEqual(SessionEvent.totalCost(complete), Option.some(cost))
        assert.deepStrictEqual(SessionEvent.Complete.totalCost(complete), Option.some(cost))
      }
    })

    it("U14 a negative, infinite or non-numeric total_cost is refused", () => {
      assert.include(decodeError("complete", completeData({ total_cost: -0.01 })), "negative")
      assert.include(decodeError("complete", completeData({ total_cost: JSON.parse("1e999") })), "finite")
      for (const cost of ["NaN", "1.5", null, true, {}]) decodeError("complete", completeData({ total_cost: cost }))
    })

    it("U14 a missing total_cost is refused without cost_summary, allowed with it", () => {
      assert.include(decodeError("complete", completeData({})), "total_cost")
      const complete = asComplete(decodeOk("complete", completeData({ cost_summary: { total_cost: 3.25, actions: 4 } })))
      assert.isTrue(Option.isNone(complete.total_cost))
      assert.deepStrictEqual(complete.cost_summary, Option.some({ total_cost: 3.25, actions: 4 }))
      assert.deepStrictEqual(SessionEvent.totalCost(complete), Option.some(3.25))
    })

    it("U14 totalCost prefers total_cost, then cost_summary.total_cost or .total, else None", () => {
      const both = asComplete(decodeOk("complete", completeData({ total_cost: 1, cost_summary: { total_cost: 9 } })))
      assert.deepStrictEqual(SessionEvent.totalCost(both), Option.some(1))
      const total = asComplete(decodeOk("complete", completeData({ cost_summary: { total: 2 } })))
      assert.deepStrictEqual(SessionEvent.totalCost(total), Option.some(2))
      for (const summary of [{}, { total_cost: "2" }, { total_cost: -1 }, { total: null }]) {
        const none = asComplete(decodeOk("complete", completeData({ cost_summary: summary })))
        assert.isTrue(Option.isNone(SessionEvent.totalCost(none)), JSON.stringify(summary))
      }
      decodeError("complete", completeData({ cost_summary: 3 }))
      decodeError("complete", completeData({ cost_summary: null }))
    })
  })

  describe("U15 external resource requests", () => {
    const request = (fields: Record<string, unknown>) => ({
      resource_type: "admin_permission_request",
      reason: "needs approval",
      action_session_id: "a-1",
      ...fields
    })

    it("U15 resource_type is request_user_input, admin_permission_request, or Unrecognized(raw)", () => {
      const input = asRequest(decodeOk("external_resource_requested", request({ resource_type: "request_user_input" })))
      assert.strictEqual(input.resource_type, "request_user_input")
      const other = asRequest(decodeOk("external_resource_requested", request({ resource_type: "captcha" })))
      assert.deepStrictEqual(other.resource_type, { _tag: "Unrecognized", raw: "captcha" })
      assert.strictEqual(SessionEvent.resourceTypeRaw(other.resource_type), "captcha")
      decodeError("external_resource_requested", request({ resource_type: 1 }))
    })

    it("U15 field_name is optional: absent or null is None, and None is left out when encoding", () => {
      const without = asRequest(decodeOk("external_resource_requested", request({})))
      assert.isTrue(Option.isNone(without.field_name))
      const nulled = asRequest(decodeOk("external_resource_requested", request({ field_name: null })))
      assert.isTrue(Option.isNone(nulled.field_name))
      const named = asRequest(decodeOk("external_resource_requested", request({ field_name: "email" })))
      assert.deepStrictEqual(named.field_name, Option.some("email"))
      assert.notProperty(SessionEvent.toWire(without).payload, "field_name")
      assert.propertyVal(SessionEvent.toWire(named).payload, "field_name", "email")
      decodeError("external_resource_requested", request({ field_name: 5 }))
    })

    it("U15 external_resource_granted: input is optional", () => {
      const granted = decodeOk("external_resource_granted", { granted: true, input: "jane" })
      assert.deepStrictEqual(granted, { _tag: "ExternalResourceGranted", granted: true, input: Option.some("jane") } as never)
      const denied = decodeOk("external_resource_granted", { granted: false })
      assert.deepStrictEqual(denied, { _tag: "ExternalResourceGranted", granted: false, input: Option.none() } as never)
      decodeError("external_resource_granted", { granted: "yes" })
    })
  })

  describe("combinators and guards", () => {
    const events = [...examples.map(([name, data]) => decodeOk(name, data)), unrecognized]

    it("$match dispatches on every tag", () => {
      const describeEvent = SessionEvent.$match({
        Started: (e) => `started ${e.sessionId}`,
        BrowserStarted: (e) => `browser ${e.url}`,
        ActionRun: (e) => `action ${e.name}`,
        ThoughtsAndMemories: (e) => `thought ${e.thought}`,
        Complete: (e) => `complete ${e.response}`,
        AgentError: (e) => `error ${e.error}`,
        ExternalResourceRequested: (e) => `request ${e.reason}`,
        ExternalResourceGranted: (e) => `granted ${e.granted}`,
        Heartbeat: () => "heartbeat",
        Connected: () => "connected",
        Unrecognized: (e) => `unrecognized ${e.event}`
      })
      assert.deepStrictEqual(events.map(describeEvent), [
        "started s-1",
        "browser https://example.com",
        "action click",
        "thought t",
        "complete done",
        "error boom",
        "request r",
        "granted true",
        "heartbeat",
        "connected",
        "unrecognized something_new"
      ])
    })

    it.prop(
      "isTerminal, isChargeable and $is agree with the tag for any event",
      [Schema.toType(SessionEvent.SessionEvent)],
      ([event]) => {
        assert.strictEqual(SessionEvent.isTerminal(event), event._tag === "Complete")
        assert.strictEqual(SessionEvent.isChargeable(event), event._tag === "ActionRun")
        assert.isTrue(SessionEvent.$is(event._tag)(event))
        assert.isFalse(SessionEvent.$is(event._tag === "Heartbeat" ? "Connected" : "Heartbeat")(event))
      },
      { arbitrary: { runs: 300, seed: 11 } }
    )
  })
})
