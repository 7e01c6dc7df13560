/**
 * The event union, tested once for both editions: every event decoded by its wire name, from a
 * whole frame (`Wire`) and from its payload (`decodePayload`), the undocumented choices U01, U03,
 * U13, U14 and U15, and the combinators and guards. Each edition's `SessionEvent.test.ts` holds the
 * cases whose text differs between the lines.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type * as Session from "../../src/Session.js"
import * as SessionEvent from "../../src/SessionEvent.js"
import * as Wire from "../../src/Wire.js"
import { failureIn, propRuns, successOf, typeSchema } from "../helpers/line.js"

const decode = Wire.makeDecoder("event-data")

/**
 * Decodes the frame `{ event, data }`, failing the test on a frame error; a known event's payload
 * decodes alone (`decodePayload`) to the same event.
 */
const decodeOk = (event: string, data: unknown): SessionEvent.SessionEvent => {
  const result = decode(JSON.stringify({ event, data }))
  const error = failureIn(result)
  if (error !== undefined) return assert.fail(`expected an event, got ${error._tag}: ${error.message}`)
  const decoded = successOf(result)
  if (decoded === undefined) return assert.fail("expected an event")
  const alone = SessionEvent.decodePayload(event, data)
  if (Option.isSome(alone)) assert.deepStrictEqual(successOf(alone.value), decoded, event)
  return decoded
}

/** Decodes the frame `{ event, data }`, failing the test unless it is an `EventDecodeError`. */
const decodeError = (event: string, data: unknown) => {
  const result = decode(JSON.stringify({ event, data }))
  const error = failureIn(result)
  if (error === undefined) return assert.fail(`expected an error, got ${JSON.stringify(successOf(result))}`)
  if (error._tag !== "EventDecodeError") return assert.fail(`expected EventDecodeError, got ${error._tag}`)
  return error
}

/** Decodes a known event's payload, failing the test unless it is refused; the reason. */
const refusal = (event: string, data: unknown): string => {
  const decoded = SessionEvent.decodePayload(event, data)
  if (Option.isNone(decoded)) return assert.fail(`${event} is not a known event`)
  const reason = failureIn(decoded.value)
  return reason ?? assert.fail(`expected a refusal, got ${JSON.stringify(successOf(decoded.value))}`)
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
  ["connected", {}, "Connected"],
  ["something_new", { anything: [1, 2] }, "Unrecognized"]
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
      assert.deepStrictEqual(decodeOk("something_new", { anything: [1, 2] }), unrecognized)
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
        assert.isAbove(refusal("action_run", payload).length, 0, JSON.stringify(payload))
      }
    })

    it("a payload is decoded by its own event's schema: a refusal names no other event", () => {
      for (const payload of [null, [], { name: 1 }]) {
        const other = payload === null ? 1 : [payload]
        assert.notInclude(decodeError("action_run", payload).message, "Started", JSON.stringify(payload))
        assert.notInclude(decodeError("heartbeat", other).message, "ActionRun")
        assert.notInclude(refusal("action_run", payload), "Started", JSON.stringify(payload))
        assert.notInclude(refusal("heartbeat", other), "ActionRun")
      }
    })

    it("a payload nested 10,000 deep is refused with a reason, not a stack overflow", () => {
      let deep: unknown = 1
      for (let i = 0; i < 10_000; i++) deep = [deep]
      assert.include(refusal("action_run", { name: deep, action_session_id: "a", content: "c" }), "name")
    })

    it.prop(
      "toWire then decodePayload is the identity for every known event (as JSON carries it)",
      [typeSchema(SessionEvent.SessionEvent)],
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
        const back = successOf(decoded.value)
        if (back === undefined) return assert.fail(failureIn(decoded.value) ?? "expected an event")
        // The same event, as JSON carries it (JSON has no -0: a cost of -0 comes back as 0).
        assert.strictEqual(back._tag, event._tag)
        assert.deepStrictEqual(
          JSON.parse(JSON.stringify(SessionEvent.toWire(back))),
          JSON.parse(JSON.stringify(SessionEvent.toWire(event)))
        )
      },
      propRuns(500, 7)
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
      assert.strictEqual(typeof id, "string")
      assert.strictEqual(id, "a-42")
      // @ts-expect-error a plain string is not an ActionSessionId
      const plain: Session.ActionSessionId = "a-42"
      assert.strictEqual(plain, id)
    })

    it("U03 a non-string action_session_id is an EventDecodeError, naming the field", () => {
      const data = { name: "n", action_session_id: 7, content: "c" }
      const error = decodeError("action_run", data)
      assert.strictEqual(error.event, "action_run")
      assert.include(error.message, "action_session_id")
      assert.include(refusal("action_run", data), "action_session_id")
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
      // Case matters: "json" is not JSON.
      const lower = asComplete(decodeOk("complete", completeData({ type: "json", total_cost: 0 })))
      assert.deepStrictEqual(lower.type, { _tag: "Unrecognized", raw: "json" })
    })

    it("U13 a type that is not a string is an EventDecodeError", () => {
      for (const type of [3, null]) {
        decodeError("complete", completeData({ type, total_cost: 0 }))
        refusal("complete", completeData({ type, total_cost: 0 }))
      }
    })

    it("U13 parseJsonResponse parses a JSON response on demand", () => {
      const complete = asComplete(
        decodeOk("complete", completeData({ type: "JSON", response: "{\"items\":[1,2]}", total_cost: 1 }))
      )
      assert.deepStrictEqual(successOf(SessionEvent.parseJsonResponse(complete)), { items: [1, 2] })
      assert.deepStrictEqual(successOf(SessionEvent.Complete.parseJson(complete)), { items: [1, 2] })
      // Any type may be parsed: a STRING that happens to be JSON parses too.
      const text = asComplete(decodeOk("complete", completeData({ response: "42", total_cost: 1 })))
      assert.strictEqual(successOf(SessionEvent.parseJsonResponse(text)), 42)
    })

    it("U13 a response that is not JSON fails with ResponseParseError, raw cut to 4 KiB", () => {
      const complete = asComplete(decodeOk("complete", completeData({ type: "JSON", response: "{not json", total_cost: 1 })))
      const error = failureIn(SessionEvent.Complete.parseJson(complete))
      if (error === undefined) return assert.fail("expected ResponseParseError")
      assert.strictEqual(error._tag, "ResponseParseError")
      assert.strictEqual(error.raw, "{not json")
      assert.isAbove(error.message.length, 0)

      const long = asComplete(decodeOk("complete", completeData({ response: "x".repeat(10_000), total_cost: 1 })))
      const longError = failureIn(SessionEvent.parseJsonResponse(long))
      if (longError === undefined) return assert.fail("expected ResponseParseError")
      assert.strictEqual(longError.raw.length, 4096)
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

    it("U14 a negative total_cost is an EventDecodeError", () => {
      const error = decodeError("complete", completeData({ total_cost: -0.01 }))
      assert.strictEqual(error.event, "complete")
      assert.include(error.message, "negative")
      assert.include(refusal("complete", completeData({ total_cost: -0.01 })), "negative")
    })

    it("U14 NaN-ish total_cost (a string, null, Infinity via 1e999) is an EventDecodeError", () => {
      for (const cost of ["NaN", "1.5", null, true, {}]) {
        decodeError("complete", completeData({ total_cost: cost }))
        refusal("complete", completeData({ total_cost: cost }))
      }
      // JSON cannot carry NaN or Infinity: 1e999 parses to Infinity.
      assert.include(refusal("complete", completeData({ total_cost: JSON.parse("1e999") })), "finite")
      const frame = `{"event":"complete","data":{"response":"r","type":"STRING","session_id":"s","total_cost":1e999}}`
      const error = failureIn(decode(frame))
      if (error === undefined) return assert.fail("expected EventDecodeError")
      assert.strictEqual(error._tag, "EventDecodeError")
      assert.include(error.message, "finite")
      assert.strictEqual(failureIn(decode(frame.replace("1e999", "-1e999")))?._tag, "EventDecodeError")
    })

    it("U14 a missing total_cost is an EventDecodeError without cost_summary", () => {
      assert.include(decodeError("complete", completeData({})).message, "total_cost")
      assert.include(refusal("complete", completeData({})), "total_cost")
    })

    it("U14 a missing total_cost is allowed when the observed cost_summary is present", () => {
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
    })

    it("U14 a cost_summary that is not an object is an EventDecodeError", () => {
      for (const summary of [3, null]) {
        decodeError("complete", completeData({ cost_summary: summary }))
        refusal("complete", completeData({ cost_summary: summary }))
      }
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
      const admin = asRequest(decodeOk("external_resource_requested", request({})))
      assert.strictEqual(admin.resource_type, "admin_permission_request")
      const other = asRequest(decodeOk("external_resource_requested", request({ resource_type: "captcha" })))
      assert.deepStrictEqual(other.resource_type, { _tag: "Unrecognized", raw: "captcha" })
      assert.strictEqual(SessionEvent.resourceTypeRaw(other.resource_type), "captcha")
      assert.strictEqual(SessionEvent.resourceTypeRaw(admin.resource_type), "admin_permission_request")
      decodeError("external_resource_requested", request({ resource_type: 1 }))
      refusal("external_resource_requested", request({ resource_type: 1 }))
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
      refusal("external_resource_requested", request({ field_name: 5 }))
    })

    it("U15 external_resource_granted: input is optional and applies only when granted", () => {
      const granted = decodeOk("external_resource_granted", { granted: true, input: "jane" })
      assert.deepStrictEqual(granted, { _tag: "ExternalResourceGranted", granted: true, input: Option.some("jane") } as never)
      const denied = decodeOk("external_resource_granted", { granted: false })
      assert.deepStrictEqual(denied, { _tag: "ExternalResourceGranted", granted: false, input: Option.none() } as never)
      decodeError("external_resource_granted", { granted: "yes" })
      refusal("external_resource_granted", { granted: "yes" })
    })
  })

  describe("combinators and guards", () => {
    const events = examples.map(([name, data]) => decodeOk(name, data))

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

    it("$is narrows to one tag", () => {
      for (const [, , tag] of examples) {
        const matching = events.filter(SessionEvent.$is(tag))
        assert.strictEqual(matching.length, 1, tag)
        assert.strictEqual(matching[0]?._tag, tag)
      }
    })

    it("isTerminal is true for complete only; isChargeable for action_run only", () => {
      assert.deepStrictEqual(events.filter(SessionEvent.isTerminal).map((e) => e._tag), ["Complete"])
      assert.deepStrictEqual(events.filter(SessionEvent.isChargeable).map((e) => e._tag), ["ActionRun"])
    })

    it.prop(
      "isTerminal, isChargeable and $is agree with the tag for any event",
      [typeSchema(SessionEvent.SessionEvent)],
      ([event]) => {
        assert.strictEqual(SessionEvent.isTerminal(event), event._tag === "Complete")
        assert.strictEqual(SessionEvent.isChargeable(event), event._tag === "ActionRun")
        assert.isTrue(SessionEvent.$is(event._tag)(event))
        assert.isFalse(SessionEvent.$is(event._tag === "Heartbeat" ? "Connected" : "Heartbeat")(event))
      },
      propRuns(300, 11)
    )
  })
})
