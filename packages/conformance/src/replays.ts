/**
 * The replay scenarios both editions must pass (issues 23, 36): a recording, what the program does
 * over the edition's in-memory replay (`AgentSessionsTest.replay`, on virtual time), and what must
 * hold (`scenario.ts`'s `ReplayScenario`, judged by `verdict.ts`'s `replayVerdict`). A replay
 * gives the program the recorded events; it accepts nothing the recording does not hold (an answer
 * or a create that differs, a connection or an answer it never recorded: `ReplayMismatch`, naming
 * the line and the difference, never the key); a file that is not a whole, valid recording is
 * `InvalidRecording`, naming the line.
 */
import * as R from "./recordings.js"
import type {
  ReplayAnswer,
  ReplayExpectation,
  ReplayFile,
  ReplayOptions,
  ReplayProgram,
  ReplayScenario,
  SessionRequest
} from "./scenario.js"

const lines = (recorded: ReadonlyArray<unknown>): ReplayFile => ({ _tag: "Lines", lines: recorded })

const email: ReplayAnswer = { _tag: "Grant", input: "jane@example.com" }

/** `AgentSessions.run` of the recorded request, granting the email. */
const runApp = (answer: ReplayAnswer = email, request: SessionRequest = R.request): ReplayProgram => ({
  _tag: "run",
  request,
  answer
})

/** Defaults: the recorded session, the program granting the email, no option. */
const replay = (
  fields: Pick<ReplayScenario, "name" | "proves"> & { readonly expect: Omit<ReplayExpectation, "keyNeverInError"> } & Partial<
    Omit<ReplayScenario, "name" | "proves" | "expect">
  >
): ReplayScenario => ({
  recording: lines(R.session()),
  options: {},
  program: runApp(),
  ...fields,
  expect: { keyNeverInError: true, ...fields.expect }
})

/** A stop of the program with `ReplayMismatch` about `subject` at `line`. */
const mismatch = (subject: "answer" | "create" | "connection", line?: number) => ({
  ending: "ReplayMismatch",
  failedIn: "program" as const,
  errorFields: { subject, ...(line === undefined ? {} : { line }) }
})

/** The layer refused the file with `InvalidRecording` at `line`, its reason containing `reason`. */
const refused = (line: number, reason: string) => ({
  ending: "InvalidRecording",
  failedIn: "layer" as const,
  errorFields: { line },
  errorFieldsInclude: { reason: [reason] }
})

/** The recorded session with line `index` (0-based) replaced. */
const withLine = (index: number, line: unknown, options?: { readonly drop?: boolean }): ReplayFile =>
  lines(R.session(options).map((recorded, i) => (i === index ? line : recorded)))

/** The test kit's account key: the replay's create compares the application's request scrubbed of it. */
export const testAccountKey = "test-account-key"

const noOptions: ReplayOptions = {}

export const replayScenarios: ReadonlyArray<ReplayScenario> = [
  replay({
    name: "issue 23 a recorded session replays: its events, the drop and reconnect, the answer and the outcome",
    proves: ["issue 23"],
    expect: {
      ending: "Complete",
      events: [
        { tag: "Started" },
        { tag: "ActionRun", text: "Open the page" },
        { tag: "ExternalResourceRequested" },
        { tag: "ExternalResourceGranted" },
        { tag: "ActionRun", text: "Type the email" },
        { tag: "Complete" }
      ],
      response: "Mon-Fri 9-17",
      actions: 2,
      answers: [[true, "jane@example.com"]],
      connections: [R.sessionId],
      created: [R.request.goal],
      canRetrieve: true
    }
  }),
  replay({
    name:
      "issue 23 a recorded dialect that replays on reconnect (replaysOnReconnect): the replayed events are dropped, as over a socket: every event once",
    proves: ["issue 23"],
    recording: lines(R.replayingService()),
    expect: {
      ending: "Complete",
      events: [
        { tag: "Started" },
        { tag: "ActionRun", text: "Open the page" },
        { tag: "ActionRun", text: "Type the query" },
        { tag: "Complete" }
      ],
      response: "Mon-Fri 9-17",
      answers: [],
      connections: [R.sessionId],
      created: [R.request.goal]
    }
  }),
  replay({
    name: "issue 23 an answer that differs stops the replay with ReplayMismatch (answer) naming the line and each difference",
    proves: ["issue 23"],
    program: runApp({ _tag: "Deny" }),
    expect: {
      ...mismatch("answer", 12),
      errorFieldsInclude: {
        difference: ["granted: expected true, got false", "input: expected \"jane@example.com\", got (absent)"],
        message: [":12"]
      }
    }
  }),
  replay({
    name: "issue 23 no answer within answerTimeout stops the replay with ReplayMismatch (answer)",
    proves: ["issue 23"],
    options: { answerTimeoutMs: 5_000 },
    program: { _tag: "neverAnswer", request: R.request },
    expect: { ...mismatch("answer"), errorFieldsInclude: { actual: ["no answer within 5s"] } }
  }),
  replay({
    name: "issue 23 a create request that differs stops the replay with ReplayMismatch (create) naming the difference",
    proves: ["issue 23"],
    program: runApp(email, { ...R.request, goal: "Find the prices" }),
    expect: { ...mismatch("create", 2), errorFields: { subject: "create", line: 2, difference: "goal: expected \"Find the opening hours\", got \"Find the prices\"" } }
  }),
  replay({
    name: "issue 36 a create that differs and holds the key: the difference is named, the key never",
    proves: ["issue 36"],
    program: runApp(email, { ...R.request, goal: `Find the prices for ${testAccountKey}` }),
    expect: {
      ...mismatch("create", 2),
      errorFieldsInclude: { difference: ["goal: expected \"Find the opening hours\", got \"Find the prices for <redacted>\""] }
    }
  }),
  replay({
    name: "issue 36 the create is compared as the recorder wrote it: key=pizza kept, the apiKey parameter and the key scrubbed alike",
    proves: ["issue 36"],
    recording: lines(R.session().map((line, i) =>
      i === 1
        ? {
          type: "create",
          t: 0,
          request: { ...R.request, start_url: "https://example.com/search?key=pizza&apiKey=<redacted>", goal: "Find the opening hours for <redacted>" }
        }
        : line
    )),
    program: runApp(email, {
      ...R.request,
      start_url: "https://example.com/search?key=pizza&apiKey=own-value",
      goal: `Find the opening hours for ${testAccountKey}`
    }),
    expect: { ending: "Complete", response: "Mon-Fri 9-17" }
  }),
  replay({
    name: "issue 23 the recording's redact is applied to the program's answers before they are compared",
    proves: ["issue 23"],
    recording: lines(R.session({ answer: { ...R.answerData, input: "<email>" } })),
    options: { redactAnswerInput: "<email>" },
    program: runApp({ _tag: "Grant", input: "someone.else@example.com" }),
    expect: { ending: "Complete", response: "Mon-Fri 9-17" }
  }),
  replay({
    name: "issue 23 a recorded create failure is replayed as that typed error",
    proves: ["issue 23"],
    recording: lines([
      R.header(),
      { type: "create", t: 0, request: R.request },
      {
        type: "create-failed",
        t: 20,
        error: { _tag: "Unauthorized", status: 401, message: "invalid API key", body: "{}", operation: "AgentApi.createSession" }
      }
    ]),
    expect: { ending: "Unauthorized", failedIn: "program", errorFields: { status: 401 } }
  }),
  replay({
    name: "issue 23 a connection the recording does not hold stops the replay with ReplayMismatch (connection)",
    proves: ["issue 23"],
    // Cut after the first connection's drop: the engine reconnects; the recording has nothing.
    recording: lines(R.session().filter((line) =>
      typeof line === "object" && line !== null && "t" in line && typeof line.t === "number" ? line.t <= 1_100 : true
    )),
    expect: mismatch("connection")
  }),
  replay({
    name: "issue 36 an answer to a request the recording never answered stops the replay with ReplayMismatch (answer)",
    proves: ["issue 36"],
    recording: lines([
      R.header(),
      ...R.opening,
      R.requested(100, "as_payment", "email"),
      // Recorded: the application did not answer; the session went on and completed.
      R.frame(5_000, 1, "action_run", { name: "wait", action_session_id: "as_payment", content: "" }),
      R.complete(5_100),
      ...R.ending(5_110)
    ]),
    expect: {
      // Named at the close the recorded connection reaches without an answer.
      ...mismatch("answer", 10),
      errorFieldsInclude: {
        expected: ["no answer"],
        actual: ["\"granted\":true"],
        difference: ["the recording never answered that request"]
      }
    }
  }),
  replay({
    name: "issue 36 an answer given where the recording closed the connection without one stops the replay with ReplayMismatch (answer)",
    proves: ["issue 36"],
    recording: lines([
      R.header(),
      ...R.opening,
      R.requested(100, "as_payment", "email"),
      // Recorded: the application closed the connection without answering.
      { type: "close", t: 100, conn: 1, opened: true, outcome: { _tag: "Interrupted" } },
      { type: "end", t: 101, reason: "closed-by-caller" }
    ]),
    expect: mismatch("answer", 8)
  }),
  replay({
    name: "issue 36 two requests pending at once: each answer is compared with the recorded one, in order",
    proves: ["issue 36"],
    recording: lines([
      R.header(),
      ...R.opening,
      R.requested(100, "as_1", "email"),
      R.requested(110, "as_2", "phone"),
      // Both answered after both were pending: compared oldest first.
      { type: "answer", t: 300, conn: 1, data: R.answerTo("as_1", "email", "jane@example.com"), result: "written" },
      { type: "answer", t: 310, conn: 1, data: R.answerTo("as_2", "phone", "+1 555 0100"), result: "written" },
      R.complete(400),
      ...R.ending(410)
    ]),
    program: runApp({ _tag: "GrantByField", inputs: { phone: "+1 555 0100" }, otherwise: "jane@example.com" }),
    expect: { ending: "Complete", response: "done", answers: [[true, "jane@example.com"], [true, "+1 555 0100"]] }
  }),
  ...[R.request, { ...R.request, goal: "Something else entirely", max_actions: 99 }].map((request, i) =>
    replay({
      name: `issue 36 a create against a recording of attach (no create) stops the replay with ReplayMismatch (create): ${
        i === 0 ? "the recorded request" : "another request"
      }`,
      proves: ["issue 36"],
      recording: lines([
        R.header(),
        { type: "connect", t: 50, conn: 1 },
        { type: "open", t: 60, conn: 1 },
        R.started,
        R.complete(100),
        ...R.ending(110)
      ]),
      program: runApp(email, request),
      expect: {
        ...mismatch("create", 2),
        errorFields: { subject: "create", line: 2, expected: "an attach (the recording has no create)", actual: "a create request" }
      }
    })
  ),
  replay({
    name: "issue 23 unknown events and odd fields reach the program as the SDK decodes them live",
    proves: ["issue 23"],
    recording: lines([
      R.header(),
      { type: "create", t: 0, request: R.request },
      { type: "created", t: 1, session: { session_id: R.sessionId } },
      { type: "connect", t: 2, conn: 1 },
      { type: "open", t: 3, conn: 1 },
      { type: "frame", t: 4, conn: 1, text: "{\"event\":\"mystery_event\",\"data\":{\"odd\":[1,2,3]}}" },
      R.frame(5, 1, "complete", { response: "ok", type: "STRING", total_cost: 0, session_id: R.sessionId, extra: true }),
      { type: "close", t: 6, conn: 1, opened: true, outcome: { _tag: "End", reason: "complete" } },
      { type: "end", t: 7, reason: "complete" }
    ]),
    expect: {
      ending: "Complete",
      response: "ok",
      events: [{ tag: "Unrecognized", text: "mystery_event", payload: "{\"odd\":[1,2,3]}" }, { tag: "Complete" }]
    }
  }),
  replay({
    name: "issue 23 a damaged line met while replaying stops it with InvalidRecording naming the line",
    proves: ["issue 23"],
    recording: withLine(6, "{\"type\":\"frame\",\"t\":1070,\"conn\":1,\"text\":\"{\\\"event\\\":"),
    expect: {
      ending: "InvalidRecording",
      failedIn: "program",
      errorFields: { line: 7, reason: "not JSON" },
      errorFieldsEndWith: { message: "recording.jsonl:7: not JSON" }
    }
  }),
  replay({
    name: "issue 23 a line of the wrong shape stops the replay with InvalidRecording naming the line and the field",
    proves: ["issue 23"],
    recording: withLine(4, { type: "open", t: 60, conn: "one" }),
    expect: { ending: "InvalidRecording", failedIn: "program", errorFields: { line: 5, reason: "open: \"conn\" is missing or not valid" } }
  }),
  replay({
    name: "issue 23 a recording that ends before its connection closed (truncated) stops the replay with InvalidRecording",
    proves: ["issue 23"],
    recording: lines(R.session({ drop: false }).slice(0, 7)),
    expect: { ending: "InvalidRecording", failedIn: "program", errorFieldsInclude: { reason: ["ends before its connection closed"] } }
  }),
  replay({
    name: "issue 23 a line longer than maxLineLength stops the replay with InvalidRecording naming it",
    proves: ["issue 23"],
    recording: withLine(
      5,
      R.frame(70, 1, "thoughts_and_memories", { thought: "x".repeat(5000), memory: "" })
    ),
    options: { maxLineLength: 4096 },
    expect: { ending: "InvalidRecording", failedIn: "program", errorFields: { line: 6 }, errorFieldsInclude: { reason: ["longer than 4096 characters"] } }
  }),
  ...([
    ["a foreign file", [{ hello: "world" }], "not a recording of effect-agent-session"],
    ["a file that is not JSON", ["PK\u0003\u0004 not a recording"], "not JSON"],
    ["a newer format version", [R.header({ version: 2 })], "newer than this SDK reads (1)"],
    ["a header without its dialect", [R.header({ dialect: { name: "mine" } })], "header: dialect:"],
    ["an empty file", [""], "not a recording"]
  ] as const).map(([what, recorded, reason]) =>
    replay({
      name: `issue 23 ${what} fails the replay's layer with InvalidRecording (line 1)`,
      proves: ["issue 23"],
      recording: lines(recorded),
      options: noOptions,
      expect: refused(1, reason)
    })
  ),
  replay({
    name: "issue 23 a missing file fails the replay's layer with InvalidRecording (line 0)",
    proves: ["issue 23"],
    recording: { _tag: "Missing" },
    expect: { ending: "InvalidRecording", failedIn: "layer", errorFields: { line: 0 } }
  })
]
