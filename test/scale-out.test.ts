/**
 * The scale-out walk-through (`docs/scale-out.md`, "Try it"), run as the page shows it: every
 * command of its ```sh blocks and transcripts, in order, through `sh`, with the page's ports and
 * paths replaced by free ports and a temporary directory, and an `npx` on the PATH that runs this
 * repository's command line from its sources (as test/docs-commands.test.ts does). PostgreSQL is
 * the page's `initdb` and `postgres` (as the `postgres` user when this process is root, as the page
 * says); the service is the page's `simulate`; the runners are the page's three `runner` commands.
 * The session the page submits waits for its approval; the page's `kill -9` is run against the
 * runner that holds it (the page names one port, the test the holder's); the page's `answer` grants
 * it; the session must then go on from the next event, each sequence number once, to `run:
 * complete` and exit 0.
 *
 * What the page installs (`npm install ...`) is not installed here: test/docs.links.test.ts checks
 * its packages and ranges, and the commands run this repository's sources.
 */
import { assert, describe, it } from "@effect/vitest"
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import { createRequire } from "node:module"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Effect from "effect/Effect"
import { cleanEnv, fromSource } from "effect-agent-session-test-support/launch"
import { binDir, freePort } from "effect-agent-session-test-support/postgresServer"
import { commandsOf } from "effect-agent-session-test-support/DocBlocks"

const root = Path.join(import.meta.dirname, "..")
const page = Fs.readFileSync(Path.join(root, "docs", "scale-out.md"), "utf8")
/** The walk-through: the page's "Try it" section. */
const walkThrough = page.slice(page.indexOf("\n## Try it"), page.indexOf("\n## ", page.indexOf("\n## Try it") + 1))
const launcher = fromSource(
  Path.join(Path.dirname(createRequire(import.meta.url).resolve("effect-agent-session-cli/package.json")), "src/main.ts")
)

/** An `npx` that runs this repository's command line, and nothing else. */
const shim = (dir: string): string => {
  const bin = Path.join(dir, "bin")
  Fs.mkdirSync(bin)
  const node = [process.execPath, ...launcher].map((word) => `'${word}'`).join(" ")
  Fs.writeFileSync(
    Path.join(bin, "npx"),
    `#!/bin/sh\n[ "$1" = "effect-agent-session" ] || { echo "scale-out: npx $* is not the command line" >&2; exit 127; }\nshift\nexec ${node} "$@"\n`,
    { mode: 0o755 }
  )
  return bin
}

/** The user PostgreSQL runs as when this process is root (it refuses to run as root). */
const postgresUser = (): { readonly uid: number; readonly gid: number } | undefined => {
  if (process.getuid?.() !== 0) return undefined
  for (const name of ["postgres", "nobody"]) {
    try {
      const id = (flag: string) => Number(ChildProcess.execFileSync("id", [flag, name], { encoding: "utf8" }).trim())
      return { uid: id("-u"), gid: id("-g") }
    } catch {
      // no such user
    }
  }
  return undefined
}

/** A process the walk-through started and leaves running (PostgreSQL, the simulator, a runner, `submit`). */
interface Running {
  readonly line: string
  readonly child: ChildProcess.ChildProcess
  output: string
  exit: number | null | undefined
}

let steps = 0

const start = (
  script: string,
  env: Record<string, string>,
  cwd: string,
  user?: { readonly uid: number; readonly gid: number }
): Running => {
  // From a file: a command line that shows the script would match the page's `pgrep -f`.
  const file = Path.join(cwd, `.step-${++steps}.sh`)
  Fs.writeFileSync(file, script)
  const child = ChildProcess.spawn("/bin/sh", [file], {
    cwd,
    env,
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
    ...(user ?? {})
  })
  const running: Running = { line: script, child, output: "", exit: undefined }
  const take = (chunk: Buffer) => {
    running.output += chunk.toString("utf8")
  }
  child.stdout.on("data", take)
  child.stderr.on("data", take)
  child.on("exit", (code) => {
    running.exit = code
  })
  return running
}

const stop = (running: Running) => {
  try {
    process.kill(-running.child.pid!, "SIGKILL")
  } catch {
    // already gone
  }
}

/** Waits, at most `millis`, until `until` holds. */
const waitFor = async (what: string, until: () => boolean, millis: number, output: () => string): Promise<void> => {
  const deadline = Date.now() + millis
  while (!until()) {
    if (Date.now() > deadline) return Promise.reject(new Error(`${what}: not within ${millis} ms\n${output().slice(-3000)}`))
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

/** Runs a command to its end (at most 60 s): its exit code and output. */
const run = (script: string, env: Record<string, string>, cwd: string, user?: { readonly uid: number; readonly gid: number }) =>
  new Promise<{ readonly code: number | null; readonly output: string }>((resolve) => {
    const running = start(script, env, cwd, user)
    const timer = setTimeout(() => stop(running), 60_000)
    running.child.on("close", (code) => {
      clearTimeout(timer)
      resolve({ code, output: running.output })
    })
  })

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

describe("docs/scale-out.md's walk-through", () => {
  const commands = commandsOf("docs/scale-out.md", walkThrough)
  const transcript = [...walkThrough.matchAll(/^```([^\n]*)\n([\s\S]*?)^```/gm)]
    .filter((match) => (match[1] ?? "").trim() === "")
    .map((match) => match[2] ?? "")
    .find((text) => text.startsWith("$ npx effect-agent-session submit"))

  it("shows PostgreSQL, a secret, the service, three runners, a session, a kill and an answer", () => {
    const lines = commands.map(({ line }) => line)
    for (const pattern of [/^initdb /, /^postgres -D /, /openssl rand/, / simulate /, / submit /, /^kill -9 /, / answer ses_/]) {
      assert.isTrue(lines.some((line) => pattern.test(line)), String(pattern))
    }
    assert.strictEqual(lines.filter((line) => / runner --port \d+$/.test(line)).length, 3)
    assert.isDefined(transcript)
  })

  it.live("runs: a runner killed while the session waits, the session answered, every event once", () =>
    Effect.acquireUseRelease(
      Effect.sync(() => ({ dir: Fs.mkdtempSync(Path.join(Os.tmpdir(), "scale-out-")), running: new Array<Running>() })),
      ({ dir, running }) =>
        Effect.promise(async () => {
          Fs.chmodSync(dir, 0o755)
          const bin = binDir()
          assert.isDefined(bin, "PostgreSQL's binaries (.ci/run installs them)")
          const user = postgresUser()
          // PostgreSQL's data directory is made in this one, by its user.
          if (user !== undefined) Fs.chownSync(dir, user.uid, user.gid)
          // The page's ports and paths, each replaced by one of this run.
          const ports = new Map<string, string>()
          for (const port of walkThrough.matchAll(/(?:--port |-p |127\.0\.0\.1:)(\d{4,5})\b/g)) {
            if (!ports.has(port[1]!)) ports.set(port[1]!, String(await freePort()))
          }
          const local = (text: string) => {
            let out = text.replaceAll("/usr/lib/postgresql/15/bin", bin!)
              .replaceAll("/tmp/try-cluster-pg", Path.join(dir, "pg"))
              .replaceAll("/tmp/try-cluster-secret", Path.join(dir, "secret"))
            for (const [page, here] of ports) out = out.replace(new RegExp(`\\b${page}\\b`, "g"), here)
            return out
          }
          const env = { ...cleanEnv(), PATH: `${shim(dir)}:${process.env["PATH"] ?? ""}` }
          const project = Path.join(dir, "project")
          const exports: Array<string> = []
          const script = (line: string) => [...exports, local(line)].join("\n")
          let submit: Running | undefined
          let sessionId = ""
          for (const { line } of commands) {
            if (/^npm install /.test(line)) continue
            if (/^mkdir try-cluster && cd try-cluster/.test(line)) {
              Fs.mkdirSync(project)
              const result = await run(line.replace(/^mkdir try-cluster && cd try-cluster/, "true"), env, project)
              assert.strictEqual(result.code, 0, `${line}\n${result.output}`)
              continue
            }
            if (/^export /.test(line)) {
              exports.push(local(line))
              continue
            }
            if (/^initdb /.test(line)) {
              const result = await run(script(line), env, dir, user)
              assert.strictEqual(result.code, 0, `${line}\n${result.output}`)
              continue
            }
            if (/^postgres /.test(line)) {
              const server = start(script(line), env, dir, user)
              running.push(server)
              await waitFor(line, () => /ready to accept connections/.test(server.output), 30_000, () => server.output)
              continue
            }
            if (/ simulate /.test(line)) {
              const simulator = start(script(line), env, project)
              running.push(simulator)
              await waitFor(line, () => /base URL:\s+http/.test(simulator.output), 30_000, () => simulator.output)
              continue
            }
            if (/ runner --port /.test(line)) {
              const runner = start(script(line), env, project)
              running.push(runner)
              continue
            }
            if (/ submit /.test(line)) {
              // The runners join together (they take turns creating the tables).
              for (const runner of running.filter((r) => / runner --port /.test(r.line))) {
                await waitFor(runner.line, () => /joined the cluster/.test(runner.output), 90_000, () => runner.output)
              }
              submit = start(script(line), env, project)
              running.push(submit)
              const s = submit
              await waitFor(line, () => /waiting for an answer/.test(s.output), 90_000, () => s.output)
              sessionId = /session (ses_[A-Za-z0-9_-]+) runs on the cluster/.exec(s.output)?.[1] ?? ""
              assert.notStrictEqual(sessionId, "", s.output)
              const lines = s.output.split("\n")
              const expected = (transcript ?? "").split("\n").slice(1).filter((text) => text.trim() !== "" && text.trim() !== "...")
              let at = 0
              for (const text of expected) {
                const pattern = shown(text)
                const found = lines.findIndex((out, i) => i >= at && pattern.test(out.trim()))
                assert.isAtLeast(found, 0, `submit does not print "${text}" (in order)\n${s.output}`)
                at = found + 1
              }
              continue
            }
            if (/^kill -9 /.test(line)) {
              const holder = /held by runner 127\.0\.0\.1:(\d+)/.exec(submit?.output ?? "")?.[1]
              assert.isDefined(holder, submit?.output)
              const pagePort = /runner --port (\d+)/.exec(line)?.[1] ?? ""
              const result = await run(script(line).replace(new RegExp(`\\b${ports.get(pagePort)}\\b`, "g"), holder!), env, project)
              assert.strictEqual(result.code, 0, `${line}\n${result.output}`)
              const killed = running.find((r) => r.line.endsWith(`runner --port ${holder}`))
              assert.isDefined(killed)
              await waitFor("the holder killed", () => killed!.exit !== undefined, 10_000, () => killed!.output)
              continue
            }
            if (/ answer ses_/.test(line)) {
              const result = await run(script(line.replace(/ses_[A-Za-z0-9_-]+/, sessionId)), env, project)
              assert.strictEqual(result.code, 0, `${line}\n${result.output}`)
              continue
            }
            // Any other command (the secret's) runs to its end and succeeds.
            const result = await run(script(line), env, project)
            assert.strictEqual(result.code, 0, `${line}\n${result.output}`)
          }
          const s = submit!
          await waitFor("submit's end", () => s.exit !== undefined, 120_000, () => s.output)
          assert.strictEqual(s.exit, 0, s.output)
          assert.match(s.output, /run: complete/)
          const seqs = [...s.output.matchAll(/^#(\d+) /gm)].map((match) => Number(match[1]))
          assert.deepStrictEqual(seqs, seqs.map((_, i) => i + 1), "each sequence number once, in order")
          assert.isAtLeast(seqs.length, 10)
        }),
      ({ dir, running }) =>
        Effect.sync(() => {
          for (const process of running) stop(process)
          Fs.rmSync(dir, { recursive: true, force: true })
        })
    ), 400_000)
})
