/**
 * The floor of a take-over: what `@effect/cluster` alone costs to move the entities of a killed
 * runner onto the survivors, on this machine, with the settings of `NodeClusterSessions`
 * (`defaultShardingConfig`, `defaultDetection`, the peers' watch, PostgreSQL storage,
 * `NodeClusterSocket`). Each entity holds one persisted request, as a session holds its `Start`
 * for its run, and does nothing else: no log, no service, no channel. The survivors record when
 * each moved entity got its request again; the median of those times since the kill is the
 * fastest a session could come back at this size, whatever the session does.
 *
 * Three runner processes (`test/shared/fixtures/floorRunner.ts`), the first of which sends the requests
 * (`discard`: a member of the cluster, as a client would), then the runner holding the most is
 * killed (`SIGKILL`).
 *
 *   npx tsx packages/cluster/bench/clusterFloor.ts [--line effect3|effect4] [--entities 10000] [--work-ms 0] [--retain-kib 0] [--runner-flags "<flags>"]
 *
 * `--line effect4` measures `effect/cluster` 4.1 instead: the runners are
 * the Effect 4 cluster's copy of `test/shared/fixtures/floorRunner.ts` (the same entity, with the Effect 4
 * `NodeClusterSessions`'s settings) under Node 22; this process drives them as it drives its own.
 *
 * `--work-ms` makes each entity spend that much CPU (a busy loop) when its request arrives, to
 * see how the take-over's median grows with the work a session does there; `--retain-kib`
 * makes each keep that much memory in small objects (a session's state), for the cost of a
 * larger heap to collect.
 *
 * The runners start with the Node flags of `runnerFlags.ts`, as `clusterTakeover.ts`'s do
 * (`--runner-flags` sets their young generation's, as there).
 *
 * Prints a table (markdown): among its rows the survivors' CPU from the kill to the last request
 * back per entity moved, and the part of it off their main threads (`procCpu.ts`); bench/RESULTS.md
 * keeps the runs by hand.
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Effect from "effect/Effect"
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { appendFileSync } from "node:fs"
import * as Os from "node:os"
import { join } from "node:path"
import { readLines } from "../test/shared/fixtures/lines.js"
import * as Postgres from "effect-agent-session-test-support/Postgres"
import { cpuMs, offMainCpuMs } from "./procCpu.js"
import { baseRunnerFlags, defaultRunnerTuning, runnerTuning } from "./runnerFlags.js"

const root = join(import.meta.dirname, "..", "..", "..")
const flag = (name: string, fallback: string): string => {
  const i = process.argv.indexOf(`--${name}`)
  return i >= 0 ? process.argv[i + 1] ?? fallback : fallback
}

interface Proc {
  readonly child: ChildProcess
  readonly nextLine: (predicate: (line: string) => boolean) => Effect.Effect<string>
}

/**
 * How a runner of the floor starts: this file's `runner` (Effect 3); with `--line effect4`, the
 * Effect 4 runner (the Effect 4 cluster's copy of `test/shared/fixtures/floorRunner.ts`: `effect/cluster` 4.1 with
 * the Effect 4 `NodeClusterSessions`'s settings) under Node 22. The driver below is the same for both.
 */
const runnerCommand = (): readonly [string, ReadonlyArray<string>] => {
  if (flag("line", "effect3") !== "effect4") {
    return [process.execPath, ["--import", "tsx", join("packages", "cluster", "test", "shared", "fixtures", "floorRunner.ts")]]
  }
  const printed = execFileSync(process.execPath, [join("packages", "effect4", "scripts", "node22.mjs"), "--print-node"], { cwd: root, encoding: "utf8" })
  return [printed.trim().split("\n").at(-1)!, [
    "--conditions=effect-agent-session-source",
    "--import",
    "tsx",
    join("packages", "effect4", "cluster", "test", "shared", "fixtures", "floorRunner.ts")
  ]]
}

const spawnRunner = (url: string, port: number, workMs: number, retainKib: number) =>
  Effect.acquireRelease(
    Effect.sync((): Proc => {
      const [command, args] = runnerCommand()
      const child = spawn(command, [...baseRunnerFlags, ...runnerTuning(flag("runner-flags", defaultRunnerTuning)), ...args], {
        cwd: root,
        env: { ...process.env, CLUSTER_DATABASE_URL: url, RUNNER_PORT: String(port), WORK_MS: String(workMs), RETAIN_KIB: String(retainKib) },
        stdio: ["pipe", "pipe", "pipe"]
      })
      const log = join(Os.tmpdir(), `eas-cluster-floor-${child.pid}.err`)
      child.stderr!.on("data", (chunk: Buffer) => appendFileSync(log, chunk))
      const lines = readLines(child.stdout!, (line) => {
        if (!/^(count|since|heap) /.test(line) && line !== "ready") appendFileSync(log, line + "\n")
      })
      return { child, nextLine: lines.nextLine }
    }),
    (proc) => Effect.sync(() => proc.child.kill("SIGKILL"))
  )

const median = (xs: ReadonlyArray<number>): number => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length === 0 ? Number.NaN : s[Math.floor(s.length / 2)]!
}
const quantile = (xs: ReadonlyArray<number>, q: number): number => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length === 0 ? Number.NaN : s[Math.min(s.length - 1, Math.floor(s.length * q))]!
}

let tags = 0
const ask = (proc: Proc, command: string) => {
  const tag = String(++tags)
  const [word, ...rest] = command.split(" ")
  proc.child.stdin!.write(`${[word, tag, ...rest].join(" ")}\n`)
  return Effect.map(proc.nextLine((line) => line.startsWith(`${word} ${tag} `)), (line) => line.slice(`${word} ${tag} `.length))
}

const main = Effect.scoped(Effect.gen(function*() {
  const entities = Number(flag("entities", "10000"))
  const workMs = Number(flag("work-ms", "0"))
  const retainKib = Number(flag("retain-kib", "0"))
  const pg = yield* Postgres.start
  const ports = [yield* Postgres.freePort, yield* Postgres.freePort, yield* Postgres.freePort]
  // One after another: the first creates the tables (no start-up lock here).
  const runners: Array<Proc> = []
  for (const port of ports) {
    const proc = yield* spawnRunner(pg.url, port, workMs, retainKib)
    yield* proc.nextLine((l) => l === "ready")
    runners.push(proc)
  }
  const heaps = (): Effect.Effect<ReadonlyArray<number>> =>
    Effect.forEach(runners, (r) => Effect.map(ask(r, "heap"), Number), { concurrency: 1 })
  const idleHeap = yield* heaps()
  const startedAt = Date.now()
  // The requests are sent by a runner (a member of the cluster on the runners' line), as a client would.
  yield* ask(runners[0]!, `send ${entities}`)
  const counts = (): Effect.Effect<ReadonlyArray<number>> =>
    Effect.forEach(runners, (r) => Effect.map(ask(r, "count"), Number), { concurrency: "unbounded" })
  let held = yield* counts()
  while (held.reduce((a, b) => a + b, 0) < entities) {
    yield* Effect.sleep("500 millis")
    held = yield* counts()
  }
  const startSeconds = (Date.now() - startedAt) / 1000
  const heldHeap = yield* heaps()
  const heapPerEntity = heldHeap.reduce((a, b, i) => a + b - idleHeap[i]!, 0) / entities
  // Settle: the survivors idle before the kill.
  yield* Effect.sleep("5 seconds")
  const victimIndex = held.indexOf(Math.max(...held))
  const moved = held[victimIndex]!
  const survivors = runners.filter((_, i) => i !== victimIndex)
  const cpuBefore = survivors.map((r) => cpuMs(r.child.pid))
  const offMainBefore = survivors.map((r) => offMainCpuMs(r.child.pid))
  const killedAt = Date.now()
  runners[victimIndex]!.child.kill("SIGKILL")
  let arrivals: Array<number> = []
  const deadline = killedAt + 120_000
  while (arrivals.length < moved && Date.now() < deadline) {
    yield* Effect.sleep("250 millis")
    const lists = yield* Effect.forEach(survivors, (r) => ask(r, `since ${killedAt}`), { concurrency: "unbounded" })
    arrivals = lists.flatMap((l) => JSON.parse(l) as Array<number>)
  }
  const cpuAfter = survivors.map((r) => cpuMs(r.child.pid))
  const offMain = survivors.reduce((a, r, i) => a + offMainCpuMs(r.child.pid) - offMainBefore[i]!, 0)
  const lastAt = Math.max(...arrivals)
  const sinceKill = arrivals.map((t) => t - killedAt)
  const cpu = cpuAfter.reduce((a, b, i) => a + b - cpuBefore[i]!, 0)
  const rows = [
    ["entities (one persisted request held each)", entities],
    ["started, all held", `${startSeconds.toFixed(1)} s`],
    ["heap per held entity (after a full collection)", `${(heapPerEntity / 1024).toFixed(1)} KiB`],
    ["held by the killed runner", moved],
    ["requests back on a survivor", `${arrivals.length}/${moved}`],
    ["work per entity on arrival (busy CPU)", `${workMs} ms`],
    ["memory each entity keeps on arrival (small objects)", `${retainKib} KiB`],
    ["kill to request back: median", `${median(sinceKill).toFixed(0)} ms`],
    ["... p10 / p90 / max", `${quantile(sinceKill, 0.1).toFixed(0)} / ${quantile(sinceKill, 0.9).toFixed(0)} / ${Math.max(...sinceKill).toFixed(0)} ms`],
    ["survivors' CPU from the kill to the last arrival", `${(cpu / 1000).toFixed(1)} s over ${((lastAt - killedAt) / 1000).toFixed(1)} s`],
    ["... per entity moved", `${(cpu / Math.max(1, arrivals.length)).toFixed(2)} ms`],
    ["... of it off the main threads (V8's helper threads)", `${(offMain / Math.max(1, arrivals.length)).toFixed(2)} ms`]
  ]
  const table = ["| measure | value |", "| --- | --- |", ...rows.map(([k, v]) => `| ${k} | ${v} |`)].join("\n")
  yield* Effect.sync(() => process.stdout.write(`${table}\n`))
}))

NodeRuntime.runMain(main)
