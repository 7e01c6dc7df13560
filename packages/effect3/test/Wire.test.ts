import { afterAll, assert, describe, it } from "@effect/vitest"
import * as Arbitrary from "effect/Arbitrary"
import * as Either from "effect/Either"
import * as FastCheck from "effect/FastCheck"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as Answer from "../src/Answer.js"
import * as Dialect from "../src/Dialect.js"
import type { FrameError } from "../src/Errors.js"
import * as SessionEvent from "../src/SessionEvent.js"
import * as Wire from "../src/Wire.js"

const framings: ReadonlyArray<Dialect.Framing> = ["event-data", "type-data", "flat"]
const frameErrorTags: ReadonlySet<string> = new Set(["MalformedFrame", "EventDecodeError", "FrameTooLarge", "UnknownEvent"])
const isSessionEvent = Schema.is(SessionEvent.SessionEvent)
const encoder = new TextEncoder()
const utf8 = (text: string): number => encoder.encode(text).byteLength

/** Every generated frame decoded by the properties below, to prove the suite's volume. */
let generatedFrames = 0

const eventArb = Arbitrary.make(SessionEvent.SessionEvent)
const framingArb = FastCheck.constantFrom(...framings)
const knownNames = Object.values(SessionEvent.wireNames)

/**
 * The total-decoding property: a frame gives a valid event or one of the four frame errors,
 * with `raw` a prefix of the frame and at most 4 KiB. Never a thrown exception.
 */
const assertTotal = (
  frame: string | Uint8Array,
  result: Either.Either<SessionEvent.SessionEvent, FrameError>
): void => {
  generatedFrames += 1
  if (Either.isRight(result)) {
    assert.isTrue(isSessionEvent(result.right), `not a valid event: ${JSON.stringify(result.right)}`)
    return
  }
  const error = result.left
  assert.isTrue(frameErrorTags.has(error._tag), error._tag)
  if ("raw" in error) {
    assert.isAtMost(error.raw.length, 4096)
    if (typeof frame === "string") assert.isTrue(frame.startsWith(error.raw), "raw is the frame's beginning")
  }
}

const decodeAll = (frame: string): void => {
  for (const framing of framings) {
    assertTotal(frame, Wire.makeDecoder(framing)(frame))
    assertTotal(frame, Wire.makeDecoder(framing, { strict: true })(frame))
  }
}

const payloadOf = (framing: Dialect.Framing, event: SessionEvent.SessionEvent): unknown =>
  framing === "flat" ? undefined : SessionEvent.toWire(event).payload

/** Events whose payload the flat framing can carry: a JSON object with no `event` key. */
const flatCarries = (event: SessionEvent.SessionEvent): boolean => {
  const { payload } = SessionEvent.toWire(event)
  return Predicate.isRecord(payload) && !Object.hasOwn(payload, "event")
}

/** A valid frame, then one of ten mutations of it. */
const mutatedFrame = FastCheck.record({
  framing: framingArb,
  event: eventArb,
  op: FastCheck.nat(9),
  junk: FastCheck.jsonValue(),
  name: FastCheck.oneof(FastCheck.string(), FastCheck.constantFrom(...knownNames)),
  n: FastCheck.nat()
}).map(({ event, framing, junk, n, name, op }) => {
  const text = Wire.encodeEvent(framing, event)
  const frame = JSON.parse(text) as Record<string, unknown>
  const nameKey = framing === "type-data" ? "type" : "event"
  const data = framing === "flat" ? frame : frame["data"]
  const payload: Record<string, unknown> | undefined = Predicate.isRecord(data) ? data : undefined
  const keys = payload === undefined ? [] : Object.keys(payload).filter((k) => k !== nameKey)
  const key = keys.length > 0 ? keys[n % keys.length] : undefined
  switch (op) {
    case 0: // drop a field
      if (payload !== undefined && key !== undefined) delete payload[key]
      break
    case 1: // a field of the wrong type
      if (payload !== undefined) payload[key ?? "field"] = junk
      break
    case 2: // null data
      frame["data"] = null
      break
    case 3: // junk data
      frame["data"] = junk
      break
    case 4: // another name, known or not
      frame[nameKey] = name
      break
    case 5: // no name
      delete frame[nameKey]
      break
    case 6: // nested junk beside the fields
      frame["junk"] = { deeper: [junk, { junk }] }
      if (payload !== undefined) payload["nested"] = [[junk]]
      break
    case 7: // cut short
      return text.slice(0, n % (text.length + 1))
    case 8: // not an object
      return JSON.stringify([frame, junk])
    case 9: // a name that is not a string
      frame[nameKey] = junk
      break
  }
  return JSON.stringify(frame)
})

/**
 * The decode of a frame by the schemas alone (`SessionEvent.decodePayload`), for frames that are
 * JSON objects naming a known event: the reference the decoder's fast path must agree with.
 */
const schemaOnly = (framing: Dialect.Framing, text: string): SessionEvent.PayloadResult | undefined => {
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return undefined
  }
  const nameKey = framing === "type-data" ? "type" : "event"
  if (!Predicate.isRecord(parsed)) return undefined
  const name = parsed[nameKey]
  if (typeof name !== "string" || !SessionEvent.isWireName(name)) return undefined
  const { [nameKey]: _name, ...rest } = parsed
  const payload = framing === "flat" ? rest : parsed["data"]
  return Option.getOrUndefined(SessionEvent.decodePayload(name, payload ?? {}))
}

/** A frame with excess properties added beside the payload's fields (and beside the frame's). */
const withExcess = (framing: Dialect.Framing, text: string, extra: Record<string, unknown>): string => {
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return text
  }
  if (!Predicate.isRecord(parsed)) return text
  const nameKey = framing === "type-data" ? "type" : "event"
  const { [nameKey]: _drop, ...safeExtra } = extra
  if (framing === "flat") return JSON.stringify({ ...safeExtra, ...parsed })
  const data = parsed["data"]
  return JSON.stringify({ ...safeExtra, ...parsed, data: Predicate.isRecord(data) ? { ...safeExtra, ...data } : data })
}

describe("Wire", () => {
  describe("Codec properties", () => {
    for (const framing of framings) {
      it.prop(
        `encodeEvent then makeDecoder is the identity (${framing})`,
        [framing === "flat" ? eventArb.filter(flatCarries) : eventArb],
        ([event]) => {
          const decoder = Wire.makeDecoder(framing)
          const strict = Wire.makeDecoder(framing, { strict: true })
          const frame = Wire.encodeEvent(framing, event)
          generatedFrames += 3
          assert.deepStrictEqual(decoder(frame), Either.right(event))
          assert.deepStrictEqual(decoder(encoder.encode(frame)), Either.right(event))
          const strictResult = strict(frame)
          if (event._tag === "Unrecognized") {
            assert.isTrue(Either.isLeft(strictResult) && strictResult.left._tag === "UnknownEvent")
          } else {
            assert.deepStrictEqual(strictResult, Either.right(event))
          }
          if (framing !== "flat") assert.deepStrictEqual(JSON.parse(frame).data, payloadOf(framing, event))
        },
        { fastCheck: { numRuns: 700, seed: 1 } }
      )
    }

    it.prop("arbitrary strings never throw", [FastCheck.string({ unit: "binary", maxLength: 200 })], ([text]) => {
      decodeAll(text)
    }, { fastCheck: { numRuns: 400, seed: 2 } })

    it.prop("arbitrary JSON text never throws", [FastCheck.json()], ([text]) => {
      decodeAll(text)
    }, { fastCheck: { numRuns: 400, seed: 3 } })

    it.prop(
      "arbitrary JSON objects naming a known or unknown event never throw",
      [
        FastCheck.oneof(FastCheck.constantFrom(...knownNames), FastCheck.string()),
        FastCheck.jsonValue(),
        FastCheck.dictionary(FastCheck.string(), FastCheck.jsonValue(), { maxKeys: 4 })
      ],
      ([name, data, extra]) => {
        decodeAll(JSON.stringify({ ...extra, event: name, data }))
        decodeAll(JSON.stringify({ ...extra, type: name, data }))
        decodeAll(JSON.stringify({ ...(Predicate.isRecord(data) ? data : { data }), event: name }))
      },
      { fastCheck: { numRuns: 300, seed: 4 } }
    )

    it.prop("mutations of valid frames give an event or a typed frame error", [mutatedFrame], ([frame]) => {
      decodeAll(frame)
      assertTotal(encoder.encode(frame), Wire.makeDecoder("event-data")(encoder.encode(frame)))
    }, { fastCheck: { numRuns: 700, seed: 5 } })

    it.prop(
      "the fast decode of plain-string events is exactly the schema's: same events (same keys, same order), same errors",
      [mutatedFrame, FastCheck.dictionary(FastCheck.string(), FastCheck.jsonValue(), { maxKeys: 3 })],
      ([frame, extra]) => {
        for (const framing of framings) {
          // With excess properties beside the fields as well (they must be dropped).
          for (const text of [frame, withExcess(framing, frame, extra)]) {
            const reference = schemaOnly(framing, text)
            if (reference === undefined) continue
            const result = Wire.makeDecoder(framing)(text)
            generatedFrames += 1
            if (Either.isRight(reference)) {
              assert.isTrue(Either.isRight(result), text)
              if (Either.isRight(result)) {
                assert.deepStrictEqual(result.right, reference.right)
                assert.deepStrictEqual(Object.keys(result.right), Object.keys(reference.right))
              }
            } else {
              assert.isTrue(Either.isLeft(result) && result.left._tag === "EventDecodeError", text)
              if (Either.isLeft(result) && result.left._tag === "EventDecodeError") {
                assert.strictEqual(result.left.message, reference.left)
              }
            }
          }
        }
      },
      { fastCheck: { numRuns: 500, seed: 7 } }
    )

    it.prop(
      "a frame over the limit is FrameTooLarge, whatever it holds",
      [FastCheck.string({ unit: "binary", minLength: 1, maxLength: 64 })],
      ([text]) => {
        const limit = utf8(text) - 1
        const result = Wire.makeDecoder("event-data", { maxFrameSize: limit })(text)
        generatedFrames += 1
        assert.isTrue(Either.isLeft(result) && result.left._tag === "FrameTooLarge")
      },
      { fastCheck: { numRuns: 300, seed: 6 } }
    )

    afterAll(() => {
      // The properties above decode well over 10,000 generated frames.
      assert.isAtLeast(generatedFrames, 10_000)
    })
  })

  describe("U09 framing", () => {
    const started = { sessionId: "s-1", start_url: "https://example.com" }
    const expected: SessionEvent.SessionEvent = { _tag: "Started", ...started } as SessionEvent.Started

    it("U09 event-data reads { event, data }", () => {
      const decode = Wire.makeDecoder("event-data")
      assert.deepStrictEqual(decode(JSON.stringify({ event: "started", data: started })), Either.right(expected))
      assert.strictEqual(Wire.encodeEvent("event-data", expected), JSON.stringify({ event: "started", data: started }))
    })

    it("U09 type-data reads { type, data }", () => {
      const decode = Wire.makeDecoder("type-data")
      assert.deepStrictEqual(decode(JSON.stringify({ type: "started", data: started })), Either.right(expected))
      assert.strictEqual(Wire.encodeEvent("type-data", expected), JSON.stringify({ type: "started", data: started }))
      const wrongKey = decode(JSON.stringify({ event: "started", data: started }))
      assert.isTrue(Either.isLeft(wrongKey) && wrongKey.left._tag === "MalformedFrame")
    })

    it("U09 flat reads { event, ...payload }", () => {
      const decode = Wire.makeDecoder("flat")
      assert.deepStrictEqual(decode(JSON.stringify({ event: "started", ...started })), Either.right(expected))
      assert.deepStrictEqual(JSON.parse(Wire.encodeEvent("flat", expected)), { event: "started", ...started })
      // A wrapped frame read as flat has no payload fields at the top.
      const wrapped = decode(JSON.stringify({ event: "started", data: started }))
      assert.isTrue(Either.isLeft(wrapped) && wrapped.left._tag === "EventDecodeError")
    })

    it("U09 flat carries only object payloads: another payload of an unknown event comes back under data", () => {
      const event = { _tag: "Unrecognized", event: "new_event", payload: [1, 2] } as SessionEvent.Unrecognized
      const frame = Wire.encodeEvent("flat", event)
      assert.deepStrictEqual(JSON.parse(frame), { data: [1, 2], event: "new_event" })
      assert.deepStrictEqual(
        Wire.makeDecoder("flat")(frame),
        Either.right({ _tag: "Unrecognized", event: "new_event", payload: { data: [1, 2] } } as SessionEvent.SessionEvent)
      )
    })

    it("U09 decodeFrame is makeDecoder for one frame", () => {
      assert.deepStrictEqual(
        Wire.decodeFrame("event-data", JSON.stringify({ event: "started", data: started })),
        Either.right(expected)
      )
    })

    it("U09 not JSON, not an object, or no event name is MalformedFrame with the raw frame", () => {
      const decode = Wire.makeDecoder("event-data")
      const cases: ReadonlyArray<readonly [string, string]> = [
        ["{oops", "not JSON"],
        ["", "not JSON"],
        ["[1,2]", "not a JSON object"],
        ["\"started\"", "not a JSON object"],
        ["null", "not a JSON object"],
        ["42", "not a JSON object"],
        ["{}", "no \"event\""],
        ["{\"event\":1,\"data\":{}}", "no \"event\""],
        ["{\"event\":\"\",\"data\":{}}", "no \"event\""],
        ["{\"event\":null}", "no \"event\""]
      ]
      for (const [frame, message] of cases) {
        const result = decode(frame)
        if (Either.isRight(result) || result.left._tag !== "MalformedFrame") {
          return assert.fail(`${frame}: expected MalformedFrame`)
        }
        assert.strictEqual(result.left.raw, frame)
        assert.include(result.left.message, message, frame)
      }
      const typeData = Wire.makeDecoder("type-data")("{}")
      assert.isTrue(Either.isLeft(typeData) && typeData.left.message.includes("no \"type\""))
    })

    it("U09 MalformedFrame keeps at most the first 4 KiB", () => {
      const frame = `{"event":"started", ${"x".repeat(10_000)}`
      const result = Wire.makeDecoder("event-data")(frame)
      if (Either.isRight(result) || result.left._tag !== "MalformedFrame") return assert.fail("expected MalformedFrame")
      assert.strictEqual(result.left.raw, frame.slice(0, 4096))
    })

    it("U09 a known name with a bad payload is EventDecodeError { event, raw } cut to 4 KiB", () => {
      const frame = JSON.stringify({ event: "started", data: { sessionId: 1, junk: "x".repeat(10_000) } })
      const result = Wire.makeDecoder("event-data")(frame)
      if (Either.isRight(result) || result.left._tag !== "EventDecodeError") return assert.fail("expected EventDecodeError")
      assert.strictEqual(result.left.event, "started")
      assert.strictEqual(result.left.raw.length, 4096)
      assert.strictEqual(result.left.raw, frame.slice(0, 4096))
      assert.include(result.left.message, "sessionId")
    })

    it("U09 a known name without data decodes an empty payload: fine for heartbeat, an error for started", () => {
      const decode = Wire.makeDecoder("event-data")
      assert.deepStrictEqual(decode("{\"event\":\"heartbeat\"}"), Either.right({ _tag: "Heartbeat" } as SessionEvent.SessionEvent))
      assert.deepStrictEqual(
        decode("{\"event\":\"connected\",\"data\":null}"),
        Either.right({ _tag: "Connected" } as SessionEvent.SessionEvent)
      )
      const started = decode("{\"event\":\"started\"}")
      assert.isTrue(Either.isLeft(started) && started.left._tag === "EventDecodeError")
      const array = decode("{\"event\":\"heartbeat\",\"data\":[]}")
      assert.isTrue(Either.isLeft(array) && array.left._tag === "EventDecodeError")
    })

    it("U09 an unknown name is the Unrecognized event, payload kept as sent", () => {
      const result = Wire.makeDecoder("event-data")(JSON.stringify({ event: "new_event", data: { a: [1, { b: null }] } }))
      assert.deepStrictEqual(
        result,
        Either.right({ _tag: "Unrecognized", event: "new_event", payload: { a: [1, { b: null }] } } as SessionEvent.SessionEvent)
      )
    })

    it("U09 an unknown name is UnknownEvent in strict mode; known names still decode", () => {
      const strict = Wire.makeDecoder("event-data", { strict: true })
      const frame = JSON.stringify({ event: "new_event", data: {} })
      const result = strict(frame)
      if (Either.isRight(result) || result.left._tag !== "UnknownEvent") return assert.fail("expected UnknownEvent")
      assert.strictEqual(result.left.event, "new_event")
      assert.strictEqual(result.left.raw, frame)
      assert.include(result.left.message, "new_event")
      assert.isTrue(Either.isRight(strict(JSON.stringify({ event: "heartbeat", data: {} }))))
    })
  })

  describe("U22 FrameTooLarge", () => {
    /** A valid heartbeat frame of exactly `bytes` UTF-8 bytes, padded with `filler` then ASCII. */
    const frameOfBytes = (bytes: number, filler = "a"): string => {
      const prefix = "{\"event\":\"heartbeat\",\"data\":{\"pad\":\""
      const suffix = "\"}}"
      const budget = bytes - utf8(prefix) - utf8(suffix)
      const count = Math.floor(budget / utf8(filler))
      const frame = `${prefix}${filler.repeat(count)}${"a".repeat(budget - count * utf8(filler))}${suffix}`
      assert.strictEqual(utf8(frame), bytes)
      return frame
    }

    const accepted = (decoder: Wire.FrameDecoder, frame: string | Uint8Array) => {
      const result = decoder(frame)
      assert.isTrue(Either.isRight(result) && result.right._tag === "Heartbeat", "accepted")
    }

    const refused = (decoder: Wire.FrameDecoder, frame: string | Uint8Array, limit: number, size?: number) => {
      const result = decoder(frame)
      if (Either.isRight(result) || result.left._tag !== "FrameTooLarge") return assert.fail("expected FrameTooLarge")
      assert.strictEqual(result.left.limit, limit)
      if (size !== undefined) assert.strictEqual(result.left.size, size)
      assert.isAbove(result.left.size, limit)
      assert.include(result.left.message, String(limit))
    }

    it("U22 the default limit is 1 MiB: 1 MiB accepted, 1 MiB + 1 byte refused", () => {
      const limit = 1024 * 1024
      assert.strictEqual(Wire.defaultMaxFrameSize, limit)
      const decoder = Wire.makeDecoder("event-data")
      accepted(decoder, frameOfBytes(limit))
      refused(decoder, frameOfBytes(limit + 1), limit, limit + 1)
    })

    it("U22 multibyte UTF-8 is measured in bytes, not characters", () => {
      const limit = 1024 * 1024
      const decoder = Wire.makeDecoder("event-data")
      for (const filler of ["é", "€", "😀"]) {
        const exact = frameOfBytes(limit, filler)
        assert.isBelow(exact.length, limit)
        accepted(decoder, exact)
        const over = frameOfBytes(limit + 1, filler)
        assert.isBelow(over.length, limit)
        refused(decoder, over, limit, limit + 1)
      }
    })

    it("U22 maxFrameSize changes the limit, with the same exact bounds", () => {
      const decoder = Wire.makeDecoder("event-data", { maxFrameSize: 100 })
      accepted(decoder, frameOfBytes(100))
      refused(decoder, frameOfBytes(101), 100, 101)
      accepted(decoder, frameOfBytes(100, "€"))
      refused(decoder, frameOfBytes(101, "€"), 100, 101)
      // A frame with more characters than the limit is refused without measuring it all.
      refused(decoder, "a".repeat(1_000), 100)
    })

    it("U22 Uint8Array frames: limit bytes accepted, limit + 1 refused", () => {
      const decoder = Wire.makeDecoder("event-data", { maxFrameSize: 100 })
      accepted(decoder, encoder.encode(frameOfBytes(100, "€")))
      refused(decoder, encoder.encode(frameOfBytes(101, "€")), 100, 101)
      const big = Wire.makeDecoder("flat")
      accepted(big, encoder.encode(frameOfBytes(Wire.defaultMaxFrameSize)))
      refused(big, encoder.encode(frameOfBytes(Wire.defaultMaxFrameSize + 1)), Wire.defaultMaxFrameSize)
    })

    it("U09 Uint8Array frames decode like text, invalid UTF-8 included", () => {
      const decoder = Wire.makeDecoder("event-data")
      assert.deepStrictEqual(
        decoder(encoder.encode("{\"event\":\"error\",\"data\":{\"error\":\"€\"}}")),
        Either.right({ _tag: "AgentError", error: "€" } as SessionEvent.SessionEvent)
      )
      const invalid = decoder(new Uint8Array([0xff, 0xfe, 0x7b]))
      assert.isTrue(Either.isLeft(invalid) && invalid.left._tag === "MalformedFrame")
    })
  })

  describe("U16 answers", () => {
    const request: SessionEvent.ExternalResourceRequested = {
      _tag: "ExternalResourceRequested",
      resource_type: "request_user_input",
      reason: "need email",
      action_session_id: "a-7",
      field_name: Option.some("email")
    } as SessionEvent.ExternalResourceRequested

    it("U16 encodeAnswer frames with event (documented) or type (observed)", () => {
      assert.strictEqual(Dialect.documented.answerKey, "event")
      assert.strictEqual(Dialect.observed.answerKey, "type")
      const documented = JSON.parse(Wire.encodeAnswer(Dialect.documented.answerKey, request, Answer.grant("jane@x.io")))
      assert.deepStrictEqual(documented, {
        event: "external_resource_granted",
        data: {
          granted: true,
          resource_type: "request_user_input",
          action_session_id: "a-7",
          field_name: "email",
          input: "jane@x.io"
        }
      })
      const observed = JSON.parse(Wire.encodeAnswer(Dialect.observed.answerKey, request, Answer.grant("jane@x.io")))
      assert.deepStrictEqual(observed, { type: "external_resource_granted", data: documented.data })
    })

    it("U16 a denial carries granted false and no input; no field_name when the request had none", () => {
      const admin = {
        ...request,
        resource_type: "admin_permission_request",
        field_name: Option.none()
      } as SessionEvent.ExternalResourceRequested
      assert.deepStrictEqual(JSON.parse(Wire.encodeAnswer("event", admin, Answer.deny())), {
        event: "external_resource_granted",
        data: { granted: false, resource_type: "admin_permission_request", action_session_id: "a-7" }
      })
      assert.deepStrictEqual(Wire.answerData(admin, Answer.grant()), {
        granted: true,
        resource_type: "admin_permission_request",
        action_session_id: "a-7"
      })
      // Input goes only with a grant.
      assert.notProperty(Wire.answerData(request, Answer.deny()), "input")
    })

    it("U15 an Unrecognized resource type is answered with its raw string", () => {
      const other = { ...request, resource_type: { _tag: "Unrecognized", raw: "captcha" } } as SessionEvent.ExternalResourceRequested
      assert.strictEqual(Wire.answerData(other, Answer.grant("abc")).resource_type, "captcha")
    })

    it("U16 decodeClientFrame reads answers framed either way", () => {
      for (const key of ["event", "type"] as const) {
        const frame = Wire.encodeAnswer(key, request, Answer.grant("x"))
        assert.deepStrictEqual(
          Wire.decodeClientFrame(frame),
          Either.right({ _tag: "Answer", data: Wire.answerData(request, Answer.grant("x")) } as Wire.ClientFrame)
        )
      }
    })

    it.prop(
      "U16 decodeClientFrame(encodeAnswer(...)) gives back the answer data",
      [
        Schema.typeSchema(SessionEvent.ExternalResourceRequested),
        FastCheck.option(FastCheck.string(), { nil: undefined }),
        FastCheck.boolean(),
        FastCheck.constantFrom("event" as const, "type" as const)
      ],
      ([req, input, grant, key]) => {
        const answer = grant ? Answer.grant(input) : Answer.deny()
        const result = Wire.decodeClientFrame(Wire.encodeAnswer(key, req, answer))
        generatedFrames += 1
        if (Either.isLeft(result) || result.right._tag !== "Answer") return assert.fail("expected an answer")
        const data = result.right.data
        assert.strictEqual(data.granted, grant)
        assert.strictEqual(data.resource_type, SessionEvent.resourceTypeRaw(req.resource_type))
        assert.strictEqual(data.action_session_id, req.action_session_id)
        assert.strictEqual(data.field_name, Option.getOrUndefined(req.field_name))
        assert.strictEqual(data.input, grant ? input : undefined)
      },
      { fastCheck: { numRuns: 300, seed: 8 } }
    )

    it("U08 decodeClientFrame reads the handshake message", () => {
      const frame = Wire.handshakeMessage(Redacted.make("k-secret"), "s-1")
      assert.deepStrictEqual(JSON.parse(frame), { apiKey: "k-secret", sessionId: "s-1" })
      assert.deepStrictEqual(
        Wire.decodeClientFrame(frame),
        Either.right({ _tag: "Handshake", apiKey: "k-secret", sessionId: "s-1" } as Wire.ClientFrame)
      )
    })

    it("U16 decodeClientFrame: anything else is MalformedFrame", () => {
      const cases = [
        "nope",
        "[]",
        "{}",
        "{\"apiKey\":1,\"sessionId\":\"s\"}",
        "{\"event\":\"external_resource_granted\",\"data\":{\"granted\":\"yes\",\"resource_type\":\"x\"}}",
        "{\"type\":\"external_resource_granted\"}",
        "{\"event\":\"something_else\",\"data\":{}}"
      ]
      for (const frame of cases) {
        const result = Wire.decodeClientFrame(frame)
        assert.isTrue(Either.isLeft(result) && result.left._tag === "MalformedFrame", frame)
      }
      const neither = Wire.decodeClientFrame("{}")
      assert.isTrue(Either.isLeft(neither) && neither.left.message.includes("neither a handshake nor an answer"))
    })
  })

  describe("U08 handshake address", () => {
    const apiKey = Redacted.make("sk live/key+with&chars")
    const base = { base: "wss://agents.example.com/", path: "/v1/connect", sessionId: "s-1", apiKey } as const

    it("U08 message: the address carries neither the key nor the session", () => {
      const url = Wire.connectUrl({ ...base, handshake: "message" })
      assert.strictEqual(url, "wss://agents.example.com/v1/connect")
      assert.notInclude(url, "apiKey")
      assert.notInclude(url, "sk")
    })

    it("U08 query and both: sessionId and apiKey parameters", () => {
      for (const handshake of ["query", "both"] as const) {
        const url = new URL(Wire.connectUrl({ ...base, handshake }))
        assert.strictEqual(url.pathname, "/v1/connect")
        assert.strictEqual(url.searchParams.get("sessionId"), "s-1")
        assert.strictEqual(url.searchParams.get("apiKey"), "sk live/key+with&chars")
      }
    })

    it("U08 the dialects' handshakes: documented message, observed query", () => {
      assert.strictEqual(Dialect.documented.handshake, "message")
      assert.strictEqual(Dialect.observed.handshake, "query")
      const observed = Wire.connectUrl({ ...base, path: Dialect.observed.connectPath, handshake: Dialect.observed.handshake })
      assert.include(observed, "apiKey=")
    })

    it("U08 redactUrl removes the key and keeps the rest", () => {
      const url = Wire.connectUrl({ ...base, handshake: "query" })
      const redacted = Wire.redactUrl(url)
      assert.notInclude(redacted, "sk")
      assert.notInclude(redacted, encodeURIComponent("sk live/key+with&chars"))
      assert.include(redacted, "apiKey=<redacted>")
      assert.include(redacted, "sessionId=s-1")
      assert.strictEqual(
        Wire.redactUrl("https://h/p?api_key=a&key=b&token=c&access_token=d&APIKEY=e&x=1#frag"),
        "https://h/p?api_key=<redacted>&key=<redacted>&token=<redacted>&access_token=<redacted>&APIKEY=<redacted>&x=1#frag"
      )
      assert.strictEqual(Wire.redactUrl("wss://h/v1/connect"), "wss://h/v1/connect")
    })

    it("U23 joinPath neither doubles nor drops the slash", () => {
      assert.strictEqual(Wire.joinPath("https://h/", "/a"), "https://h/a")
      assert.strictEqual(Wire.joinPath("https://h", "a"), "https://h/a")
      assert.strictEqual(Wire.joinPath("https://h/base", "/api/v1sessions"), "https://h/base/api/v1sessions")
    })
  })
})

describe("Wire: total for any depth (issue 12, defect 1)", () => {
  const deepArray = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`
  const deepObject = (depth: number) => `${"{\"a\":".repeat(depth)}1${"}".repeat(depth)}`
  const frameOf = (framing: Dialect.Framing, name: string, data: string) =>
    framing === "type-data"
      ? `{"type":"${name}","data":${data}}`
      : framing === "flat"
      ? `{"event":"${name}","nested":${data}}`
      : `{"event":"${name}","data":${data}}`

  for (const framing of framings) {
    it(`a server frame 3,000 (and 100,000) deep is MalformedFrame, never a stack overflow (${framing})`, () => {
      for (const depth of [3000, 100_000]) {
        for (const data of [deepArray(depth), deepObject(depth)]) {
          for (const name of ["complete", "external_resource_requested", "mystery_event"]) {
            const result = Wire.decodeFrame(framing, frameOf(framing, name, data), { maxFrameSize: 16 * 1024 * 1024 })
            assert.isTrue(Either.isLeft(result))
            if (Either.isLeft(result) && result.left._tag === "MalformedFrame") {
              assert.include(result.left.message, "nested deeper than 64 levels")
              assert.isAtMost(result.left.raw.length, 4096)
            } else {
              assert.fail("expected MalformedFrame")
            }
          }
        }
      }
    })
  }

  it("nesting up to the bound decodes; maxDepth moves the bound; brackets inside strings do not count", () => {
    const at = Wire.decodeFrame("event-data", `{"event":"mystery_event","data":${deepArray(63)}}`)
    assert.isTrue(Either.isRight(at) && at.right._tag === "Unrecognized")
    const over = Wire.decodeFrame("event-data", `{"event":"mystery_event","data":${deepArray(64)}}`)
    assert.isTrue(Either.isLeft(over) && over.left._tag === "MalformedFrame")
    const raised = Wire.decodeFrame("event-data", `{"event":"mystery_event","data":${deepArray(200)}}`, { maxDepth: 300 })
    assert.isTrue(Either.isRight(raised))
    const inString = Wire.decodeFrame(
      "event-data",
      JSON.stringify({ event: "thoughts_and_memories", data: { thought: "[".repeat(5000), memory: "{".repeat(5000) } })
    )
    assert.isTrue(Either.isRight(inString) && inString.right._tag === "ThoughtsAndMemories")
  })

  it("a short frame is parsed before its depth is checked: the same errors, and a plain-string event keeps no deep value", () => {
    const deepOf = (result: Either.Either<SessionEvent.SessionEvent, FrameError>) =>
      Either.isLeft(result) && result.left._tag === "MalformedFrame" && result.left.message === "nested deeper than 64 levels"
    // Deep where the event's fields are (no fast decode): refused, short or long.
    for (const depth of [65, 1000, 3000]) {
      assert.isTrue(deepOf(Wire.decodeFrame("event-data", `{"event":"action_run","data":${deepArray(depth)}}`)))
      assert.isTrue(deepOf(Wire.decodeFrame("flat", `{"event":"started","sessionId":${deepObject(depth)},"start_url":"u"}`)))
    }
    // Deep and not JSON, or not an object: the depth message, as when it was checked first.
    assert.isTrue(deepOf(Wire.decodeFrame("event-data", "[".repeat(100))))
    assert.isTrue(deepOf(Wire.decodeFrame("event-data", deepArray(100))))
    // Deep beside the fields of a plain-string event: dropped with the other excess properties in
    // a short frame (nothing deep is kept); a frame over 4,096 characters is checked first.
    const fields = { name: "click", action_session_id: "as_1", content: "c" }
    const besides = (depth: number) =>
      `{"event":"action_run","junk":${deepArray(depth)},"data":{"deep":${deepObject(depth)},"name":"click","action_session_id":"as_1","content":"c"}}`
    const short = Wire.decodeFrame("event-data", besides(200))
    assert.deepStrictEqual(short, Either.right({ _tag: "ActionRun", ...fields } as SessionEvent.ActionRun))
    assert.isAbove(besides(800).length, 4096)
    assert.isTrue(deepOf(Wire.decodeFrame("event-data", besides(800))))
    // Any other event is refused whatever the length (its schema, or Unrecognized, would keep it).
    const complete = `{"event":"complete","data":{"response":"r","type":"STRING","total_cost":1,"session_id":"s","deep":${deepArray(100)}}}`
    assert.isTrue(deepOf(Wire.decodeFrame("event-data", complete)))
  })

  it("a client frame of any depth is a typed error (MalformedFrame), never a RangeError", () => {
    for (const depth of [3000, 100_000, 1_000_000]) {
      for (const text of [
        `{"event":"external_resource_granted","data":${deepArray(depth)}}`,
        `{"type":"external_resource_granted","data":${deepObject(depth)}}`,
        `{"apiKey":${deepArray(depth)},"sessionId":"s"}`
      ]) {
        const result = Wire.decodeClientFrame(text, { maxFrameSize: 64 * 1024 * 1024 })
        assert.isTrue(Either.isLeft(result) && result.left._tag === "MalformedFrame")
      }
    }
    const tooLarge = Wire.decodeClientFrame(`{"apiKey":"${"k".repeat(70_000)}","sessionId":"s"}`)
    assert.isTrue(Either.isLeft(tooLarge) && tooLarge.left._tag === "FrameTooLarge")
  })

  it("an answer of the wrong shape gives a message without the value", () => {
    const result = Wire.decodeClientFrame(`{"event":"external_resource_granted","data":{"granted":"sk_secret_value","resource_type":1}}`)
    assert.isTrue(Either.isLeft(result))
    if (Either.isLeft(result)) assert.strictEqual(result.left._tag, "MalformedFrame")
  })

  it.prop(
    "decodeClientFrame is total: arbitrary strings and JSON give a client frame or a typed error",
    [FastCheck.oneof(FastCheck.string({ unit: "binary", maxLength: 300 }), FastCheck.json({ depthSize: "large" }))],
    ([text]) => {
      const result = Wire.decodeClientFrame(text)
      return Either.isRight(result) || result.left._tag === "MalformedFrame" || result.left._tag === "FrameTooLarge"
    }
  )

  it.prop(
    "random nestings of arrays and objects, of any depth, never throw",
    [FastCheck.array(FastCheck.constantFrom("[", "]", "{", "}", "\"a\":", ",", "1", "\""), { maxLength: 3000 }), framingArb],
    ([parts, framing]) => {
      const data = parts.join("")
      const server = Wire.decodeFrame(framing, frameOf(framing, "mystery_event", data))
      const client = Wire.decodeClientFrame(`{"event":"external_resource_granted","data":${data}}`)
      return (Either.isRight(server) || frameErrorTags.has(server.left._tag)) &&
        (Either.isRight(client) || client.left._tag === "MalformedFrame" || client.left._tag === "FrameTooLarge")
    }
  )
})
