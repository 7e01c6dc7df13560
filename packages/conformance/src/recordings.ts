/**
 * The recordings the replay scenarios read, written by hand as the format documents them
 * (docs/testing.md): a header and the lines after it, plain data, and the file a replay reads them
 * from (objects as JSON, strings as they are, one per line). The core's and both editions' replay
 * tests use the same ones (`effect-agent-session-conformance/recordings`).
 */
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { ReplayFile } from "./scenario.js"

let dir: string | undefined
let count = 0

/** A new file name in this process's temporary directory for recordings. */
export const tempPath = (name: string): string => {
  dir ??= mkdtempSync(join(tmpdir(), "eas-replay-"))
  count += 1
  return join(dir, `${count}-${name}`)
}

/** Writes lines (objects are JSON-encoded, strings written as they are) to a new file. */
export const writeRecording = (lines: ReadonlyArray<unknown>, name = "recording.jsonl"): string => {
  const path = tempPath(name)
  writeFileSync(path, lines.map((line) => (typeof line === "string" ? line : JSON.stringify(line))).join("\n") + "\n")
  return path
}

/** The file a replay scenario reads: its lines written to a new `recording.jsonl`, or a path with none. */
export const recordingPath = (file: ReplayFile): string =>
  file._tag === "Missing" ? "/nonexistent/recording.jsonl" : writeRecording(file.lines)

export const sessionId = "ses_recorded"
export const actionSessionId = "as_recorded"

/**
 * The documented dialect, as a recording's header holds it: written out as data (a recording keeps
 * the dialect it was made with, whatever the code's `Dialect.documented` becomes).
 */
const documented = {
  name: "documented",
  auth: "bearer",
  onboardPath: "/agent/onboard",
  sessionsPath: "/api/v1sessions",
  createSessionBody: "documented",
  sessionResponse: "flat",
  retrieve: false,
  connectPath: "/v1/connect",
  handshake: "message",
  framing: "event-data",
  answerKey: "event",
  heartbeats: false,
  costSummary: false,
  replaysOnReconnect: false,
  sse: { connectPath: "/events/v1/connect", egressPath: "/events/v1/egress" }
}

/** The header of a recording (version 1, documented dialect, over WebSocket). */
export const header = (
  overrides: Readonly<Record<string, unknown>> = {}
): { readonly dialect: typeof documented; readonly [field: string]: unknown } => ({
  type: "header",
  format: "effect-agent-session/recording",
  version: 1,
  sdk: "0.1.0",
  dialect: documented,
  transport: "websocket",
  sessionId,
  recordedAt: "2026-11-25T12:00:00.000Z",
  ...overrides
})

/** The create request recorded. */
export const request = { start_url: "https://example.com", max_actions: 3, goal: "Find the opening hours" }

/** A `frame` line: the event `event` with `data`, received on connection `conn`. */
export const frame = (t: number, conn: number, event: string, data: unknown): Readonly<Record<string, unknown>> => ({
  type: "frame",
  t,
  conn,
  text: JSON.stringify({ event, data })
})

/** The answer recorded to the request for an email. */
export const answerData = {
  granted: true,
  resource_type: "request_user_input",
  action_session_id: actionSessionId,
  field_name: "email",
  input: "jane@example.com"
}

/**
 * A whole session: created, two actions around a request for an email (answered), one dropped
 * connection (1006) after the first action, `complete`.
 */
export const session = (options: { readonly answer?: unknown; readonly drop?: boolean } = {}): ReadonlyArray<unknown> => {
  const second = options.drop === false ? 1 : 2
  return [
    header(),
    { type: "create", t: 0, request },
    { type: "created", t: 40, session: { session_id: sessionId, status: "started", start_time: "2026-11-25T12:00:00.040Z" } },
    { type: "connect", t: 50, conn: 1 },
    { type: "open", t: 60, conn: 1 },
    frame(70, 1, "started", { sessionId, start_url: request.start_url }),
    frame(1_070, 1, "action_run", { name: "click", action_session_id: actionSessionId, content: "Open the page" }),
    ...(options.drop === false ? [] : [
      { type: "close", t: 1_100, conn: 1, opened: true, outcome: { _tag: "Retry", cause: "closed with code 1006" } },
      { type: "connect", t: 1_400, conn: 2 },
      { type: "open", t: 1_410, conn: 2 }
    ]),
    frame(1_500, second, "external_resource_requested", {
      resource_type: "request_user_input",
      reason: "An email address is needed",
      action_session_id: actionSessionId,
      field_name: "email"
    }),
    { type: "answer", t: 1_520, conn: second, data: options.answer ?? answerData, result: "written" },
    frame(1_530, second, "external_resource_granted", { granted: true, input: "jane@example.com" }),
    frame(31_530, second, "action_run", { name: "type", action_session_id: actionSessionId, content: "Type the email" }),
    frame(31_600, second, "complete", { response: "Mon-Fri 9-17", type: "STRING", total_cost: 0.02, session_id: sessionId }),
    { type: "close", t: 31_610, conn: second, opened: true, outcome: { _tag: "End", reason: "complete" } },
    { type: "end", t: 31_620, reason: "complete" }
  ]
}

/**
 * A session whose service replays on reconnect, declared by the recorded dialect
 * (`replaysOnReconnect`): connection 1 delivers `started` and an action and drops (1006);
 * connection 2 sends both again, then a second action and `complete`.
 */
export const replayingService = (): ReadonlyArray<unknown> => [
  header({ dialect: { ...documented, replaysOnReconnect: true } }),
  { type: "create", t: 0, request },
  { type: "created", t: 40, session: { session_id: sessionId, status: "started" } },
  { type: "connect", t: 50, conn: 1 },
  { type: "open", t: 60, conn: 1 },
  frame(70, 1, "started", { sessionId, start_url: request.start_url }),
  frame(1_070, 1, "action_run", { name: "click", action_session_id: "as_1", content: "Open the page" }),
  { type: "close", t: 1_100, conn: 1, opened: true, outcome: { _tag: "Retry", cause: "closed with code 1006" } },
  { type: "connect", t: 1_400, conn: 2 },
  { type: "open", t: 1_410, conn: 2 },
  frame(1_420, 2, "started", { sessionId, start_url: request.start_url }),
  frame(1_430, 2, "action_run", { name: "click", action_session_id: "as_1", content: "Open the page" }),
  frame(2_430, 2, "action_run", { name: "type", action_session_id: "as_2", content: "Type the query" }),
  frame(2_500, 2, "complete", { response: "Mon-Fri 9-17", type: "STRING", total_cost: 0.02, session_id: sessionId }),
  { type: "close", t: 2_510, conn: 2, opened: true, outcome: { _tag: "End", reason: "complete" } },
  { type: "end", t: 2_520, reason: "complete" }
]

/** A request for a field, on connection 1 (issue 36's recordings). */
export const requested = (t: number, actionSession: string, fieldName: string): Readonly<Record<string, unknown>> =>
  frame(t, 1, "external_resource_requested", {
    resource_type: "request_user_input",
    reason: "needed",
    action_session_id: actionSession,
    field_name: fieldName
  })

/** The `started` event on connection 1 at 70 ms. */
export const started = frame(70, 1, "started", { sessionId, start_url: request.start_url })

/** `complete` on connection 1, response `done`. */
export const complete = (t: number): Readonly<Record<string, unknown>> =>
  frame(t, 1, "complete", { response: "done", type: "STRING", total_cost: 0.01, session_id: sessionId })

/** Connection 1 closed after `complete`, the end of the recording. */
export const ending = (t: number): ReadonlyArray<unknown> => [
  { type: "close", t, conn: 1, opened: true, outcome: { _tag: "End", reason: "complete" } },
  { type: "end", t: t + 1, reason: "complete" }
]

/** The create, its answer, connection 1 opened and `started` (issue 36's recordings). */
export const opening: ReadonlyArray<unknown> = [
  { type: "create", t: 0, request },
  { type: "created", t: 40, session: { session_id: sessionId } },
  { type: "connect", t: 50, conn: 1 },
  { type: "open", t: 60, conn: 1 },
  started
]

/** A granted input, as a recording's `answer` line holds it. */
export const answerTo = (actionSession: string, fieldName: string, input: string): Readonly<Record<string, unknown>> => ({
  granted: true,
  resource_type: "request_user_input",
  action_session_id: actionSession,
  field_name: fieldName,
  input
})
