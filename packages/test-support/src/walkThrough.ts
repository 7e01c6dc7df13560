/**
 * Runs the scale-out walk-through (`docs/scale-out.md`, "Try it") as the page shows it, for either
 * Effect line: its commands in order, each through `sh` from a file (a command line that showed
 * the script would match the page's `pgrep -f`), with the page's ports and paths replaced by free
 * ports and a temporary directory, and an `npx` on the PATH that runs this repository's command
 * line (`npx effect-agent-session ...`) or a program through tsx (`npx tsx <file> ...`), both from
 * the sources, and nothing else (`launch.ts`'s `npxShim`).
 *
 * What each command is, by its shape:
 * - `mkdir <project> && cd <project> && ...`: the project's directory (the caller's `project`),
 *   the rest of the line run there; `npm install ...`: not run (test/docs.links.test.ts checks the
 *   packages and ranges), the caller's `onProject` puts the packages there instead;
 * - `export ...`: kept, run before every later command;
 * - `initdb`, `postgres`: as the `postgres` user when this process is root (as the page says);
 *   `postgres` runs on, ready when it says so;
 * - `simulate`, a runner (`runner --port <p>`, `runner.ts <p>`): run on; the runners must say
 *   `joined the cluster` before the session is submitted;
 * - the session (`submit`, `submit.ts`): runs on until it waits for an answer (the page's
 *   transcript, when given, is checked line by line against what it printed);
 * - `kill -9 ...`: run with the page's port replaced by the port of the runner that holds the
 *   session (the page can only name one); that runner must be gone after it;
 * - the answer (`answer <id>`, `answer.ts <id>`): the session's id for the page's;
 * - anything else: runs to its end.
 * Every command must succeed; the session must then end with `run: complete` and exit 0, having
 * printed each sequence number once, in order.
 *
 * Nothing here imports Effect: both editions' tests run it. Every wait is bounded.
 */
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import type { Command } from "./DocBlocks.js"
import { npxShim } from "./launch.js"
import { binDir, freePort, serverUser, type User } from "./postgresServer.js"

/** What the walk-through needs from its caller. */
export interface WalkThrough {
  /** The commands, in order (the page's shared steps and one line's). */
  readonly commands: ReadonlyArray<Command>
  /** The session's transcript as the page shows it (the `$ ...` line first), if it shows one. */
  readonly transcript?: string | undefined
  /** A scratch directory, removed by the caller. */
  readonly dir: string
  /** The directory of the page's project (its `mkdir <name>`), by name. */
  readonly project: (name: string) => string
  /** Called once the project's directory exists: puts the packages the page installs there. */
  readonly onProject?: ((name: string, dir: string) => void) | undefined
  /** The command line's entry (TypeScript), run by `npx effect-agent-session`. */
  readonly cli: string
  /** The environment (without the developer's `AGENT_SESSION_*`). */
  readonly env: Record<string, string>
}

/** A process the walk-through started and leaves running. */
interface Running {
  readonly line: string
  readonly child: ChildProcess.ChildProcess
  output: string
  exit: number | null | undefined
}

/** A transcript line as a pattern: ids and ports match any, an elision (`...`) anything. */
const shown = (line: string): RegExp =>
  new RegExp(
    "^" + line.trim()
      .split(/(ses_[A-Za-z0-9]+|127\.0\.0\.1:\d+|\.\.\.)/)
      .map((part) =>
        /^ses_/.test(part)
          ? "ses_[A-Za-z0-9_-]+"
          : /^127\.0\.0\.1:/.test(part)
          ? "127\\.0\\.0\\.1:\\d+"
          : part === "..."
          ? ".*"
          : part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
      )
      .join("") + "$"
  )

const sleep = (millis: number) => new Promise<void>((resolve) => setTimeout(resolve, millis))

/** Runs the walk-through; rejects with what went wrong (the command, and its output). Stops what it started. */
export const runWalkThrough = async (walk: WalkThrough): Promise<void> => {
  const running: Array<Running> = []
  let steps = 0
  const start = (script: string, cwd: string, user?: User): Running => {
    const file = Path.join(walk.dir, `.step-${++steps}.sh`)
    Fs.writeFileSync(file, script)
    const child = ChildProcess.spawn("/bin/sh", [file], {
      cwd,
      env,
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
      ...(user === undefined ? {} : { uid: user.uid, gid: user.gid })
    })
    const started: Running = { line: script.split("\n").at(-1) ?? "", child, output: "", exit: undefined }
    running.push(started)
    const take = (chunk: Buffer) => {
      started.output += chunk.toString("utf8")
    }
    child.stdout.on("data", take)
    child.stderr.on("data", take)
    child.on("exit", (code, signal) => {
      started.exit = signal === null ? code : null
    })
    return started
  }
  const waitFor = async (what: string, of: Running, until: () => boolean, millis: number) => {
    const deadline = Date.now() + millis
    while (!until()) {
      if (Date.now() > deadline) {
        return Promise.reject(new Error(`${what}: not within ${millis} ms (${of.line})\n${of.output.slice(-3000)}`))
      }
      await sleep(100)
    }
  }
  const finish = async (script: string, cwd: string, user?: User) => {
    const done = start(script, cwd, user)
    await waitFor("the command's end", done, () => done.exit !== undefined, 60_000)
    if (done.exit !== 0) return Promise.reject(new Error(`exit ${done.exit}: ${done.line}\n${done.output}`))
  }

  const bin = binDir()
  if (bin === undefined) return Promise.reject(new Error("PostgreSQL's binaries not found (.ci/run installs them)"))
  const user = serverUser()
  // PostgreSQL's data directory is made in the scratch directory, by its user.
  Fs.chmodSync(walk.dir, 0o755)
  if (user !== undefined) Fs.chownSync(walk.dir, user.uid, user.gid)
  const env = { ...walk.env, PATH: `${npxShim(walk.dir, walk.cli)}:${walk.env["PATH"] ?? ""}` }
  // The page's ports and paths, each replaced by one of this run.
  const ports = new Map<string, string>()
  for (const { line } of walk.commands) {
    for (const port of line.matchAll(/(?:--port |-p |127\.0\.0\.1:|\.ts )(\d{4,5})\b/g)) {
      if (!ports.has(port[1]!)) ports.set(port[1]!, String(await freePort()))
    }
  }
  const local = (text: string) => {
    let out = text.replace(/\/usr\/lib\/postgresql\/\d+\/bin/g, bin)
      .replaceAll("/tmp/try-cluster-pg", Path.join(walk.dir, "pg"))
      .replaceAll("/tmp/try-cluster-secret", Path.join(walk.dir, "secret"))
    for (const [page, here] of ports) out = out.replace(new RegExp(`\\b${page}\\b`, "g"), here)
    return out
  }
  const exports: Array<string> = []
  const script = (line: string) => [...exports, local(line)].join("\n")
  let project = walk.dir
  let session: Running | undefined
  let sessionId = ""
  const runners = () => running.filter((r) => / runner(?: --port|\.ts) \d+$/.test(r.line))
  try {
    for (const { line } of walk.commands) {
      const made = /^mkdir (\S+) && cd \1(?: && (.*))?$/.exec(line)
      if (made !== null) {
        project = walk.project(made[1]!)
        Fs.mkdirSync(project, { recursive: true })
        if (made[2] !== undefined) await finish(script(made[2]), project)
        walk.onProject?.(made[1]!, project)
      } else if (/^npm install /.test(line)) {
        continue
      } else if (/^export /.test(line)) {
        exports.push(local(line))
      } else if (/^initdb /.test(line)) {
        await finish(script(line), walk.dir, user)
      } else if (/^postgres /.test(line)) {
        const server = start(script(line), walk.dir, user)
        await waitFor("PostgreSQL ready", server, () => /ready to accept connections/.test(server.output), 30_000)
      } else if (/ simulate /.test(line)) {
        const simulator = start(script(line), project)
        await waitFor("the simulator's addresses", simulator, () => /base URL:\s+http/.test(simulator.output), 60_000)
      } else if (/ runner(?: --port|\.ts) \d+$/.test(line)) {
        start(script(line), project)
      } else if (/ submit(?:\.ts)?(?: |$)/.test(line)) {
        for (const runner of runners()) {
          await waitFor("the runner joined", runner, () => /joined the cluster/.test(runner.output), 120_000)
        }
        const s = start(script(line), project)
        session = s
        await waitFor("the session waits for its answer", s, () => /waiting for an answer/.test(s.output), 120_000)
        sessionId = /session (ses_[A-Za-z0-9_-]+) runs on the cluster/.exec(s.output)?.[1] ?? ""
        if (sessionId === "") return Promise.reject(new Error(`no session id printed\n${s.output}`))
        const lines = s.output.split("\n").map((out) => out.trim())
        let at = 0
        for (const text of (walk.transcript ?? "").split("\n").slice(1)) {
          if (text.trim() === "" || text.trim() === "...") continue
          const pattern = shown(text)
          const found = lines.findIndex((out, i) => i >= at && pattern.test(out))
          if (found < 0) return Promise.reject(new Error(`the session does not print "${text}" (in order)\n${s.output}`))
          at = found + 1
        }
      } else if (/^kill -9 /.test(line)) {
        const holder = /held by runner 127\.0\.0\.1:(\d+)/.exec(session?.output ?? "")?.[1]
        const pagePort = /(?:--port |\.ts )(\d+)/.exec(line)?.[1] ?? ""
        const killed = runners().find((r) => r.line.endsWith(` ${holder}`))
        if (holder === undefined || killed === undefined) {
          return Promise.reject(new Error(`no runner holds the session\n${session?.output ?? ""}`))
        }
        await finish(script(line).replace(new RegExp(`\\b${ports.get(pagePort)}\\b`, "g"), holder), project)
        await waitFor("the holder killed", killed, () => killed.exit !== undefined, 10_000)
      } else if (/ answer(?:\.ts)? ses_/.test(line)) {
        await finish(script(line.replace(/ses_[A-Za-z0-9_-]+/, sessionId)), project)
      } else {
        await finish(script(line), project)
      }
    }
    const s = session
    if (s === undefined) return Promise.reject(new Error("the walk-through submits no session"))
    await waitFor("the session's end", s, () => s.exit !== undefined, 120_000)
    if (s.exit !== 0 || !/run: complete/.test(s.output)) {
      return Promise.reject(new Error(`the session did not end complete (exit ${s.exit})\n${s.output}`))
    }
    const seqs = [...s.output.matchAll(/^#(\d+) /gm)].map((match) => Number(match[1]))
    if (seqs.length < 10 || seqs.some((seq, i) => seq !== i + 1)) {
      return Promise.reject(new Error(`each sequence number once, in order: ${seqs.join(",")}\n${s.output}`))
    }
  } finally {
    for (const started of running) {
      try {
        process.kill(-started.child.pid!, "SIGKILL")
      } catch {
        // gone already
      }
    }
  }
}
