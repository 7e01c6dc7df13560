/**
 * The command line's first contact: help, usage errors that name the user's flag or variable,
 * `--log-level` anywhere, the `--dialect` hint, `simulate --host 0.0.0.0`, SIGTERM, and a
 * keyboard that does not disturb the live view (in a real pseudo-terminal: tmux, else `script`).
 */
import { describe, expect, it, layer } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { onboardOptions } from "../src/Onboard.js"
import { runOptions } from "../src/Run.js"
import { simulateOptions } from "../src/Simulate.js"
import { ExitCode } from "../src/ExitCode.js"
import { Simulator } from "effect-agent-session-simulator"
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
        [["run", "--goal", "g", "--max-actions", "2"], env, /^error: missing --start-url <url> \(see 'effect-agent-session run --help'\)/],
        [runArgs(2, "--log-level", "loud"), env, /^error: --log-level must be one of .*not "loud"/],
        [["frobnicate"], env, /^error: unknown command "frobnicate" \(see 'effect-agent-session --help'\)$/m]
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
      const [quiet, ...results] = yield* Effect.forEach(all, (args) => run(args, env), { concurrency: 2 })
      expect(quiet?.code).toBe(ExitCode.authentication)
      expect(quiet?.stderr).not.toContain("level=DEBUG")
      for (const [i, result] of results.entries()) {
        const args = all[i + 1] ?? []
        expect(result.code, args.join(" ")).toBe(ExitCode.authentication)
        expect(result.stderr, args.join(" ")).toContain("level=DEBUG")
      }
    }), 180_000)
})

describe("issue 22: argument errors", () => {
  it.effect("every invalid flag value is a usage error (exit 2) naming the flag, the rule and the value", () =>
    Effect.gen(function*() {
      const cases: Array<[ReadonlyArray<string>, string]> = [
        [["simulate", "--port", "99999"], "--port must be a whole number from 0 to 65535, not 99999"],
        [["simulate", "--port", "-1"], "--port must be a whole number from 0 to 65535, not -1"],
        [["simulate", "--actions", "x"], `--actions must be a whole number from 0 to 100000, not "x"`],
        [["simulate", "--frame-delay", "-5"], "--frame-delay must be a whole number from 0 to 3600000, not -5"],
        [["simulate", "--ask", "maybe"], `--ask must be one of none, input, permission, not "maybe"`],
        [["simulate", "--fault", "drop-after=x"], `--fault drop-after needs a whole number, not "x"`],
        [runArgs(2).map((a) => a === "2" ? "zero" : a), `--max-actions must be a whole number of at least 1, not "zero"`],
        [runArgs(2, "--max-reconnects", "-1"), "--max-reconnects must be a whole number of at least 0, not -1"],
        [runArgs(2, "--dialect", "observd"), `--dialect must be documented or observed, not "observd"; did you mean observed?`],
        [runArgs(2, "--transport", "ws"), `--transport must be websocket or sse, not "ws"`],
        [["attach", "ses_1", "--max-actions", "0"], "--max-actions must be a whole number of at least 1, not 0"],
        [
          ["onboard", "--name", "n", "--website", "https://example.com", "--domain", "sale"],
          `--domain must be one of sales, marketing, research, automation, podcasting, not "sale"; did you mean sales?`
        ]
      ]
      const results = yield* Effect.forEach(cases, ([args]) => run(args, cleanEnv()), { concurrency: 4 })
      for (const [i, [args, message]] of cases.entries()) {
        const result = results[i]!
        expect(result.code, args.join(" ")).toBe(2)
        oneErrorLine(result.stderr)
        expect(result.stderr, args.join(" ")).toContain(`error: ${message}`)
        expect(result.stderr).not.toMatch(/internal error|RangeError|is not a integer|Expected one of/)
      }
    }), 180_000) // 12 processes, 4 at a time: about 17 s on a busy 2-core machine, past 60 s at a load average of 17

  it.effect("one error per line, each naming its flag; did you mean for commands and flags", () =>
    Effect.gen(function*() {
      const [missing, several, command, flag, unknown] = yield* Effect.all([
        run(["run", "--goal", "g"], cleanEnv()),
        run(["run", "--goal", " ", "--start-url", "nope", "--max-actions", "0"], cleanEnv()),
        run(["rn", "--goal", "g"], cleanEnv()),
        run(["run", "--gaol", "g", "--start-url", "https://example.com", "--max-actions", "2"], cleanEnv()),
        run([...runArgs(2), "--verbose"], cleanEnv())
      ], { concurrency: "unbounded" })
      expect(missing?.code).toBe(2)
      expect(missing?.stderr).toBe(
        "error: missing --start-url <url>\nerror: missing --max-actions <n> (see 'effect-agent-session run --help')\n"
      )
      expect(several?.code).toBe(2)
      expect(several?.stderr.trimEnd().split("\n")).toEqual([
        "error: --goal must not be empty",
        `error: --start-url must be an absolute http:// or https:// URL, not "nope"`,
        "error: --max-actions must be a whole number of at least 1, not 0 (see 'effect-agent-session run --help')"
      ])
      expect(command?.code).toBe(2)
      expect(command?.stderr).toBe(`error: unknown command "rn"; did you mean run? (see 'effect-agent-session --help')\n`)
      expect(flag?.code).toBe(2)
      expect(flag?.stderr).toBe("error: unknown flag --gaol; did you mean --goal? (see 'effect-agent-session run --help')\n")
      expect(unknown?.code).toBe(2)
      expect(unknown?.stderr).toBe("error: unknown flag --verbose (see 'effect-agent-session run --help')\n")
    }))
})

describe("effect-agent-session simulate --host 0.0.0.0", () => {
  it.live("prints loopback URLs that run accepts, and a random account key (issue 20 item 9); SIGTERM stops it with 143", () =>
    Effect.scoped(Effect.gen(function*() {
      const simulator = yield* spawn(
        ["simulate", "--host", "0.0.0.0", "--port", "0", "--frame-delay", "1", "--actions", "2", "--ask", "none"],
        cleanEnv()
      )
      const [, baseUrl = ""] = yield* simulator.waitFor(/export AGENT_SESSION_BASE_URL=(\S+)/, 60_000)
      const [, accountKey = ""] = yield* simulator.waitFor(/export AGENT_SESSION_API_KEY=(\S+)/, 60_000)
      expect(baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
      expect(simulator.stdout()).not.toContain("0.0.0.0:")
      // Beyond loopback the well-known key is not the account: a random one is, and it is printed.
      expect(accountKey).toMatch(/^sim_[A-Za-z0-9_-]{32}$/)
      expect(simulator.stdout()).toContain(`account key: ${accountKey} (generated`)
      const [result, wellKnown] = yield* Effect.all([
        run(runArgs(2), cleanEnv({ AGENT_SESSION_BASE_URL: baseUrl, AGENT_SESSION_API_KEY: accountKey })),
        run(runArgs(2), cleanEnv({ AGENT_SESSION_BASE_URL: baseUrl, AGENT_SESSION_API_KEY: "sim-account-key" }))
      ], { concurrency: "unbounded" })
      expect(result.code, result.stderr).toBe(0)
      expect(result.stdout).toContain("Actions: 2/2")
      expect(wellKnown.code).toBe(3)
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
