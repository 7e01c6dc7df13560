/**
 * What a held session costs on a runner: one runner process (run with `--expose-gc`) holds N
 * sessions (`--steps 200,1000`), with or without a subscriber per session (`--follow`); at each
 * step the runner is measured after a full garbage collection (`process.memoryUsage()`: RSS,
 * heap used, external, array buffers), and with `--snap <dir>` a heap snapshot is written there
 * (read it with `npx tsx bench/heapSummary.ts <before> <after>`).
 *
 * Real parts as in packages/cluster/bench/cluster.ts: PostgreSQL, the simulator in its own process (one event
 * every `--frame-ms`, 10 s by default, so every session stays open), the runner fixture of
 * test/cluster. This process is the client-only member that starts the sessions (and follows
 * them with `--follow`).
 *
 *   npx tsx packages/cluster/bench/clusterProfile.ts [--steps 200,1000] [--follow] [--frame-ms 10000] [--snap <dir>]
 */
import { type ChildProcess, fork, spawn } from "node:child_process"
import { join } from "node:path"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as PgClient from "@effect/sql-pg/PgClient"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"
import { ClusterSessions, NodeClusterSessions } from "../src/index.js"
import { NodeAgentSessions } from "effect-agent-session"
import { readLines } from "../test/shared/fixtures/lines.js"
import { fixtureEnv } from "../test/shared/fixtures/process.js"
import * as Postgres from "effect-agent-session-test-support/Postgres"

const root = join(import.meta.dirname, "..", "..", "..")
const flag = (name: string, fallback: string): string => {
  const i = process.argv.indexOf(`--${name}`)
  return i >= 0 ? process.argv[i + 1] ?? fallback : fallback
}
const STEPS = flag("steps", "200,1000").split(",").map(Number)
const FOLLOW = process.argv.includes("--follow")
const FRAME_MS = Number(flag("frame-ms", "10000"))
const SNAP = flag("snap", "")
/** The floor: the plain SDK holding the sessions (packages/cluster/bench/clusterProfileSdk.ts), no cluster. */
const PLAIN = process.argv.includes("--plain")

interface Memory {
  readonly rss: number
  readonly heapTotal: number
  readonly heapPhysical: number
  readonly malloced: number
  readonly heapUsed: number
  readonly external: number
  readonly arrayBuffers: number
}

const simulatorProcess = Effect.acquireRelease(
  Effect.async<{ readonly child: ChildProcess; readonly ready: { baseUrl: string; wsUrl: string; accountKey: string } }>((resume) => {
    const child = fork(join(root, "packages", "cluster", "bench", "clusterSimulator.ts"), ["60", String(FRAME_MS)], {
      execArgv: ["--import", "tsx"],
      stdio: ["ignore", "inherit", "inherit", "ipc"]
    })
    child.on("message", (message: { type?: string; baseUrl?: string; wsUrl?: string; accountKey?: string }) => {
      if (message.type === "ready") resume(Effect.succeed({ child, ready: message as { baseUrl: string; wsUrl: string; accountKey: string } }))
    })
  }),
  ({ child }) => Effect.sync(() => child.kill("SIGKILL"))
)

const runnerProcess = (env: NodeJS.ProcessEnv) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const file = PLAIN ? join("packages", "cluster", "bench", "clusterProfileSdk.ts") : join("packages", "cluster", "test", "fixtures", "runner.ts")
      const child = spawn(process.execPath, ["--expose-gc", "--import", "tsx", file], {
        cwd: root,
        env: { ...process.env, ...env },
        stdio: ["pipe", "pipe", "inherit"]
      })
      return { child, lines: readLines(child.stdout!) }
    }),
    ({ child }) => Effect.sync(() => child.kill("SIGKILL"))
  )

const MiB = 1024 * 1024

const program = Effect.scoped(Effect.gen(function*() {
  const simulator = yield* simulatorProcess
  const pg = yield* Postgres.start
  const env = fixtureEnv(simulator.ready, pg.url)
  const port = yield* Postgres.freePort
  const runner = yield* runnerProcess({ ...env, RUNNER_PORT: String(port) })
  yield* runner.lines.nextLine((l) => l === "ready")
  let tags = 0
  const ask = (command: string, extra = "") =>
    Effect.suspend(() => {
      const tag = String(++tags)
      runner.child.stdin!.write(`${command} ${tag}${extra}\n`)
      return runner.lines.nextLine((l) => l === `${command} ${tag}` || l.startsWith(`${command} ${tag} `)).pipe(
        Effect.map((l) => l.slice(`${command} ${tag}`.length).trim())
      )
    })
  const mem = Effect.map(ask("mem"), (json) => JSON.parse(json) as Memory)
  // The plain SDK counts the sessions it holds; a runner holds those whose run is there: the
  // sessions whose log it claims (an entity lasts from a command until it has been idle for its
  // `maxIdleTime`, not for the whole run).
  const count = PLAIN
    ? Effect.map(ask("count"), Number)
    : Effect.suspend(() =>
      Effect.map(
        sql<{ readonly n: string }>`SELECT count(*) AS n FROM agent_session_sessions WHERE end_status IS NULL AND writer IS NOT NULL`,
        (rows) => Number(rows[0]?.n ?? 0)
      )
    )

  const admin = yield* Layer.build(PgClient.layer({ url: Redacted.make(pg.url), maxConnections: 1 }))
  const sql = yield* Effect.provide(SqlClient.SqlClient, admin)
  const logged = Effect.map(
    sql<{ readonly n: string }>`SELECT count(DISTINCT session_id) AS n FROM agent_session_events`,
    (rows) => Number(rows[0]?.n ?? 0)
  )

  const client = yield* Layer.build(
    // The runners' secret (else every connection to a runner is refused).
    NodeClusterSessions.layerClient({ databaseUrl: pg.url, secret: env.CLUSTER_SECRET, maxConnections: 4 }).pipe(
      Layer.provide(NodeAgentSessions.layer({
        apiKey: simulator.ready.accountKey,
        baseUrl: simulator.ready.baseUrl,
        wsUrl: simulator.ready.wsUrl
      }))
    )
  )
  const sessions = yield* Effect.provide(ClusterSessions.ClusterSessions, client)
  let started = 0
  /** Starts that failed at the service (counted, not held: the run goes on without them). */
  let failed = 0
  /** Holds `n` sessions in all, each one connected (its first event received or persisted). */
  const holdUntil = (n: number) =>
    PLAIN
      ? Effect.asVoid(ask("hold", ` ${n}`))
      : Effect.gen(function*() {
        yield* Effect.forEach(
          Array.from({ length: n - started }, (_, k) => started + k),
          (i) =>
            Effect.flatMap(
              sessions.start({ start_url: `https://example.com/${i}`, max_actions: 100, goal: `Goal ${i}` }),
              (info) => FOLLOW ? Effect.forkDaemon(Stream.runDrain(sessions.events(info.session_id))) : Effect.void
            ).pipe(Effect.catchAll((error) =>
              Effect.sync(() => {
                failed += 1
                process.stderr.write(`start ${i}: ${error._tag}\n`)
              })
            )),
          { concurrency: 50, discard: true }
        )
        while ((yield* logged) < n - failed) yield* Effect.sleep("250 millis")
      })

  // Warm-up: one session, so that code loaded and compiled on first use is in the baseline.
  yield* holdUntil(1)
  started = 1
  yield* Effect.sleep("1 second")
  const idle = yield* mem
  if (SNAP !== "") yield* ask("snap", ` ${join(SNAP, "runner-1.heapsnapshot")}`)

  const rows: Array<string> = []
  let previous = { held: 1, memory: idle }
  for (const step of STEPS) {
    yield* holdUntil(step)
    started = step
    yield* Effect.sleep("2 seconds")
    const held = yield* count
    const memory = yield* mem
    if (SNAP !== "") yield* ask("snap", ` ${join(SNAP, `runner-${step}.heapsnapshot`)}`)
    const per = (key: keyof Memory, from: { held: number; memory: Memory }) =>
      ((memory[key] - from.memory[key]) / (held - from.held) / 1024).toFixed(1)
    rows.push(
      `| ${step} | ${held} | ${(memory.rss / MiB).toFixed(0)} | ${(memory.heapUsed / MiB).toFixed(0)} | ${per("rss", { held: 1, memory: idle })} | ${
        per("rss", previous)
      } | ${per("heapUsed", previous)} | ${per("heapPhysical", previous)} | ${per("malloced", previous)} | ${per("external", previous)} |`
    )
    previous = { held, memory }
    process.stdout.write(rows[rows.length - 1] + "\n")
  }
  const table = [
    `${PLAIN ? "The plain SDK (no cluster)" : "One runner"}, ${FOLLOW ? "a subscriber per session (in another process)" : "no subscriber"}; one event every ${FRAME_MS} ms; idle: RSS ${
      (idle.rss / MiB).toFixed(0)
    } MiB, heap ${(idle.heapUsed / MiB).toFixed(0)} MiB (after a full GC).`,
    "",
    "| sessions | held | RSS (MiB) | heap used (MiB) | KiB RSS per session (from idle) | KiB RSS per session (this step) | KiB heap used | KiB heap (physical) | KiB malloced by V8 | KiB external |",
    "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ...rows
  ].join("\n")
  process.stdout.write("\n" + table + "\n")
}))

program.pipe(NodeRuntime.runMain)
