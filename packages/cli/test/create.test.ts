/**
 * Issue 20 item 7 and issue 22 (feedback while waiting), as a real child process against a
 * service that takes the create request and answers late (or never): Ctrl-C or SIGTERM while the
 * request waits says that a session may have been created, with the Idempotency-Key the request
 * carried, and never that a connection was closed; a lost answer (502) says the same; the key
 * gets the session back (`--idempotency-key`, against the simulator, which honours it); and on a
 * terminal the command says at once what it is waiting for.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { Simulator } from "effect-agent-session-simulator"
import { cleanEnv, envFor, openTerminal, run, runArgs, spawn, stripAnsi } from "./helpers.js"
import { scriptedService, type ScriptedService } from "./service.js"

const envOf = (service: ScriptedService) =>
  cleanEnv({ AGENT_SESSION_BASE_URL: service.baseUrl, AGENT_SESSION_WS_URL: service.wsUrl, AGENT_SESSION_API_KEY: "k" })

/** The Idempotency-Key of the first create request the service received (once it has). */
const keyOf = (service: ScriptedService) =>
  Effect.gen(function*() {
    const started = Date.now()
    while (service.requests().length === 0) {
      if (Date.now() - started > 30_000) return yield* Effect.dieMessage("no create request arrived")
      yield* Effect.sleep(20)
    }
    return String(service.requests()[0]?.headers["idempotency-key"])
  })

const interruptedWhileCreating = (signal: "SIGINT" | "SIGTERM", code: number, more: ReadonlyArray<string> = []) =>
  Effect.gen(function*() {
    const service = yield* scriptedService({ create: { status: 200, body: { session_id: "ses_late" }, delayMs: "never" } })
    const child = yield* spawn(runArgs(5, ...more), envOf(service))
    const key = yield* keyOf(service)
    expect(key).toMatch(/^[\x21-\x7e]{1,255}$/)
    child.process.kill(signal)
    const result = yield* child.finished
    expect(result.code).toBe(code)
    expect(result.stdout).not.toContain("(1000)")
    expect(result.stdout).not.toContain("(not created)")
    expect(result.stderr).toContain("a session may have been created")
    expect(result.stderr).toContain(`--idempotency-key ${key}`)
    return { result, key }
  })

describe("issue 20 item 7: interrupted while the create request waits for its answer", () => {
  it.live("SIGINT: exit 130, a session may exist, with the request's Idempotency-Key", () =>
    Effect.scoped(Effect.gen(function*() {
      const { key, result } = yield* interruptedWhileCreating("SIGINT", 130)
      expect(result.stdout).toContain("Interrupted while creating the session: the create request was sent and not answered.")
      expect(result.stdout).toContain(`Idempotency-Key: ${key}`)
    })))

  it.live("SIGTERM: exit 143, the same notice", () => Effect.scoped(interruptedWhileCreating("SIGTERM", 143)))

  it.live("--json: the interrupted object says the session may exist and carries the key", () =>
    Effect.scoped(Effect.gen(function*() {
      const { key, result } = yield* interruptedWhileCreating("SIGINT", 130, ["--json"])
      const interrupted = JSON.parse(result.stdout.trimEnd().split("\n").at(-1) ?? "{}") as Record<string, unknown>
      expect(interrupted).toMatchObject({ kind: "interrupted", sessionId: null, sessionMayExist: true, idempotencyKey: key })
    })))

  it.live("an answer lost to a 502: OutcomeUnknown names --idempotency-key with the request's key", () =>
    Effect.scoped(Effect.gen(function*() {
      const service = yield* scriptedService({ create: { status: 502, body: { error: "bad gateway" } } })
      const result = yield* run(runArgs(5), envOf(service))
      const key = yield* keyOf(service)
      expect(result.code).toBe(8)
      expect(result.stderr).toContain(`--idempotency-key ${key}`)
      expect(service.requests()).toHaveLength(1)
    })))

  it.live("--idempotency-key gets the same session back from a service that honours it", () =>
    Effect.scoped(Effect.gen(function*() {
      const sim = yield* Simulator.make({ scenario: { actions: 1, ask: "none", frameDelay: Duration.millis(1) } })
      const [first, second] = yield* Effect.all(
        [run(runArgs(2, "--idempotency-key", "retry-42"), envFor(sim)), run(runArgs(2, "--idempotency-key", "retry-42"), envFor(sim))],
        { concurrency: 1 }
      )
      expect(first?.code, first?.stderr).toBe(0)
      // The session has completed by then: watching it again ends without complete (7), or with it.
      expect([0, 7]).toContain(second?.code)
      const idOf = (stdout: string) => stdout.match(/^session (\S+) created/m)?.[1]
      expect(idOf(first?.stdout ?? "")).toBeDefined()
      expect(idOf(second?.stdout ?? "")).toBe(idOf(first?.stdout ?? ""))
    })))
})

describe("issue 22: feedback while waiting", () => {
  it.live("on a terminal, a service that takes the request and never answers: the screen says so at once", () =>
    Effect.scoped(Effect.gen(function*() {
      const service = yield* scriptedService({ create: { status: 200, body: {}, delayMs: "never" } })
      const terminal = yield* openTerminal(runArgs(5), envOf(service))
      yield* terminal.waitFor(new RegExp(`creating session at ${service.baseUrl.replace(/\./g, "\\.")}\\.\\.\\.`), 30_000)
      // Ctrl-C reaches the shell around the command too (its exit code is checked over pipes above).
      yield* terminal.ctrlC
      const screen = stripAnsi(yield* terminal.waitFor(/a session may have been created/, 30_000))
      expect(screen).toContain("Interrupted while creating the session")
    })), 90_000)

  it.live("not a terminal: no progress notes on standard error (scripts read it)", () =>
    Effect.scoped(Effect.gen(function*() {
      const sim = yield* Simulator.make({ scenario: { actions: 1, ask: "none", frameDelay: Duration.millis(1) } })
      const result = yield* run(runArgs(2), envFor(sim))
      expect(result.code).toBe(0)
      expect(result.stderr).toBe("")
    })))
})
