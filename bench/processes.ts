/**
 * The bench's process primitives: the repository root, the TypeScript child processes (a
 * long-lived server, a measured client), and a figure skipped when its measurement fails. Shared by
 * the harness (bench/harness.ts) and its Effect 4 part (bench/effect4.ts), importing neither: the
 * imports run one way.
 */
import { type ChildProcess, execSync, spawn } from "node:child_process"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import type { Task, TaskResult } from "./tasks.js"

/** The repository root. */
export const root = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "..")

/** A figure that could not be measured, and why. */
export interface Skipped {
  readonly skipped: string
}

/** Whether a figure was skipped. */
export const isSkipped = (value: unknown): value is Skipped =>
  typeof value === "object" && value !== null && "skipped" in value

const shell = (command: string): string => {
  try {
    return execSync(command, { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim()
  } catch {
    return ""
  }
}

/** The open-file limit a child can get: the hard limit (children raise their soft limit to it). */
export const fdLimit = (): number => {
  const hard = shell("sh -c 'ulimit -Hn'")
  if (hard === "unlimited") return 65_535
  const n = Number(hard)
  return Number.isFinite(n) && n > 0 ? Math.min(n, 65_535) : 1024
}

/** Whether the SDK side reads the TypeScript sources (the package's source condition), not `dist/`. */
export const fromSource = (): boolean => process.env["BENCH_SDK_FROM"] === "source"

/**
 * The Node that runs a child, and the TypeScript file it runs: by default this process's Node and
 * a file of bench/; the Effect 4 edition's children run on Node 22 (bench/effect4.ts).
 */
export interface Runner {
  /** The Node binary (default: this process's). */
  readonly node?: string | undefined
  /** The file to run, absolute (default: `bench/<file>` under `from`). */
  readonly script?: string | undefined
  /** Environment added to the child's. */
  readonly env?: NodeJS.ProcessEnv | undefined
}

/** Starts a TypeScript file in a child process (with its soft fd limit raised to the hard one). */
const spawnTs = (
  file: string,
  args: ReadonlyArray<string>,
  nodeFlags: ReadonlyArray<string> = [],
  env: NodeJS.ProcessEnv = process.env,
  from: string = root,
  runner: Runner = {}
): ChildProcess => {
  const limit = fdLimit()
  return spawn(
    "sh",
    [
      "-c",
      `ulimit -n ${limit} 2>/dev/null; exec "$0" "$@"`,
      runner.node ?? process.execPath,
      "--import",
      "tsx",
      ...(fromSource() ? ["--conditions=effect-agent-session-source"] : []),
      ...nodeFlags,
      runner.script ?? Path.join(from, "bench", file),
      ...args
    ],
    {
      cwd: root,
      // From `dist/`, the library's import of the protocol core resolves to the core's `dist/` too:
      // the build's tsconfig has no `paths` to the core's sources (which tsx would otherwise follow).
      env: {
        ...(fromSource() ? env : { ...env, TSX_TSCONFIG_PATH: Path.join(root, "packages", "effect3", "tsconfig.build.json") }),
        ...runner.env
      },
      stdio: ["ignore", "pipe", "pipe", "ipc"]
    }
  )
}

const collectOutput = (child: ChildProcess): (() => string) => {
  let output = ""
  const append = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-4000)
  }
  child.stdout?.on("data", append)
  child.stderr?.on("data", append)
  return () => output
}

/** A long-lived server child (load generator or simulator). */
export interface Server {
  readonly url: string
  readonly stop: () => Promise<void>
}

export const startServer = (
  file: string,
  args: ReadonlyArray<string> = []
): Promise<Server & { readonly port: number; readonly accountKey: string }> =>
  new Promise((resolve, reject) => {
    const child = spawnTs(file, args)
    const output = collectOutput(child)
    const onExit = (code: number | null) => reject(new Error(`${file} exited (${code}) before it was ready:\n${output()}`))
    child.once("exit", onExit)
    child.on("message", (message: { type?: string; port?: number; accountKey?: string }) => {
      if (message.type === "ready" && typeof message.port === "number") {
        child.off("exit", onExit)
        resolve({
          port: message.port,
          accountKey: message.accountKey ?? "",
          url: `ws://127.0.0.1:${message.port}`,
          stop: () =>
            new Promise((done) => {
              if (child.exitCode !== null) return done()
              child.once("exit", () => done())
              child.kill("SIGTERM")
            })
        })
      }
    })
  })

/** Runs one task in a fresh client process (bench/child.ts, or the runner's script). */
export const runChild = <A = TaskResult>(
  task: Task | { readonly kind: string },
  cpuProfileDir?: string,
  sdkRoot?: string,
  runner: Runner = {}
): Promise<A> =>
  new Promise((resolve, reject) => {
    const env = cpuProfileDir === undefined ? process.env : { ...process.env, BENCH_CPU_PROFILE_DIR: cpuProfileDir }
    // With `sdkRoot`, the SDK side runs from that copy (its bench/, hence its src/); so does the
    // create-session task, whose one process holds both sides (its fetch side is the same code).
    const sdkSide = ("variant" in task && task.variant === "sdk") || task.kind === "createSession"
    const from = sdkRoot !== undefined && sdkSide ? sdkRoot : root
    const child = spawnTs("child.ts", [JSON.stringify(task)], ["--expose-gc"], env, from, runner)
    const output = collectOutput(child)
    let result: A | undefined
    child.on("message", (message: { type?: string; result?: A }) => {
      if (message.type === "result") result = message.result
    })
    // "close", not "exit": a child's last IPC message (its result) can arrive after its "exit".
    child.on("close", (code) => {
      if (code === 0 && result !== undefined) resolve(result)
      else {
        // The first line names what went wrong (the report keeps only that line).
        const text = output()
        const error = /^\s*(?:\w*Error|error)\b.*$/m.exec(text)?.[0]?.trim() ?? "see its output"
        reject(new Error(`${task.kind} child exited (${code}): ${error}\n${text}`))
      }
    })
  })

export const attempt = async <A>(label: string, log: (line: string) => void, body: () => Promise<A>): Promise<A | Skipped> => {
  try {
    return await body()
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error)
    log(`  ${label} failed: ${message.split("\n").slice(0, 8).join("\n    ")}`)
    return { skipped: message.split("\n")[0] ?? "failed" }
  }
}
