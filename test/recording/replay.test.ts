/**
 * The test kit's replay of a recording (issue 23): the real façade and engine over the recorded
 * frames on the `TestClock`; answers checked against the recording; damaged and foreign files
 * refused with the line named.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"
import { AgentApi, AgentSessions, Answer, type Errors, type Recording, SessionEvent } from "../../src/index.js"
import { AgentSessionsTest } from "../../src/testing/index.js"
import { answerData, header, request, session, sessionId, writeRecording } from "./helpers.js"

/** The application: grants input requests with an email (or what `answer` says). */
const runApp = (answer: Answer.Answer = Answer.grant("jane@example.com"), create = request) =>
  AgentSessions.run(create, { onRequest: () => Effect.succeed(answer), keepEvents: true })

/** Runs on virtual time: forked, the clock advanced past the recording, joined. */
const onVirtualTime = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const fiber = yield* Effect.fork(effect)
    yield* TestClock.adjust("10 minutes")
    return yield* Fiber.join(fiber)
  })

/** The typed failure of a replayed program (a replay's own stop made typed by `withReplayErrors`). */
const failure = <A, R>(effect: Effect.Effect<A, Errors.AgentSessionError, R>) =>
  Effect.flip(onVirtualTime(AgentSessionsTest.withReplayErrors(effect)))

describe("AgentSessionsTest.replay", () => {
  it.effect("plays the recorded session through the façade: events, reconnect, answer and outcome", () =>
    Effect.gen(function*() {
      const outcome = yield* onVirtualTime(runApp())
      assert.deepStrictEqual(outcome.events.map((event) => event._tag), [
        "Started",
        "ActionRun",
        "ExternalResourceRequested",
        "ExternalResourceGranted",
        "ActionRun",
        "Complete"
      ])
      assert.strictEqual(outcome.response, "Mon-Fri 9-17")
      assert.strictEqual(outcome.actions, 2)
      const answers = yield* AgentSessionsTest.answers
      assert.deepStrictEqual(answers.map((a) => a.answer), [Answer.grant("jane@example.com")])
      assert.deepStrictEqual(yield* AgentSessionsTest.connections, ["ses_recorded"])
      assert.deepStrictEqual((yield* AgentSessionsTest.sessionsCreated).map((r) => r.goal), [request.goal])
      // A replay answers `getSession` with the recorded session.
      assert.isTrue((yield* AgentApi.AgentApi).canRetrieve)
    }).pipe(Effect.provide(AgentSessionsTest.replay(writeRecording(session())))))

  it.effect("keeps the recorded timing on the TestClock: nothing before its time", () =>
    Effect.gen(function*() {
      const seen: Array<string> = []
      const fiber = yield* Effect.fork(AgentSessions.run(request, {
        onEvent: (event) => Effect.sync(() => void seen.push(event._tag)),
        onRequest: () => Effect.succeed(Answer.grant("jane@example.com"))
      }))
      yield* TestClock.adjust("500 millis")
      assert.deepStrictEqual(seen, ["Started"])
      // The action was recorded 1 s after the first event; the request 430 ms after it.
      yield* TestClock.adjust("700 millis")
      assert.deepStrictEqual(seen, ["Started", "ActionRun"])
      yield* TestClock.adjust("10 seconds")
      assert.deepStrictEqual(seen, ["Started", "ActionRun", "ExternalResourceRequested", "ExternalResourceGranted"])
      yield* TestClock.adjust("1 minute")
      const outcome = yield* Fiber.join(fiber)
      assert.strictEqual(outcome.response, "Mon-Fri 9-17")
    }).pipe(Effect.provide(AgentSessionsTest.replay(writeRecording(session({ drop: false }))))))

  it.effect("an answer that differs fails with ReplayMismatch showing the difference and the line", () =>
    Effect.gen(function*() {
      const error = yield* failure(runApp(Answer.deny()))
      assert.strictEqual(error._tag, "ReplayMismatch")
      if (error._tag !== "ReplayMismatch") return
      assert.strictEqual(error.subject, "answer")
      assert.strictEqual(error.line, 12)
      assert.include(error.difference, "granted: expected true, got false")
      assert.include(error.difference, "input: expected \"jane@example.com\", got (absent)")
      assert.include(error.message, ":12")
    }).pipe(Effect.provide(AgentSessionsTest.replay(writeRecording(session())))))

  it.effect("no answer within answerTimeout fails with ReplayMismatch", () =>
    Effect.gen(function*() {
      const error = yield* failure(Effect.scoped(Effect.gen(function*() {
        const running = yield* AgentSessions.start(request)
        // The application reads the events and never answers.
        return yield* Stream.runDrain(running.events)
      })))
      assert.strictEqual(error._tag, "ReplayMismatch")
      if (error._tag !== "ReplayMismatch") return
      assert.strictEqual(error.subject, "answer")
      assert.include(error.actual, "no answer within 5s")
    }).pipe(Effect.provide(AgentSessionsTest.replay(writeRecording(session()), { answerTimeout: "5 seconds" }))))

  it.effect("a create request that differs fails the events with ReplayMismatch (create)", () =>
    Effect.gen(function*() {
      const error = yield* failure(runApp(Answer.grant("jane@example.com"), { ...request, goal: "Find the prices" }))
      assert.strictEqual(error._tag, "ReplayMismatch")
      if (error._tag !== "ReplayMismatch") return
      assert.strictEqual(error.subject, "create")
      assert.strictEqual(error.line, 2)
      assert.strictEqual(error.difference, "goal: expected \"Find the opening hours\", got \"Find the prices\"")
    }).pipe(Effect.provide(AgentSessionsTest.replay(writeRecording(session())))))

  it.effect("the create is compared as the recorder wrote it: key=pizza kept, the apiKey parameter and the application's key scrubbed alike (issue 36)", () =>
    Effect.gen(function*() {
      // The test kit's key is test-account-key: the recorder wrote the recording app's key as <redacted>.
      const create = {
        ...request,
        start_url: "https://example.com/search?key=pizza&apiKey=own-value",
        goal: "Find the opening hours for test-account-key"
      }
      const outcome = yield* onVirtualTime(runApp(Answer.grant("jane@example.com"), create))
      assert.strictEqual(outcome.response, "Mon-Fri 9-17")
    }).pipe(Effect.provide(AgentSessionsTest.replay(writeRecording(session().map((line) =>
      typeof line === "object" && line !== null && "type" in line && line.type === "create"
        ? {
          ...line,
          request: {
            ...request,
            start_url: "https://example.com/search?key=pizza&apiKey=<redacted>",
            goal: "Find the opening hours for <redacted>"
          }
        }
        : line
    ))))))

  it.effect("the recording's redact is applied to the application's answers before comparing", () =>
    Effect.gen(function*() {
      const outcome = yield* onVirtualTime(runApp(Answer.grant("someone.else@example.com")))
      assert.strictEqual(outcome.response, "Mon-Fri 9-17")
    }).pipe(Effect.provide(AgentSessionsTest.replay(
      writeRecording(session({ answer: { ...answerData, input: "<email>" } })),
      {
        redact: (entry: Recording.Entry): Recording.Entry =>
          entry.type === "answer" && entry.data.input !== undefined ? { ...entry, data: { ...entry.data, input: "<email>" } } : entry
      }
    ))))

  it.effect("a recorded create failure is replayed as that typed error", () =>
    Effect.gen(function*() {
      const error = yield* failure(runApp())
      assert.strictEqual(error._tag, "Unauthorized")
    }).pipe(Effect.provide(AgentSessionsTest.replay(writeRecording([
      header(),
      { type: "create", t: 0, request },
      {
        type: "create-failed",
        t: 20,
        error: { _tag: "Unauthorized", status: 401, message: "invalid API key", body: "{}", operation: "AgentApi.createSession" }
      }
    ])))))

  it.effect("a connection the recording does not have fails with ReplayMismatch (connection)", () =>
    Effect.gen(function*() {
      const error = yield* failure(runApp())
      assert.strictEqual(error._tag, "ReplayMismatch")
      if (error._tag !== "ReplayMismatch") return
      assert.strictEqual(error.subject, "connection")
    }).pipe(Effect.provide(AgentSessionsTest.replay(writeRecording(session().filter((line) =>
      // Cut after the first connection's drop: the engine reconnects; the recording has nothing.
      typeof line === "object" && line !== null && "t" in line ? (line.t as number) <= 1_100 : true
    ))))))

  it.effect("a damaged line fails with InvalidRecording naming it", () =>
    Effect.gen(function*() {
      const error = yield* failure(runApp())
      assert.strictEqual(error._tag, "InvalidRecording")
      if (error._tag !== "InvalidRecording") return
      assert.strictEqual(error.line, 7)
      assert.strictEqual(error.reason, "not JSON")
      assert.match(error.message, /recording\.jsonl:7: not JSON$/)
    }).pipe(Effect.provide(AgentSessionsTest.replay(writeRecording(
      session().map((line, i) => (i === 6 ? "{\"type\":\"frame\",\"t\":1070,\"conn\":1,\"text\":\"{\\\"event\\\":" : line))
    )))))

  it.effect("a line of the wrong shape fails with InvalidRecording naming it and the field", () =>
    Effect.gen(function*() {
      const error = yield* failure(runApp())
      assert.strictEqual(error._tag, "InvalidRecording")
      if (error._tag !== "InvalidRecording") return
      assert.strictEqual(error.line, 5)
      assert.strictEqual(error.reason, "open: \"conn\" is missing or not valid")
    }).pipe(Effect.provide(AgentSessionsTest.replay(writeRecording(
      session().map((line, i) => (i === 4 ? { type: "open", t: 60, conn: "one" } : line))
    )))))

  it.effect("a recording that ends before its connection closed fails with InvalidRecording", () =>
    Effect.gen(function*() {
      const error = yield* failure(runApp())
      assert.strictEqual(error._tag, "InvalidRecording")
      if (error._tag !== "InvalidRecording") return
      assert.include(error.reason, "ends before its connection closed")
    }).pipe(Effect.provide(AgentSessionsTest.replay(writeRecording(session({ drop: false }).slice(0, 7))))))

  for (
    const [name, lines, line, reason] of [
      ["a foreign file", [{ hello: "world" }], 1, "not a recording of effect-agent-session"],
      ["a file that is not JSON", ["PK\u0003\u0004 not a recording"], 1, "not JSON"],
      ["a newer format version", [header({ version: 2 })], 1, "newer than this SDK reads (1)"],
      ["a header without its dialect", [header({ dialect: { name: "mine" } })], 1, "header: dialect:"],
      ["an empty file", [""], 1, "not a recording"]
    ] as const
  ) {
    it.effect(`${name} fails the layer with InvalidRecording (line ${line})`, () =>
      Effect.gen(function*() {
        const error = yield* Effect.flip(Effect.provide(runApp(), AgentSessionsTest.replay(writeRecording(lines))))
        assert.strictEqual(error._tag, "InvalidRecording")
        if (error._tag !== "InvalidRecording") return
        assert.strictEqual(error.line, line)
        assert.include(error.reason, reason)
      }))
  }

  it.effect("a missing file fails the layer with InvalidRecording (line 0)", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(Effect.provide(runApp(), AgentSessionsTest.replay("/nonexistent/recording.jsonl")))
      assert.strictEqual(error._tag, "InvalidRecording")
      if (error._tag !== "InvalidRecording") return
      assert.strictEqual(error.line, 0)
    }))

  it.effect("a line longer than maxLineLength fails with InvalidRecording naming it", () =>
    Effect.gen(function*() {
      const error = yield* failure(runApp())
      assert.strictEqual(error._tag, "InvalidRecording")
      if (error._tag !== "InvalidRecording") return
      assert.strictEqual(error.line, 6)
      assert.include(error.reason, "longer than 4096 characters")
    }).pipe(Effect.provide(AgentSessionsTest.replay(
      writeRecording(session().map((line, i) =>
        i === 5
          ? { type: "frame", t: 70, conn: 1, text: JSON.stringify({ event: "thoughts_and_memories", data: { thought: "x".repeat(5000), memory: "" } }) }
          : line
      )),
      { maxLineLength: 4096 }
    ))))

  it.effect("unknown events and odd fields reach the application as the SDK decodes them live", () =>
    Effect.gen(function*() {
      const outcome = yield* onVirtualTime(AgentSessions.run(request, { keepEvents: true }))
      const unknown = outcome.events.find(SessionEvent.$is("Unrecognized"))
      assert.isDefined(unknown)
      assert.strictEqual(unknown?.event, "mystery_event")
      assert.deepStrictEqual(unknown?.payload, { odd: [1, 2, 3] })
    }).pipe(Effect.provide(AgentSessionsTest.replay(writeRecording([
      header(),
      { type: "create", t: 0, request },
      { type: "created", t: 1, session: { session_id: "ses_recorded" } },
      { type: "connect", t: 2, conn: 1 },
      { type: "open", t: 3, conn: 1 },
      { type: "frame", t: 4, conn: 1, text: "{\"event\":\"mystery_event\",\"data\":{\"odd\":[1,2,3]}}" },
      {
        type: "frame",
        t: 5,
        conn: 1,
        text: JSON.stringify({ event: "complete", data: { response: "ok", type: "STRING", total_cost: 0, session_id: "ses_recorded", extra: true } })
      },
      { type: "close", t: 6, conn: 1, opened: true, outcome: { _tag: "End", reason: "complete" } },
      { type: "end", t: 7, reason: "complete" }
    ])))))
})

describe("AgentSessionsTest.replay: what the recording does not hold (issue 36)", () => {
  const requested = (t: number, actionSessionId: string, fieldName: string) => ({
    type: "frame",
    t,
    conn: 1,
    text: JSON.stringify({
      event: "external_resource_requested",
      data: { resource_type: "request_user_input", reason: "needed", action_session_id: actionSessionId, field_name: fieldName }
    })
  })
  const started = { type: "frame", t: 70, conn: 1, text: JSON.stringify({ event: "started", data: { sessionId, start_url: request.start_url } }) }
  const complete = (t: number) => ({
    type: "frame",
    t,
    conn: 1,
    text: JSON.stringify({ event: "complete", data: { response: "done", type: "STRING", total_cost: 0.01, session_id: sessionId } })
  })
  const ending = (t: number) => [
    { type: "close", t, conn: 1, opened: true, outcome: { _tag: "End", reason: "complete" } },
    { type: "end", t: t + 1, reason: "complete" }
  ]
  const opening = [
    { type: "create", t: 0, request },
    { type: "created", t: 40, session: { session_id: sessionId } },
    { type: "connect", t: 50, conn: 1 },
    { type: "open", t: 60, conn: 1 },
    started
  ]
  /** Answers each request by its field: an email, a phone number. */
  const byField = AgentSessions.run(request, {
    onRequest: (event) => Effect.succeed(Answer.grant(Option.getOrUndefined(event.field_name) === "phone" ? "+1 555 0100" : "jane@example.com"))
  })
  const answerTo = (actionSessionId: string, fieldName: string, input: string) => ({
    granted: true,
    resource_type: "request_user_input",
    action_session_id: actionSessionId,
    field_name: fieldName,
    input
  })

  it.effect("an answer to a request the recording never answered fails with ReplayMismatch (an approval now given)", () =>
    Effect.gen(function*() {
      const error = yield* failure(runApp())
      assert.strictEqual(error._tag, "ReplayMismatch")
      if (error._tag !== "ReplayMismatch") return
      assert.strictEqual(error.subject, "answer")
      // Named at the close the recorded connection reaches without an answer.
      assert.strictEqual(error.line, 10)
      assert.include(error.expected, "no answer")
      assert.include(error.actual, "\"granted\":true")
      assert.include(error.difference, "the recording never answered that request")
    }).pipe(Effect.provide(AgentSessionsTest.replay(writeRecording([
      header(),
      ...opening,
      requested(100, "as_payment", "email"),
      // Recorded: the application did not answer; the session went on and completed.
      { type: "frame", t: 5_000, conn: 1, text: JSON.stringify({ event: "action_run", data: { name: "wait", action_session_id: "as_payment", content: "" } }) },
      complete(5_100),
      ...ending(5_110)
    ])))))

  it.effect("two requests pending at once: each answer is compared with the recorded one, in order", () =>
    Effect.gen(function*() {
      const outcome = yield* onVirtualTime(byField)
      assert.strictEqual(outcome.response, "done")
      const answers = yield* AgentSessionsTest.answers
      assert.deepStrictEqual(answers.map((a) => a.answer), [Answer.grant("jane@example.com"), Answer.grant("+1 555 0100")])
    }).pipe(Effect.provide(AgentSessionsTest.replay(writeRecording([
      header(),
      ...opening,
      requested(100, "as_1", "email"),
      requested(110, "as_2", "phone"),
      // Both answered after both were pending: compared oldest first.
      { type: "answer", t: 300, conn: 1, data: answerTo("as_1", "email", "jane@example.com"), result: "written" },
      { type: "answer", t: 310, conn: 1, data: answerTo("as_2", "phone", "+1 555 0100"), result: "written" },
      complete(400),
      ...ending(410)
    ])))))

  it.effect("a create against a recording of attach (no create) fails with ReplayMismatch (create), whatever the request", () =>
    Effect.gen(function*() {
      for (const create of [request, { ...request, goal: "Something else entirely", max_actions: 99 }]) {
        const error = yield* failure(runApp(Answer.grant("jane@example.com"), create))
        assert.strictEqual(error._tag, "ReplayMismatch")
        if (error._tag !== "ReplayMismatch") return
        assert.strictEqual(error.subject, "create")
        assert.strictEqual(error.line, 2)
        assert.strictEqual(error.expected, "an attach (the recording has no create)")
        assert.strictEqual(error.actual, "a create request")
      }
    }).pipe(Effect.provide(AgentSessionsTest.replay(writeRecording([
      header(),
      { type: "connect", t: 50, conn: 1 },
      { type: "open", t: 60, conn: 1 },
      started,
      complete(100),
      ...ending(110)
    ])))))
  it.effect("an answer given while the application is to close the connection, where the recording has none, fails with ReplayMismatch", () =>
    Effect.gen(function*() {
      const error = yield* failure(runApp())
      assert.strictEqual(error._tag, "ReplayMismatch")
      if (error._tag !== "ReplayMismatch") return
      assert.strictEqual(error.subject, "answer")
      assert.strictEqual(error.line, 8)
    }).pipe(Effect.provide(AgentSessionsTest.replay(writeRecording([
      header(),
      ...opening,
      requested(100, "as_payment", "email"),
      // Recorded: the application closed the connection without answering.
      { type: "close", t: 100, conn: 1, opened: true, outcome: { _tag: "Interrupted" } },
      { type: "end", t: 101, reason: "closed-by-caller" }
    ])))))
})
