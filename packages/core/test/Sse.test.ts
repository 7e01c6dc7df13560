import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { Secrets, Sse } from "../src/index.js"

/** Runs the parser over `pieces` and lists what it reported. */
const parse = (pieces: ReadonlyArray<string>, maxData = 1000): { seen: Array<string>; parser: Sse.SseParser } => {
  const seen: Array<string> = []
  const parser = new Sse.SseParser({
    event: (name, data) => seen.push(`${name}=${data}`),
    tooLarge: (size) => seen.push(`too-large ${size}`)
  }, maxData)
  for (const piece of pieces) parser.feed(piece)
  return { seen, parser }
}

/** `text` cut into pieces of `size` characters. */
const cut = (text: string, size: number): Array<string> => {
  const pieces: Array<string> = []
  for (let i = 0; i < text.length; i += size) pieces.push(text.slice(i, i + size))
  return pieces
}

describe("Sse.SseParser", () => {
  it("reads named events, data lines joined by \\n, comments, and the three line ends", () => {
    const { seen } = parse([": hi\nevent: a\ndata: 1\ndata:2\r\n\r\nevent: b\rdata: x\r\rdata: y\n\n"])
    expect(seen).toEqual(["a=1\n2", "b=x", "message=y"])
  })

  it("a \\r at the end of a piece and a \\n at the start of the next are one line end", () => {
    expect(parse(["data: 1\r", "\n\r", "\n"]).seen).toEqual(["message=1"])
  })

  it("data of exactly maxData characters is delivered; one more is too large, reported once", () => {
    expect(parse([`data: ${"x".repeat(10)}\n\n`], 10).seen).toEqual([`message=${"x".repeat(10)}`])
    expect(parse([`data: ${"x".repeat(11)}\n`, "data: y\n\n"], 10).seen).toEqual(["too-large 11"])
  })

  it("a line that never ends is reported too large and dropped to its end; the next event is read", () => {
    const { seen } = parse([`data: ${"x".repeat(100)}`, "x".repeat(100), "x\n\ndata: ok\n\n"], 10)
    expect(seen).toEqual(["too-large 106", "message=ok"])
  })

  it("any cut of the text gives the same events (property)", () => {
    const line = fc.oneof(
      fc.constantFrom("", ": comment", "event: a", "event: b", "id: 1", "retry: 5", "data"),
      fc.string({ maxLength: 12 }).map((s) => `data: ${s.replace(/[\r\n]/g, "")}`)
    )
    const ending = fc.constantFrom("\n", "\r", "\r\n")
    const document = fc.array(fc.tuple(line, ending), { maxLength: 30 }).map((lines) =>
      lines.map(([l, e]) => l + e).join("")
    )
    fc.assert(fc.property(document, fc.array(fc.nat(), { maxLength: 10 }), (text, cuts) => {
      // A cut between `\r` and `\n` joins them as one line end: the same result either way.
      const at = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b)
      const pieces = [0, ...at].map((from, i, all) => text.slice(from, all[i + 1] ?? text.length))
      expect(parse(pieces, 40).seen).toEqual(parse([text], 40).seen)
    }))
  })

  it("issue 20 item 4: a 1 MB event fed in 256-byte pieces is scanned in linear work", () => {
    const size = 1024 * 1024
    const text = `event: thoughts_and_memories\ndata: {"thought":"${"t".repeat(size)}"}\n\n`
    const { parser, seen } = parse(cut(text, 256), size + 64)
    expect(seen).toHaveLength(1)
    expect(seen[0]?.startsWith("thoughts_and_memories={")).toBe(true)
    // Every character scanned once and joined into its line once: at most twice the text. The
    // parser this replaced rescanned the unfinished line on every piece: about 2,000 times the text.
    expect(parser.scanned).toBeLessThanOrEqual(2 * text.length)
  })

  it("an endless line fed in small pieces costs linear work and memory bounded by maxData", () => {
    const { parser, seen } = parse(cut(`data: ${"x".repeat(200_000)}`, 100), 1000)
    expect(seen).toEqual(["too-large 1100"])
    expect(parser.scanned).toBeLessThanOrEqual(2 * 200_006)
  })

  describe("issue 36 item 5: every data line counts toward the bound, an empty one too", () => {
    it("a stream of empty data lines is refused once their joined newlines pass maxData", () => {
      const maxData = 1000
      const seen: Array<string> = []
      const parser = new Sse.SseParser({
        event: (name, data) => seen.push(`${name}=${data.length}`),
        tooLarge: (size) => seen.push(`too-large ${size}`)
      }, maxData)
      // Fed line by line, as a hostile service would send them: ten times the bound.
      let consumed = 0
      let most = 0
      for (; consumed < 10 * maxData && seen.length === 0; consumed++) {
        parser.feed("data:\n")
        most = Math.max(most, parser.retained)
      }
      // N empty lines join into N - 1 newlines: the line that makes 1001 of them is refused.
      expect(seen).toEqual([`too-large ${maxData + 1}`])
      expect(consumed).toBe(maxData + 2)
      expect(most).toBeLessThanOrEqual(maxData)
      // The rest of the event is read without keeping anything, and the next event is read.
      for (let i = 0; i < 10 * maxData; i++) parser.feed("data:\n")
      expect(parser.retained).toBe(0)
      parser.feed("\ndata: ok\n\n")
      expect(seen).toEqual([`too-large ${maxData + 1}`, "message=2"])
    })

    it("an event of exactly maxData newlines (maxData + 1 empty lines) is delivered whole", () => {
      const maxData = 50
      expect(parse(["data:\n".repeat(maxData + 1) + "\n"], maxData).seen).toEqual([`message=${"\n".repeat(maxData)}`])
      expect(parse(["data:\n".repeat(maxData + 2) + "\n"], maxData).seen).toEqual([`too-large ${maxData + 1}`])
      // Empty lines among text keep their place.
      expect(parse(["data\ndata: a\ndata\ndata\ndata: b\ndata\n\n"]).seen).toEqual(["message=\na\n\n\nb\n"])
    })

    it("a frame of exactly maxData characters is delivered, cut in any pieces", () => {
      const text = `data: ${"x".repeat(30)}\ndata\ndata: ${"y".repeat(28)}\n\n`
      for (const size of [1, 2, 7, text.length]) {
        expect(parse(cut(text, size), 60).seen).toEqual([`message=${"x".repeat(30)}\n\n${"y".repeat(28)}`])
        expect(parse(cut(text, size), 59).seen).toEqual(["too-large 60"])
      }
    })

    it("what the parser retains never passes the bound (data) plus one unfinished line (property)", () => {
      const maxData = 40
      const line = fc.oneof(
        fc.constantFrom("", "data", "data:", "data: ", ": c", "event: a", "event", "id"),
        fc.string({ maxLength: 30 }).map((s) => `data: ${s.replace(/[\r\n]/g, "")}`),
        fc.integer({ min: 0, max: 200 }).map((n) => `data: ${"z".repeat(n)}`),
        // A run of empty data lines, with and without the colon.
        fc.tuple(fc.integer({ min: 1, max: 100 }), fc.constantFrom("data", "data:")).map(([n, l]) =>
          Array.from({ length: n }, () => l).join("\n")
        )
      )
      const ending = fc.constantFrom("\n", "\r", "\r\n")
      const document = fc.array(fc.tuple(line, ending), { maxLength: 200 }).map((lines) =>
        lines.map(([l, e]) => l + e).join("")
      )
      fc.assert(fc.property(document, fc.integer({ min: 1, max: 300 }), (text, size) => {
        const parser = new Sse.SseParser({ event: () => {}, tooLarge: () => {} }, maxData)
        for (const piece of cut(text, size)) {
          parser.feed(piece)
          // At most maxData of data, and an unfinished line of at most maxData + 64.
          expect(parser.retained).toBeLessThanOrEqual(maxData + maxData + 64)
        }
      }))
    })
  })

  describe("a field line without a colon is that field with an empty value (WHATWG)", () => {
    it("`data` alone is an empty data line", () => {
      expect(parse(["data\n\n"]).seen).toEqual(["message="])
      expect(parse(["data: a\ndata\n\n"]).seen).toEqual(["message=a\n"])
      expect(parse(["data\r\ndata: b\r\n\r\n"]).seen).toEqual(["message=\nb"])
    })

    it("`event` alone names the event with nothing: it is a `message`", () => {
      expect(parse(["event: a\nevent\ndata: x\n\n"]).seen).toEqual(["message=x"])
      expect(parse(["event\nevent: b\ndata: x\n\n"]).seen).toEqual(["b=x"])
    })

    it("an unknown field alone is ignored; `datax` is no data line", () => {
      expect(parse(["id\nretry\nfoo\ndatax\ndata: y\n\n"]).seen).toEqual(["message=y"])
    })
  })

  it("the transport's GET asks for an event stream, uncached; its printable address hides the key", () => {
    expect(Sse.streamHeaders).toEqual({ accept: "text/event-stream", "cache-control": "no-cache" })
    expect(Sse.streamParams("s1", "k")).toEqual({ sessionId: "s1", apiKey: "k" })
    expect(Sse.printableStreamUrl("https://h/events", "s1")).toBe("https://h/events?sessionId=s1&apiKey=<redacted>")
    expect(Sse.REFUSAL_READ_LIMIT).toBeGreaterThan(4096)
  })

  it("an answer is POSTed framed with `event`", () => {
    const data = { granted: true, resource_type: "otp", action_session_id: "a1" }
    expect(JSON.parse(Sse.answerBody(data))).toEqual({ event: "external_resource_granted", data })
  })

  it("an answer POST left unanswered names the time-out as Effect's Duration.format prints it", () => {
    expect(Sse.answerTimedOut(30_000)).toBe("no response to the answer within 30s")
    expect(Sse.answerTimedOut(1_500)).toBe("no response to the answer within 1s 500ms")
  })
})

describe("Sse.streamRefusal", () => {
  const key = "sk-SECRET-1234567890"
  const bytes = (text: string) => new TextEncoder().encode(text)

  it("a status that rejects for good is Rejected, its body the reason without the key, cut; any other is retried", () => {
    expect(Sse.streamRefusal(401, bytes(`bad key ${key} in ?apiKey=${key}`), key)).toStrictEqual({
      _tag: "Rejected",
      code: 401,
      reason: "bad key <redacted> in ?apiKey=<redacted>"
    })
    const long = Sse.streamRefusal(404, bytes("x".repeat(Secrets.RAW_LIMIT + 500)), key)
    expect(long._tag === "Rejected" && long.reason.length).toBeLessThanOrEqual(Secrets.RAW_LIMIT)
    expect(Sse.streamRefusal(503, bytes(key), key)).toStrictEqual({
      _tag: "Refused",
      message: "event stream refused with HTTP 503"
    })
  })
})
