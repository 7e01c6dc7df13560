/**
 * Every command the README files and `docs/` show is run here, or is on the short list below of
 * commands a test cannot run, with why. The commands are the lines of ```sh blocks (continuations
 * joined, trailing comments dropped) and the `$ ` lines of transcripts. A new command that is
 * neither run nor listed fails the test.
 *
 * How they run: each document's commands in order, in a fresh directory, through `sh`, with an
 * `npx` on the PATH that runs this repository's command line from its sources (as the CLI tests
 * do) and fails for anything else. One simulator (in process, fast frames) stands in for the
 * service: the docs' `http://127.0.0.1:8787` is its address. A `simulate` line is started (on a
 * free port) and stopped once it prints its addresses. A ```sh line must exit 0; a transcript's
 * command must print the line the transcript shows after it. The same command in the same
 * environment runs once.
 */
import { assert, describe, it } from "@effect/vitest"
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import { createRequire } from "node:module"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { Simulator } from "effect-agent-session-simulator"
import { commandsOf } from "effect-agent-session-test-support/DocBlocks"
import { cleanEnv, npxShim } from "effect-agent-session-test-support/launch"

const root = Path.join(import.meta.dirname, "..")
/** The command line's TypeScript entry (the workspace package `effect-agent-session-cli`), run from its sources. */
const cli = Path.join(Path.dirname(createRequire(import.meta.url).resolve("effect-agent-session-cli/package.json")), "src/main.ts")

const documents = [
  "README.md",
  ...Fs.readdirSync(Path.join(root, "packages")).map((dir) => `packages/${dir}/README.md`).filter((path) => Fs.existsSync(Path.join(root, path))),
  ...Fs.readdirSync(Path.join(root, "docs")).filter((name) => name.endsWith(".md")).map((name) => `docs/${name}`)
]

/** Commands a test cannot run, each with why. */
const notRun: ReadonlyArray<{ readonly pattern: RegExp; readonly why: string }> = [
  { pattern: /^npm install /, why: "an install: test/docs.links.test.ts checks its packages and ranges" },
  { pattern: /^(?:CLUSTER_(?:DATABASE_URL|SECRET)=\S+ )*npx effect-agent-session (?:runner|submit|watch|answer)\b/, why: "a cluster command: needs PostgreSQL and a fleet of runners (test/scale-out.test.ts runs the scale-out walk-through's; packages/cli/test/cluster.test.ts each command against a runner)" },
  { pattern: /^(?:mkdir try-cluster|export PATH=\/usr\/lib\/postgresql|initdb |postgres |export CLUSTER_DATABASE_URL=|\(umask 077; openssl rand |export CLUSTER_SECRET=|kill -9 \$\(pgrep -f "runner[ .]|psql )/, why: "the scale-out walk-through's own project, PostgreSQL, cluster secret and failover: test/scale-out.test.ts runs the walk-through, these included (its Effect 4 part: packages/effect4/test/cluster/scaleOut.test.ts)" },
  { pattern: /^npx tsx (?:runner|submit|answer)\.ts\b/, why: "the scale-out walk-through's Effect 4 programs: packages/effect4/test/cluster/scaleOut.test.ts runs them, as the page shows" },
  { pattern: /^(?:\S+=\S+ )*npx tsx (?:first-session|create-session)\.ts$/, why: "the program shown above it: test/docs-programs.test.ts runs it against the simulator" },
  { pattern: /^npx tsx examples\/quickstart\.ts$/, why: "an example: test/examples.test.ts runs it against the simulator" },
  { pattern: /^npm ci && npm (?:start|test)$|^npm run test:fast$/, why: "the repository's own install and suites: a test cannot run the suite it is part of" },
  { pattern: /^npm run docs$/, why: "test/docs.links.test.ts builds the API reference (typedoc) without a warning" },
  { pattern: /^npx vitest run packages\/effect3\/test\/reliability packages\/effect3\/test\/hostile packages\/effect3\/test\/shared\/hostile\.test\.ts packages\/effect3\/test\/shared\/paid$/, why: "those suites, run by npm test (about two minutes)" },
  {
    pattern: /^bun add effect-agent-session-effect4 |^(?:\S+=\S+ )*(?:bun|deno run(?: --allow-\S+)*) first-session-fetch\.ts$/,
    why: "the Effect 4 edition's first session on Bun and Deno: its consumer test (packages/effect4/test/consumer/runtimes.test.ts) runs these in fresh apps against the simulator"
  }
]

const listed = (line: string) => notRun.some(({ pattern }) => pattern.test(line))
const isCli = (line: string) => !listed(line) && /^(?:\S+=\S+ )*(?:npx (?:-p effect-agent-session-cli )?effect-agent-session|jq |mkdir -p )/.test(line)
const isExport = (line: string) => !listed(line) && /^export [A-Z_]+=\S+(?: [A-Z_]+=\S+)*$/.test(line)


interface Ran {
  readonly code: number | null
  readonly output: string
}

const sh = (script: string, env: Record<string, string>, cwd: string, until?: RegExp): Promise<Ran> =>
  new Promise((resolve) => {
    const child = ChildProcess.spawn("/bin/sh", ["-c", script], { cwd, env, stdio: ["ignore", "pipe", "pipe"], detached: true })
    let output = ""
    const stop = () => {
      try {
        process.kill(-child.pid!, "SIGKILL")
      } catch {
        // already gone
      }
    }
    const timer = setTimeout(stop, 40_000)
    const take = (chunk: Buffer) => {
      output += chunk.toString("utf8")
      if (until !== undefined && until.test(output)) stop()
    }
    child.stdout.on("data", take)
    child.stderr.on("data", take)
    child.on("close", (code) => {
      clearTimeout(timer)
      resolve({ code: until !== undefined && until.test(output) ? 0 : code, output })
    })
  })

const all = documents.flatMap((doc) => commandsOf(doc, Fs.readFileSync(Path.join(root, doc), "utf8")))

describe("every command the docs show", () => {
  it("is run by this test or listed with why it cannot be", () => {
    const neither = all.filter(({ line }) => !isCli(line) && !isExport(line) && !listed(line))
    assert.deepStrictEqual(neither.map(({ doc, line }) => `${doc}: ${line}`), [])
    assert.isAtLeast(all.filter(({ line }) => isCli(line)).length, 10)
    // Every listed pattern still matches a command: the list is no longer than it must be.
    for (const { pattern } of notRun) assert.isTrue(all.some(({ line }) => pattern.test(line)), String(pattern))
  })

  it.live("runs, against the simulator, and does what the docs say", () =>
    Effect.scoped(Effect.gen(function*() {
      const sim = yield* Simulator.make({ scenario: { actions: 3, frameDelay: Duration.millis(1) } })
      const address = new URL(sim.baseUrl).host
      const base = cleanEnv({ AGENT_SESSION_BASE_URL: sim.baseUrl, AGENT_SESSION_API_KEY: sim.accountKey })
      const failures: Array<string> = []
      let ran = 0
      // The same command with the same environment is run once (several pages show `simulate`).
      const passed = new Set<string>()
      yield* Effect.forEach(documents, (doc) =>
        Effect.promise(async () => {
          const commands = all.filter((command) => command.doc === doc && (isCli(command.line) || isExport(command.line)))
          if (commands.length === 0) return
          const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "docs-commands-"))
          try {
            const env = { ...base, PATH: `${npxShim(dir, cli)}:${base["PATH"] ?? ""}` }
            const exports: Array<string> = []
            for (const { line, shows } of commands) {
              const text = line.replaceAll("127.0.0.1:8787", address)
              if (isExport(line)) {
                exports.push(text)
                continue
              }
              const server = / simulate\b/.test(line)
              const script = [
                ...exports,
                server ? (/--port \d+/.test(text) ? text.replace(/--port \d+/, "--port 0") : `${text} --port 0`) : text
              ].join("\n")
              if (passed.has(`${script}\n${shows}`)) continue
              const result = await sh(script, env, dir, server ? /base URL:\s+http/ : undefined)
              ran += 1
              const problem = shows !== undefined
                ? result.output.replaceAll(address, "127.0.0.1:8787").includes(shows) ? undefined : `does not print "${shows}"`
                : result.code === 0
                ? undefined
                : `exit ${result.code}`
              if (problem !== undefined) failures.push(`${doc}: ${line}: ${problem}\n${result.output.slice(0, 2000)}`)
              else passed.add(`${script}\n${shows}`)
            }
          } finally {
            Fs.rmSync(dir, { recursive: true, force: true })
          }
        }), { concurrency: 3 })
      assert.deepStrictEqual(failures, [])
      assert.isAtLeast(ran, 10)
    })), 180_000)
})
