/**
 * The command line's first contact: help, usage errors that name the user's flag or variable,
 * `--log-level` anywhere, the `--dialect` hint, `simulate --host 0.0.0.0`, SIGTERM, and a
 * keyboard that does not disturb the live view (in a real pseudo-terminal: tmux, else `script`).
 */
import { describe, expect, it, layer } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { onboardOptions } from "../../packages/cli/src/Onboard.js"
import { runOptions } from "../../packages/cli/src/Run.js"
import { simulateOptions } from "../../packages/cli/src/Simulate.js"
import { ExitCode } from "../../packages/cli/src/ExitCode.js"
import { Simulator } from "../../src/simulator/index.js"
import { cleanEnv, openTerminal, run, runArgs, spawn, stripAnsi } from "./helpers.js"

const kebab = (name: string): string => name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)

/** One line on standard error, `error: ...`. */
const oneErrorLine = (stderr: string) => {
  expect(stderr.endsWith("\n")).toBe(true)
  expect(stderr.trimEnd().split("\n")).toHaveLength(1)
  expect(stderr).toMatch(/^error: /)
}

describe("effect-agent-session help", () => {
  it.effect("no arguments prints the help on standard error and exits 2", () =>
    Effect.gen(function*() {
      const result = yield* run([], cleanEnv())
      expect(result.code).toBe(2)
      expect(result.stdout).toBe("")
      expect(result.stderr).toContain("Usage:\n  effect-agent-session <command> [flags]")
    }))

  it.live("output to a reader that went away (| head) ends quietly, not with an EPIPE stack trace", () =>
    Effect.scoped(Effect.gen(function*() {
      const child = yield* spawn(["run", "--help"], cleanEnv())
      child.process.stdout?.destroy()
      const result = yield* child.finished
      expect(result.code).toBe(0)
      expect(child.stderr()).not.toContain("EPIPE")
    })))

  it.effect("--help of each command: a sentence per flag, examples, the exit-code table; exit 0", () =>
    Effect.gen(function*() {
      const commands = { run: runOptions, simulate: simulateOptions, onboard: onboardOptions }
      // The children start together: most of their time is loading modules.
      const [root, ...helps] = yield* Effect.all(
        [run(["--help"], cleanEnv()), ...Object.keys(commands).map((name) => run([name, "--help"], cleanEnv()))],
        { concurrency: "unbounded" }
      )
      expect(root?.code).toBe(0)
      for (const name of Object.keys(commands)) expect(root?.stdout).toMatch(new RegExp(`^  ${name} +\\S`, "m"))
      Object.entries(commands).forEach(([name, options], i) => {
        const help = helps[i]
        expect(help?.code).toBe(0)
        expect(help?.stdout).not.toContain("A user-defined piece of text")
        expect(help?.stdout).toContain("Examples:\n")
        for (const key of Object.keys(options)) {
          expect(help?.stdout, `${name} --${kebab(key)}`).toMatch(new RegExp(`^  --${kebab(key)}\\b.* \\S`, "m"))
        }
        for (const code of Object.values(ExitCode)) expect(help?.stdout).toMatch(new RegExp(`^  ${code} +\\S`, "m"))
      })
    }))
})

layer(Simulator.layer({ scenario: { actions: 2, ask: "none", frameDelay: Duration.millis(2) } }), {
  excludeTestServices: true
})("effect-agent-session usage errors", (it) => {
  it.effect("every error names the user's flag or variable, on one line, exit 2, nothing sent", () =>
    Effect.gen(function*() {
      const sim = yield* Simulator.Simulator
      const before = yield* sim.httpRequests
      const env = cleanEnv({ AGENT_SESSION_BASE_URL: sim.baseUrl, AGENT_SESSION_API_KEY: sim.accountKey })
      const cases: Array<[ReadonlyArray<string>, Record<string, string>, RegExp]> = [
        [runArgs(2, "--base-url", "foo"), env, /^error: --base-url must be an absolute http:\/\/ or https:\/\/ URL, not "foo"/],
        [runArgs(2), { ...env, AGENT_SESSION_BASE_URL: "foo" }, /^error: AGENT_SESSION_BASE_URL must be an absolute/],
        [runArgs(2, "--ws-url", "http://x"), env, /^error: --ws-url must be an absolute ws:\/\/ or wss:\/\/ URL/],
        [runArgs(0), env, /^error: --max-actions must be a whole number of at least 1, not 0/],
        [["run", "--goal", " ", "--start-url", "https://example.com", "--max-actions", "1"], env, /^error: --goal must not be empty/],
        [runArgs(2, "--base-url", "http://example.com"), env, /--allow-insecure/],
        [["run", "--goal", "g"], env, /^error: .*--start-url.*\(see 'effect-agent-session run --help'\)/],
        [runArgs(2, "--log-level", "loud"), env, /^error: --log-level must be one of .*not "loud"/],
        [["frobnicate"], env, /^error: .*'run'.*\(see 'effect-agent-session --help'\)/]
      ]
      const results = yield* Effect.forEach(cases, ([args, caseEnv]) => run(args, caseEnv), { concurrency: 4 })
      for (const [i, [args, , expected]] of cases.entries()) {
        const result = results[i]!
        expect(result.code, args.join(" ")).toBe(2)
        oneErrorLine(result.stderr)
        expect(result.stderr).toMatch(expected)
        expect(result.stderr).not.toMatch(/AgentApi\.Options|CreateSessionRequest|allowInsecure/)
      }
      expect(yield* sim.httpRequests).toBe(before)
    }))

  it.effect("a NotFound or Unauthorized on the first request hints at --dialect", () =>
    Effect.gen(function*() {
      const sim = yield* Simulator.Simulator
      const result = yield* run(
        runArgs(2, "--dialect", "observed"),
        cleanEnv({ AGENT_SESSION_BASE_URL: sim.baseUrl, AGENT_SESSION_API_KEY: sim.accountKey })
      )
      expect([ExitCode.authentication, ExitCode.serviceError]).toContain(result.code)
      oneErrorLine(result.stderr)
      expect(result.stderr).toContain("try --dialect documented")
    }))

  it.effect("--log-level works anywhere: at the end, as --log-level=info, and between flags", () =>
    Effect.gen(function*() {
      const sim = yield* Simulator.Simulator
      const env = cleanEnv({ AGENT_SESSION_BASE_URL: sim.baseUrl, AGENT_SESSION_API_KEY: "wrong-key" })
      const all = [
        runArgs(2),
        runArgs(2, "--log-level", "debug"),
        runArgs(2, "--log-level=debug"),
        ["run", "--log-level", "debug", ...runArgs(2).slice(1)],
        ["--log-level=debug", ...runArgs(2)]
      ]
      const [quiet, ...results] = yield* Effect.forEach(all, (args) => run(args, env), { concurrency: "unbounded" })
      expect(quiet?.code).toBe(ExitCode.authentication)
      expect(quiet?.stderr).not.toContain("level=DEBUG")
      for (const [i, result] of results.entries()) {
        const args = all[i + 1] ?? []
        expect(result.code, args.join(" ")).toBe(ExitCode.authentication)
        expect(result.stderr, args.join(" ")).toContain("level=DEBUG")
      }
    }))
})

describe("effect-agent-session simulate --host 0.0.0.0", () => {
  it.live("prints loopback URLs that run accepts; SIGTERM stops it with 143", () =>
    Effect.scoped(Effect.gen(function*() {
      const simulator = yield* spawn(
        ["simulate", "--host", "0.0.0.0", "--port", "0", "--frame-delay", "1", "--actions", "2", "--ask", "none"],
        cleanEnv()
      )
      const [, baseUrl = ""] = yield* simulator.waitFor(/export AGENT_SESSION_BASE_URL=(\S+)/, 60_000)
      expect(baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
      expect(simulator.stdout()).not.toContain("0.0.0.0:")
      const result = yield* run(
        runArgs(2),
        cleanEnv({ AGENT_SESSION_BASE_URL: baseUrl, AGENT_SESSION_API_KEY: "sim-account-key" })
      )
      expect(result.code, result.stderr).toBe(0)
      expect(result.stdout).toContain("Actions: 2/2")
      simulator.process.kill("SIGTERM")
      const stopped = yield* simulator.finished
      expect(stopped.code).toBe(143)
    })))
})

layer(Simulator.layer({ scenario: { actions: 6, ask: "none", frameDelay: Duration.millis(150) } }), {
  excludeTestServices: true
})("effect-agent-session run in a terminal: the keyboard", (it) => {
  it.scoped("keys pressed during the live view leave no trace; the terminal echoes again afterwards", () =>
    Effect.gen(function*() {
      const sim = yield* Simulator.Simulator
      const terminal = yield* openTerminal(
        runArgs(6),
        cleanEnv({ AGENT_SESSION_BASE_URL: sim.baseUrl, AGENT_SESSION_API_KEY: sim.accountKey })
      )
      yield* terminal.waitFor(/\] 1\/6 actions/, 60_000)
      for (const keys of ["y", "yes", "q"]) {
        yield* terminal.type(keys)
        yield* terminal.enter
      }
      const code = yield* terminal.exitCode(60_000)
      expect(code).toBe(0)
      const screen = stripAnsi(yield* terminal.screen)
      expect(screen).toContain("Actions: 6/6")
      // Nothing typed shows (script records every byte written to the terminal, echo included).
      expect(screen).not.toMatch(/(^|\s)(y|yes|q)\s*$/m)
      if (terminal.kind === "tmux") {
        // One bar on the screen, the final one: no frozen copies.
        expect(screen.match(/\] \d\/6 actions/g)).toHaveLength(1)
        // Echo is back once the command has ended.
        yield* terminal.type("echo-is-back")
        yield* terminal.waitFor(/echo-is-back/, 20_000)
      }
    }))
})
