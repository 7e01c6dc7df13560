/**
 * The recorder's state without I/O (Journal.Journal, Journal.JournalTap): the queue bounded in
 * bytes, the batches scrubbed, redacted and checked for keys, the header, the session claimed, the
 * connections numbered and the `alive` lines kept.
 */
import { assert, describe, it } from "vitest"
import { Dialect, Recording } from "effect-agent-session-core"
import { Journal } from "../src/index.js"

const key = "sk-live-0123456789abcdef"

const header = (sessionId = "ses_1"): Recording.Header =>
  Journal.headerOf({ sessionId, dialect: Dialect.documented, transport: "websocket" }, "1.2.3", Date.UTC(2026, 0, 1))

const frame = (text: string, t = 0): Recording.Entry => ({ type: "frame", t, conn: 1, text })

/** The lines of a batch, parsed. */
const parsed = (lines: ReadonlyArray<string> | undefined): ReadonlyArray<Record<string, unknown>> =>
  (lines ?? []).map((line) => JSON.parse(line) as Record<string, unknown>)

describe("Journal.headerOf", () => {
  it("writes the format, its version, the SDK, the session's dialect and transport, and when", () => {
    assert.deepStrictEqual(header(), {
      type: "header",
      format: Recording.FORMAT,
      version: Recording.VERSION,
      sdk: "1.2.3",
      dialect: Dialect.documented,
      transport: "websocket",
      sessionId: "ses_1",
      recordedAt: "2026-01-01T00:00:00.000Z"
    })
  })
})

describe("Journal.frameEntry and answerResult", () => {
  it("text stays text; a binary frame of UTF-8 text is text; other bytes are base64", () => {
    assert.deepStrictEqual(Journal.frameEntry(5, 2, "{}"), { type: "frame", t: 5, conn: 2, text: "{}" })
    assert.deepStrictEqual(Journal.frameEntry(5, 2, new TextEncoder().encode("héllo")), {
      type: "frame",
      t: 5,
      conn: 2,
      text: "héllo"
    })
    assert.deepStrictEqual(Journal.frameEntry(5, 2, new Uint8Array([0xff, 0x00, 0x01])), {
      type: "frame",
      t: 5,
      conn: 2,
      base64: "/wAB"
    })
  })

  it("an answer written or confirmed is kept as such; a failed write with its message and whether it is retried", () => {
    assert.strictEqual(Journal.answerResult("written"), "written")
    assert.strictEqual(Journal.answerResult("confirmed"), "confirmed")
    assert.deepStrictEqual(Journal.answerResult({ retry: true, message: "closed", closing: true }), {
      failed: "closed",
      retry: true
    })
  })
})

describe("Journal.outcomeEntry", () => {
  type Err = { readonly _tag: string }
  const encode = (error: Err): Recording.EncodedError => ({ _tag: error._tag, message: "encoded" })

  it("an end keeps its reason; a fatal end its reason and error encoded; a drop its text, or its error encoded", () => {
    assert.deepStrictEqual(Journal.outcomeEntry<Err, Err>({ _tag: "End", reason: "complete" }, encode), { _tag: "End", reason: "complete" })
    assert.deepStrictEqual(
      Journal.outcomeEntry<Err, Err>({ _tag: "Fatal", reason: "superseded", error: { _tag: "Superseded" } }, encode),
      { _tag: "Fatal", reason: "superseded", error: { _tag: "Superseded", message: "encoded" } }
    )
    assert.deepStrictEqual(
      Journal.outcomeEntry<Err, Err>({ _tag: "Retry", error: "closed with code 1006" }, encode),
      { _tag: "Retry", cause: "closed with code 1006" }
    )
    assert.deepStrictEqual(
      Journal.outcomeEntry<Err, Err>({ _tag: "Retry", error: { _tag: "ConnectTimeout" }, connectTimeout: true }, encode),
      { _tag: "Retry", error: { _tag: "ConnectTimeout", message: "encoded" } }
    )
  })
})

describe("Journal.Journal", () => {
  it("a batch is the header first, once, then the lines noted since the last batch", () => {
    const journal = new Journal.Journal()
    journal.header = header()
    journal.push({ type: "connect", t: 0, conn: 1 })
    const first = parsed(journal.batch([]))
    assert.deepStrictEqual(first.map((line) => line["type"]), ["header", "connect"])
    journal.wrote(first.length)
    journal.push({ type: "open", t: 3, conn: 1 })
    const second = parsed(journal.batch([]))
    assert.deepStrictEqual(second.map((line) => line["type"]), ["open"])
    journal.wrote(second.length)
    assert.strictEqual(journal.written, 3)
    assert.deepStrictEqual(journal.batch([]), [])
    assert.isTrue(journal.settled)
  })

  it("without a header nothing is taken, unless the writer gives one; ready says when a batch can be taken", () => {
    const journal = new Journal.Journal()
    journal.push({ type: "connect", t: 0, conn: 1 })
    assert.isFalse(journal.ready(false))
    assert.isTrue(journal.ready(true))
    assert.deepStrictEqual(journal.batch([]), [])
    assert.strictEqual(journal.pending, 1)
    assert.isFalse(journal.settled)
    const forced = parsed(journal.batch([], () => header("ses_default")))
    assert.deepStrictEqual(forced.map((line) => line["type"]), ["header", "connect"])
    assert.strictEqual(forced[0]?.["sessionId"], "ses_default")
    assert.strictEqual(journal.pending, 0)
  })

  it("every line is scrubbed of the keys, redacted, and scrubbed again (a key the redact puts back is scrubbed)", () => {
    const journal = new Journal.Journal({
      redact: (entry) => entry.type === "frame" && "text" in entry ? { ...entry, text: `${entry.text} ${key}` } : entry
    })
    journal.header = header()
    journal.push(frame(JSON.stringify({ token: key, note: "kept" })))
    const lines = journal.batch([key])
    assert.isDefined(lines)
    const text = lines?.join("\n") ?? ""
    assert.notInclude(text, key)
    assert.include(text, "kept")
    assert.include(text, Recording.REDACTED)
  })

  it("a redact that fails stops the recording, its message scrubbed; nothing of the batch is taken", () => {
    const journal = new Journal.Journal({
      redact: () => {
        // The redact function is the application's: it may throw, and the recorder reports it.
        throw new Error(`cannot redact with ${key}`)
      }
    })
    journal.header = header()
    journal.push(frame("{}"))
    assert.strictEqual(journal.batch([key]), undefined)
    assert.strictEqual(journal.failure, `the redact function failed: cannot redact with ${Recording.REDACTED}`)
    assert.isFalse(journal.ready(true))
    assert.isFalse(journal.settled)
  })

  it("a line that still holds a key in a form that cannot be redacted stops the recording before it", () => {
    const journal = new Journal.Journal()
    journal.header = header()
    journal.push(frame("{}"))
    journal.push(frame(JSON.stringify({ blob: btoa(`xx${key}xx`) })))
    assert.strictEqual(journal.batch([key]), undefined)
    assert.strictEqual(
      journal.failure,
      "a frame line holds a known key in base64 that cannot be redacted: the recording stopped before it"
    )
    assert.strictEqual(journal.written, 0)
  })

  it("the queue is bounded in bytes: the line past the bound stops the recording (once) and the queue is dropped", () => {
    const journal = new Journal.Journal({ bufferSize: 400 })
    assert.isFalse(journal.push(frame("x".repeat(100))))
    assert.strictEqual(journal.pending, 1)
    assert.isTrue(journal.push(frame("x".repeat(300))))
    assert.strictEqual(
      journal.failure,
      "the writer fell behind the session by more than 400 bytes: the recording stopped"
    )
    assert.strictEqual(journal.pending, 0)
    assert.isFalse(journal.push(frame("{}")))
    assert.strictEqual(journal.pending, 0)
    assert.isFalse(journal.fail("later"))
    assert.strictEqual(journal.failure, "the writer fell behind the session by more than 400 bytes: the recording stopped")
  })

  it("a batch taken frees the bound; a bufferSize below 1 is the default", () => {
    const journal = new Journal.Journal({ bufferSize: 400 })
    journal.header = header()
    assert.isFalse(journal.push(frame("x".repeat(200))))
    journal.batch([])
    assert.isFalse(journal.push(frame("x".repeat(200))))
    assert.strictEqual(journal.failure, undefined)
    assert.strictEqual(new Journal.Journal({ bufferSize: 0 }).bufferSize, Journal.defaultBufferSize)
  })

  it("a line's time is the milliseconds since the first line noted, whole and never negative", () => {
    const journal = new Journal.Journal()
    assert.deepStrictEqual([1000.4, 1250.6, 900, 3000].map((millis) => journal.time(millis)), [0, 250, 0, 2000])
  })

  it("the first session seen claims the recording; another is not recorded, and warned of once", () => {
    const journal = new Journal.Journal()
    assert.strictEqual(journal.claim("ses_1"), "recorded")
    assert.strictEqual(journal.claim("ses_2"), "warn")
    assert.strictEqual(journal.claim("ses_3"), "other")
    assert.strictEqual(journal.claim("ses_1"), "recorded")
    assert.strictEqual(journal.claimed, "ses_1")
  })
})

describe("Journal.JournalTap", () => {
  it("numbers the attempts of every connection in one sequence; an attempt never connected is 0", () => {
    const journal = new Journal.Journal()
    const first = new Journal.JournalTap(journal)
    const second = new Journal.JournalTap(journal)
    assert.strictEqual(first.conn(1), 0)
    assert.strictEqual(first.connect(1), 1)
    assert.strictEqual(second.connect(1), 2)
    assert.strictEqual(first.connect(2), 3)
    assert.deepStrictEqual([first.conn(1), first.conn(2), second.conn(1)], [1, 3, 2])
  })

  it("keeps at most one alive line a second per attempt", () => {
    const tap = new Journal.JournalTap(new Journal.Journal())
    assert.deepStrictEqual([0, 500, 999, 1000, 1500, 2100].map((t) => tap.alive(1, t)), [true, false, false, true, false, true])
    assert.isTrue(tap.alive(2, 600))
  })
})
