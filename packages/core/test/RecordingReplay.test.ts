/**
 * One pass over a recording replaying one session (`Recording.ReplayPass`),
 * written once for both editions: the create lines answer the create and compare its request,
 * each connection of the application plays the next recorded one, a recorded end maps to the
 * engine's, an answer is compared with the recorded one; every way a replay cannot go on is a
 * `ReplayProblem` naming its line.
 */
import * as Fs from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "vitest"
import { Dialect, Recording as Format } from "../src/index.js"
import { fileSource } from "./helpers/recordings.js"

const dir = Fs.mkdtempSync(join(tmpdir(), "eas-core-replay-pass-"))
let files = 0

const header = {
  type: "header",
  format: Format.FORMAT,
  version: Format.VERSION,
  sdk: "0.1.0",
  dialect: Dialect.documented,
  transport: "websocket",
  sessionId: "ses_recorded",
  recordedAt: "2026-11-25T12:00:00.000Z"
}

const request = { agent_id: "agent-1", task: "find" }

/** A pass over a file holding the header and these lines. */
const passOver = (lines: ReadonlyArray<unknown>): Format.ReplayPass => {
  const path = join(dir, `${++files}.jsonl`)
  Fs.writeFileSync(path, [header, ...lines].map((l) => JSON.stringify(l)).join("\n") + "\n")
  const opened = Format.Reader.open(fileSource(path))
  if (!("reader" in opened)) throw new Error(opened.reason)
  return new Format.ReplayPass(opened.reader)
}

const connection = (conn: number, t: number) => [
  { type: "connect", t, conn },
  { type: "open", t: t + 1, conn },
  { type: "frame", t: t + 2, conn, text: "{\"event\":\"thoughts_and_memories\",\"data\":{}}" },
  { type: "close", t: t + 3, conn, opened: true, outcome: { _tag: "Retry", cause: "closed with code 1006" } }
]

describe("Recording.ReplayPass", () => {
  it("answers the create as recorded, then plays the connections in order", () => {
    const pass = passOver([
      { type: "create", t: 0, request },
      { type: "created", t: 5, session: { session_id: "ses_recorded" } },
      ...connection(1, 10),
      ...connection(2, 20),
      { type: "end", t: 30, reason: "complete" }
    ])
    assert.deepStrictEqual(pass.create(request), { _tag: "Created", line: 3, session: { session_id: "ses_recorded" } })
    assert.strictEqual(pass.phase, "events")
    assert.strictEqual(pass.failure, undefined)
    const first = pass.nextConnection("ses_recorded", "ses_recorded")
    assert.isFalse(Format.isReplayProblem(first))
    assert.deepStrictEqual((first as Format.Numbered).line, 4)
    assert.strictEqual((pass.nextInConnection(1) as Format.Numbered).entry.type, "open")
    assert.strictEqual((pass.nextInConnection(1) as Format.Numbered).entry.type, "frame")
    // The engine ended the first connection itself after its last frame: its close is skipped.
    const second = pass.nextConnection("ses_recorded", "ses_recorded") as Format.Numbered
    assert.deepStrictEqual(second.entry, { type: "connect", t: 20, conn: 2 })
    for (const type of ["open", "frame", "close"]) {
      assert.strictEqual((pass.nextInConnection(2) as Format.Numbered).entry.type, type)
    }
    assert.deepStrictEqual(pass.nextConnection("ses_recorded", "ses_recorded"), {
      _tag: "Mismatch",
      line: 12,
      subject: "connection",
      expected: "no more connections (the recording ends here)",
      actual: "the application connected again",
      difference: "expected no more connections (the recording ends here), got the application connected again"
    })
  })

  it("a different create request is kept and reported by the first connection, once", () => {
    const pass = passOver([
      { type: "create", t: 0, request },
      { type: "created", t: 5, session: { session_id: "ses_recorded" } },
      ...connection(1, 10)
    ])
    const answer = pass.create({ ...request, task: "other" })
    assert.strictEqual(answer._tag, "Created")
    const problem = pass.nextConnection("ses_recorded", "ses_recorded")
    assert.isTrue(Format.isReplayProblem(problem))
    assert.deepInclude(problem, { _tag: "Mismatch", line: 2, subject: "create" })
    assert.include((problem as { difference: string }).difference, "task")
    // Reported once: the next connection plays the recording.
    assert.strictEqual((pass.nextConnection("ses_recorded", "ses_recorded") as Format.Numbered).line, 4)
  })

  it("the application's create is compared as the recorder wrote it: a parameter named key kept, the credential parameter and its keys scrubbed alike", () => {
    const start = "https://example.com/search?key=pizza&token=t-1&apiKey=<redacted>"
    const pass = passOver([
      { type: "create", t: 0, request: { ...request, start_url: start, goal: "use <redacted>" } },
      { type: "created", t: 5, session: { session_id: "ses_recorded" } },
      ...connection(1, 10)
    ])
    const secret = "sk-replaying-app-key-0123"
    const answer = pass.create(
      { ...request, start_url: "https://example.com/search?key=pizza&token=t-1&apiKey=anything", goal: `use ${secret}` },
      [secret]
    )
    assert.strictEqual(answer._tag, "Created")
    assert.strictEqual(pass.failure, undefined)
    // What differs is shown scrubbed: the application's key never reaches a mismatch.
    const other = passOver([{ type: "create", t: 0, request }, { type: "created", t: 5, session: { session_id: "ses_recorded" } }])
    other.create({ ...request, task: `other ${secret}` }, [secret])
    assert.notInclude(JSON.stringify(other.failure), secret)
    assert.include(JSON.stringify(other.failure), "other <redacted>")
  })

  it("a failed create answers its error; the next create line answers the next create", () => {
    const pass = passOver([
      { type: "create", t: 0, request },
      { type: "create-failed", t: 1, error: { _tag: "RateLimited", retryAfter: 1 } },
      { type: "create", t: 2, request },
      { type: "created", t: 3, session: { session_id: "ses_recorded" } }
    ])
    assert.deepStrictEqual(pass.create(request), {
      _tag: "CreateFailed",
      line: 3,
      error: { _tag: "RateLimited", retryAfter: 1 }
    })
    assert.strictEqual(pass.phase, "create")
    assert.strictEqual(pass.create(request)._tag, "Created")
  })

  it("a create-failed with an error a create cannot fail with is not valid", () => {
    const pass = passOver([
      { type: "create", t: 0, request },
      { type: "create-failed", t: 1, error: { _tag: "Superseded" } }
    ])
    assert.deepStrictEqual(pass.create(request), { _tag: "NotRecorded" })
    assert.deepStrictEqual(pass.nextConnection("ses_recorded", "ses_recorded"), {
      _tag: "Invalid",
      line: 3,
      reason: "create-failed: the error is not one a create can fail with"
    })
  })

  it("a create against a recording of attach (no create) is a Mismatch, whatever the request (issue 36)", () => {
    const problem: Format.ReplayProblem = {
      _tag: "Mismatch",
      line: 2,
      subject: "create",
      expected: "an attach (the recording has no create)",
      actual: "a create request",
      difference: "expected an attach (the recording has no create), got a create request"
    }
    for (const create of [request, { ...request, task: "anything else", max_actions: 99 }]) {
      const pass = passOver(connection(1, 0))
      assert.deepStrictEqual(pass.create(create), { _tag: "Unrecorded", problem })
      assert.strictEqual(pass.phase, "events")
      // The first connection reports it too.
      assert.deepStrictEqual(pass.nextConnection("ses_recorded", "ses_recorded"), problem)
    }
    // A create after the recorded ones.
    const twice = passOver([
      { type: "create", t: 0, request },
      { type: "create-failed", t: 1, error: { _tag: "RateLimited", retryAfter: 1 } },
      { type: "end", t: 2, reason: "failed" }
    ])
    assert.strictEqual(twice.create(request)._tag, "CreateFailed")
    assert.deepStrictEqual(twice.create(request), {
      _tag: "Unrecorded",
      problem: Format.unrecordedCreate(4, 1)
    })
    assert.deepInclude(Format.unrecordedCreate(4, 1), {
      expected: "no create after the 1 recorded",
      difference: "expected no create after the 1 recorded, got a create request"
    })
  })

  it("the application's answers are compared oldest first: two pending at once, answered in order (issue 36)", () => {
    const given = new Format.GivenAnswers()
    const first: Format.AnswerData = { granted: true, resource_type: "request_user_input", action_session_id: "as_1", input: "a" }
    const second: Format.AnswerData = { ...first, action_session_id: "as_2", input: "b" }
    given.give(first)
    given.give(second)
    assert.strictEqual(given.size, 2)
    assert.deepStrictEqual(given.take(), first)
    assert.deepStrictEqual(given.take(), second)
    assert.strictEqual(given.take(), undefined)
    const bounded = new Format.GivenAnswers(1)
    assert.isTrue(bounded.give(first))
    assert.isFalse(bounded.give(second))
    assert.strictEqual(bounded.size, 1)
  })

  it("an answer the recording never holds is a Mismatch before the connection's last line and at its close (issue 36)", () => {
    const data: Format.AnswerData = { granted: true, resource_type: "payment", action_session_id: "as_pay" }
    const pass = passOver([
      { type: "connect", t: 0, conn: 1 },
      { type: "open", t: 1, conn: 1 },
      { type: "frame", t: 2, conn: 1, text: "{\"event\":\"external_resource_requested\",\"data\":{}}" },
      { type: "frame", t: 3, conn: 1, text: "{\"event\":\"action_run\",\"data\":{}}" },
      { type: "frame", t: 4, conn: 1, text: "{\"event\":\"complete\",\"data\":{}}" },
      { type: "close", t: 5, conn: 1, opened: true, outcome: { _tag: "End", reason: "complete" } }
    ])
    pass.phase = "events"
    pass.nextConnection("ses_recorded", "ses_recorded")
    const given = new Format.GivenAnswers()
    const play = () => {
      const next = pass.nextInConnection(1) as Format.Numbered
      return pass.unrecorded(next.entry, next.line, 1, given)
    }
    assert.strictEqual(play(), undefined) // open
    assert.strictEqual(play(), undefined) // the request
    given.give(data)
    // Not yet: an answer line may still come before the close.
    assert.strictEqual(play(), undefined) // action_run
    // The last frame before the close (the engine may end on `complete`): the answer was never recorded.
    const problem = play()
    assert.deepStrictEqual(problem, Format.unrecordedAnswer(7, 1, data))
    assert.deepInclude(problem, { _tag: "Mismatch", line: 7, subject: "answer", actual: JSON.stringify(data) })
    assert.include((problem as { difference: string }).difference, "the recording never answered that request")
    // At the close itself.
    const close: Format.Entry = { type: "close", t: 5, conn: 1, opened: true, outcome: { _tag: "Interrupted" } }
    assert.deepStrictEqual(Format.checkUnrecorded(close, 9, 1, { _tag: "Done", line: 9 }, given), Format.unrecordedAnswer(9, 1, data))
    // An answer line consumes it; nothing waiting, nothing to report.
    const answer: Format.Entry = { type: "answer", t: 5, conn: 1, data, result: "written" }
    assert.strictEqual(Format.checkUnrecorded(answer, 8, 1, { _tag: "Done", line: 9 }, given), undefined)
    given.take()
    assert.strictEqual(Format.checkUnrecorded(close, 9, 1, { _tag: "Done", line: 9 }, given), undefined)
  })

  it("a connection that stops before the recorded one goes on is a mismatch; a line out of place is not valid", () => {
    const pass = passOver([{ type: "frame", t: 0, conn: 1, text: "{}" }])
    pass.phase = "events"
    assert.deepInclude(pass.nextConnection("ses_recorded", "ses_recorded"), {
      _tag: "Mismatch",
      line: 2,
      expected: "the recorded connection to go on here"
    })
    const inside = passOver([{ type: "connect", t: 0, conn: 1 }, { type: "create", t: 1, request }])
    inside.phase = "events"
    inside.nextConnection("ses_recorded", "ses_recorded")
    assert.deepStrictEqual(inside.nextInConnection(1), { _tag: "Invalid", line: 3, reason: "a create line before connection 1 closed" })
    const cut = passOver([{ type: "connect", t: 0, conn: 1 }])
    cut.nextConnection("ses_recorded", "ses_recorded")
    assert.deepInclude(cut.nextInConnection(1), { _tag: "Invalid", reason: "the recording ends before its connection closed" })
  })

  it("a pass without a reader fails every connection with its problem", () => {
    const pass = new Format.ReplayPass(undefined, { _tag: "Invalid", line: 0, reason: "gone" })
    assert.strictEqual(pass.phase, "events")
    assert.deepStrictEqual(pass.create(request), { _tag: "NotRecorded" })
    assert.deepStrictEqual(pass.nextConnection("ses_recorded", "ses_recorded"), { _tag: "Invalid", line: 0, reason: "gone" })
    assert.deepStrictEqual(pass.nextConnection("ses_recorded", "ses_recorded"), { _tag: "Invalid", line: 0, reason: "gone" })
  })

  it("recorded ends map to the engine's, or are not valid", () => {
    const close = (outcome: Format.Outcome): Format.CloseEntry => ({ type: "close", t: 0, conn: 1, opened: true, outcome })
    assert.deepStrictEqual(Format.recordedEnd(close({ _tag: "End", reason: "complete" }), 7), { _tag: "End", reason: "complete" })
    assert.deepStrictEqual(Format.recordedEnd(close({ _tag: "End", reason: "tired" }), 7), {
      _tag: "Invalid",
      line: 7,
      reason: "close: unknown reason \"tired\""
    })
    const lost = { _tag: "ConnectionLost", attempts: 3 }
    assert.deepStrictEqual(Format.recordedEnd(close({ _tag: "Fatal", reason: "connection-lost", error: lost }), 7), {
      _tag: "Fatal",
      reason: "connection-lost",
      error: lost
    })
    assert.strictEqual(
      Format.recordedEnd(close({ _tag: "Fatal", reason: "failed", error: { _tag: "RateLimited" } }), 7)._tag,
      "Invalid"
    )
    assert.deepStrictEqual(Format.recordedEnd(close({ _tag: "Retry", cause: "code 1006" }), 7), { _tag: "Retry", cause: "code 1006" })
    const timeout = { _tag: "ConnectTimeout", timeoutMs: 10 }
    assert.deepStrictEqual(Format.recordedEnd(close({ _tag: "Retry", error: timeout }), 7), {
      _tag: "RetryConnectTimeout",
      error: timeout
    })
    assert.strictEqual(Format.recordedEnd(close({ _tag: "Retry", error: { _tag: "Superseded" } }), 7)._tag, "Invalid")
    assert.deepStrictEqual(Format.recordedEnd(close({ _tag: "Interrupted" }), 7), { _tag: "AwaitClose" })
    assert.deepStrictEqual(Format.recordedEnd(close({ _tag: "Defect", message: "bug" }), 7), { _tag: "Defect" })
  })

  it("an answer is compared with the recorded one, or missed within the wait", () => {
    const data: Format.AnswerData = { granted: true, resource_type: "x", action_session_id: "a", input: "ok" }
    const recorded: Format.AnswerEntry = { type: "answer", t: 0, conn: 1, data, result: "written" }
    assert.strictEqual(Format.checkAnswer(recorded, 9, recorded.data, "30s"), undefined)
    const other: Format.AnswerData = { ...data, input: "no" }
    const differs = Format.checkAnswer(recorded, 9, other, "30s")
    assert.deepInclude(differs, { _tag: "Mismatch", line: 9, subject: "answer" })
    assert.include((differs as { difference: string }).difference, "input")
    assert.deepInclude(Format.checkAnswer(recorded, 9, undefined, "30s"), {
      _tag: "Mismatch",
      actual: "no answer within 30s"
    })
  })
})
