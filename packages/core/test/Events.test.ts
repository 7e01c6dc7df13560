import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { Events } from "../src/index.js"

describe("Events: the names of the wire", () => {
  it("each known tag has its own wire name, and only those names are known", () => {
    const names = Object.values(Events.wireNames)
    expect(new Set(names).size).toBe(names.length)
    for (const name of names) expect(Events.isWireName(name), name).toBe(true)
    expect(Events.wireNames.AgentError).toBe("error")
    expect(Events.wireNames.ActionRun).toBe("action_run")
    fc.assert(fc.property(fc.string(), (name) => {
      expect(Events.isWireName(name)).toBe((names as ReadonlyArray<string>).includes(name))
    }))
  })

  it("U13 U15 the open enumerations name the document's values", () => {
    expect(Events.responseTypes).toEqual(["STRING", "JSON", "MARKDOWN"])
    expect(Events.resourceTypes).toEqual(["request_user_input", "admin_permission_request"])
  })

  it("the wire string of an open value: a known one as is, an unrecognized one its raw string", () => {
    expect(Events.rawOf("JSON")).toBe("JSON")
    const unrecognized = { _tag: "Unrecognized", raw: "XML" } as const
    expect(Events.rawOf(unrecognized)).toBe("XML")
  })
})

describe("Events: the cost (U14)", () => {
  it("U14 a cost is a finite number that is not negative, without a unit", () => {
    expect([0, 0.5, 12, Number.MAX_VALUE].map(Events.isCost)).toEqual([true, true, true, true])
    expect([-0.01, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY].map(Events.isCost)).toEqual([
      false,
      false,
      false,
      false
    ])
  })

  it("U14 total_cost first, else the observed cost_summary's total_cost or total when it is a cost", () => {
    expect(Events.totalCost(0.3, { total_cost: 9 })).toBe(0.3)
    expect(Events.totalCost(undefined, { total_cost: 0.4, total: 9 })).toBe(0.4)
    expect(Events.totalCost(undefined, { total: 0.5 })).toBe(0.5)
    expect(Events.totalCost(undefined, { total_cost: "0.4" })).toBeUndefined()
    expect(Events.totalCost(undefined, { total_cost: -1 })).toBeUndefined()
    expect(Events.totalCost(undefined, { total: Number.POSITIVE_INFINITY })).toBeUndefined()
    expect(Events.totalCost(undefined, {})).toBeUndefined()
    expect(Events.totalCost(undefined, undefined)).toBeUndefined()
  })

  it("U14 the refusals name total_cost", () => {
    expect(Events.costMessages.notFinite).toContain("total_cost")
    expect(Events.costMessages.negative).toContain("total_cost")
    expect(Events.missingCostMessage).toBe("complete needs total_cost or cost_summary")
  })
})

describe("Events: a complete response as JSON (U13)", () => {
  it("U13 JSON text parses whatever its type; other text says why, and nothing throws", () => {
    expect(Events.parseResponse(`{"a":[1,2]}`)).toEqual({ _tag: "Parsed", value: { a: [1, 2] } })
    expect(Events.parseResponse("null")).toEqual({ _tag: "Parsed", value: null })
    const bad = Events.parseResponse("Done.")
    expect(bad._tag).toBe("NotJson")
    expect(bad._tag === "NotJson" && bad.message.length > 0).toBe(true)
    fc.assert(fc.property(fc.string(), (text) => {
      const parsed = Events.parseResponse(text)
      expect(parsed._tag === "Parsed" || parsed.message.length > 0).toBe(true)
    }))
  })
})

describe("Events.codecs: payloads by wire name and back", () => {
  type Event = { readonly _tag: string; readonly [k: string]: unknown }
  const asked: Array<string> = []
  const codecs = Events.codecs<Event, unknown>({
    decoder: (tag) => {
      asked.push(`decode ${tag}`)
      return (input) => input
    },
    encoder: (tag) => {
      asked.push(`encode ${tag}`)
      return (event) => event
    }
  })

  it("a known name's object payload is decoded with the SDK's tag; any other payload as it is", () => {
    expect(codecs.decode("action_run", { name: "n" })).toStrictEqual({ name: "n", _tag: "ActionRun" })
    expect(codecs.decode("action_run", { _tag: "Started" })).toStrictEqual({ _tag: "ActionRun" })
    expect(codecs.decode("action_run", [1])).toStrictEqual([1])
    expect(codecs.decode("action_run", null)).toBeNull()
    expect(codecs.decode("no_such_event", {})).toBeUndefined()
    expect(codecs.decode("ActionRun", {})).toBeUndefined()
  })

  it("an event goes out under its wire name without its tag; an unknown one as it came", () => {
    expect(codecs.toWire({ _tag: "ExternalResourceGranted", granted: true })).toStrictEqual({
      event: "external_resource_granted",
      payload: { granted: true }
    })
    expect(codecs.toWire({ _tag: "Unrecognized", event: "x_new", payload: [1, 2] })).toStrictEqual({
      event: "x_new",
      payload: [1, 2]
    })
  })

  it("each tag's decoder and encoder is asked for once, on first use", () => {
    codecs.decode("action_run", {})
    codecs.toWire({ _tag: "ExternalResourceGranted", granted: false })
    expect(asked).toStrictEqual(["decode ActionRun", "encode ExternalResourceGranted"])
  })
})
