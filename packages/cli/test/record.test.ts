/**
 * `run --record FILE`, `attach --record FILE` and `simulate --replay FILE` (issue 23), as child
 * processes against the simulator on port 0.
 */
import { assert, describe, it } from "@effect/vitest"
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Effect from "effect/Effect"
import { AgentApi, NodeAgentSessions } from "effect-agent-session"
import { Simulator } from "effect-agent-session-simulator"
import { cleanEnv, envFor, run, runArgs, spawn } from "./helpers.js"

const dir = mkdtempSync(join(tmpdir(), "eas-cli-record-"))
const key = "sk-cli-record-SECRET-77"

const typesOf = (path: string): Array<string> =>
  readFileSync(path, "utf8").trim().split("\n").map((line) => (JSON.parse(line) as { type: string }).type)

describe("effect-agent-session --record / simulate --replay", () => {
  it.live("run --record writes the session (no key); simulate --replay serves it to run; a different answer fails the replay", () =>
    Effect.scoped(Effect.gen(function*() {
      const sim = yield* Simulator.make({ accountKey: key, scenario: { actions: 3, ask: "permission", frameDelay: "2 millis" } })
      const path = join(dir, "run.jsonl")
      const recorded = yield* run(runArgs(3, "--json", "--approve", "--record", path), envFor(sim))
      assert.strictEqual(recorded.code, 0, recorded.stderr)
      assert.include(recorded.stderr, `recorded: ${path}`)
      assert.notInclude(readFileSync(path, "utf8"), key)
      const types = typesOf(path)
      assert.deepStrictEqual(types.slice(0, 3), ["header", "create", "created"])
      assert.include(types, "answer")
      assert.strictEqual(types.at(-1), "end")

      const replay = yield* spawn(["simulate", "--replay", path, "--port", "0", "--json", "--speed", "20"], cleanEnv())
      const line = yield* replay.waitFor(/^\{.*\}\n/)
      const info = JSON.parse(line[0]) as { baseUrl: string; accountKey: string; sessionId: string; transport: string }
      assert.strictEqual(info.transport, "websocket")
      const env = cleanEnv({ AGENT_SESSION_BASE_URL: info.baseUrl, AGENT_SESSION_API_KEY: info.accountKey })

      const again = yield* run(runArgs(3, "--json", "--approve"), env)
      assert.strictEqual(again.code, 0, again.stderr)
      const events = (out: string) =>
        out.trim().split("\n").map((l) => JSON.parse(l) as Record<string, unknown>).filter((o) => o["kind"] === "event")
          .map((o) => o["event"])
      assert.deepStrictEqual(events(again.stdout), events(recorded.stdout))
      yield* replay.waitFor(/"kind":"replayed".*"answers":1/)

      // The same session answered otherwise: the replay refuses it and says why.
      const denied = yield* run(runArgs(3, "--json", "--deny"), env)
      assert.strictEqual(denied.code, 8, denied.stdout)
      assert.include(denied.stdout, "The answer differs from the recording")
      yield* replay.waitFor(/"kind":"replay-failed","error":"ReplayMismatch".*granted: expected true, got false/)
      // On the terminal: a replay mismatch with the difference, not a key problem; no logfmt line.
      const plain = yield* run(runArgs(3, "--deny"), env)
      assert.strictEqual(plain.code, 8, plain.stderr)
      // (the close reason is cut at the WebSocket's 123 bytes, the recording's path last: the
      // simulator prints it whole)
      assert.match(plain.stderr, /error: replay mismatch: .*The answer differs from the recording: granted: expected true/)
      assert.notInclude(plain.stderr, "AGENT_SESSION_API_KEY")
      assert.notMatch(plain.stderr, /level=|timestamp=/)
    })))

  it.live("attach --record records a session created elsewhere, from its first connection", () =>
    Effect.scoped(Effect.gen(function*() {
      const sim = yield* Simulator.make({ accountKey: key, scenario: { actions: 2, ask: "none", frameDelay: "2 millis" } })
      const session = yield* Effect.flatMap(AgentApi.AgentApi, (api) =>
        api.createSession({ start_url: "https://example.com", max_actions: 2, goal: "Read the title" })).pipe(
          Effect.provide(NodeAgentSessions.layer({ apiKey: key, baseUrl: sim.baseUrl }))
        )
      const path = join(dir, "attach.jsonl")
      const attached = yield* run(["attach", session.session_id, "--json", "--record", path], envFor(sim))
      assert.strictEqual(attached.code, 0, attached.stderr)
      const header = JSON.parse(readFileSync(path, "utf8").split("\n")[0] ?? "{}") as Record<string, unknown>
      assert.strictEqual(header["sessionId"], session.session_id)
      assert.deepStrictEqual(typesOf(path).slice(1, 3), ["connect", "open"])
    })))

  it.live("a missing folder is created; a file that cannot be written is a usage error before anything is sent", () =>
    Effect.scoped(Effect.gen(function*() {
      const sim = yield* Simulator.make({ accountKey: key, scenario: { actions: 1, ask: "none", frameDelay: "2 millis" } })
      const nested = join(dir, "new-dir", "deeper", "x.jsonl")
      const made = yield* run(runArgs(1, "--json", "--record", nested), envFor(sim))
      assert.strictEqual(made.code, 0, made.stderr)
      assert.strictEqual(typesOf(nested).at(-1), "end")
      const before = yield* sim.httpRequests
      // A folder that cannot be made (a file is in its way): refused before the create.
      const blocker = join(dir, "a-file")
      writeFileSync(blocker, "")
      const result = yield* run(runArgs(1, "--record", join(blocker, "sub", "x.jsonl")), envFor(sim))
      assert.strictEqual(result.code, 2)
      assert.include(result.stderr, "--record: cannot write")
      assert.strictEqual(yield* sim.httpRequests, before)
    })))

  it.live("simulate --replay of a file that is not a recording names the line, exit 2", () =>
    Effect.gen(function*() {
      const path = join(dir, "foreign.jsonl")
      writeFileSync(path, "{\"log\":{\"entries\":[]}}\n")
      const result = yield* run(["simulate", "--replay", path, "--port", "0"], cleanEnv())
      assert.strictEqual(result.code, 2)
      assert.include(result.stderr, `${path}:1: not a recording of effect-agent-session`)
    }))
})
