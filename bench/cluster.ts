/**
 * The cluster benchmark: sessions held per runner, and failover time (SIGKILL of a runner to
 * the next event delivered, to a subscriber in another process, for each session it held), with
 * the loss window counted.
 *
 * Real parts, as in test/cluster/failover.e2e.test.ts: PostgreSQL (test/helpers/Postgres.ts),
 * the simulator (in this process), three runner processes and a client process (the fixtures
 * of that test, the client in `MODE=stream`). Sessions stream without pause (no request; one
 * event every `FRAME_MS`), so the kill lands mid-stream: events the service had flushed to the
 * dead runner and that it had not yet persisted are lost (the service numbers nothing and
 * resumes after what it flushed); the benchmark counts them against the simulator's script.
 *
 *   npx tsx bench/cluster.ts [--sessions 200] [--frame-ms 1000]
 *
 * Writes the section between `<!-- cluster:begin -->` and `<!-- cluster:end -->` of
 * bench/RESULTS.md (appended when missing) and prints it.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { readFileSync, writeFileSync } from "node:fs"
import * as Os from "node:os"
import { join } from "node:path"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { SessionEvent } from "../src/index.js"
import * as Simulator from "../src/simulator/Simulator.js"
import { readLines } from "../test/cluster/fixtures/lines.js"
import * as Postgres from "../test/helpers/Postgres.js"

const root = join(import.meta.dirname, "..")
const flag = (name: string, fallback: number): number => {
  const i = process.argv.indexOf(`--${name}`)
  return i >= 0 ? Number(process.argv[i + 1]) : fallback
}
const SESSIONS = flag("sessions", 200)
const FRAME_MS = flag("frame-ms", 1000)
const ACTIONS = 60

interface Proc {
  readonly child: ChildProcess
  readonly nextLine: (predicate: (line: string) => boolean) => Effect.Effect<string>
}

const fixture = (file: string, env: NodeJS.ProcessEnv) =>
  Effect.acquireRelease(
    Effect.sync((): Proc => {
      const child = spawn(process.execPath, ["--import", "tsx", join("test", "cluster", "fixtures", file)], {
        cwd: root,
        env: { ...process.env, ...env },
        stdio: ["pipe", "pipe", "inherit"]
      })
      const { nextLine } = readLines(child.stdout!)
      return { child, nextLine }
    }),
    (proc) => Effect.sync(() => proc.child.kill("SIGKILL"))
  )

/** Resident memory of a process, from /proc (Linux), in MiB. */
const rssMiB = (pid: number | undefined): number => {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8")
    const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? "0")
    return kb / 1024
  } catch {
    return Number.NaN
  }
}

const median = (xs: ReadonlyArray<number>): number => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length === 0 ? Number.NaN : s[Math.floor(s.length / 2)]!
}

const decodeEvents = Schema.decodeUnknownSync(Schema.Array(SessionEvent.SessionEvent))

interface Done {
  readonly sessions: ReadonlyArray<{
    readonly id: string
    readonly seqs: ReadonlyArray<number>
    readonly events: ReadonlyArray<unknown>
    readonly times: ReadonlyArray<number>
    readonly run: string
    readonly runnerBefore: string | null
  }>
}

const program = Effect.gen(function*() {
  const startedAt = Date.now()
  const simulator = yield* Simulator.make({
    port: 0,
    scenario: { actions: ACTIONS, ask: "none", frameDelay: `${FRAME_MS} millis` }
  })
  const pg = yield* Postgres.start
  const env = {
    AGENT_SESSION_API_KEY: simulator.accountKey,
    AGENT_SESSION_BASE_URL: simulator.baseUrl,
    AGENT_SESSION_WS_URL: simulator.wsUrl,
    CLUSTER_DATABASE_URL: pg.url
  }
  const ports = [yield* Postgres.freePort, yield* Postgres.freePort, yield* Postgres.freePort]
  const runners = yield* Effect.forEach(ports, (port) => fixture("runner.ts", { ...env, RUNNER_PORT: String(port) }))
  yield* Effect.forEach(runners, (r) => r.nextLine((l) => l === "ready"), { concurrency: "unbounded" })
  const idleRss = runners.map((r) => rssMiB(r.child.pid))

  const client = yield* fixture("client.ts", { ...env, SESSIONS: String(SESSIONS), MODE: "stream" })
  const ready = JSON.parse(yield* client.nextLine((l) => l.includes(`"type":"ready"`))) as {
    readonly runners: ReadonlyArray<string | null>
  }
  const held = new Map<string, number>()
  for (const runner of ready.runners) held.set(String(runner), (held.get(String(runner)) ?? 0) + 1)
  const loadedRss = runners.map((r) => rssMiB(r.child.pid))

  // (A session that already completed reports no runner: "null".)
  const [victimAddress] = [...held.entries()].filter(([address]) => address !== "null").sort((a, b) => b[1] - a[1])[0]!
  const victim = runners[ports.findIndex((port) => victimAddress.endsWith(`:${port}`))]!
  const killedAt = Date.now()
  victim.child.kill("SIGKILL")
  client.child.stdin!.write("answer\n")
  const done = JSON.parse(yield* client.nextLine((l) => l.includes(`"type":"done"`))) as Done

  const failover: Array<number> = []
  let lost = 0
  let lostMoved = 0
  let repeated = 0
  let complete = 0
  let contiguous = 0
  for (const session of done.sessions) {
    if (session.run === "complete") complete += 1
    if (session.seqs.every((seq, i) => seq === i + 1)) contiguous += 1
    const script = (yield* simulator.script(session.id)).filter((e) => e._tag !== "Heartbeat" && e._tag !== "Connected")
    const delivered = decodeEvents(session.events)
    const key = (e: unknown) => JSON.stringify(e)
    const seen = new Set(delivered.map(key))
    repeated += delivered.length - seen.size
    const missing = script.filter((e) => !seen.has(key(e))).length
    lost += missing
    if (session.runnerBefore === victimAddress) {
      lostMoved += missing
      const next = session.times.find((t) => t > killedAt)
      if (next !== undefined) failover.push(next - killedAt)
    }
  }
  const cpus = Os.cpus()
  const row = (cells: ReadonlyArray<string | number>) => `| ${cells.join(" | ")} |`
  const heldRows = ports.map((port, i) =>
    row([
      `127.0.0.1:${port}${`127.0.0.1:${port}` === victimAddress ? " (killed)" : ""}`,
      held.get(`127.0.0.1:${port}`) ?? 0,
      idleRss[i]!.toFixed(0),
      loadedRss[i]!.toFixed(0),
      (held.get(`127.0.0.1:${port}`) ?? 0) === 0
        ? "-"
        : (((loadedRss[i]! - idleRss[i]!) * 1024) / (held.get(`127.0.0.1:${port}`) ?? 1)).toFixed(0)
    ])
  )
  const section = [
    "<!-- cluster:begin -->",
    "## Cluster: sessions per runner and failover (bench/cluster.ts)",
    "",
    `Run on ${new Date().toISOString()} in ${((Date.now() - startedAt) / 1000).toFixed(0)} s: ${
      cpus[0]?.model ?? "?"
    }, ${cpus.length} cores (load average ${Os.loadavg()[0]!.toFixed(1)} at the end: the machine is shared), Node ${process.version}. PostgreSQL ${pg.url.replace(/\/\/.*@/, "//…@")}` +
    ` (local, fsync off), the simulator, 3 runner processes and 1 client process on this one machine;`,
    `${SESSIONS} sessions of ${ACTIONS} actions, one event every ${FRAME_MS} ms, no pause; the runner holding the most`,
    "sessions is killed with SIGKILL mid-stream.",
    "",
    "| runner | sessions held | RSS idle (MiB) | RSS holding them (MiB) | KiB per session (RSS growth / sessions) |",
    "| --- | --- | --- | --- | --- |",
    ...heldRows,
    "",
    "| figure | result |",
    "| --- | --- |",
    row(["sessions moved (held by the killed runner)", failover.length]),
    row([
      "failover: kill to the next event delivered to the client (another process)",
      `median ${median(failover).toFixed(0)} ms, min ${Math.min(...failover).toFixed(0)} ms, max ${
        Math.max(...failover).toFixed(0)
      } ms`
    ]),
    row(["sessions that reached `complete`", `${complete}/${SESSIONS}`]),
    row(["logs with contiguous sequence numbers", `${contiguous}/${SESSIONS}`]),
    row(["events lost (flushed by the service, never persisted): all sessions", lost]),
    row(["... of them, sessions of the killed runner", lostMoved]),
    row(["... of them, sessions whose shard moved between live runners (rebalancing)", lost - lostMoved]),
    row(["events delivered twice", repeated]),
    "",
    "The failover time is mostly the engine's detection: a runner is declared dead after its pings",
    "fail (5 retries 500 ms apart) at the next health check (every 2 s), assignments are refreshed",
    "every 1 s, and the new owner reads the unprocessed `Start` messages of the shards it takes",
    "(polled every 2 s); then the session reattaches (`attach`) and its log continues.",
    "<!-- cluster:end -->",
    ""
  ].join("\n")
  const file = join(root, "bench", "RESULTS.md")
  const current = readFileSync(file, "utf8")
  const begin = current.indexOf("<!-- cluster:begin -->")
  const end = current.indexOf("<!-- cluster:end -->")
  const next = begin >= 0 && end > begin
    ? current.slice(0, begin) + section + current.slice(end + "<!-- cluster:end -->\n".length)
    : current.trimEnd() + "\n\n" + section
  writeFileSync(file, next)
  process.stdout.write(section)
})

program.pipe(Effect.scoped, NodeRuntime.runMain)
