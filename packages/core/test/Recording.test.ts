/**
 * The recording format (issue 23), written once for both editions: lines cut as they arrive with
 * a bound, every line parsed back to itself, secrets scrubbed, differences shown, frames carried
 * across transports, recorded ends served again; a large file read with bounded memory, a damaged
 * one refused naming its line.
 */
import FastCheck from "fast-check"
import * as Fs from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "vitest"
import { Dialect, Recording as Format } from "../src/index.js"
import { fileSource, header } from "./helpers/recordings.js"

const dir = Fs.mkdtempSync(join(tmpdir(), "eas-core-recording-"))
let files = 0

/** A file in the tests' temporary directory. */
const tempPath = (name: string): string => join(dir, `${++files}-${name}`)


/** A property, checked with fast-check (the core's tests use no Effect). */
const prop = <Ts extends [unknown, ...Array<unknown>]>(
  name: string,
  arbitraries: { [K in keyof Ts]: FastCheck.Arbitrary<Ts[K]> },
  check: (values: Ts) => void,
  options: { readonly numRuns: number; readonly seed: number }
) =>
  it(name, () => {
    FastCheck.assert(FastCheck.property(...arbitraries, (...values: Ts) => check(values)), options)
  })

/** Text cut at the given points. */
const cut = (text: string, points: ReadonlyArray<number>): Array<string> => {
  const at = [...new Set(points.map((p) => p % (text.length + 1)))].sort((a, b) => a - b)
  const chunks: Array<string> = []
  let start = 0
  for (const point of at) {
    chunks.push(text.slice(start, point))
    start = point
  }
  chunks.push(text.slice(start))
  return chunks
}

const lineArb = FastCheck.string({ unit: "grapheme", maxLength: 40 }).map((s) => s.replace(/[\r\n]/g, " "))

const time = FastCheck.nat(10_000_000)
const conn = FastCheck.integer({ min: 1, max: 50 })
const answerData = FastCheck.record({
  granted: FastCheck.boolean(),
  resource_type: FastCheck.string(),
  action_session_id: FastCheck.string(),
  input: FastCheck.string()
}, { requiredKeys: ["granted", "resource_type"] })
const encodedError = FastCheck.record({ _tag: FastCheck.constantFrom("ConnectTimeout", "HandshakeRejected"), reason: FastCheck.string() })
const outcome: FastCheck.Arbitrary<Format.Outcome> = FastCheck.oneof(
  FastCheck.record({ _tag: FastCheck.constant("End" as const), reason: FastCheck.constantFrom("complete", "closed-by-service") }),
  FastCheck.record({ _tag: FastCheck.constant("Fatal" as const), reason: FastCheck.constant("failed"), error: encodedError }),
  FastCheck.record({ _tag: FastCheck.constant("Retry" as const), cause: FastCheck.string() }),
  FastCheck.record({ _tag: FastCheck.constant("Retry" as const), error: encodedError }),
  FastCheck.constant({ _tag: "Interrupted" as const }),
  FastCheck.record({ _tag: FastCheck.constant("Defect" as const), message: FastCheck.string() })
)
const entryArb: FastCheck.Arbitrary<Format.Entry> = FastCheck.oneof(
  FastCheck.record({ type: FastCheck.constant("create" as const), t: time, request: FastCheck.dictionary(FastCheck.string(), FastCheck.jsonValue()) }),
  FastCheck.record({ type: FastCheck.constant("created" as const), t: time, session: FastCheck.record({ session_id: FastCheck.string() }) }),
  FastCheck.record({ type: FastCheck.constant("connect" as const), t: time, conn }),
  FastCheck.record({ type: FastCheck.constant("open" as const), t: time, conn }),
  FastCheck.record({ type: FastCheck.constant("frame" as const), t: time, conn, text: FastCheck.string({ unit: "binary" }) }),
  FastCheck.record({ type: FastCheck.constant("frame" as const), t: time, conn, base64: FastCheck.base64String() }),
  FastCheck.record({ type: FastCheck.constant("frame" as const), t: time, conn, event: FastCheck.string(), data: FastCheck.string() }),
  FastCheck.record({ type: FastCheck.constant("too-large" as const), t: time, conn, size: FastCheck.integer({ min: 1, max: Format.MAX_TOO_LARGE_SIZE }) }),
  FastCheck.record({ type: FastCheck.constant("alive" as const), t: time, conn }),
  FastCheck.record({
    type: FastCheck.constant("answer" as const),
    t: time,
    conn,
    data: answerData,
    result: FastCheck.oneof(
      FastCheck.constantFrom("written" as const, "confirmed" as const),
      FastCheck.record({ failed: FastCheck.string(), retry: FastCheck.boolean() })
    )
  }),
  FastCheck.record({ type: FastCheck.constant("close" as const), t: time, conn, opened: FastCheck.boolean(), outcome }),
  FastCheck.record({ type: FastCheck.constant("end" as const), t: time, reason: FastCheck.constantFrom("complete", "failed") })
)

describe("Recording", () => {
  prop("LineSplitter gives the same lines whatever the chunks (\\n or \\r\\n)", [
    FastCheck.array(lineArb, { maxLength: 30 }),
    FastCheck.array(FastCheck.nat(2000), { maxLength: 12 }),
    FastCheck.boolean()
  ], ([lines, points, crlf]) => {
    const text = lines.map((line) => line + (crlf ? "\r\n" : "\n")).join("")
    const splitter = new Format.LineSplitter(64)
    const out: Array<string> = []
    for (const chunk of cut(text, points)) {
      const pushed = splitter.push(chunk)
      assert.isFalse(pushed.tooLong)
      out.push(...pushed.lines)
    }
    assert.isUndefined(splitter.end())
    assert.deepStrictEqual(out, lines)
  }, { numRuns: 300, seed: 23 })

  it("LineSplitter refuses a line over the limit without holding it, after the lines before it", () => {
    const splitter = new Format.LineSplitter(10)
    assert.deepStrictEqual(splitter.push("short\n0123456789ab\nnext\n"), { lines: ["short"], tooLong: true })
    const endless = new Format.LineSplitter(10)
    assert.deepStrictEqual(endless.push("x".repeat(6)), { lines: [], tooLong: false })
    assert.deepStrictEqual(endless.push("x".repeat(6)), { lines: [], tooLong: true })
    // Never more than the limit and one chunk held; nothing after the refusal.
    assert.isAtMost(endless.peak, 10 + 6)
    assert.deepStrictEqual(endless.push("\n"), { lines: [""], tooLong: false })
  })

  prop("every line parses back to itself", [entryArb], ([entry]) => {
    const parsed = Format.parseEntry(Format.encodeLine(entry))
    assert.isTrue(parsed.ok, parsed.ok ? "" : parsed.reason)
    if (parsed.ok) assert.deepStrictEqual(parsed.value, JSON.parse(JSON.stringify(entry)))
  }, { numRuns: 500, seed: 7 })

  prop("arbitrary text never throws: a line or a reason", [FastCheck.string({ unit: "binary", maxLength: 300 })], ([text]) => {
    const parsed = Format.parseEntry(text)
    assert.isTrue(parsed.ok || parsed.reason.length > 0)
    const head = Format.parseHeader(text)
    assert.isTrue(head.ok || head.reason.length > 0)
  }, { numRuns: 300, seed: 8 })

  it("refuses unknown types, a second header, frames of two forms", () => {
    const reason = (text: string) => {
      const parsed = Format.parseEntry(text)
      return parsed.ok ? "ok" : parsed.reason
    }
    assert.strictEqual(reason("{\"type\":\"teleport\",\"t\":1}"), "unknown line type \"teleport\"")
    assert.strictEqual(reason(JSON.stringify(header())), "a second header")
    assert.strictEqual(
      reason("{\"type\":\"frame\",\"t\":1,\"conn\":1,\"text\":\"{}\",\"event\":\"x\",\"data\":\"{}\"}"),
      "frame: a frame has exactly one of \"text\", \"base64\" or \"event\" with \"data\""
    )
    assert.strictEqual(reason("{\"type\":\"connect\",\"t\":-1,\"conn\":1}"), "connect: \"t\" is missing or not valid")
    assert.strictEqual(reason("[1,2]"), "not a JSON object")
  })

  it("the header: the format, a version not newer than this SDK's, every choice of the dialect", () => {
    const parsed = Format.parseHeader(JSON.stringify(header({ dialect: Dialect.observed, transport: "sse" })))
    assert.isTrue(parsed.ok)
    if (parsed.ok) assert.deepStrictEqual(parsed.value.dialect, Dialect.observed)
    const refused = (overrides: Record<string, unknown>) => {
      const result = Format.parseHeader(JSON.stringify(header(overrides)))
      return result.ok ? "ok" : result.reason
    }
    assert.include(refused({ format: "har" }), "not a recording of effect-agent-session")
    assert.include(refused({ version: 9 }), "format version 9, newer than this SDK reads (1)")
    assert.include(refused({ transport: "carrier-pigeon" }), "\"transport\" is missing or not valid")
    assert.include(refused({ dialect: { ...Dialect.documented, framing: "xml" } }), "dialect: \"framing\"")
  })

  it("scrub: known secrets, key-named members, key-bearing parameters and bearer credentials", () => {
    const secret = "sk-123-secret"
    assert.strictEqual(Format.scrub(`a ${secret} b`, [secret]), "a <redacted> b")
    assert.strictEqual(
      Format.scrub("{\"apiKey\":\"k1\",\"API_KEY\" : \"k2\",\"x-api-key\":\"k3\",\"authorization\":\"Bearer k4\",\"apikey\":42}", []),
      "{\"apiKey\":\"<redacted>\",\"API_KEY\" : \"<redacted>\",\"x-api-key\":\"<redacted>\",\"authorization\":\"<redacted>\",\"apikey\":\"<redacted>\"}"
    )
    assert.strictEqual(Format.scrub("{\"apiKey\":\"a\\\"b\",\"n\":1}", []), "{\"apiKey\":\"<redacted>\",\"n\":1}")
    assert.strictEqual(Format.scrub("wss://h/v1/connect?sessionId=s&apiKey=k9&x=1", []), "wss://h/v1/connect?sessionId=s&apiKey=<redacted>&x=1")
    assert.strictEqual(Format.scrub("auth: Bearer abc.def-ghi", []), "auth: Bearer <redacted>")
    // Text with none of them stays byte for byte.
    const plain = "{\"event\":\"action_run\",\"data\":{\"name\":\"click\" ,\"content\":\"keys are fine\"}}"
    assert.strictEqual(Format.scrub(plain, [secret]), plain)
    assert.deepStrictEqual(Format.scrubValue({ headers: { Authorization: "x", ok: `has ${secret}` } }, [secret]), {
      headers: { Authorization: "<redacted>", ok: "has <redacted>" }
    })
  })

  it("scrub: a parameter only named like a key (key=pizza, token=) is kept; the dialect's apiKey and a known key's value are not", () => {
    const secret = "sk-123-secret"
    const start = "https://example.com/search?key=pizza&token=abc&access_token=x&api_key=y"
    assert.strictEqual(Format.scrub(start, [secret]), start)
    assert.deepStrictEqual(Format.scrubValue({ start_url: start, goal: "look up key=pizza" }, [secret]), {
      start_url: start,
      goal: "look up key=pizza"
    })
    assert.strictEqual(Format.scrub(`https://h/?key=${secret}&apiKey=k9`, [secret]), "https://h/?key=<redacted>&apiKey=<redacted>")
    // A key percent-encoded is found too.
    assert.strictEqual(Format.scrub(`https://h/?key=${encodeURIComponent("sk/1 +2=")}`, ["sk/1 +2="]), "https://h/?key=<redacted>")
  })

  it("scrub: JSON stays JSON, a key next to \\\" and \\\\ and written with \\u escapes redacted on its decoded value", () => {
    const secret = "sk-123-secret"
    const cases = [
      String.raw`{"u":"https://h/?apiKey=k9\"x","v":"a\\"}`,
      String.raw`{"note":"\"sk-123-secret\"","b":"\\sk-123-secret\\"}`,
      String.raw`{"note":"\u0073k-123-secret and \u0022"}`,
      String.raw`{"apiKey":{"nested":["a\"]"]},"after":"x"}`,
      String.raw`{"t":"Bearer abc\"def"}`,
      String.raw`{"n":123456789012,"m":"k"}`
    ]
    for (const text of cases) {
      const out = Format.scrub(text, [secret, "123456789012"])
      assert.doesNotThrow(() => JSON.parse(out), undefined, undefined, `${text} -> ${out}`)
      assert.notInclude(JSON.stringify(JSON.parse(out)), secret)
      assert.notInclude(out, "123456789012")
    }
    assert.strictEqual(Format.scrub(cases[0] ?? "", []), String.raw`{"u":"https://h/?apiKey=<redacted>\"x","v":"a\\"}`)
    assert.strictEqual(Format.scrub(cases[2] ?? "", [secret]), String.raw`{"note":"<redacted> and \""}`)
    assert.strictEqual(Format.scrub(cases[3] ?? "", []), String.raw`{"apiKey":"<redacted>","after":"x"}`)
    // JSON inside a JSON string is scrubbed as JSON.
    assert.strictEqual(
      Format.scrub(JSON.stringify({ raw: JSON.stringify({ apiKey: "k\"1", ok: 1 }) }), []),
      JSON.stringify({ raw: JSON.stringify({ apiKey: "<redacted>", ok: 1 }) })
    )
    // Text that is not JSON stops the credential parameter before an escape.
    assert.strictEqual(Format.scrub(String.raw`{"u":"h/?apiKey=k\"x"`, []), String.raw`{"u":"h/?apiKey=<redacted>\"x"`)
  })

  /** A secret as keys look, and JSON whose strings hold it among quotes, backslashes and escapes. */
  const secretArb = FastCheck.stringMatching(/^sk-[A-Za-z0-9]{8,16}$/)
  const jsonHolding = (secret: string) => {
    const piece = FastCheck.constantFrom(secret, "\"", "\\", "\\\"", "\u00e9", "\ud83d\ude00", "apiKey=", "Bearer ", "key=pizza", "x", "/")
    const text = FastCheck.array(piece, { maxLength: 8 }).map((parts) => parts.join(""))
    const value = FastCheck.letrec<{ value: unknown }>((tie) => ({
      value: FastCheck.oneof(
        { depthSize: "small", withCrossShrink: true },
        text,
        FastCheck.integer(),
        FastCheck.constant(null),
        FastCheck.array(tie("value"), { maxLength: 4 }),
        FastCheck.dictionary(FastCheck.oneof(text, FastCheck.constantFrom("apiKey", "Authorization", "data")), tie("value"), { maxKeys: 4 })
      )
    })).value
    // Encoded with some characters as \u escapes, some with spaces between tokens.
    return FastCheck.tuple(value, FastCheck.array(FastCheck.boolean(), { minLength: 1, maxLength: 7 }), FastCheck.boolean()).map(
      ([v, escapes, spaced]) => {
        const json = JSON.stringify(v, null, spaced ? 1 : undefined) ?? "null"
        let n = 0
        return json.replace(/[a-z]/g, (c) => (escapes[n++ % escapes.length] === true ? `\\u00${c.charCodeAt(0).toString(16)}` : c))
      }
    ).filter((json) => {
      try {
        JSON.parse(json)
        return true
      } catch {
        return false
      }
    })
  }

  prop(
    "scrub: valid JSON always stays valid JSON and never holds the key, decoded or not",
    [secretArb.chain((secret) => FastCheck.tuple(FastCheck.constant(secret), jsonHolding(secret)))],
    ([[secret, json]]) => {
      const out = Format.scrub(json, [secret])
      const parsed: unknown = JSON.parse(out)
      assert.notInclude(out, secret)
      assert.notInclude(JSON.stringify(parsed), secret)
      // Without a secret or a sign of one, the text is kept byte for byte.
      if (!JSON.stringify(JSON.parse(json)).includes(secret) && !/apiKey|Authorization|Bearer|\\/i.test(json)) {
        assert.strictEqual(out, json)
      }
    },
    { numRuns: 300, seed: 36 }
  )

  it("scrubEntry: the event name and the data of a Server-Sent Event are both scrubbed", () => {
    const secret = "sk-123-secret"
    const entry: Format.Entry = {
      type: "frame",
      t: 1,
      conn: 1,
      event: `thoughts_${secret}`,
      data: JSON.stringify({ thought: `key ${secret}`, apiKey: "other", url: `https://h/?apiKey=${secret}` })
    }
    const out = Format.scrubEntry(entry, [secret])
    assert.deepStrictEqual(out, {
      type: "frame",
      t: 1,
      conn: 1,
      event: "thoughts_<redacted>",
      data: JSON.stringify({ thought: "key <redacted>", apiKey: "<redacted>", url: "https://h/?apiKey=<redacted>" })
    })
    assert.notInclude(Format.encodeLine(out), secret)
  })

  it("scrubEntry: a binary frame that is not UTF-8 has the key's bytes overwritten, same length, the rest kept", () => {
    const secret = "sk-123-secret"
    const utf8 = new TextEncoder().encode(secret)
    const utf16 = new Uint8Array([...secret].flatMap((c) => [c.charCodeAt(0), 0]))
    const bytes = new Uint8Array([0xff, 0xfe, 0x00, ...utf8, 0x80, 0x81, ...utf16, 0xc3])
    const base64 = Buffer.from(bytes).toString("base64")
    const out = Format.scrubEntry({ type: "frame", t: 2, conn: 1, base64 }, [secret])
    assert.isTrue("base64" in out)
    const line = Format.encodeLine(out)
    const written = Buffer.from("base64" in out ? out.base64 : "", "base64")
    assert.strictEqual(written.length, bytes.length)
    assert.deepStrictEqual([...written.subarray(0, 3)], [0xff, 0xfe, 0x00])
    assert.strictEqual(written.subarray(3, 3 + utf8.length).toString("latin1"), "<redacted***>")
    assert.notInclude(written.toString("latin1"), secret)
    assert.notInclude(written.toString("utf16le"), secret)
    assert.isUndefined(Format.leak(line, [secret]))
    assert.notInclude(line, Buffer.from(secret).toString("base64").slice(0, 12))
    // Bytes without a key are kept as they are.
    const clean = { type: "frame", t: 2, conn: 1, base64: Buffer.from([0xff, 1, 2]).toString("base64") } as const
    assert.strictEqual(Format.scrubEntry(clean, [secret]), clean)
  })

  it("leak: a key left in a line in base64 (any offset, either alphabet) or as text is found; a clean line is not", () => {
    const secret = "sk-live-0123456789abcdef"
    for (const prefix of ["", "a", "ab"]) {
      const encoded = Buffer.from(`${prefix}${secret}!`).toString("base64")
      assert.strictEqual(Format.leak(JSON.stringify({ text: `x ${encoded} y` }), [secret]), "a known key in base64")
      const url = Buffer.from(`${prefix}${secret}!`).toString("base64url")
      assert.strictEqual(Format.leak(JSON.stringify({ text: url }), [secret]), "a known key in base64")
    }
    assert.strictEqual(Format.leak(`{"text":"${secret}"}`, [secret]), "a known key")
    assert.isUndefined(Format.leak("{\"text\":\"<redacted>\"}", [secret]))
    // A secret too short to look for by chance is not looked for.
    assert.isUndefined(Format.leak("{\"text\":\"k1\"}", ["k1"]))
  })

  it("difference: one line per differing member, in name order", () => {
    assert.strictEqual(Format.difference({ a: 1, b: "x" }, { a: 1, b: "x" }), "")
    assert.strictEqual(
      Format.difference({ granted: true, input: "jane" }, { granted: false, field: "email" }),
      "field: expected (absent), got \"email\"\ngranted: expected true, got false\ninput: expected \"jane\", got (absent)"
    )
    assert.strictEqual(Format.difference({ a: { b: 1 } }, { a: { b: 2 } }), "a.b: expected 1, got 2")
    assert.strictEqual(Format.difference(1, "1"), "expected 1, got \"1\"")
  })

  it("frames cross transports in each framing", () => {
    for (const framing of ["event-data", "type-data", "flat"] as const) {
      const frame = Format.eventToFrame(framing, "action_run", "{\"name\":\"click\"}")
      assert.deepStrictEqual(Format.frameToEvent(framing, frame), { event: "action_run", data: "{\"name\":\"click\"}" })
    }
    assert.strictEqual(Format.eventToFrame("event-data", "started", ""), "{\"event\":\"started\",\"data\":{}}")
    assert.isUndefined(Format.frameToEvent("event-data", "not json"))
  })

  it("serverEndOf: each recorded end as a server serves it again", () => {
    const close = (outcome: Format.Outcome, opened = true): Format.CloseEntry => ({ type: "close", t: 0, conn: 1, opened, outcome })
    const retry = (cause: string, opened = true) => Format.serverEndOf(close({ _tag: "Retry", cause }, opened))
    assert.deepStrictEqual(retry("closed with code 1006"), { _tag: "Drop" })
    assert.deepStrictEqual(retry("closed with code 1011: server restart"), { _tag: "Close", code: 1011, reason: "server restart" })
    assert.deepStrictEqual(retry("upgrade refused with HTTP 503", false), { _tag: "Refuse", status: 503, reason: "upgrade refused with HTTP 503" })
    assert.deepStrictEqual(retry("event stream refused with HTTP 502", false), { _tag: "Refuse", status: 502, reason: "event stream refused with HTTP 502" })
    assert.deepStrictEqual(retry("open failed: ECONNREFUSED", false), { _tag: "Reset" })
    assert.deepStrictEqual(retry("read failed: socket hang up"), { _tag: "Drop" })
    assert.deepStrictEqual(retry("the event stream ended"), { _tag: "EndStream" })
    assert.deepStrictEqual(retry("no frame for 1m (idle time-out)"), { _tag: "AwaitClient" })
    assert.deepStrictEqual(
      Format.serverEndOf(close({ _tag: "Retry", error: { _tag: "ConnectTimeout" } }, false)),
      { _tag: "Hang" }
    )
    assert.deepStrictEqual(Format.serverEndOf(close({ _tag: "End", reason: "complete" })), { _tag: "Close", code: 1000, reason: "complete" })
    assert.deepStrictEqual(Format.serverEndOf(close({ _tag: "End", reason: "error-event" })), { _tag: "AwaitClient" })
    assert.deepStrictEqual(
      Format.serverEndOf(close({ _tag: "Fatal", reason: "handshake-rejected", error: { _tag: "HandshakeRejected", code: 401, reason: "no" } }, false)),
      { _tag: "Refuse", status: 401, reason: "no" }
    )
    assert.deepStrictEqual(
      Format.serverEndOf(close({ _tag: "Fatal", reason: "handshake-rejected", error: { _tag: "HandshakeRejected", code: 1008, reason: "key" } })),
      { _tag: "Close", code: 1008, reason: "key" }
    )
    assert.deepStrictEqual(
      Format.serverEndOf(close({ _tag: "Fatal", reason: "failed", error: { _tag: "FrameTooLarge", size: 2_000_000, limit: 1 } })),
      { _tag: "TooLarge", size: 2_000_000 }
    )
    assert.deepStrictEqual(Format.serverEndOf(close({ _tag: "Interrupted" })), { _tag: "AwaitClient" })
    assert.deepStrictEqual(
      Format.serverEndOf(close({ _tag: "Fatal", reason: "superseded", error: { _tag: "Superseded", reason: "superseded" } })),
      { _tag: "Close", code: 4000, reason: "superseded" }
    )
  })

  it("a large recording is read line by line: memory held stays at one block and one line", () => {
    const path = tempPath("large.jsonl")
    const frames = 60_000
    const frame = JSON.stringify({ event: "thoughts_and_memories", data: { thought: "t".repeat(300), memory: "m" } })
    const lines = [JSON.stringify(header())]
    for (let i = 0; i < frames; i++) lines.push(JSON.stringify({ type: "frame", t: i, conn: 1, text: frame }))
    Fs.writeFileSync(path, lines.join("\n") + "\n")
    const opened = Format.Reader.open(fileSource(path))
    assert.isTrue("reader" in opened)
    if (!("reader" in opened)) return
    let count = 0
    while (true) {
      const next = opened.reader.take()
      if (next._tag !== "Entry") {
        assert.strictEqual(next._tag, "Done")
        break
      }
      count += 1
    }
    assert.strictEqual(count, frames)
    // The file is about 25 MB; what is held at once is under one 64 KiB block plus one line.
    assert.isAtMost(opened.reader.peakHeld, 64 * 1024 + 1024)
  })

  it("a damaged or foreign file is refused naming its line; a missing one with line 0", () => {
    const write = (text: string | Uint8Array) => {
      const path = tempPath("damaged.jsonl")
      Fs.writeFileSync(path, text)
      return path
    }
    const take = (path: string) => {
      const opened = Format.Reader.open(fileSource(path))
      if (!("reader" in opened)) return opened
      for (;;) {
        const next = opened.reader.take()
        if (next._tag !== "Entry") return next
      }
    }
    const frame = { type: "frame", t: 1, conn: 1, text: "{}" }
    const good = [JSON.stringify(header()), JSON.stringify(frame)]
    assert.deepStrictEqual(take(write([...good, "{\"type\":\"frame\",\"t\":", JSON.stringify(frame)].join("\n"))), {
      _tag: "Invalid",
      line: 3,
      reason: "not JSON"
    })
    assert.deepStrictEqual(take(write("{\"type\":\"header\",\"format\":\"har\"}\n")), {
      _tag: "Invalid",
      line: 1,
      reason: `not a recording of effect-agent-session: the first line is not its header ({"type":"header","format":"${Format.FORMAT}",...})`
    })
    assert.deepStrictEqual(take(write("")), { _tag: "Invalid", line: 1, reason: "the file is empty: not a recording" })
    const notUtf8 = new Uint8Array([...new TextEncoder().encode(`${good.join("\n")}\n`), 0xff, 0xfe, 0x0a])
    assert.deepStrictEqual(take(write(notUtf8)), { _tag: "Invalid", line: 3, reason: "not UTF-8 text" })
    // Past the first 64 KiB block, the line is still the one holding the bad bytes.
    const many = Array.from({ length: 2_000 }, (_, i) => JSON.stringify({ ...frame, t: i, text: "é".repeat(50) }))
    const before = new TextEncoder().encode(`${[good[0], ...many.slice(0, 1_499)].join("\n")}\n`)
    const after = new TextEncoder().encode(`\n${many.slice(1_500).join("\n")}\n`)
    assert.deepStrictEqual(take(write(new Uint8Array([...before, 0xc3, 0x28, ...after]))), {
      _tag: "Invalid",
      line: 1_501,
      reason: "not UTF-8 text"
    })
    const missing = Format.Reader.open(fileSource(join(dir, "no-such-file.jsonl")))
    assert.isTrue("_tag" in missing && missing._tag === "Invalid" && missing.line === 0 && missing.reason.startsWith("cannot be read: "))
    // A complete file ends with Done at its last line.
    assert.deepStrictEqual(take(write(`${good.join("\n")}\n`)), { _tag: "Done", line: 2 })
  })
})

describe("Recording: a recording is input (issue 36)", () => {
  /** The first line a reader refuses in a file of the header and these lines, or its end. */
  const firstRefused = (lines: ReadonlyArray<string>) => {
    const path = tempPath("hostile.jsonl")
    Fs.writeFileSync(path, [JSON.stringify(header()), ...lines].join("\n") + "\n")
    const opened = Format.Reader.open(fileSource(path))
    if (!("reader" in opened)) return opened
    for (;;) {
      const next = opened.reader.take()
      if (next._tag !== "Entry") return next
    }
  }
  const frame = JSON.stringify({ type: "frame", t: 1, conn: 1, text: "{}" })
  const close = (outcome: unknown, opened = true) => JSON.stringify({ type: "close", t: 2, conn: 1, opened, outcome })
  const fatal = (error: unknown) => ({ _tag: "Fatal", reason: "failed", error })
  const createFailed = (status: unknown) =>
    JSON.stringify({ type: "create-failed", t: 1, error: { _tag: "UnexpectedStatus", status, body: "{}" } })

  for (
    const [name, line, reason] of [
      // 52 bytes that would make a server build a 400 MB frame.
      ["a too-large frame over the bound", `{"type":"too-large","t":0,"conn":1,"size":400000000}`, "too-large: \"size\""],
      ["a too-large frame of no size", `{"type":"too-large","t":0,"conn":1,"size":0}`, "too-large: \"size\""],
      ["a too-large frame of a fractional size", `{"type":"too-large","t":0,"conn":1,"size":1.5}`, "too-large: \"size\""],
      ["a negative time", `{"type":"open","t":-1,"conn":1}`, "open: \"t\""],
      ["a time past the safe integers", `{"type":"open","t":1e300,"conn":1}`, "open: \"t\""],
      ["a connection number past the safe integers", `{"type":"open","t":0,"conn":1e300}`, "open: \"conn\""],
      ["a time of the wrong type", `{"type":"open","t":"0","conn":1}`, "open: \"t\""],
      ["a time that is null (NaN written by JSON.stringify)", `{"type":"open","t":null,"conn":1}`, "open: \"t\""],
      ["base64 that is not base64", JSON.stringify({ type: "frame", t: 0, conn: 1, base64: "no*base64!" }), "frame: \"base64\""],
      ["a create failure with a status Node cannot write", createFailed(1000), "create-failed: \"status\""],
      ["a create failure with an informational status", createFailed(101), "create-failed: \"status\""],
      ["a create failure with a status of the wrong type", createFailed("500"), "create-failed: \"status\""],
      ["a recorded close code that cannot be sent", close({ _tag: "Retry", cause: "closed with code 999" }), "close code 999"],
      ["a reserved close code", close({ _tag: "Retry", cause: "closed with code 1004" }), "close code 1004"],
      ["a close code past 4999", close({ _tag: "Retry", cause: "closed with code 5000: x" }), "close code 5000"],
      [
        "a rejection close code that cannot be sent",
        close(fatal({ _tag: "HandshakeRejected", code: 1006, reason: "" })),
        "close code 1006"
      ],
      ["a refusal status Node cannot write", close({ _tag: "Retry", cause: "upgrade refused with HTTP 999" }, false), "status 999"],
      [
        "a refusal status below 200",
        close(fatal({ _tag: "HandshakeRejected", code: 42, reason: "" }), false),
        "status 42"
      ],
      [
        "a too-large frame over the bound in a close",
        close(fatal({ _tag: "FrameTooLarge", size: 400_000_000, limit: 1 })),
        "400000000"
      ]
    ] as const
  ) {
    it(`${name} is refused naming its line`, () => {
      const refused = firstRefused([frame, line, frame])
      assert.strictEqual(refused._tag, "Invalid")
      if (refused._tag !== "Invalid") return
      assert.strictEqual(refused.line, 3)
      assert.include(refused.reason, reason)
    })
  }

  it("the bounds hold what a session records", () => {
    const refused = firstRefused([
      frame,
      JSON.stringify({ type: "too-large", t: 1, conn: 1, size: Format.MAX_TOO_LARGE_SIZE }),
      JSON.stringify({ type: "frame", t: 1, conn: 1, base64: "AAEC/w==" }),
      createFailed(503),
      close({ _tag: "Retry", cause: "closed with code 1011: restart" }),
      close({ _tag: "Retry", cause: "closed with code 1005" }),
      close({ _tag: "Retry", cause: "closed with code 1006" }),
      close({ _tag: "Retry", cause: "closed with code 4999" }),
      close(fatal({ _tag: "HandshakeRejected", code: 4401, reason: "" })),
      close(fatal({ _tag: "HandshakeRejected", code: 401, reason: "" }), false),
      close({ _tag: "Retry", cause: "upgrade refused with HTTP 503" }, false),
      close(fatal({ _tag: "FrameTooLarge", size: 2_000_000, limit: 1 }))
    ])
    assert.deepStrictEqual(refused, { _tag: "Done", line: 13 })
  })
})
