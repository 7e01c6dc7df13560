import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { type Dialect, Frame } from "../src/index.js"

type Out =
  | { readonly kind: "plain"; readonly event: Record<string, unknown> }
  | { readonly kind: "event"; readonly name: string; readonly payload: unknown }
  | { readonly kind: "too-large"; readonly size: number; readonly limit: number }
  | { readonly kind: "malformed"; readonly message: string }

const plainEvents: ReadonlyArray<Frame.PlainEvent> = [
  { name: "action_run", tag: "ActionRun", fields: ["name", "action_session_id", "content"] },
  { name: "heartbeat", tag: "Heartbeat", fields: [] },
  { name: "event_named", tag: "EventNamed", fields: ["event"] }
]

const reader = (framing: Dialect.Framing, options: Frame.ReadOptions = {}) =>
  Frame.makeFrameReader<Out>(framing, options, {
    plain: Frame.plainDecoders(framing, plainEvents, (event): Out => ({ kind: "plain", event })),
    event: (name, payload) => ({ kind: "event", name, payload }),
    tooLarge: (size, limit) => ({ kind: "too-large", size, limit }),
    malformed: (_text, message) => ({ kind: "malformed", message })
  })

describe("Frame.makeFrameReader", () => {
  it("a named event (SSE) reads as the event-data frame of its name and data would, empty data as {}", () => {
    const named = reader("event-data").named
    expect(named("x", `{"a":1}`)).toEqual({ kind: "event", name: "x", payload: { a: 1 } })
    expect(named("heartbeat", "")).toEqual({ kind: "plain", event: { _tag: "Heartbeat" } })
    expect(named("we\"ird", "")).toEqual({ kind: "event", name: "we\"ird", payload: {} })
    expect(named("action_run", `{"name":"n","action_session_id":"a","content":"c"}`)).toEqual({
      kind: "plain",
      event: { _tag: "ActionRun", name: "n", action_session_id: "a", content: "c" }
    })
    expect(named("x", "{")).toEqual({ kind: "malformed", message: "not JSON" })
    expect(named("", "{}")).toEqual({ kind: "malformed", message: `no "event" naming the event` })
    expect(reader("event-data", { maxFrameSize: 8 }).named("x", `{"a":"123456"}`)).toEqual({ kind: "too-large", size: 14, limit: 8 })
    expect(reader("event-data", { maxDepth: 3 }).named("x", "[[[1]]]")).toEqual({
      kind: "malformed",
      message: "nested deeper than 3 levels"
    })
    expect(reader("event-data", { maxDepth: 3 }).named("x", "[[1]]")).toEqual({ kind: "event", name: "x", payload: [[1]] })
  })

  it("a named event's data cannot rename the event or add members: it is one JSON value or malformed", () => {
    // Spliced into a frame as text, this data would have named the event "other".
    expect(reader("event-data").named("x", `1,"event":"other","data":{"a":1}`)).toEqual({ kind: "malformed", message: "not JSON" })
  })

  it("for any JSON data, a named event reads as its event-data frame", () => {
    const names = fc.constantFrom("action_run", "heartbeat", "event_named", "x", "")
    fc.assert(
      fc.property(names, fc.option(fc.json(), { nil: undefined }), (name, json) => {
        const data = json ?? ""
        const frame = `{"event":${JSON.stringify(name)},"data":${data.length === 0 ? "{}" : data}}`
        const read = reader("event-data", { maxDepth: 4 })
        expect(read.named(name, data)).toEqual(read(frame))
      })
    )
  })

  it("reads the name and payload of each framing (U09)", () => {
    expect(reader("event-data")(`{"event":"x","data":{"a":1}}`)).toEqual({ kind: "event", name: "x", payload: { a: 1 } })
    expect(reader("type-data")(`{"type":"x","data":[1]}`)).toEqual({ kind: "event", name: "x", payload: [1] })
    expect(reader("flat")(`{"event":"x","a":1}`)).toEqual({ kind: "event", name: "x", payload: { a: 1 } })
    expect(reader("event-data")(`{"event":"x"}`)).toEqual({ kind: "event", name: "x", payload: undefined })
  })

  it("plain events are copied field by field with their tag, excess members dropped", () => {
    const frame = `{"event":"action_run","data":{"name":"n","action_session_id":"a","content":"c","extra":[[[1]]]}}`
    expect(reader("event-data")(frame)).toEqual({
      kind: "plain",
      event: { _tag: "ActionRun", name: "n", action_session_id: "a", content: "c" }
    })
    expect(reader("event-data")(`{"event":"heartbeat"}`)).toEqual({ kind: "plain", event: { _tag: "Heartbeat" } })
    // A field that is not a string: the edition's schema decides (and says why).
    expect(reader("event-data")(`{"event":"action_run","data":{"name":1}}`)).toMatchObject({ kind: "event" })
    // In the flat framing an event with a field named `event` has no plain decoder.
    expect(reader("flat")(`{"event":"event_named"}`)).toMatchObject({ kind: "event", name: "event_named" })
  })

  it("refuses a frame over the size bound in UTF-8 bytes, exactly at the bound it reads (U22)", () => {
    const read = reader("event-data", { maxFrameSize: 30 })
    const at = `{"event":"x","data":"${"é".repeat(2)}"}`
    expect(Frame.utf8Size(at)).toBeLessThanOrEqual(30)
    expect(read(at)).toMatchObject({ kind: "event" })
    expect(read(`{"event":"x","data":"${"é".repeat(5)}"}`)).toEqual({ kind: "too-large", size: 33, limit: 30 })
    expect(read(new Uint8Array(31))).toEqual({ kind: "too-large", size: 31, limit: 30 })
  })

  // Guards: the bound off by one (a frame of exactly maxFrameSize refused), in each of its three
  // measures: UTF-16 units, UTF-8 bytes of a text, bytes of a binary frame.
  it("a frame of exactly maxFrameSize bytes is read, one byte more is too large: ASCII, multi-byte and binary (U22)", () => {
    const framed = (data: string) => `{"event":"x","data":"${data}"}`
    const limit = framed("").length + 12
    const read = reader("event-data", { maxFrameSize: limit })
    const ascii = framed("a".repeat(12))
    expect(ascii.length).toBe(limit)
    expect(read(ascii)).toEqual({ kind: "event", name: "x", payload: "a".repeat(12) })
    expect(read(framed("a".repeat(13)))).toEqual({ kind: "too-large", size: limit + 1, limit })
    // 12 bytes of UTF-8 in 5 UTF-16 units (é is 2 bytes, € 3).
    const multi = framed("ééé€€")
    expect(Frame.utf8Size(multi)).toBe(limit)
    expect(read(multi)).toEqual({ kind: "event", name: "x", payload: "ééé€€" })
    expect(read(framed("ééé€€a"))).toEqual({ kind: "too-large", size: limit + 1, limit })
    const bytes = new TextEncoder().encode(ascii)
    expect(read(bytes)).toEqual({ kind: "event", name: "x", payload: "a".repeat(12) })
    expect(read(new TextEncoder().encode(framed("a".repeat(13))))).toEqual({ kind: "too-large", size: limit + 1, limit })
    expect(Frame.sizeOver(ascii, limit)).toBeUndefined()
    expect(Frame.sizeOver(multi, limit)).toBeUndefined()
    expect(Frame.sizeOver(`${ascii} `, limit)).toBe(limit + 1)
  })

  it("malformed frames: not JSON, not an object, no name, too deep (short and long)", () => {
    const read = reader("event-data", { maxDepth: 3 })
    expect(read("{")).toEqual({ kind: "malformed", message: "not JSON" })
    expect(read("[1]")).toEqual({ kind: "malformed", message: "not a JSON object" })
    expect(read(`{"event":""}`)).toEqual({ kind: "malformed", message: `no "event" naming the event` })
    expect(read(`{"event":"x","data":[[[[1]]]]}`)).toEqual({ kind: "malformed", message: "nested deeper than 3 levels" })
    const long = `{"event":"x","data":{"pad":"${"p".repeat(5000)}","deep":[[[[1]]]]}}`
    expect(read(long)).toEqual({ kind: "malformed", message: "nested deeper than 3 levels" })
    expect(reader("type-data")(`{"event":"x"}`)).toEqual({ kind: "malformed", message: `no "type" naming the event` })
  })

  it("a frame encoded in a framing reads back as its name and payload (property)", () => {
    const framing = fc.constantFrom<Dialect.Framing>("event-data", "type-data", "flat")
    const payload = fc.dictionary(fc.string().filter((k) => k !== "event" && k !== "__proto__"), fc.jsonValue())
    fc.assert(fc.property(framing, fc.string({ minLength: 1 }), payload, (f, name, data) => {
      const out = Frame.makeFrameReader<Out>(f, { maxDepth: 1000 }, {
        plain: new Map(),
        event: (n, p) => ({ kind: "event", name: n, payload: p }),
        tooLarge: (size, limit) => ({ kind: "too-large", size, limit }),
        malformed: (_t, message) => ({ kind: "malformed", message })
      })(Frame.encodeFrame(f, name, data))
      expect(out).toEqual({ kind: "event", name, payload: JSON.parse(JSON.stringify(data)) })
    }))
  })
})

describe("Frame answers and client frames (U08, U16)", () => {
  it("the answer payload and frame of each answer key", () => {
    const grant = Frame.answerData({ granted: true, resourceType: "request_user_input", actionSessionId: "a", fieldName: "email", input: "x@y" })
    expect(grant).toEqual({ granted: true, resource_type: "request_user_input", action_session_id: "a", field_name: "email", input: "x@y" })
    // A denial carries no input, whatever was given.
    expect(Frame.answerData({ granted: false, resourceType: "r", actionSessionId: "a", input: "x" })).toEqual({
      granted: false,
      resource_type: "r",
      action_session_id: "a"
    })
    expect(JSON.parse(Frame.encodeAnswer("type", grant))).toEqual({ type: "external_resource_granted", data: grant })
    expect(JSON.parse(Frame.encodeAnswer("event", grant))).toEqual({ event: "external_resource_granted", data: grant })
  })

  it("reads what a client sent: an answer, a handshake candidate, or why neither", () => {
    expect(Frame.readClientFrame(Frame.handshakeMessage("k", "s"))).toEqual({
      _tag: "Handshake",
      value: { apiKey: "k", sessionId: "s" }
    })
    expect(Frame.readClientFrame(`{"type":"external_resource_granted","data":{"granted":true}}`)).toEqual({
      _tag: "Answer",
      data: { granted: true }
    })
    expect(Frame.readClientFrame("x".repeat(11), { maxFrameSize: 10 })).toEqual({ _tag: "TooLarge", size: 11, limit: 10 })
    // Exactly at the bound: read.
    expect(Frame.readClientFrame(`{"a":"${"x".repeat(2)}"}`, { maxFrameSize: 10 })).toEqual({ _tag: "Handshake", value: { a: "xx" } })
    expect(Frame.readClientFrame("[[[]]]", { maxDepth: 2 })).toEqual({ _tag: "Malformed", message: "nested deeper than 2 levels" })
    expect(Frame.readClientFrame("nope")).toEqual({ _tag: "Malformed", message: "not JSON" })
    expect(Frame.readClientFrame("1")).toEqual({ _tag: "Malformed", message: "not a JSON object" })
  })
})

describe("Frame.plainEventOf", () => {
  type Property = { readonly name: string; readonly kind: "literal" | "string" | "number" }
  const classify = (p: Property): Frame.PlainProperty =>
    p.name === "_tag" && p.kind === "literal" ? { tag: "ActionRun" } : p.kind === "string" ? { field: p.name } : undefined

  it("a known tag with string fields only gives its wire name, tag and fields", () => {
    const props: Array<Property> = [
      { name: "_tag", kind: "literal" },
      { name: "name", kind: "string" },
      { name: "content", kind: "string" }
    ]
    expect(Frame.plainEventOf(props, classify)).toStrictEqual({
      name: "action_run",
      tag: "ActionRun",
      fields: ["name", "content"]
    })
  })

  it("a field of another kind, no tag, or an unknown tag gives none", () => {
    expect(Frame.plainEventOf([{ name: "_tag", kind: "literal" }, { name: "n", kind: "number" }], classify))
      .toBeUndefined()
    expect(Frame.plainEventOf<Property>([{ name: "a", kind: "string" }], classify)).toBeUndefined()
    expect(Frame.plainEventOf(["x"], () => ({ tag: "Unrecognized" }))).toBeUndefined()
    expect(Frame.plainEventOf(["x"], () => ({ tag: "toString" }))).toBeUndefined()
    expect(Frame.plainEventOf(["x"], () => ({ tag: "Heartbeat" }))).toStrictEqual({
      name: "heartbeat",
      tag: "Heartbeat",
      fields: []
    })
  })
})
