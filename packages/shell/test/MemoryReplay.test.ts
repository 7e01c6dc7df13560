/**
 * The in-memory replay of a recording (`KitReplay.MemoryReplay`, `KitReplay.ReplayDriver`), written
 * once for both editions over the core's `Recording.ReplayPass`: the create answered as recorded,
 * each attempt's lines played as steps, the application's answers compared with the recorded ones,
 * the recorded errors and sessions decoded by the shell's decoders; every way a replay cannot go
 * on is a `ReplayProblem` naming its line.
 */
import * as Fs from "node:fs"
import { assert, describe, it } from "vitest"
import { Recording as Format } from "effect-agent-session-core"
import * as Recordings from "effect-agent-session-conformance/recordings"
import { FileSource, KitReplay } from "../src/index.js"

// ---------------------------------------------------------------------------
// The in-memory replay as a step iterator (KitReplay.MemoryReplay), over the recordings the
// editions' replay tests write (the conformance suite's recordings)
// ---------------------------------------------------------------------------

/** A replay of the lines written to a file. */
const replayOf = (lines: ReadonlyArray<unknown>, redact?: (entry: Format.Entry) => Format.Entry): KitReplay.MemoryReplay => {
  const replay = KitReplay.MemoryReplay.open({ source: FileSource.fromFile(Recordings.writeRecording(lines), Fs), redact })
  if (!(replay instanceof KitReplay.MemoryReplay)) throw new Error(replay.reason)
  return replay
}

/**
 * Drives an attempt to its last step as a shell would: sleeps at once (the time summed), gives the
 * answers of `answers` when one is awaited (`"none"`: none comes within the timeout), and traces
 * each step in brief.
 */
const drive = (
  attempt: KitReplay.ReplayAttempt | Format.ReplayProblem,
  answers: Array<Format.AnswerData | "none"> = [],
  decodes = true
): { readonly trace: ReadonlyArray<string>; readonly last: KitReplay.ReplayStep | Format.ReplayProblem } => {
  if (Format.isReplayProblem(attempt)) return { trace: [], last: attempt }
  const trace: Array<string> = []
  let slept = 0
  for (let i = 0; i < 100; i++) {
    const step = attempt.poll()
    switch (step._tag) {
      case "Sleep":
        slept += step.millis
        attempt.slept()
        continue
      case "AwaitAnswer": {
        const answer = answers.shift()
        if (answer === undefined) return { trace, last: step }
        trace.push(`${slept} await`)
        if (answer === "none") attempt.noAnswer("5s")
        else attempt.answered(answer)
        continue
      }
      case "End":
        if (!decodes && (step.end._tag === "Fatal" || step.end._tag === "RetryConnectTimeout")) {
          attempt.notDecoded()
          continue
        }
        return { trace, last: step }
      case "Fail":
        return { trace, last: step }
      case "Text":
        trace.push(`${slept} ${(JSON.parse(step.text) as { event: string }).event}`)
        continue
      case "Binary":
        trace.push(`${slept} bytes ${Array.from(step.bytes).join(",")}`)
        continue
      case "NamedEvent":
        trace.push(`${slept} ${step.event} ${step.data}`)
        continue
      default:
        trace.push(`${slept} ${step._tag}`)
    }
  }
  throw new Error("the attempt does not end")
}

const lineOf = (lines: ReadonlyArray<unknown>, match: (line: Record<string, unknown>) => boolean): number =>
  lines.findIndex((line) => match(line as Record<string, unknown>)) + 1

const opening = [
  Recordings.header(),
  { type: "create", t: 0, request: Recordings.request },
  { type: "created", t: 40, session: { session_id: Recordings.sessionId } },
  { type: "connect", t: 50, conn: 1 },
  { type: "open", t: 60, conn: 1 }
]

const requested = (t: number, id: string) => ({
  type: "frame",
  t,
  conn: 1,
  text: JSON.stringify({
    event: "external_resource_requested",
    data: { resource_type: "request_user_input", reason: "input", action_session_id: id, field_name: "email" }
  })
})

describe("Recording.MemoryReplay", () => {
  it("plays the recorded session step by step: the create, each attempt's lines after their delays, the answer awaited, the recorded ends", () => {
    const lines = Recordings.session()
    const replay = replayOf(lines)
    assert.strictEqual(replay.header.sessionId, Recordings.sessionId)
    const created = replay.create(Recordings.request)
    assert.strictEqual(created._tag, "Created")
    assert.deepStrictEqual(replay.session(), (lines[2] as { session: unknown }).session)
    const pass = replay.connection()
    const first = drive(replay.attempt(pass, Recordings.sessionId))
    assert.deepStrictEqual(first.trace, ["10 Open", "20 started", "1020 action_run"])
    assert.deepStrictEqual(first.last, { _tag: "End", end: { _tag: "Retry", cause: "closed with code 1006" } })
    const second = drive(replay.attempt(pass, Recordings.sessionId), [Recordings.answerData])
    assert.deepStrictEqual(second.trace, [
      "10 Open",
      "100 external_resource_requested",
      "120 await",
      "130 external_resource_granted",
      "30130 action_run",
      "30200 complete"
    ])
    assert.deepStrictEqual(second.last, { _tag: "End", end: { _tag: "End", reason: "complete" } })
    const third = drive(replay.attempt(pass, Recordings.sessionId))
    assert.strictEqual((third.last as Format.ReplayProblem)._tag, "Mismatch")
    assert.strictEqual((third.last as { subject: string }).subject, "connection")
    replay.close()
  })

  it("an answer that differs, or none within the wait, fails the attempt with the Mismatch at the answer line", () => {
    const lines = Recordings.session({ drop: false })
    const at = lineOf(lines, (line) => line["type"] === "answer")
    const differs = replayOf(lines)
    differs.create(Recordings.request)
    const given = { ...Recordings.answerData, input: "john@example.com" }
    const differed = drive(differs.attempt(differs.connection(), Recordings.sessionId), [given]).last
    assert.strictEqual(differed._tag, "Fail")
    const problem = (differed as { problem: Format.ReplayProblem }).problem
    assert.deepStrictEqual({ ...problem, difference: "" }, {
      _tag: "Mismatch",
      line: at,
      subject: "answer",
      expected: JSON.stringify(Recordings.answerData),
      actual: JSON.stringify(given),
      difference: ""
    })
    const silent = replayOf(lines)
    silent.create(Recordings.request)
    const missed = drive(silent.attempt(silent.connection(), Recordings.sessionId), ["none"]).last
    assert.deepStrictEqual(missed, {
      _tag: "Fail",
      problem: Format.checkAnswer(lines[at - 1] as Format.AnswerEntry, at, undefined, "5s") as Format.ReplayProblem
    })
  })

  it("the application's answer is compared after the recording's redact", () => {
    const replay = replayOf(
      Recordings.session({ drop: false, answer: { ...Recordings.answerData, input: "<email>" } }),
      (entry) => (entry.type === "answer" ? { ...entry, data: { ...entry.data, input: "<email>" } } : entry)
    )
    replay.create(Recordings.request)
    const played = drive(replay.attempt(replay.connection(), Recordings.sessionId), [Recordings.answerData])
    assert.deepStrictEqual(played.last, { _tag: "End", end: { _tag: "End", reason: "complete" } })
  })

  it("two pending at once, answered in order, are compared oldest first (issue 36)", () => {
    const first = { ...Recordings.answerData, action_session_id: "as_1", input: "a" }
    const second = { ...Recordings.answerData, action_session_id: "as_2", input: "b" }
    const replay = replayOf([
      ...opening,
      requested(70, "as_1"),
      requested(80, "as_2"),
      { type: "answer", t: 90, conn: 1, data: first, result: "written" },
      { type: "answer", t: 95, conn: 1, data: second, result: "written" },
      { type: "close", t: 100, conn: 1, opened: true, outcome: { _tag: "End", reason: "complete" } }
    ])
    replay.create(Recordings.request)
    const attempt = replay.attempt(replay.connection(), Recordings.sessionId) as KitReplay.ReplayAttempt
    // Both answers are given before the first recorded answer plays.
    assert.deepStrictEqual([attempt.poll(), attempt.poll()], [{ _tag: "Sleep", millis: 10 }, { _tag: "Sleep", millis: 10 }])
    attempt.slept()
    assert.deepStrictEqual(attempt.poll(), { _tag: "Open" })
    attempt.answered(first)
    attempt.answered(second)
    const played = drive(attempt)
    assert.deepStrictEqual(played.last, { _tag: "End", end: { _tag: "End", reason: "complete" } })
  })

  it("an answer the recording never answered fails before the connection's last line, not after it (issue 36)", () => {
    const lines = [
      ...opening,
      requested(70, Recordings.actionSessionId),
      { type: "frame", t: 80, conn: 1, text: JSON.stringify({ event: "complete", data: {} }) },
      { type: "close", t: 90, conn: 1, opened: true, outcome: { _tag: "End", reason: "complete" } }
    ]
    const replay = replayOf(lines)
    replay.create(Recordings.request)
    const attempt = replay.attempt(replay.connection(), Recordings.sessionId) as KitReplay.ReplayAttempt
    const steps: Array<KitReplay.ReplayStep> = []
    for (let step = attempt.poll(); steps.length < 10; step = attempt.poll()) {
      steps.push(step)
      if (step._tag === "Sleep") attempt.slept()
      if (step._tag === "Text" && step.text.includes("external_resource_requested")) attempt.answered(Recordings.answerData)
      if (step._tag === "End" || step._tag === "Fail") break
    }
    // The engine ends the attempt on `complete`: the answer is reported before it is delivered.
    assert.isFalse(steps.some((step) => step._tag === "Text" && step.text.includes("complete")))
    assert.deepStrictEqual(steps.at(-1), {
      _tag: "Fail",
      problem: Format.unrecordedAnswer(lines.length, 1, Recordings.answerData)
    })
  })

  it("a close the application ends awaits its answers: one given is never recorded", () => {
    const lines = [
      ...opening,
      { type: "close", t: 70, conn: 1, opened: true, outcome: { _tag: "Interrupted" } }
    ]
    const replay = replayOf(lines)
    replay.create(Recordings.request)
    const attempt = replay.attempt(replay.connection(), Recordings.sessionId)
    const waiting = drive(attempt)
    assert.deepStrictEqual(waiting.last, { _tag: "AwaitAnswer", timeout: false })
    const late = drive(attempt, [Recordings.answerData])
    assert.deepStrictEqual(late.last, { _tag: "Fail", problem: Format.unrecordedAnswer(lines.length, 1, Recordings.answerData) })
  })

  it("binary and Server-Sent Event frames, too-large and alive lines, a failed answer write and a defect are handed on as recorded", () => {
    const replay = replayOf([
      ...opening,
      { type: "frame", t: 60, conn: 1, base64: "AQID" },
      { type: "frame", t: 61, conn: 1, event: "started", data: "{}" },
      { type: "too-large", t: 62, conn: 1, size: 2_000_000 },
      { type: "alive", t: 63, conn: 1 },
      requested(64, Recordings.actionSessionId),
      { type: "answer", t: 65, conn: 1, data: Recordings.answerData, result: { failed: "closed", retry: true } },
      { type: "close", t: 66, conn: 1, opened: true, outcome: { _tag: "Retry", cause: "closed with code 1006" } },
      { type: "connect", t: 70, conn: 2 },
      { type: "close", t: 71, conn: 2, opened: false, outcome: { _tag: "Defect", message: "bug" } }
    ])
    replay.create(Recordings.request)
    const pass = replay.connection()
    const first = drive(replay.attempt(pass, Recordings.sessionId), [Recordings.answerData])
    assert.deepStrictEqual(first.trace, [
      "10 Open",
      "10 bytes 1,2,3",
      "11 started {}",
      "12 TooLarge",
      "13 Alive",
      "14 external_resource_requested",
      "15 await"
    ])
    assert.deepStrictEqual(first.last, { _tag: "End", end: { _tag: "Retry", cause: "answer not written: closed" } })
    assert.deepStrictEqual(drive(replay.attempt(pass, Recordings.sessionId)).last, { _tag: "End", end: { _tag: "Defect" } })
  })

  it("a recorded error the shell cannot decode fails the attempt as not valid", () => {
    const lines = [
      ...opening,
      { type: "close", t: 70, conn: 1, opened: true, outcome: { _tag: "Fatal", reason: "failed", error: { _tag: "Superseded" } } }
    ]
    const replay = replayOf(lines)
    replay.create(Recordings.request)
    assert.deepStrictEqual(drive(replay.attempt(replay.connection(), Recordings.sessionId), [], false).last, {
      _tag: "Fail",
      problem: { _tag: "Invalid", line: lines.length, reason: "close: the error is not one of the event channel's" }
    })
  })

  it("a created session the shell cannot decode is forgotten and fails the first connection", () => {
    const replay = replayOf(Recordings.session())
    const created = replay.create(Recordings.request)
    assert.strictEqual(created._tag, "Created")
    replay.notDecoded(created as Extract<Format.CreateAnswer, { _tag: "Created" }>)
    assert.strictEqual(replay.session(), undefined)
    assert.deepStrictEqual(drive(replay.attempt(replay.connection(), Recordings.sessionId)).last, {
      _tag: "Invalid",
      line: 3,
      reason: "created: the session is not valid"
    })
  })

  it("a recording of attach plays from its first connection; a connection to another session is a Mismatch", () => {
    const lines = Recordings.session({ drop: false }).filter((line) => {
      const type = (line as { type: string }).type
      return type !== "create" && type !== "created"
    })
    const replay = replayOf(lines)
    assert.strictEqual(replay.session(), undefined)
    const other = drive(replay.attempt(replay.connection(), "ses_other")).last
    assert.strictEqual((other as { subject: string }).subject, "connection")
    const again = replayOf(lines)
    const played = drive(again.attempt(again.connection(), Recordings.sessionId), [Recordings.answerData])
    assert.deepStrictEqual(played.last, { _tag: "End", end: { _tag: "End", reason: "complete" } })
  })

  it("frames of a recording over SSE are events with their data, and its answers are confirmed", () => {
    const overSse = replayOf([Recordings.header({ transport: "sse" })])
    assert.deepStrictEqual([overSse.framing, overSse.written], ["event-data", "confirmed"])
    const overSocket = replayOf([Recordings.header()])
    assert.deepStrictEqual([overSocket.framing, overSocket.written], [Recordings.header().dialect.framing, "written"])
  })

  it("a file that is not a recording is not opened", () => {
    const opened = KitReplay.MemoryReplay.open({ source: FileSource.fromFile(Recordings.writeRecording(["not json"]), Fs) })
    assert.isFalse(opened instanceof KitReplay.MemoryReplay)
    assert.strictEqual((opened as { line: number }).line, 1)
  })
})

// ---------------------------------------------------------------------------
// The replay driven for a shell with an engine (Recording.ReplayDriver, MemoryReplay.answerCreate),
// with plain decoders standing in for an edition's schemas
// ---------------------------------------------------------------------------

type Err = { readonly _tag: string; readonly decoded: true }
type Session = { readonly id: string }

/** Decoders as an edition's: a session needs a string `session_id`; an error decodes unless its tag is `Undecodable`. */
const decoders: KitReplay.ReplayDecoders<Session, Err, Err, Err> = {
  session: (session) => typeof session["session_id"] === "string" ? { id: session["session_id"] } : undefined,
  error: (error) => error._tag === "Undecodable" ? undefined : { _tag: error._tag, decoded: true },
  isCreateError: (error): error is Err => Format.createErrorTags.has(error._tag),
  isChannelError: (error): error is Err => Format.eventChannelErrorTags.has(error._tag)
}

/** Hooks that trace what the engine is handed. */
const tracingHooks = (trace: Array<string>): KitReplay.ReplayHooks => ({
  open: () => trace.push("open"),
  frame: (data) => trace.push(typeof data === "string" ? `text ${data}` : `bytes ${Array.from(data).join(",")}`),
  namedEvent: (name, data) => trace.push(`event ${name} ${data}`),
  tooLarge: (size) => trace.push(`too-large ${size}`),
  alive: () => trace.push("alive")
})

/**
 * Drives an attempt as a shell would: sleeps at once, delivers each frame when `flowing` says so
 * (else traces the wait and delivers on the next round), gives the answers of `answers` when one
 * is awaited (`"none"`: none within the timeout); traces the waits among the hooks' calls.
 */
const driveAll = (
  driver: KitReplay.ReplayDriver<Err, Err> | Format.ReplayProblem,
  answers: Array<Format.AnswerData | "none"> = [],
  trace: Array<string> = []
): { readonly trace: ReadonlyArray<string>; readonly last: KitReplay.DriverStep<Err> | Format.ReplayProblem } => {
  if (Format.isReplayProblem(driver)) return { trace, last: driver }
  for (let i = 0; i < 100; i++) {
    const step = driver.next()
    switch (step._tag) {
      case "Sleep":
        trace.push(`sleep ${step.millis}`)
        driver.slept()
        continue
      case "Frame":
        driver.deliver()
        continue
      case "AwaitAnswer": {
        const answer = answers.shift()
        if (answer === undefined) return { trace, last: step }
        trace.push("await")
        if (answer === "none") driver.noAnswer("5s")
        else driver.answered(answer)
        continue
      }
      case "End":
      case "Fail":
        return { trace, last: step }
    }
  }
  return assert.fail("the attempt does not end")
}

const closeWith = (outcome: unknown) => ({ type: "close", t: 70, conn: 1, opened: true, outcome })

describe("Recording.ReplayDriver", () => {
  it("hands the engine the recorded lines through its hooks and returns only the waits, then the recorded end", () => {
    const trace: Array<string> = []
    const replay = replayOf(Recordings.session())
    replay.create(Recordings.request)
    const pass = replay.connection()
    const first = driveAll(replay.drive(pass, Recordings.sessionId, tracingHooks(trace), decoders), [], trace)
    const brief = (line: string) => line.startsWith("text ") ? `text ${(JSON.parse(line.slice(5)) as { event: string }).event}` : line
    assert.deepStrictEqual(first.trace.map(brief), [
      "sleep 10",
      "open",
      "sleep 10",
      "text started",
      "sleep 1000",
      "text action_run",
      "sleep 30"
    ])
    assert.deepStrictEqual(first.last, { _tag: "End", end: { _tag: "Retry", error: "closed with code 1006" } })
    const second = driveAll(replay.drive(pass, Recordings.sessionId, tracingHooks([]), decoders), [Recordings.answerData])
    assert.deepStrictEqual(second.last, { _tag: "End", end: { _tag: "End", reason: "complete" } })
    const third = driveAll(replay.drive(pass, Recordings.sessionId, tracingHooks([]), decoders))
    assert.strictEqual((third.last as { subject: string }).subject, "connection")
  })

  it("a frame waits for the engine's flow: nothing is handed on until deliver, and each frame once", () => {
    const trace: Array<string> = []
    const replay = replayOf([...opening, { type: "frame", t: 60, conn: 1, base64: "AQID" }, {
      type: "frame",
      t: 60,
      conn: 1,
      event: "started",
      data: "{}"
    }, closeWith({ _tag: "End", reason: "complete" })])
    replay.create(Recordings.request)
    const driver = replay.drive(replay.connection(), Recordings.sessionId, tracingHooks(trace), decoders)
    if (Format.isReplayProblem(driver)) return assert.fail(driver._tag)
    assert.deepStrictEqual(driver.next(), { _tag: "Sleep", millis: 10 })
    driver.slept()
    assert.deepStrictEqual(driver.next(), { _tag: "Frame" })
    assert.deepStrictEqual(trace, ["open"])
    driver.deliver()
    driver.deliver()
    assert.deepStrictEqual(trace, ["open", "bytes 1,2,3"])
    assert.deepStrictEqual(driver.next(), { _tag: "Frame" })
    driver.deliver()
    assert.deepStrictEqual(trace, ["open", "bytes 1,2,3", "event started {}"])
    assert.deepStrictEqual(driver.next(), { _tag: "Sleep", millis: 10 })
  })

  it("too-large and alive lines go to their hooks; a failed answer write retries; a defect ends with one", () => {
    const trace: Array<string> = []
    const replay = replayOf([
      ...opening,
      { type: "too-large", t: 62, conn: 1, size: 2_000_000 },
      { type: "alive", t: 63, conn: 1 },
      requested(64, Recordings.actionSessionId),
      { type: "answer", t: 65, conn: 1, data: Recordings.answerData, result: { failed: "closed", retry: true } },
      { type: "close", t: 66, conn: 1, opened: true, outcome: { _tag: "Retry", cause: "closed with code 1006" } },
      { type: "connect", t: 70, conn: 2 },
      { type: "close", t: 71, conn: 2, opened: false, outcome: { _tag: "Defect", message: "bug" } }
    ])
    replay.create(Recordings.request)
    const pass = replay.connection()
    const first = driveAll(replay.drive(pass, Recordings.sessionId, tracingHooks(trace), decoders), [Recordings.answerData], trace)
    assert.deepStrictEqual(first.trace.filter((line) => !line.startsWith("sleep") && !line.startsWith("text")), [
      "open",
      "too-large 2000000",
      "alive",
      "await"
    ])
    assert.deepStrictEqual(first.last, { _tag: "End", end: { _tag: "Retry", error: "answer not written: closed" } })
    const second = driveAll(replay.drive(pass, Recordings.sessionId, tracingHooks([]), decoders)).last
    assert.strictEqual(second._tag, "End")
    const end = (second as Extract<KitReplay.DriverStep<Err>, { _tag: "End" }>).end
    assert.strictEqual(end._tag, "Defect")
    assert.instanceOf((end as { defect: unknown }).defect, Error)
  })

  it("a recorded error of the event channel comes decoded: a Fatal with its reason, a ConnectTimeout as a retry of one", () => {
    const fatal = replayOf([...opening, closeWith({ _tag: "Fatal", reason: "superseded", error: { _tag: "Superseded" } })])
    fatal.create(Recordings.request)
    assert.deepStrictEqual(driveAll(fatal.drive(fatal.connection(), Recordings.sessionId, tracingHooks([]), decoders)).last, {
      _tag: "End",
      end: { _tag: "Fatal", error: { _tag: "Superseded", decoded: true }, reason: "superseded" }
    })
    const timeout = replayOf([...opening, closeWith({ _tag: "Retry", error: { _tag: "ConnectTimeout" } })])
    timeout.create(Recordings.request)
    // (`Err`'s tag is any string: its ConnectTimeout is not a type of its own here.)
    assert.deepStrictEqual<unknown>(driveAll(timeout.drive(timeout.connection(), Recordings.sessionId, tracingHooks([]), decoders)).last, {
      _tag: "End",
      end: { _tag: "Retry", error: { _tag: "ConnectTimeout", decoded: true }, connectTimeout: true }
    })
  })

  it("a recorded error that does not decode, or not as one of the event channel's, fails the attempt as not valid", () => {
    const lines = [...opening, closeWith({ _tag: "Fatal", reason: "failed", error: { _tag: "Undecodable" } })]
    const undecodable = replayOf(lines)
    undecodable.create(Recordings.request)
    assert.deepStrictEqual(
      driveAll(undecodable.drive(undecodable.connection(), Recordings.sessionId, tracingHooks([]), decoders)).last,
      { _tag: "Fail", problem: { _tag: "Invalid", line: lines.length, reason: "close: the error is not one of the event channel's" } }
    )
    // Decoded, but the shell does not count it as one of the channel's.
    const notChannel = replayOf([...opening, closeWith({ _tag: "Retry", error: { _tag: "ConnectTimeout" } })])
    notChannel.create(Recordings.request)
    const strict = { ...decoders, isChannelError: (error: Err): error is Err => error._tag !== "ConnectTimeout" }
    assert.deepStrictEqual(
      driveAll(notChannel.drive(notChannel.connection(), Recordings.sessionId, tracingHooks([]), strict)).last,
      { _tag: "Fail", problem: { _tag: "Invalid", line: lines.length, reason: "close: the error is not one an attempt is retried for" } }
    )
  })

  it("an answer that differs fails the attempt with the Mismatch; one given before the wait is compared too", () => {
    const lines = Recordings.session({ drop: false })
    const replay = replayOf(lines)
    replay.create(Recordings.request)
    const given = { ...Recordings.answerData, input: "john@example.com" }
    const last = driveAll(replay.drive(replay.connection(), Recordings.sessionId, tracingHooks([]), decoders), [given]).last
    assert.strictEqual(last._tag, "Fail")
    assert.strictEqual((last as { problem: Format.ReplayProblem }).problem._tag, "Mismatch")
    const missed = replayOf(lines)
    missed.create(Recordings.request)
    const none = driveAll(missed.drive(missed.connection(), Recordings.sessionId, tracingHooks([]), decoders), ["none"]).last
    assert.strictEqual((none as { problem: { actual: string } }).problem.actual, "no answer within 5s")
  })
})

describe("Recording.replayDecoders", () => {
  it("sorts the decoded errors by the recorded tags a create and the event channel can fail with", () => {
    const made = KitReplay.replayDecoders<Session, Err, Err, Err>({ session: decoders.session, error: decoders.error })
    const error = (tag: string): Err => ({ _tag: tag, decoded: true })
    assert.deepStrictEqual(
      ["RateLimited", "ConnectTimeout", "NotFound", "Superseded", "ReplayMismatch"].map((tag) => [
        made.isCreateError(error(tag)),
        made.isChannelError(error(tag))
      ]),
      [[true, false], [false, true], [true, false], [false, true], [false, false]]
    )
    assert.strictEqual(made.session, decoders.session)
    assert.strictEqual(made.error, decoders.error)
  })
})

describe("Recording.MemoryReplay.answerCreate", () => {
  const created = (session: unknown) => [
    Recordings.header(),
    { type: "create", t: 0, request: Recordings.request },
    { type: "created", t: 40, session },
    { type: "connect", t: 50, conn: 1 },
    closeWith({ _tag: "End", reason: "complete" })
  ]

  it("answers the recorded session decoded, and keeps it for getSession", () => {
    const replay = replayOf(created({ session_id: Recordings.sessionId }))
    assert.deepStrictEqual(replay.answerCreate(Recordings.request, [], decoders), {
      _tag: "Session",
      session: { id: Recordings.sessionId }
    })
    assert.deepStrictEqual(replay.recordedSession(decoders), { id: Recordings.sessionId })
  })

  it("a session that does not decode is answered by the shell's own and fails the first connection", () => {
    const replay = replayOf(created({ session_id: 42 }))
    assert.deepStrictEqual(replay.answerCreate(Recordings.request, [], decoders), { _tag: "Session", session: undefined })
    assert.strictEqual(replay.recordedSession(decoders), undefined)
    assert.deepStrictEqual(driveAll(replay.drive(replay.connection(), Recordings.sessionId, tracingHooks([]), decoders)).last, {
      _tag: "Invalid",
      line: 3,
      reason: "created: the session is not valid"
    })
  })

  it("a recorded create error is answered decoded; the next create line answers the next create", () => {
    const replay = replayOf([
      Recordings.header(),
      { type: "create", t: 0, request: Recordings.request },
      { type: "create-failed", t: 10, error: { _tag: "RateLimited", status: 429 } },
      { type: "create", t: 20, request: Recordings.request },
      { type: "created", t: 40, session: { session_id: Recordings.sessionId } }
    ])
    assert.deepStrictEqual(replay.answerCreate(Recordings.request, [], decoders), {
      _tag: "Failed",
      error: { _tag: "RateLimited", decoded: true }
    })
    assert.deepStrictEqual(replay.answerCreate(Recordings.request, [], decoders), {
      _tag: "Session",
      session: { id: Recordings.sessionId }
    })
  })

  it("a create error the shell cannot decode, or not as a create's, is answered by its own session and fails the first connection", () => {
    const failedWith = (error: unknown) =>
      replayOf([
        Recordings.header(),
        { type: "create", t: 0, request: Recordings.request },
        { type: "create-failed", t: 10, error },
        { type: "connect", t: 50, conn: 1 }
      ])
    const undecodable = failedWith({ _tag: "RateLimited", status: 429 })
    const strict = { ...decoders, isCreateError: (error: Err): error is Err => error._tag !== "RateLimited" }
    assert.deepStrictEqual(undecodable.answerCreate(Recordings.request, [], strict), { _tag: "Session", session: undefined })
    assert.deepStrictEqual(
      driveAll(undecodable.drive(undecodable.connection(), Recordings.sessionId, tracingHooks([]), decoders)).last,
      { _tag: "Invalid", line: 3, reason: "create-failed: the error is not one a create can fail with" }
    )
  })

  it("a create against a recording of attach is Unrecorded; a file without its create lines answers the shell's session", () => {
    const attach = replayOf([Recordings.header(), { type: "connect", t: 50, conn: 1 }])
    const unrecorded = attach.answerCreate(Recordings.request, [], decoders)
    assert.strictEqual(unrecorded._tag, "Unrecorded")
    assert.strictEqual((unrecorded as { problem: { subject: string } }).problem.subject, "create")
    const broken = replayOf([Recordings.header(), { type: "create", t: 0, request: Recordings.request }, "not json"])
    assert.deepStrictEqual(broken.answerCreate(Recordings.request, [], decoders), { _tag: "Session", session: undefined })
  })
})
