import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { Sse } from "../src/index.js"

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

  it("an SSE event stands for the `event-data` frame of its name and data, empty data as {}", () => {
    expect(JSON.parse(Sse.eventFrame("action_run", `{"name":"x"}`))).toEqual({ event: "action_run", data: { name: "x" } })
    expect(JSON.parse(Sse.eventFrame("we\"ird", ""))).toEqual({ event: "we\"ird", data: {} })
  })

  it("an answer POST left unanswered names the time-out as Effect's Duration.format prints it", () => {
    expect(Sse.answerTimedOut(30_000)).toBe("no response to the answer within 30s")
    expect(Sse.answerTimedOut(1_500)).toBe("no response to the answer within 1s 500ms")
  })
})
