/**
 * Runs the real `effect-agent-session` launcher as a child process (pipes, or a pseudo-terminal
 * through tmux or `script`), for the command line's tests.
 */
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import { Simulator } from "effect-agent-session-simulator"
import { cleanEnv, fromSource } from "effect-agent-session-test-support/launch"

export { cleanEnv }

/** The command line's package (`packages/cli`). */
export const packageDir = Path.resolve(import.meta.dirname, "..")

/**
 * How the tests start the command line: its TypeScript entry (`src/main.ts`) through tsx, with
 * the library resolved to its sources (the `effect-agent-session-source` export condition), so
 * no build is needed. The compiled package (`bin` running `dist/`) is what the consumer test
 * (test/consumer at the repository's root) installs and runs.
 */
export const launcher: ReadonlyArray<string> = fromSource(Path.join(packageDir, "src/main.ts"))

/** {@link cleanEnv} pointed at `sim` (base and WebSocket URLs, account key), plus `extra`. */
export const envFor = (sim: Simulator.Service, extra: Record<string, string> = {}): Record<string, string> =>
  cleanEnv({
    AGENT_SESSION_BASE_URL: sim.baseUrl,
    AGENT_SESSION_WS_URL: sim.wsUrl,
    AGENT_SESSION_API_KEY: sim.accountKey,
    ...extra
  })

/** `run` with the usual goal and start URL, at most `maxActions` actions, then `more`. */
export const runArgs = (maxActions: number, ...more: Array<string>): Array<string> => [
  "run",
  "--goal",
  "Find the pricing page",
  "--start-url",
  "https://example.com",
  "--max-actions",
  String(maxActions),
  ...more
]

/** What a finished child printed, and how it exited. */
export interface Finished {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
}

/** A running child. */
export interface Child {
  readonly process: ChildProcess.ChildProcess
  readonly stdout: () => string
  readonly stderr: () => string
  /** Waits until standard output matches, or fails after `timeoutMs`. */
  readonly waitFor: (pattern: RegExp, timeoutMs?: number) => Effect.Effect<RegExpMatchArray>
  readonly finished: Effect.Effect<Finished>
}

/** Starts the launcher with pipes (not a terminal); killed with the scope if still running. */
export const spawn = (
  args: ReadonlyArray<string>,
  env: Record<string, string>
): Effect.Effect<Child, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const child = ChildProcess.spawn(process.execPath, [...launcher, ...args], { env, stdio: ["pipe", "pipe", "pipe"] })
      let out = ""
      let err = ""
      child.stdout.setEncoding("utf8").on("data", (chunk: string) => (out += chunk))
      child.stderr.setEncoding("utf8").on("data", (chunk: string) => (err += chunk))
      const exited = new Promise<Finished>((resolve) =>
        child.on("close", (code, signal) => resolve({ code, signal, stdout: out, stderr: err }))
      )
      const waitFor = (pattern: RegExp, timeoutMs = 20_000) =>
        Effect.async<RegExpMatchArray>((resume) => {
          const check = () => {
            const match = out.match(pattern)
            if (match !== null) {
              clearInterval(timer)
              resume(Effect.succeed(match))
            } else if (Date.now() - started > timeoutMs || child.exitCode !== null) {
              clearInterval(timer)
              resume(Effect.dieMessage(`no ${pattern} in output:\n${out}\n${err}`))
            }
          }
          const started = Date.now()
          const timer = setInterval(check, 20)
          check()
          return Effect.sync(() => clearInterval(timer))
        })
      return {
        process: child,
        stdout: () => out,
        stderr: () => err,
        waitFor,
        finished: Effect.promise(() => exited)
      } satisfies Child
    }),
    (child) =>
      Effect.sync(() => {
        if (child.process.exitCode === null && child.process.signalCode === null) child.process.kill("SIGKILL")
      })
  )

/** Runs any command to its end (pipes, standard input closed): what it printed and how it exited. */
export const execute = (
  command: string,
  args: ReadonlyArray<string>,
  env: Record<string, string>,
  cwd?: string
): Effect.Effect<Finished> =>
  Effect.async<Finished>((resume) => {
    const child = ChildProcess.spawn(command, args, { env, stdio: ["ignore", "pipe", "pipe"], ...(cwd === undefined ? {} : { cwd }) })
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk))
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
    child.on("close", (code, signal) => resume(Effect.succeed({ code, signal, stdout, stderr })))
    return Effect.sync(() => child.kill("SIGKILL"))
  })

/** A fresh temporary directory, removed with the scope. */
export const tempDir = (prefix: string): Effect.Effect<string, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.sync(() => Fs.mkdtempSync(Path.join(Os.tmpdir(), prefix))),
    (dir) => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true }))
  )

/** Runs the launcher to its end (pipes), failing the test after `timeoutMs`. */
export const run = (
  args: ReadonlyArray<string>,
  env: Record<string, string>,
  timeoutMs = 30_000
): Effect.Effect<Finished> =>
  Effect.scoped(
    Effect.flatMap(spawn(args, env), (child) =>
      child.finished.pipe(
        Effect.timeoutFail({
          duration: timeoutMs,
          onTimeout: () => new Error(`timed out: ${args.join(" ")}\n${child.stdout()}\n${child.stderr()}`)
        }),
        Effect.orDie
      ))
  )

/**
 * Runs `run` (8 actions, then `more`) against a simulator that goes away once standard output
 * matches `firstAction`: the socket drops (1006) and every reconnect is refused.
 */
export const runUntilServiceGoes = (more: ReadonlyArray<string>, firstAction: RegExp) =>
  Effect.gen(function*() {
    const scope = yield* Scope.make()
    const sim = yield* Simulator.make({ scenario: { actions: 8, ask: "none", frameDelay: Duration.millis(100) } }).pipe(
      Scope.extend(scope)
    )
    return yield* Effect.scoped(Effect.gen(function*() {
      const child = yield* spawn(runArgs(8, ...more), envFor(sim))
      yield* child.waitFor(firstAction)
      // The service disappears: the socket drops (1006) and every reconnect is refused.
      yield* Scope.close(scope, Exit.void)
      return yield* child.finished
    }))
  })

/** Removes ANSI escapes. */
 
export const stripAnsi = (text: string): string => text.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, "")

// ---------------------------------------------------------------------------
// Pseudo-terminals
// ---------------------------------------------------------------------------

/** A program running in a pseudo-terminal. */
export interface Terminal {
  readonly kind: "tmux" | "script"
  /** What the terminal shows (tmux: the screen; script: all output, ANSI removed). */
  readonly screen: Effect.Effect<string>
  /** Types text (no Enter). */
  readonly type: (text: string) => Effect.Effect<void>
  readonly enter: Effect.Effect<void>
  readonly ctrlC: Effect.Effect<void>
  readonly waitFor: (pattern: RegExp, timeoutMs?: number) => Effect.Effect<string>
  /** The exit code, once the program has ended. */
  readonly exitCode: (timeoutMs?: number) => Effect.Effect<number>
}

const hasCommand = (name: string): boolean => ChildProcess.spawnSync("sh", ["-c", `command -v ${name}`]).status === 0

const shellQuote = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`

/**
 * Which pseudo-terminal is available: tmux if installed, else `script` from util-linux.
 * `EAS_TEST_TERMINAL=script` forces the fallback.
 */
export const terminalKind = (): "tmux" | "script" | undefined => {
  const forced = process.env["EAS_TEST_TERMINAL"]
  if (forced === "script" || forced === "tmux") return hasCommand(forced) ? forced : undefined
  return hasCommand("tmux") ? "tmux" : hasCommand("script") ? "script" : undefined
}

const poll = <A>(
  read: Effect.Effect<A>,
  done: (a: A) => boolean,
  timeoutMs: number,
  describe: () => Effect.Effect<string>
): Effect.Effect<A> =>
  Effect.gen(function*() {
    const started = Date.now()
    while (true) {
      const value = yield* read
      if (done(value)) return value
      if (Date.now() - started > timeoutMs) return yield* Effect.dieMessage(`timed out; terminal shows:\n${yield* describe()}`)
      yield* Effect.sleep(50)
    }
  })

/**
 * Runs the launcher in a pseudo-terminal of 120x40: tmux when available (its screen is read
 * with `capture-pane`), else `script -qfec`.
 */
export const openTerminal = (
  args: ReadonlyArray<string>,
  env: Record<string, string>
): Effect.Effect<Terminal, never, Scope.Scope> =>
  Effect.gen(function*() {
    const kind = terminalKind()
    if (kind === undefined) return yield* Effect.dieMessage("neither tmux nor script is installed")
    const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "eas-cli-"))
    yield* Effect.addFinalizer(() => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true })))
    const exitFile = Path.join(dir, "exit")
    const envPrefix = Object.entries(env)
      .filter(([key]) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(key))
      .map(([key, value]) => `${key}=${shellQuote(value)}`)
      .join(" ")
    const command = `env -i ${envPrefix} TERM=xterm-256color COLUMNS=120 LINES=40 ${shellQuote(process.execPath)} ${
      launcher.map(shellQuote).join(" ")
    } ${args.map(shellQuote).join(" ")}; echo $? > ${shellQuote(exitFile)}`
    const readExit = Effect.sync(() => {
      try {
        const text = Fs.readFileSync(exitFile, "utf8").trim()
        return text.length > 0 ? Number(text) : undefined
      } catch {
        return undefined
      }
    })
    const exitCode = (timeoutMs = 20_000) =>
      Effect.map(
        poll(readExit, (code) => code !== undefined, timeoutMs, () => Effect.succeed("(waiting for exit)")),
        (code) => code ?? -1
      )

    if (kind === "tmux") {
      const socket = `eas-test-${process.pid}-${Path.basename(dir)}`
      const tmux = (...tmuxArgs: Array<string>) =>
        ChildProcess.spawnSync("tmux", ["-L", socket, ...tmuxArgs], { encoding: "utf8" })
      // The command runs under `sh`; `; sleep` keeps the pane open so its last screen can be read.
      const started = tmux("new-session", "-d", "-s", "cli", "-x", "120", "-y", "40", `${command}; sleep 60`)
      if (started.status !== 0) return yield* Effect.dieMessage(`tmux failed: ${started.stderr}`)
      yield* Effect.addFinalizer(() => Effect.sync(() => tmux("kill-server")))
      const screen = Effect.sync(() => tmux("capture-pane", "-p", "-t", "cli").stdout)
      return {
        kind,
        screen,
        type: (text) => Effect.sync(() => void tmux("send-keys", "-t", "cli", "-l", text)),
        enter: Effect.sync(() => void tmux("send-keys", "-t", "cli", "Enter")),
        ctrlC: Effect.sync(() => void tmux("send-keys", "-t", "cli", "C-c")),
        waitFor: (pattern, timeoutMs = 20_000) => poll(screen, (s) => pattern.test(s), timeoutMs, () => screen),
        exitCode
      } satisfies Terminal
    }

    const child = ChildProcess.spawn("script", ["-qfec", `stty cols 120 rows 40; ${command}`, "/dev/null"], {
      env: { ...env, TERM: "xterm-256color" },
      stdio: ["pipe", "pipe", "pipe"]
    })
    let out = ""
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (out += chunk))
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (out += chunk))
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        if (child.exitCode === null) child.kill("SIGKILL")
      })
    )
    const screen = Effect.sync(() => stripAnsi(out))
    return {
      kind,
      screen,
      type: (text) => Effect.sync(() => void child.stdin.write(text)),
      enter: Effect.sync(() => void child.stdin.write("\r")),
      ctrlC: Effect.sync(() => void child.stdin.write("\x03")),
      waitFor: (pattern, timeoutMs = 20_000) => poll(screen, (s) => pattern.test(s), timeoutMs, () => screen),
      exitCode
    } satisfies Terminal
  })
