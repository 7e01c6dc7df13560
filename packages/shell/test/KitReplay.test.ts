/**
 * The test kit's in-memory replay as both editions bind it (the core's shell `KitReplay`), driven
 * here by a plain loop standing in for an edition's sleeps and latch: the kit's world told what
 * the application does, creates answered (the kit's failure first), each attempt played into the
 * engine's hooks and ended through them, the engine's flow and the answers waited on and woken
 * once, every problem built as the edition's error with the recording's path.
 */
import * as Fs from "node:fs"
import { assert, describe, it } from "vitest"
import { FileSource, KitReplay } from "../src/index.js"
import * as Recordings from "effect-agent-session-conformance/recordings"

type Err = { readonly _tag: string }
type Session = { readonly id: string }
type Invalid = { readonly kind: "invalid" } & KitReplay.InvalidFields
type Mismatch = { readonly kind: "mismatch" } & KitReplay.MismatchFields

const decoders = KitReplay.replayDecoders<Session, Err, Err, Err>({
  session: (session) => typeof session["session_id"] === "string" ? { id: session["session_id"] } : undefined,
  error: (error) => ({ _tag: error._tag })
})

const errors: KitReplay.ReplayErrors<Invalid, Mismatch> = {
  invalid: (fields) => ({ kind: "invalid", ...fields }),
  mismatch: (fields) => ({ kind: "mismatch", ...fields })
}

/** A kit's world as the editions' `Script.World` reports to it: a trace of what it was told. */
const worldOf = (trace: Array<string>, failNext?: string) => {
  let failure = failNext
  return {
    beforeCreate: () => {
      const error = failure
      failure = undefined
      return error === undefined ? undefined : { error: { _tag: error } }
    },
    created: (request: object) => trace.push(`created ${JSON.stringify(request)}`),
    connected: (sessionId: string) => trace.push(`connected ${sessionId}`),
    answered: (answer: { readonly sessionId: string; readonly request: string; readonly answer: string }) =>
      trace.push(`answered ${answer.sessionId} ${answer.request} ${answer.answer}`)
  }
}

const open = (lines: ReadonlyArray<unknown>, trace: Array<string> = [], failNext?: string) => {
  const path = Recordings.writeRecording(lines)
  const replay = KitReplay.Replay.open({
    path,
    source: FileSource.fromFile(path, Fs),
    decoders,
    errors,
    observer: worldOf(trace, failNext)
  })
  return { path, replay: replay instanceof KitReplay.Replay ? replay : assert.fail(JSON.stringify(replay)) }
}

/** Hooks that trace what the engine is handed and how the attempt ended. */
const hooksOf = (trace: Array<string>): KitReplay.AttemptHooks<Err> & { ended?: KitReplay.Ending<Err> } => {
  const hooks: KitReplay.AttemptHooks<Err> & { ended?: KitReplay.Ending<Err> } = {
    open: () => trace.push("open"),
    frame: (data) => trace.push(typeof data === "string" ? `frame ${(JSON.parse(data) as { event: string }).event}` : "bytes"),
    namedEvent: (name) => trace.push(`event ${name}`),
    tooLarge: (size) => trace.push(`too-large ${size}`),
    alive: () => trace.push("alive"),
    end: (ending) => {
      trace.push(`end ${ending._tag}`)
      hooks.ended = ending
    }
  }
  return hooks
}

const requested = Recordings.requested(80, Recordings.actionSessionId, "email")
const answerLine = { type: "answer", t: 90, conn: 1, data: Recordings.answerData, result: "written" }

describe("KitReplay", () => {
  it("a file that is not a recording is the edition's invalid error, naming the path", () => {
    const path = Recordings.writeRecording(["not json"])
    const opened = KitReplay.Replay.open({
      path,
      source: FileSource.fromFile(path, Fs),
      decoders,
      errors,
      observer: worldOf([])
    })
    assert.isFalse(opened instanceof KitReplay.Replay)
    assert.deepInclude(opened as Invalid, { kind: "invalid", path, line: 1 })
  })

  it("a create: the kit's failure first (not noted), then noted and answered as recorded", () => {
    const trace: Array<string> = []
    const { path, replay } = open(Recordings.session(), trace, "Unavailable")
    assert.deepStrictEqual(replay.create(Recordings.request, Recordings.request, []), {
      _tag: "Failed",
      error: { _tag: "Unavailable" }
    })
    assert.deepStrictEqual(trace, [])
    const created = replay.create(Recordings.request, Recordings.request, [])
    assert.deepStrictEqual(created, { _tag: "Session", session: { id: Recordings.sessionId } })
    assert.deepStrictEqual(trace, [`created ${JSON.stringify(Recordings.request)}`])
    assert.deepStrictEqual(replay.session(), { id: Recordings.sessionId })
    assert.strictEqual(replay.printableUrl, `replay:${path}`)
    assert.deepStrictEqual(replay.channel, {
      dialect: replay.header.dialect,
      framing: replay.framing,
      printableUrl: `replay:${path}`
    })
  })

  it("without a recorded session, the header's answers: its session id as the shell decodes it", () => {
    const lines = [Recordings.header(), { type: "connect", t: 50, conn: 1 }, ...Recordings.ending(60)]
    const { replay } = open(lines)
    assert.deepStrictEqual(replay.session(), { id: Recordings.sessionId })
  })

  it("a recorded session the shell cannot decode is answered by the header's", () => {
    const lines = Recordings.session().map((line) =>
      typeof line === "object" && line !== null && (line as { type?: unknown }).type === "created"
        ? { ...line, session: { session_id: 42 } }
        : line
    )
    const { replay } = open(lines)
    assert.deepStrictEqual(replay.create(Recordings.request, Recordings.request, []), {
      _tag: "Session",
      session: { id: Recordings.sessionId }
    })
  })

  it("a header whose session id the shell's session does not take is the edition's invalid error", () => {
    const path = Recordings.writeRecording(Recordings.session())
    const opened = KitReplay.Replay.open({
      path,
      source: FileSource.fromFile(path, Fs),
      decoders: { ...decoders, session: () => undefined },
      errors,
      observer: worldOf([])
    })
    assert.isFalse(opened instanceof KitReplay.Replay)
    assert.deepInclude(opened as Invalid, { kind: "invalid", path, line: 1 })
  })

  it("a create against a recording without one is the edition's mismatch, naming the path", () => {
    const lines = [Recordings.header(), { type: "connect", t: 50, conn: 1 }, ...Recordings.ending(60)]
    const { path, replay } = open(lines)
    const created = replay.create(Recordings.request, Recordings.request, [])
    assert.strictEqual(created._tag, "Unrecorded")
    const error = (created as { error: Mismatch }).error
    assert.strictEqual(error.kind, "mismatch")
    assert.strictEqual(error.path, path)
    assert.strictEqual(error.subject, "create")
  })

  it("plays an attempt into the hooks, the waits returned, the recorded end told to the hooks and Done after it", () => {
    const trace: Array<string> = []
    const { replay } = open(Recordings.session({ drop: false }), trace)
    replay.create(Recordings.request, Recordings.request, [])
    const pass = replay.connection(Recordings.sessionId)
    let wakes = 0
    const hooks = hooksOf(trace)
    const attempt = replay.attempt(pass, Recordings.sessionId, hooks, () => wakes++) ?? assert.fail("no attempt")
    const steps: Array<string> = []
    for (let i = 0; i < 50; i++) {
      const step = attempt.next()
      steps.push(step._tag === "Sleep" ? `sleep ${step.millis}` : step._tag === "Wait" ? `wait ${step.timeout}` : step._tag)
      if (step._tag === "Done") break
      if (step._tag === "Sleep") attempt.slept()
      if (step._tag === "Wait") {
        assert.strictEqual(attempt.send(Recordings.answerData), "written")
        assert.strictEqual(wakes, 1)
      }
    }
    assert.deepStrictEqual(steps, [
      "sleep 10",
      "sleep 10",
      "sleep 1000",
      "sleep 430",
      "sleep 20",
      "wait true",
      "sleep 10",
      "sleep 30000",
      "sleep 70",
      "sleep 10",
      "Done"
    ])
    assert.deepStrictEqual(trace, [
      `created ${JSON.stringify(Recordings.request)}`,
      `connected ${Recordings.sessionId}`,
      "open",
      "frame started",
      "frame action_run",
      "frame external_resource_requested",
      "frame external_resource_granted",
      "frame action_run",
      "frame complete",
      "end End"
    ])
    assert.deepStrictEqual(hooks.ended, { _tag: "End", reason: "complete" })
    assert.deepStrictEqual(attempt.next(), { _tag: "Done" })
    replay.answered(Recordings.sessionId, "request", "answer")
    assert.strictEqual(trace.at(-1), `answered ${Recordings.sessionId} request answer`)
  })

  it("a frame waits while the engine is paused; only a resume wakes that wait, once", () => {
    const trace: Array<string> = []
    const { replay } = open([Recordings.header(), ...Recordings.opening, Recordings.complete(100), ...Recordings.ending(110)])
    replay.create(Recordings.request, Recordings.request, [])
    let wakes = 0
    const attempt = replay.attempt(replay.connection(Recordings.sessionId), Recordings.sessionId, hooksOf(trace), () => wakes++) ??
      assert.fail("no attempt")
    const until = (tag: string) => {
      for (let step = attempt.next(); step._tag !== tag; step = attempt.next()) {
        if (step._tag === "Sleep") attempt.slept()
        else return assert.fail(`${step._tag} before ${tag}`)
      }
    }
    // The flow as the engine is handed it (detached from the attempt).
    const { abort, pause, resume } = attempt.flow
    pause()
    until("Wait")
    assert.deepStrictEqual(trace, ["open"])
    // An answer is not what the frame waits for, and an abort has nothing to drop.
    attempt.send(Recordings.answerData)
    abort()
    assert.strictEqual(wakes, 0)
    resume()
    assert.strictEqual(wakes, 1)
    resume()
    assert.strictEqual(wakes, 1)
    until("Sleep")
    assert.deepStrictEqual(trace, ["open", "frame started"])
  })

  it("an answer wait is woken by an answer, not by a resume; no answer in time is a mismatch ending the attempt as a defect", () => {
    const trace: Array<string> = []
    const lines = [Recordings.header(), ...Recordings.opening, requested, answerLine, Recordings.complete(100), ...Recordings.ending(110)]
    const { path, replay } = open(lines)
    replay.create(Recordings.request, Recordings.request, [])
    let wakes = 0
    const hooks = hooksOf(trace)
    const attempt = replay.attempt(replay.connection(Recordings.sessionId), Recordings.sessionId, hooks, () => wakes++) ??
      assert.fail("no attempt")
    let step = attempt.next()
    while (step._tag === "Sleep") {
      attempt.slept()
      step = attempt.next()
    }
    assert.deepStrictEqual(step, { _tag: "Wait", timeout: true })
    attempt.pause()
    attempt.resume()
    assert.strictEqual(wakes, 0)
    attempt.noAnswer("30s")
    assert.deepStrictEqual(attempt.next(), { _tag: "Done" })
    assert.strictEqual(hooks.ended?._tag, "Defect")
    const defect = (hooks.ended as { defect: Mismatch }).defect
    assert.deepInclude(defect, { kind: "mismatch", path, subject: "answer", line: lines.indexOf(answerLine) + 1 })
    // Too late: nothing waits any more.
    attempt.send(Recordings.answerData)
    assert.strictEqual(wakes, 0)
  })

  it("a different answer ends the attempt with the mismatch as a defect; over SSE a write is confirmed", () => {
    const lines = [
      Recordings.header({ transport: "sse" }),
      ...Recordings.opening,
      requested,
      answerLine,
      Recordings.complete(100),
      ...Recordings.ending(110)
    ]
    const { path, replay } = open(lines)
    replay.create(Recordings.request, Recordings.request, [])
    const hooks = hooksOf([])
    const attempt = replay.attempt(replay.connection(Recordings.sessionId), Recordings.sessionId, hooks, () => {}) ??
      assert.fail("no attempt")
    let step = attempt.next()
    while (step._tag === "Sleep") {
      attempt.slept()
      step = attempt.next()
    }
    assert.strictEqual(attempt.send({ ...Recordings.answerData, input: "joe@example.com" }), "confirmed")
    assert.deepStrictEqual(attempt.next(), { _tag: "Done" })
    const defect = (hooks.ended as { defect: Mismatch }).defect
    assert.deepInclude(defect, { kind: "mismatch", path, subject: "answer" })
    assert.include(defect.difference, "input")
  })

  it("an attempt with no recorded connection left ends at once with the mismatch as a defect", () => {
    const { path, replay } = open([Recordings.header(), ...Recordings.opening, Recordings.complete(100), ...Recordings.ending(110)])
    replay.create(Recordings.request, Recordings.request, [])
    const pass = replay.connection(Recordings.sessionId)
    const first = replay.attempt(pass, Recordings.sessionId, hooksOf([]), () => {}) ?? assert.fail("no attempt")
    for (let step = first.next(); step._tag !== "Done"; step = first.next()) if (step._tag === "Sleep") first.slept()
    const hooks = hooksOf([])
    assert.isUndefined(replay.attempt(pass, Recordings.sessionId, hooks, () => {}))
    assert.deepInclude((hooks.ended as { defect: Mismatch }).defect, { kind: "mismatch", path, subject: "connection" })
  })

  it("errorOf: a problem as the edition's error, with the path", () => {
    assert.deepStrictEqual(KitReplay.errorOf("r.jsonl", { _tag: "Invalid", line: 4, reason: "bad" }, errors), {
      kind: "invalid",
      path: "r.jsonl",
      line: 4,
      reason: "bad"
    })
    assert.deepStrictEqual(
      KitReplay.errorOf(
        "r.jsonl",
        { _tag: "Mismatch", line: 5, subject: "answer", expected: "a", actual: "b", difference: "d" },
        errors
      ),
      { kind: "mismatch", path: "r.jsonl", line: 5, subject: "answer", expected: "a", actual: "b", difference: "d" }
    )
  })
})
