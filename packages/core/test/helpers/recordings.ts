/**
 * Recordings written by hand for the replay tests of both editions: a header and the lines after
 * it, as the format documents them (docs/testing.md). Plain data and files, no Effect: the
 * editions' test/recording/helpers.ts re-export it.
 */
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Dialect from "../../src/Dialect.js"

const dir = mkdtempSync(join(tmpdir(), "eas-replay-"))
let count = 0

/** A file in the tests' temporary directory. */
export const tempPath = (name: string): string => {
  count += 1
  return join(dir, `${count}-${name}`)
}

/** Writes lines (objects are JSON-encoded, strings written as they are) to a new file. */
export const writeRecording = (lines: ReadonlyArray<unknown>, name = "recording.jsonl"): string => {
  const path = tempPath(name)
  writeFileSync(path, lines.map((line) => (typeof line === "string" ? line : JSON.stringify(line))).join("\n") + "\n")
  return path
}

export const sessionId = "ses_recorded"
export const actionSessionId = "as_recorded"

/** The header of a recording. */
export const header = (overrides: Record<string, unknown> = {}) => ({
  type: "header",
  format: "effect-agent-session/recording",
  version: 1,
  sdk: "0.1.0",
  dialect: Dialect.documented,
  transport: "websocket",
  sessionId,
  recordedAt: "2026-11-25T12:00:00.000Z",
  ...overrides
})

export const request = { start_url: "https://example.com", max_actions: 3, goal: "Find the opening hours" }

const frame = (t: number, conn: number, event: string, data: unknown) => ({
  type: "frame",
  t,
  conn,
  text: JSON.stringify({ event, data })
})

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
