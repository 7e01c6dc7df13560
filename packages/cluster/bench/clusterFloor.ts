/**
 * The floor of a take-over: what `@effect/cluster` alone costs to move the entities of a killed
 * runner onto the survivors, on this machine, with the settings of `NodeClusterSessions`
 * (`defaultShardingConfig`, `defaultDetection`, the peers' watch, PostgreSQL storage,
 * `NodeClusterSocket`). Each entity holds one persisted request, as a session holds its `Start`
 * for its run, and does nothing else: no log, no service, no channel. The survivors record when
 * each moved entity got its request again; the median of those times since the kill is the
 * fastest a session could come back at this size, whatever the session does.
 *
 * Three runner processes (this file with `runner`), the first of which sends the requests
 * (`discard`: a member of the cluster, as a client would), then the runner holding the most is
 * killed (`SIGKILL`).
 *
 *   npx tsx packages/cluster/bench/clusterFloor.ts [--line effect3|effect4] [--entities 10000] [--work-ms 0] [--retain-kib 0]
 *
 * `--line effect4` measures `effect/cluster` 4.1 instead: the runners are
 * `packages/effect4/cluster/bench/clusterFloorRunner.ts` (the same entity, with the Effect 4
 * `NodeClusterSessions`'s settings) under Node 22; this process drives them as it drives its own.
 *
 * `--work-ms` makes each entity spend that much CPU (a busy loop) when its request arrives, to
 * see how the take-over's median grows with the work a session does there; `--retain-kib`
 * makes each keep that much memory in small objects (a session's state), for the cost of a
 * larger heap to collect.
 *
 * Prints a table (markdown); bench/RESULTS.md keeps the runs by hand.
 */
import * as ClusterSchema from "@effect/cluster/ClusterSchema"
import * as Entity from "@effect/cluster/Entity"
import { RunnerAddress } from "@effect/cluster/RunnerAddress"
import * as Sharding from "@effect/cluster/Sharding"
import * as ShardingConfig from "@effect/cluster/ShardingConfig"
import * as SqlMessageStorage from "@effect/cluster/SqlMessageStorage"
import * as SqlRunnerStorage from "@effect/cluster/SqlRunnerStorage"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Rpc from "@effect/rpc/Rpc"
import * as RpcSerialization from "@effect/rpc/RpcSerialization"
import * as PgClient from "@effect/sql-pg/PgClient"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { appendFileSync, readFileSync } from "node:fs"
import * as Os from "node:os"
import { join } from "node:path"
import { createInterface } from "node:readline"
import { defaultDetection, defaultShardingConfig } from "../src/NodeClusterSessions.js"
import { socketSharding } from "../binding/internal/socketSharding.js"
import { readLines } from "../test/shared/fixtures/lines.js"
import * as Postgres from "effect-agent-session-test-support/Postgres"

const root = join(import.meta.dirname, "..", "..", "..")
const flag = (name: string, fallback: string): string => {
  const i = process.argv.indexOf(`--${name}`)
  return i >= 0 ? process.argv[i + 1] ?? fallback : fallback
}

const Hold = Rpc.make("Hold", {
  payload: { id: Schema.String },
  primaryKey: (payload) => `hold/${payload.id}`
}).annotate(ClusterSchema.Persisted, true)

const Floor = Entity.make("Floor", [Hold])

const storage = (url: string) =>
  Layer.merge(SqlMessageStorage.layer, SqlRunnerStorage.layer).pipe(
    Layer.provide(PgClient.layer({ url: Redacted.make(url), maxConnections: 8 }))
  )

/** A runner: the engine, the storage and the detection of `NodeClusterSessions.layerRunner`, and the `Floor` entity. */
const runner = Effect.gen(function*() {
  const port = Number(process.env["RUNNER_PORT"])
  const workMs = Number(process.env["WORK_MS"] ?? "0")
  const retainKib = Number(process.env["RETAIN_KIB"] ?? "0")
  /** What the entities keep (`--retain-kib`): small objects, as a session's state is. */
  const kept: Array<unknown> = []
  /** When each request arrived here (ms since the epoch). */
  const arrivals: Array<number> = []
  const busy = (ms: number) => {
    const until = performance.now() + ms
    while (performance.now() < until) {
      // CPU the session would spend
    }
  }
  const FloorLive = Floor.toLayer({
    Hold: () =>
      Effect.zipRight(
        Effect.sync(() => {
          if (workMs > 0) busy(workMs)
          if (retainKib > 0) {
            // About 64 bytes an object (a small object with a closure and an array of two).
            const objects: Array<unknown> = []
            for (let i = 0; i < retainKib * 16; i++) objects.push({ i, f: () => i, a: [i, i] })
            kept.push(objects)
          }
          arrivals.push(Date.now())
        }),
        Effect.never
      )
  })
  const live = FloorLive.pipe(
    Layer.provideMerge(socketSharding(defaultDetection)),
    Layer.provide(storage(process.env["CLUSTER_DATABASE_URL"] ?? "")),
    Layer.provide(ShardingConfig.layerFromEnv({
      ...defaultShardingConfig,
      runnerAddress: Option.some(RunnerAddress.make({ host: "127.0.0.1", port }))
    })),
    Layer.provide(RpcSerialization.layerMsgPack)
  )
  const context = yield* Layer.build(live)
  const engine = Context.get(context, Sharding.Sharding)
  const makeClient = yield* Effect.provide(Floor.client, context)
  process.stdout.write("ready\n")
  // `count <tag>`: the entities active here; `since <tag> <ms>`: the arrivals at or after <ms>;
  // `heap <tag>`: the heap in use; `send <tag> <n>`: the entities' requests.
  createInterface({ input: process.stdin }).on("line", (line) => {
    const [word, tag, at] = line.trim().split(" ")
    if (word === "count") {
      void Effect.runPromise(engine.activeEntityCount).then((n) => process.stdout.write(`count ${tag} ${n}\n`))
    } else if (word === "heap") {
      // After a full collection (the runner runs with --expose-gc): the heap in use, in bytes.
      globalThis.gc?.()
      process.stdout.write(`heap ${tag} ${process.memoryUsage().heapUsed}\n`)
    } else if (word === "send") {
      // `send <tag> <n>`: the requests of entities floor-0 .. floor-<n-1>, sent from here (a member of the cluster).
      const ids = Array.from({ length: Number(at) }, (_, i) => `floor-${i}`)
      void Effect.runPromise(
        Effect.forEach(ids, (id) => makeClient(id).Hold({ id }, { discard: true }), { concurrency: 50, discard: true })
      ).then(() => process.stdout.write(`send ${tag} ${ids.length}\n`))
    } else if (word === "since") {
      const from = Number(at)
      process.stdout.write(`since ${tag} ${JSON.stringify(arrivals.filter((t) => t >= from))}\n`)
    }
  })
  return yield* Effect.never
})

interface Proc {
  readonly child: ChildProcess
  readonly nextLine: (predicate: (line: string) => boolean) => Effect.Effect<string>
}

/**
 * How a runner of the floor starts: this file's `runner` (Effect 3); with `--line effect4`, the
 * Effect 4 runner (`packages/effect4/cluster/bench/clusterFloorRunner.ts`, `effect/cluster` 4.1 with
 * the Effect 4 `NodeClusterSessions`'s settings) under Node 22. The driver below is the same for both.
 */
const runnerCommand = (): readonly [string, ReadonlyArray<string>] => {
  if (flag("line", "effect3") !== "effect4") return [process.execPath, ["--import", "tsx", join("packages", "cluster", "bench", "clusterFloor.ts"), "runner"]]
  const printed = execFileSync(process.execPath, [join("packages", "effect4", "scripts", "node22.mjs"), "--print-node"], { cwd: root, encoding: "utf8" })
  return [printed.trim().split("\n").at(-1)!, [
    "--conditions=effect-agent-session-source",
    "--import",
    "tsx",
    join("packages", "effect4", "cluster", "bench", "clusterFloorRunner.ts")
  ]]
}

const spawnRunner = (url: string, port: number, workMs: number, retainKib: number) =>
  Effect.acquireRelease(
    Effect.sync((): Proc => {
      const [command, args] = runnerCommand()
      const child = spawn(command, ["--expose-gc", "--max-old-space-size=8192", ...args], {
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

/** CPU time (user + system) of a process so far, in ms (Linux, /proc; clock ticks of 10 ms). */
const cpuMs = (pid: number | undefined): number => {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")
    return (Number(fields[11]) + Number(fields[12])) * 10
  } catch {
    return Number.NaN
  }
}

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
    ["... per entity moved", `${(cpu / Math.max(1, arrivals.length)).toFixed(2)} ms`]
  ]
  const table = ["| measure | value |", "| --- | --- |", ...rows.map(([k, v]) => `| ${k} | ${v} |`)].join("\n")
  yield* Effect.sync(() => process.stdout.write(`${table}\n`))
}))

if (process.argv[2] === "runner") {
  NodeRuntime.runMain(Effect.scoped(runner))
} else {
  NodeRuntime.runMain(main)
}
