/**
 * Issue 20, items 5 and 6: a hostile service against the real command line (a child process,
 * pipes): escape sequences in every string the service supplies (OSC 52 clipboard writes, OSC 8
 * links, title changes, screen clears, a carriage return that would overwrite "Total cost", C1
 * controls, bidirectional overrides) reach neither standard output nor standard error, in plain
 * and in `--json` output and in error messages; and the reattach notice is a shell command that
 * runs `attach` with the very id, whatever it holds.
 */
import * as ChildProcess from "node:child_process"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import * as Sanitize from "../src/Sanitize.js"
import { cleanEnv, openTerminal, run, runArgs, spawn } from "./helpers.js"
import { scriptedService, type ScriptedService } from "./service.js"

/** A code point a terminal may act on: C0 but the newline, DEL, C1, bidirectional formatting. */
const forbidden = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/u

const hostile = {
  osc52: "\x1b]52;c;Y3VybCBldmlsfHNo\x07",
  osc8: "\x1b]8;;https://evil.example\x1b\\click here\x1b]8;;\x1b\\",
  title: "\x1b]0;pwned\x07",
  clear: "\x1b[2J\x1b[H",
  overwrite: "\rTotal cost: 0.00",
  c1: "\u009b2J\u009d0;t\u009c",
  bidi: "\u202etxt.exe"
}
const all = Object.values(hostile).join(" ")

const frames = (sessionId: string) => [
  { event: "started", data: { sessionId, start_url: `https://example.com/${hostile.osc8}` } },
  { event: "browser_started", data: { url: `https://example.com/${hostile.title}`, action_session_id: "as_1" } },
  { event: "thoughts_and_memories", data: { thought: `thinking ${hostile.osc52}`, memory: "" } },
  { event: "action_run", data: { name: `click${hostile.clear}`, action_session_id: "as_1", content: `step${hostile.overwrite}` } },
  { event: "error", data: { error: `oops ${hostile.bidi} ${hostile.c1}` } },
  { event: `evil${hostile.title}`, data: { x: all } },
  {
    event: "external_resource_requested",
    data: { resource_type: `kind${hostile.clear}`, reason: all, action_session_id: "as_2", field_name: hostile.osc52 }
  },
  {
    event: "complete",
    data: { response: `fine\n${hostile.overwrite}\n${all}`, type: `STRING${hostile.clear}`, total_cost: 0.5, session_id: sessionId }
  }
]

const envOf = (service: ScriptedService) =>
  cleanEnv({ AGENT_SESSION_BASE_URL: service.baseUrl, AGENT_SESSION_WS_URL: service.wsUrl, AGENT_SESSION_API_KEY: "k" })

const noControl = (label: string, text: string) => {
  const match = forbidden.exec(text)
  expect(match, `${label}: ${JSON.stringify(match?.[0])} at ${match?.index}`).toBeNull()
}

describe("issue 20 item 5: escape sequences from the service never reach the terminal", () => {
  it.live("plain output: every service string is shown escaped; the only Total cost line is the real one", () =>
    Effect.scoped(Effect.gen(function*() {
      const service = yield* scriptedService({
        create: { status: 200, body: { session_id: `ses_${hostile.title}`, status: "started" } },
        frames: frames("ses_x")
      })
      // With the SDK's own logs on standard error too (debug: every connection step).
      const result = yield* run(runArgs(3, "--log-level", "debug"), envOf(service))
      expect(result.code, result.stderr).toBe(0)
      noControl("stdout", result.stdout)
      noControl("stderr", result.stderr)
      expect(result.stderr).toContain("level=DEBUG")
      expect(result.stdout.match(/^Total cost: .*$/gm)).toEqual(["Total cost: 0.5"])
      // Shown, inert: the reader sees that something odd came.
      expect(result.stdout).toContain("\\x1b]52;c;Y3VybCBldmlsfHNo\\x07")
      expect(result.stdout).toContain("\\u{202e}txt.exe")
    })))

  it.live("--json: every line parses, holds no control character, and the strings round-trip", () =>
    Effect.scoped(Effect.gen(function*() {
      const service = yield* scriptedService({
        create: { status: 200, body: { session_id: "ses_json", status: "started" } },
        frames: frames("ses_json")
      })
      const result = yield* run(runArgs(3, "--json"), envOf(service))
      expect(result.code, result.stderr).toBe(0)
      noControl("stdout", result.stdout)
      noControl("stderr", result.stderr)
      const objects = result.stdout.trimEnd().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>)
      const thought = objects.find((o) => o["event"] === "thoughts_and_memories")
      expect((thought?.["data"] as Record<string, unknown>)["thought"]).toBe(`thinking ${hostile.osc52}`)
      const outcome = objects.find((o) => o["kind"] === "outcome")
      expect(outcome?.["response"]).toBe(`fine\n${hostile.overwrite}\n${all}`)
    })))

  it.live("an HTTP error's message from the service is escaped on standard error", () =>
    Effect.scoped(Effect.gen(function*() {
      const service = yield* scriptedService({ create: { status: 400, body: { error: `bad ${all}` } } })
      const result = yield* run(runArgs(3), envOf(service))
      expect(result.code).toBe(8)
      expect(result.stderr).toMatch(/^error: /)
      noControl("stderr", result.stderr)
      noControl("stdout", result.stdout)
      expect(result.stderr).toContain("\\x1b[2J")
    })))
})

describe("issue 20 item 5 in a terminal: the live view and the prompt", () => {
  it.live("a field name with a title change and a screen clear shows escaped in the prompt; the screen is not cleared", () =>
    Effect.scoped(Effect.gen(function*() {
      const service = yield* scriptedService({
        create: { status: 200, body: { session_id: "ses_tty", status: "started" } },
        frames: [
          { event: "action_run", data: { name: `click${hostile.clear}`, action_session_id: "as_1", content: `step${hostile.overwrite}` } },
          {
            event: "external_resource_requested",
            data: { resource_type: "request_user_input", reason: all, action_session_id: "as_2", field_name: `email${hostile.title}${hostile.clear}` }
          }
        ]
      })
      const terminal = yield* openTerminal(runArgs(3), envOf(service))
      const screen = yield* terminal.waitFor(/email\\x1b\]0;pwned\\x07\\x1b\[2J\\x1b\[H \(empty to deny\)/, 30_000)
      // Nothing cleared the screen: the first lines are still there, the service's text inert.
      expect(screen).toContain("session ses_tty (max 3 actions)")
      expect(screen).toContain("click\\x1b[2J\\x1b[H")
      yield* terminal.ctrlC
      yield* terminal.waitFor(/reattach with: effect-agent-session attach ses_tty --max-actions 3/, 30_000)
    })), 90_000)
})

/** The words `sh` makes of a command line (no command runs: `set --` only assigns them). */
const shellWords = (commandLine: string): Array<string> => {
  const ran = ChildProcess.spawnSync("sh", ["-c", `set -- ${commandLine}; for a in "$@"; do printf '%s\\0' "$a"; done`], {
    encoding: "utf8"
  })
  return ran.stdout.split("\0").slice(0, -1)
}

/** Words rich in what a shell gives a meaning to, and any Unicode (no control character). */
const wordArb = FastCheck.array(
  FastCheck.oneof(FastCheck.fullUnicode(), FastCheck.constantFrom(..."'\"\\$`;|&<>(){}[]*?~=#! \u00a0%^,+:@-".split(""))),
  { maxLength: 30 }
).map((parts) => parts.join("")).filter((word) => !Sanitize.hasControl(word) && !/[\u2028\u2029]/.test(word))

describe("issue 20 item 6: the reattach notice is one shell command with the very id", () => {
  it.prop(
    "Sanitize.shellWord: sh reads it back as the very word",
    [wordArb],
    ([word]) => {
      const ran = ChildProcess.spawnSync("sh", ["-c", `printf '%s' ${Sanitize.shellWord(word)}`], { encoding: "utf8" })
      expect(ran.stdout).toBe(word)
    },
    { fastCheck: { numRuns: 60 } }
  )

  it.live("an id holding ; | $ ' and spaces is quoted: the notice's command is attach <id> --max-actions 3", () =>
    Effect.scoped(Effect.gen(function*() {
      // Harmless if it ever ran: the test would still see it split into several words.
      const sessionId = "ses_1;true|true 'x' $HOME"
      const service = yield* scriptedService({
        create: { status: 200, body: { session_id: sessionId, status: "started" } },
        frames: [{ event: "action_run", data: { name: "click", action_session_id: "as_1", content: "Click" } }]
      })
      const child = yield* spawn(runArgs(3), envOf(service))
      yield* child.waitFor(/action 1\/3/)
      child.process.kill("SIGINT")
      const result = yield* child.finished
      expect(result.code).toBe(130)
      const notice = result.stderr.match(/reattach with: (.*)$/m)?.[1]
      expect(notice, result.stderr).toBeDefined()
      expect(shellWords(notice ?? "")).toEqual(["effect-agent-session", "attach", sessionId, "--max-actions", "3"])
    })))
})
