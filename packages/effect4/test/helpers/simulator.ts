/**
 * The reference simulator as a child process, for the end-to-end tests of the Effect 4 edition.
 *
 * The simulator and the command line stay one implementation, on Effect 3 (`packages/simulator`,
 * `packages/cli`):
 * this starts the root's command line exactly as the root's `npm run cli` script does (the command
 * is read from the root's package.json, with this process's Node binary), as
 * `simulate --port 0 --json`, reads the one JSON line it prints (its addresses and account key),
 * and stops it by its PID when the scope closes.
 */
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type { SimOptions } from "../shared/e2e.js"

/** The repository's root (the private workspace's directory). */
export const repositoryRoot = Path.resolve(import.meta.dirname, "../../../..")

/** What `simulate --json` prints. */
export interface SimulatorInfo {
  readonly baseUrl: string
  readonly wsUrl: string
  readonly port: number
  readonly accountKey: string
  readonly dialect: "documented" | "observed"
  /** The child's process id. */
  readonly pid: number
}

/** The flags of `simulate` (see `effect-agent-session simulate --help`): the tests' `SimOptions`. */
export type SimulatorOptions = SimOptions

/** The root's `cli` script as a command: `node <node flags> <entry>`, run with this Node binary. */
const cliCommand = (): ReadonlyArray<string> => {
  const manifest = JSON.parse(Fs.readFileSync(Path.join(repositoryRoot, "package.json"), "utf8")) as {
    readonly scripts: Record<string, string>
  }
  const script = manifest.scripts["cli"]
  if (script === undefined || !script.startsWith("node ")) {
    throw new Error(`the root package.json has no "cli" script of the form "node ...": ${String(script)}`)
  }
  return script.slice("node ".length).trim().split(/\s+/)
}

/** The environment of the child: none of this machine's AGENT_SESSION_* or npm_* variables. */
const childEnv = (): NodeJS.ProcessEnv =>
  Object.fromEntries(
    Object.entries(process.env).filter(([name]) =>
      !name.startsWith("AGENT_SESSION_") && !name.startsWith("npm_") && name !== "NODE_OPTIONS" &&
      !name.startsWith("VITEST")
    )
  )

const stop = (child: ChildProcess.ChildProcess): Effect.Effect<void> =>
  Effect.callback<void>((resume) => {
    if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) {
      resume(Effect.void)
      return
    }
    const pid = child.pid
    const kill = setTimeout(() => {
      try {
        process.kill(pid, "SIGKILL")
      } catch {
        // Gone already.
      }
    }, 5_000)
    child.once("exit", () => {
      clearTimeout(kill)
      resume(Effect.void)
    })
    try {
      process.kill(pid, "SIGTERM")
    } catch {
      clearTimeout(kill)
      resume(Effect.void)
    }
  })

/**
 * Starts `simulate --port 0 --json` with the given flags; the simulator's addresses once it
 * listens. Stopped (SIGTERM, then SIGKILL after 5 s) by its PID when the scope closes. Fails
 * (a defect: the test cannot run) when it does not print its addresses within 60 s.
 */
export const spawnSimulator = (
  options: SimulatorOptions = {}
): Effect.Effect<SimulatorInfo, never, Scope.Scope> =>
  Effect.gen(function*() {
    const args = [
      ...cliCommand(),
      "simulate",
      "--port",
      "0",
      "--json",
      "--dialect",
      options.dialect ?? "documented",
      "--actions",
      String(options.actions ?? 3),
      "--ask",
      options.ask ?? "none",
      "--frame-delay",
      String(options.frameDelay ?? 1),
      ...(options.faults ?? []).flatMap((fault) => ["--fault", fault])
    ]
    const child = yield* Effect.acquireRelease(
      Effect.sync(() =>
        ChildProcess.spawn(process.execPath, args, {
          cwd: repositoryRoot,
          env: childEnv(),
          stdio: ["ignore", "pipe", "pipe"]
        })
      ),
      stop
    )
    const info = yield* Effect.callback<SimulatorInfo, Error>((resume) => {
      let out = ""
      let err = ""
      const onData = (chunk: string) => {
        out += chunk
        const line = out.split("\n").find((l) => l.startsWith("{") && l.endsWith("}"))
        if (line !== undefined && child.pid !== undefined) {
          cleanup()
          resume(Effect.succeed({ ...(JSON.parse(line) as Omit<SimulatorInfo, "pid">), pid: child.pid }))
        }
      }
      const onErr = (chunk: string) => (err += chunk)
      const onExit = (code: number | null) => {
        cleanup()
        resume(Effect.fail(new Error(`simulate exited (${code}) before printing its addresses:\n${out}${err}`)))
      }
      const cleanup = () => {
        child.stdout?.off("data", onData)
        child.stderr?.off("data", onErr)
        child.off("exit", onExit)
      }
      child.stdout?.setEncoding("utf8").on("data", onData)
      child.stderr?.setEncoding("utf8").on("data", onErr)
      child.on("exit", onExit)
      return Effect.sync(cleanup)
    }).pipe(
      Effect.timeoutOrElse({
        duration: Duration.seconds(60),
        orElse: () => Effect.fail(new Error("simulate did not print its addresses within 60 s"))
      }),
      Effect.orDie
    )
    // Keep reading its output (a full pipe would block it); nothing more is needed from it.
    child.stdout?.resume()
    child.stderr?.resume()
    return info
  })
