/**
 * The command line as a real child process (`packages/cli/src/main.ts` through tsx) against the
 * simulator on port 0, standard output not a terminal.
 */
import { assert, describe, expect, it, layer } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Http from "node:http"
import { WebSocketServer } from "ws"
import * as Option from "effect/Option"
import * as Dialect from "effect-agent-session/Dialect"
import type * as SessionEvent from "effect-agent-session/SessionEvent"
import { Simulator } from "effect-agent-session-simulator"
import { cleanEnv, envFor, run, runArgs, runUntilServiceGoes, spawn } from "./helpers.js"

const sessionIdOf = (stdout: string): string => {
  const match = stdout.match(/session (\S+) created/)
  assert.isNotNull(match, stdout)
  return match?.[1] ?? ""
}

const completeOf = (script: ReadonlyArray<SessionEvent.SessionEvent>): SessionEvent.Complete => {
  const complete = script.find((e): e is SessionEvent.Complete => e._tag === "Complete")
  assert.isDefined(complete)
  return complete as SessionEvent.Complete
}

layer(Simulator.layer({ scenario: { actions: 4, ask: "permission", frameDelay: Duration.millis(2) } }), {
  excludeTestServices: true
})("effect-agent-session run (documented dialect)", (it) => {
  it.effect("run --approve completes with exit 0, prints the outcome and cost, and the grant reaches the simulator", () =>
    Effect.gen(function*() {
      const sim = yield* Simulator.Simulator
      const result = yield* run(runArgs(4, "--approve"), envFor(sim))
      expect(result.stderr).toBe("")
      expect(result.code).toBe(0)
      const sessionId = sessionIdOf(result.stdout)
      const complete = completeOf(yield* sim.script(sessionId))
      expect(result.stdout).toContain(`Outcome (${complete.type as string}):`)
      for (const line of complete.response.split("\n")) expect(result.stdout).toContain(line)
      expect(result.stdout).toContain(`Total cost: ${Option.getOrThrow(complete.total_cost)}`)
      expect(result.stdout).toContain("Actions: 4/4")
      expect(result.stdout).toContain("action 4/4:")
      // Not a terminal: plain lines, no bar, no escape codes.
      expect(result.stdout).not.toContain("\x1b[")
      expect(result.stdout).not.toContain("█")
      const answers = yield* sim.answers(sessionId)
      expect(answers.map((a) => [a.resource_type, a.granted])).toEqual([["admin_permission_request", true]])
    }))

  it.effect("--json prints one JSON object per line: the events as the simulator scripted them, then the outcome", () =>
    Effect.gen(function*() {
      const sim = yield* Simulator.Simulator
      const result = yield* run(runArgs(4, "--json", "--deny"), envFor(sim))
      expect(result.code).toBe(0)
      const lines = result.stdout.trimEnd().split("\n")
      const objects = lines.map((line) => JSON.parse(line) as Record<string, unknown>)
      expect(objects[0]?.["kind"]).toBe("session")
      const sessionId = String(objects[0]?.["sessionId"])
      const events = objects.filter((o) => o["kind"] === "event")
      const script = yield* sim.script(sessionId)
      expect(events.map((e) => e["tag"])).toEqual(script.map((e) => e._tag))
      for (const event of events) {
        assert.isString(event["event"])
        assert.isObject(event["data"])
      }
      const answer = objects.find((o) => o["kind"] === "answer")
      expect(answer?.["granted"]).toBe(false)
      expect(answer?.["source"]).toBe("flag")
      const outcome = objects[objects.length - 1]
      expect(outcome?.["kind"]).toBe("outcome")
      expect(outcome?.["actions"]).toBe(4)
      expect(outcome?.["totalCost"]).toBe(Option.getOrThrow(completeOf(script).total_cost))
    }))

  it.effect("without --approve and without a terminal, requests are denied and it says so", () =>
    Effect.gen(function*() {
      const sim = yield* Simulator.Simulator
      const result = yield* run(runArgs(2), envFor(sim))
      expect(result.code).toBe(0)
      expect(result.stdout).toContain("denied (no terminal to ask: pass --approve or --input)")
      const answers = yield* sim.answers(sessionIdOf(result.stdout))
      expect(answers.map((a) => a.granted)).toEqual([false])
    }))

  it.effect("a wrong key exits 3 with a one-line message", () =>
    Effect.gen(function*() {
      const sim = yield* Simulator.Simulator
      const result = yield* run(runArgs(2, "--approve"), envFor(sim, { AGENT_SESSION_API_KEY: "not-the-key" }))
      expect(result.code).toBe(3)
      const lines = result.stderr.trimEnd().split("\n")
      expect(lines.length).toBe(1)
      expect(lines[0]).toMatch(/^error: the service refused the key \(401 Unauthorized\)/)
      expect(result.stderr).not.toContain("not-the-key")
      expect(result.stderr).not.toMatch(/\s+at /)
    }))

  it.effect("a missing key exits 2 with one line naming AGENT_SESSION_API_KEY", () =>
    Effect.gen(function*() {
      const sim = yield* Simulator.Simulator
      const env = envFor(sim)
      delete env["AGENT_SESSION_API_KEY"]
      const before = yield* sim.httpRequests
      const result = yield* run(runArgs(2, "--approve"), env)
      expect(result.code).toBe(2)
      const lines = result.stderr.trimEnd().split("\n")
      expect(lines.length).toBe(1)
      expect(lines[0]).toContain("AGENT_SESSION_API_KEY")
      expect(yield* sim.httpRequests).toBe(before)
    }))

  it.effect("bad input exits 2: an invalid request, conflicting flags, a malformed flag", () =>
    Effect.gen(function*() {
      const sim = yield* Simulator.Simulator
      const before = yield* sim.httpRequests
      // Every bad value at once, one per line, each naming its flag.
      const invalid = yield* run(["run", "--goal", "g", "--start-url", "not a url", "--max-actions", "0"], envFor(sim))
      expect(invalid.code).toBe(2)
      expect(invalid.stderr).toBe(
        `error: --start-url must be an absolute http:// or https:// URL, not "not a url"\n` +
          `error: --max-actions must be a whole number of at least 1, not 0 (see 'effect-agent-session run --help')\n`
      )
      const both = yield* run(runArgs(2, "--approve", "--deny"), envFor(sim))
      expect(both.code).toBe(2)
      expect(both.stderr).toContain("--approve and --deny cannot be used together")
      const malformed = yield* run(["run", "--goal", "g", "--start-url", "https://example.com", "--max-actions", "many"], envFor(sim))
      expect(malformed.code).toBe(2)
      // Nothing was sent for any of them.
      expect(yield* sim.httpRequests).toBe(before)
    }))
})

layer(Simulator.layer({ dialect: Dialect.observed, scenario: { actions: 3, ask: "input", frameDelay: Duration.millis(2) } }), {
  excludeTestServices: true
})("effect-agent-session run (observed dialect)", (it) => {
  it.effect("--dialect observed over AGENT_SESSION_TRANSPORT=sse (no WebSocket URL) with --input answers the input request", () =>
    Effect.gen(function*() {
      const sim = yield* Simulator.Simulator
      const env = envFor(sim, { AGENT_SESSION_TRANSPORT: "sse" })
      delete env["AGENT_SESSION_WS_URL"]
      const result = yield* run(runArgs(3, "--dialect", "observed", "--input", "me@example.com"), env)
      expect(result.stderr).toBe("")
      expect(result.code).toBe(0)
      expect(result.stdout).toContain(`granted with input "me@example.com" (from flags)`)
      expect(result.stdout).toContain("Actions: 3/3")
      const answers = yield* sim.answers(sessionIdOf(result.stdout))
      expect(answers.map((a) => [a.granted, a.input])).toEqual([[true, "me@example.com"]])
    }))
})

/**
 * A minimal service of the documented dialect that sends a few events and then waits, recording
 * how the client closes its socket.
 */
const holdingService = Effect.acquireRelease(
  Effect.async<{ readonly url: string; readonly closeCode: Promise<number>; readonly server: Http.Server }>((resume) => {
    let resolveClose: (code: number) => void = () => {}
    const closeCode = new Promise<number>((resolve) => (resolveClose = resolve))
    const server = Http.createServer((_request, response) => {
      const sessionId = "ses_hold"
      response.writeHead(200, { "content-type": "application/json" })
      response.end(JSON.stringify({ session_id: sessionId, status: "started", start_time: new Date().toISOString() }))
    })
    const wss = new WebSocketServer({ server, path: "/v1/connect" })
    wss.on("connection", (socket) => {
      socket.once("message", () => {
        const frames = [
          { event: "started", data: { sessionId: "ses_hold", start_url: "https://example.com" } },
          { event: "browser_started", data: { url: "https://example.com", action_session_id: "as_1" } },
          { event: "thoughts_and_memories", data: { thought: "Looking around", memory: "" } },
          { event: "action_run", data: { name: "click", action_session_id: "as_1", content: "Click the menu" } }
        ]
        for (const frame of frames) socket.send(JSON.stringify(frame))
      })
      socket.once("close", (code) => resolveClose(code))
    })
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      resume(Effect.succeed({ url: `127.0.0.1:${port}`, closeCode, server }))
    })
  }),
  ({ server }) =>
    Effect.async<void>((resume) => {
      server.closeAllConnections()
      server.close(() => resume(Effect.void))
    })
)

/**
 * Runs `run` against the holding service, sends `signal` after the first action, and checks the
 * exit code, the socket's 1000 close and the summary of what was done so far.
 */
const interruptedBy = (signal: "SIGINT" | "SIGTERM", code: number) =>
  Effect.gen(function*() {
    const service = yield* holdingService
    const child = yield* spawn(
      runArgs(3),
      cleanEnv({
        AGENT_SESSION_BASE_URL: `http://${service.url}`,
        AGENT_SESSION_WS_URL: `ws://${service.url}`,
        AGENT_SESSION_API_KEY: "any-key"
      })
    )
    yield* child.waitFor(/action 1\/3/)
    child.process.kill(signal)
    const result = yield* child.finished
    expect(result.code).toBe(code)
    const closeCode = yield* Effect.promise(() => service.closeCode).pipe(
      Effect.timeoutFail({ duration: "10 seconds", onTimeout: () => new Error("the client never closed its socket") }),
      Effect.orDie
    )
    expect(closeCode).toBe(1000)
    expect(result.stdout).toContain("Interrupted: the connection was closed (1000).")
    expect(result.stdout).toContain("Session: ses_hold")
    expect(result.stdout).toContain("Done so far: 1/3 actions, 4 events, 0 reconnects")
    expect(result.stdout).toContain("Last action: click: Click the menu")
    expect(result.stdout).toContain("Last thought: Looking around")
    expect(result.stdout).not.toContain("Outcome")
    return result
  })

describe("effect-agent-session run: interruption", () => {
  it.live("SIGINT closes the socket with 1000 and prints what was done so far, exit 130", () =>
    Effect.scoped(Effect.gen(function*() {
      const result = yield* interruptedBy("SIGINT", 130)
      expect(result.stderr).toContain(
        "session ses_hold may still be running at the service; reattach with: effect-agent-session attach ses_hold --max-actions 3"
      )
    })))

  it.live("SIGTERM closes the socket with 1000 and prints what was done so far, exit 143", () =>
    Effect.scoped(interruptedBy("SIGTERM", 143)))
})

describe("effect-agent-session run: connection lost", () => {
  it.live("a service that goes away exhausts the reconnects (--max-reconnects 2) and exits 5", () =>
    Effect.gen(function*() {
      const result = yield* runUntilServiceGoes(["--max-reconnects", "2"], /action 1\/8/)
      expect(result.code).toBe(5)
      expect(result.stdout).toContain("connection lost, reconnecting (attempt 1)")
      const lines = result.stderr.trimEnd().split("\n")
      expect(lines.length).toBe(2)
      expect(lines[0]).toMatch(/^error: ConnectionLost: Connection lost after \d+ attempts/)
      // Issue 13: the session may still be running: its id, and how to reattach.
      expect(lines[1]).toMatch(
        /^session (\S+) may still be running at the service; reattach with: effect-agent-session attach \1 --max-actions 8$/
      )
    }))
})
