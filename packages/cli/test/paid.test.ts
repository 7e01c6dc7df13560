/**
 * Issue 13 through the command line, as a real child process against the simulator on port 0:
 * exact reconnect attempt counts at --max-reconnects 0, 1 and 2; a channel that never opened
 * fails in seconds (wall clock, generous bound: a hang guard); the orphan notice; `attach`.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Net from "node:net"
import { Simulator } from "effect-agent-session-simulator"
import { envFor, run, runArgs, runUntilServiceGoes } from "./helpers.js"

const orphanLine = /^session (\S+) may still be running at the service; reattach with: effect-agent-session attach \1 --max-actions \d+$/m

/** A port nothing listens on: bound, then closed. */
const freePort = Effect.async<number>((resume) => {
  const server = Net.createServer()
  server.listen(0, "127.0.0.1", () => {
    const address = server.address()
    const port = typeof address === "object" && address !== null ? address.port : 0
    server.close(() => resume(Effect.succeed(port)))
  })
})

describe("issue 13: exact reconnect attempt counts (--max-reconnects 0, 1, 2)", () => {
  for (const max of [0, 1, 2]) {
    it.live(`--max-reconnects ${max} --json: Reconnecting attempts 1..${max}, then ConnectionLost, and the orphan notice`, () =>
      Effect.gen(function*() {
        const result = yield* runUntilServiceGoes(["--json", "--max-reconnects", String(max)], /"action":1/)
        expect(result.code).toBe(5)
        const objects = result.stdout.trimEnd().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>)
        const attempts = objects.filter((o) => o["kind"] === "state" && o["state"] === "Reconnecting").map((o) => o["attempt"])
        expect(attempts).toEqual(Array.from({ length: max }, (_, i) => i + 1))
        const error = objects.find((o) => o["kind"] === "error")
        expect(error?.["tag"]).toBe("ConnectionLost")
        expect(String(error?.["message"])).toContain(`after ${max + 1} attempts`)
        const sessionId = String(objects[0]?.["sessionId"])
        expect(result.stderr).toMatch(orphanLine)
        expect(result.stderr).toContain(`attach ${sessionId}`)
      }))
  }

  it.live("--max-reconnects 2, plain: the live lines count attempts 1 and 2, never a third", () =>
    Effect.gen(function*() {
      const result = yield* runUntilServiceGoes(["--max-reconnects", "2"], /action 1\/8/)
      expect(result.code).toBe(5)
      expect(result.stdout).toContain("reconnecting (attempt 1)")
      expect(result.stdout).toContain("reconnecting (attempt 2)")
      expect(result.stdout).not.toContain("(attempt 3)")
    }))
})

describe("issue 13: a channel that never opened", () => {
  it.live("a wrong --ws-url fails with NeverConnected in seconds, exit 5, naming the session to reattach", () =>
    Effect.scoped(Effect.gen(function*() {
      const sim = yield* Simulator.make({ scenario: { actions: 2, ask: "none" } })
      const port = yield* freePort
      const started = Date.now()
      const result = yield* run(
        runArgs(2),
        envFor(sim, { AGENT_SESSION_WS_URL: `ws://127.0.0.1:${port}` }),
        30_000
      )
      const elapsed = Date.now() - started
      expect(result.code).toBe(5)
      expect(result.stderr).toContain("the event channel never connected")
      expect(result.stderr).not.toContain("connection lost")
      expect(result.stdout).not.toContain("reconnecting")
      expect(result.stderr).toMatch(orphanLine)
      // A hang guard, not a timing assertion: the reconnect schedule alone would take about a minute.
      expect(elapsed).toBeLessThan(20_000)
    })))
})

describe("issue 13: attach", () => {
  it.live("attach <id> watches a session created elsewhere to its end, like run", () =>
    Effect.scoped(Effect.gen(function*() {
      const sim = yield* Simulator.make({ scenario: { actions: 3, ask: "permission", frameDelay: Duration.millis(2) } })
      const created = yield* Effect.promise(() =>
        fetch(`${sim.baseUrl}/api/v1sessions`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${sim.accountKey}` },
          body: JSON.stringify({ start_url: "https://example.com", goal: "Find the pricing page", max_actions: 3 })
        }).then((r) => r.json() as Promise<{ session_id: string }>)
      )
      const result = yield* run(["attach", created.session_id, "--approve", "--max-actions", "3"], envFor(sim))
      expect(result.stderr).toBe("")
      expect(result.code).toBe(0)
      expect(result.stdout).toContain(`session ${created.session_id}`)
      expect(result.stdout).toContain("Actions seen: 3 of max 3 (this watch only")
      const answers = yield* sim.answers(created.session_id)
      expect(answers.map((a) => a.granted)).toEqual([true])
    })))

  it.live("issue 22: attach without --max-actions counts actions without a maximum (never 2147483647)", () =>
    Effect.scoped(Effect.gen(function*() {
      const sim = yield* Simulator.make({ scenario: { actions: 3, ask: "none", frameDelay: Duration.millis(2) } })
      const create = () =>
        Effect.promise(() =>
          fetch(`${sim.baseUrl}/api/v1sessions`, {
            method: "POST",
            headers: { "content-type": "application/json", authorization: `Bearer ${sim.accountKey}` },
            body: JSON.stringify({ start_url: "https://example.com", goal: "Find the pricing page", max_actions: 3 })
          }).then((r) => r.json() as Promise<{ session_id: string }>)
        )
      const [plainSession, jsonSession] = yield* Effect.all([create(), create()])
      const [plain, json] = yield* Effect.all([
        run(["attach", plainSession.session_id], envFor(sim)),
        run(["attach", jsonSession.session_id, "--json"], envFor(sim))
      ], { concurrency: "unbounded" })
      expect(plain.code, plain.stderr).toBe(0)
      expect(plain.stdout).toContain(`session ${plainSession.session_id} created\n`)
      expect(plain.stdout).toMatch(/^action 3: /m)
      expect(plain.stdout).toMatch(/^Actions seen: 3 \(this watch only; the cost is the whole session.s\)$/m)
      expect(json.code, json.stderr).toBe(0)
      const objects = json.stdout.trimEnd().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>)
      expect(objects[0]).toMatchObject({ kind: "session", maxActions: null })
      expect(objects.at(-1)).toMatchObject({ kind: "outcome", actions: 3, maxActions: null })
      for (const text of [plain.stdout, json.stdout]) expect(text).not.toContain("2147483647")
    })))
})
