/**
 * The cluster benchmark: sessions held per runner (RSS per held session at several sizes), and
 * failover time (SIGKILL of a runner to the next event delivered, to a subscriber in another
 * process, for each session it held), with the loss window counted.
 *
 * Real parts, as in packages/cluster/test/shared/failover.e2e.test.ts: PostgreSQL (test-support's Postgres.ts),
 * the simulator in its own process (packages/cluster/bench/clusterSimulator.ts), three runner processes and a
 * client process (the fixtures of that test, the client in `MODE=stream`). Sessions stream
 * without pause (no request; one event every `frame-ms`), so the kill lands mid-stream: events
 * the service had flushed to the dead runner and that it had not yet persisted are lost (the
 * service numbers nothing and resumes after what it flushed); the benchmark counts them against
 * the simulator's script. Two runs:
 *
 * - failover: `--sessions` (200) sessions, one event every `--frame-ms` (1000) ms; the runner
 *   holding the most is killed; the detection's cost is watched (runners marked unhealthy while
 *   alive: false positives, from `cluster_runners`, polled every 250 ms).
 * - scale: sessions started in steps (`--curve 1000,5000,10000`), one event every
 *   `--curve-frame-ms` (10000) ms; at each step the RSS and the sessions held of each runner;
 *   then the runner holding the most is killed and the loss counted as above.
 *
 * Each measure of RSS after a full garbage collection freezes the runner for as long as the
 * collection takes (a second or more at 10,000 sessions), and its peers may mark it unhealthy:
 * such marks are counted apart from the false positives, and the kill waits until every runner
 * has been seen healthy again for a second.
 *
 *   npx tsx packages/cluster/bench/cluster.ts [--sessions 200] [--frame-ms 1000] [--curve 1000,5000,10000] [--curve-frame-ms 10000] [--curve-actions 120] [--curve-follow-every 10] [--client-nice 0] [--runner-node-options "..."] [--only failover|scale] [--profile <dir> [--profile-ms 10000]]
 *
 * Writes the section between `<!-- cluster:begin -->` and `<!-- cluster:end -->` of
 * bench/RESULTS.md (appended when missing) and prints it.
 */
import { type ChildProcess, fork, spawn } from "node:child_process"
import { appendFileSync, readFileSync, writeFileSync } from "node:fs"
import * as Os from "node:os"
import { join } from "node:path"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as PgClient from "@effect/sql-pg/PgClient"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Schedule from "effect/Schedule"
import { NodeClusterSessions } from "../src/index.js"
import { fixtureCommand } from "../test/helpers/processLine.js"
import { readLines } from "../test/shared/fixtures/lines.js"
import { type ClientDone, decodeEvents, fixtureEnv } from "../test/shared/fixtures/process.js"
import * as Postgres from "effect-agent-session-test-support/Postgres"

const root = join(import.meta.dirname, "..", "..", "..")
const flag = (name: string, fallback: string): string => {
  const i = process.argv.indexOf(`--${name}`)
  return i >= 0 ? process.argv[i + 1] ?? fallback : fallback
}
const SESSIONS = Number(flag("sessions", "200"))
const FRAME_MS = Number(flag("frame-ms", "1000"))
const CURVE = flag("curve", "1000,5000,10000").split(",").map(Number)
const CURVE_FRAME_MS = Number(flag("curve-frame-ms", "10000"))
/** Actions per session of the scale run: long enough that the first sessions still run when the last start. */
const CURVE_ACTIONS = Number(flag("curve-actions", "120"))
/**
 * The scale run follows every k-th session live (a subscriber in the client process; 10 by
 * default): 10,000 subscribers in one client process measure that process, not the runners.
 * The others' logs are read once they ended; every session's losses and repeats are counted.
 */
const CURVE_FOLLOW_EVERY = Number(flag("curve-follow-every", "10"))
const ONLY = flag("only", "")
/**
 * Where to write a CPU profile of each survivor over the take-over (`--profile <dir>`: from just
 * before the kill, for `--profile-ms` ms, 10000 by default), for reading in Chrome's DevTools.
 */
const PROFILE_DIR = flag("profile", "")
const PROFILE_MS = Number(flag("profile-ms", "10000"))
/**
 * The client process's niceness (`--client-nice`, 0 by default; `os.setPriority`). The client and
 * its subscribers are the benchmark's, not the cluster's, yet on this machine they share its
 * cores with the runners: a quarter of the CPU at 10,000 sessions (docs/scale-out.md). With 10,
 * the client yields the CPU to the cluster whenever both want it, as a client on another machine
 * would.
 */
const CLIENT_NICE = Number(flag("client-nice", "0"))
/**
 * Node options for the runner processes (`--runner-node-options "--max-semi-space-size=64"`,
 * none by default): the settings an operator would give its runners, measured here.
 */
const RUNNER_NODE_OPTIONS = flag("runner-node-options", "").split(" ").filter((o) => o !== "")

interface Proc {
  readonly child: ChildProcess
  /** The file the child's standard error and its log lines go to. */
  readonly log: string
  readonly nextLine: (predicate: (line: string) => boolean) => Effect.Effect<string, Error>
}

const fixture = (file: string, env: NodeJS.ProcessEnv, nodeOptions: ReadonlyArray<string> = []) =>
  Effect.acquireRelease(
    Effect.sync((): Proc => {
      const args = ["--max-old-space-size=8192", "--expose-gc", ...nodeOptions, ...fixtureCommand(file).args]
      const child = spawn(process.execPath, args, {
        cwd: root,
        env: { ...process.env, ...env },
        stdio: ["pipe", "pipe", "pipe"]
      })
      // Each child's standard error, kept in a file named here (a child that dies says why there).
      const log = join(Os.tmpdir(), `eas-cluster-bench-${file}-${child.pid}.err`)
      child.stderr!.on("data", (chunk: Buffer) => appendFileSync(log, chunk))
      child.once("exit", (code, signal) => {
        if (code !== 0 && signal !== "SIGKILL") process.stderr.write(`${file} (${child.pid}) exited: ${code ?? signal}; see ${log}\n`)
      })
      // Its logs go to standard output too (Effect's default logger): kept with its errors.
      const lines = readLines(child.stdout!, (line) => {
        if (!line.startsWith("{") && !line.startsWith("count ") && line !== "ready") appendFileSync(log, line + "\n")
      })
      const exited = Effect.async<never, Error>((resume) => {
        const fail = () => resume(Effect.fail(new Error(`${file} (${child.pid}) exited; see ${log}`)))
        if (child.exitCode !== null || child.signalCode !== null) return fail()
        child.once("exit", fail)
      })
      // A line that never comes from a child that died: fail, do not wait for ever.
      const nextLine = (predicate: (line: string) => boolean) => Effect.raceFirst(lines.nextLine(predicate), exited)
      return { child, log, nextLine }
    }),
    (proc) => Effect.sync(() => proc.child.kill("SIGKILL"))
  )

interface SimulatorProc {
  readonly baseUrl: string
  readonly wsUrl: string
  readonly accountKey: string
  readonly script: (id: string) => Effect.Effect<{ readonly events: ReadonlyArray<unknown>; readonly answers: number }>
}

/** The simulator in its own process. */
const simulatorProcess = (actions: number, frameMs: number) =>
  Effect.acquireRelease(
    Effect.async<{ readonly child: ChildProcess; readonly ready: { baseUrl: string; wsUrl: string; accountKey: string } }>((resume) => {
      const child = fork(join(root, "packages", "cluster", "bench", "clusterSimulator.ts"), [String(actions), String(frameMs)], {
        execArgv: ["--import", "tsx"],
        stdio: ["ignore", "inherit", "inherit", "ipc"]
      })
      const onMessage = (message: { type?: string; baseUrl?: string; wsUrl?: string; accountKey?: string }) => {
        if (message.type === "ready") {
          child.off("message", onMessage)
          resume(Effect.succeed({ child, ready: message as { baseUrl: string; wsUrl: string; accountKey: string } }))
        }
      }
      child.on("message", onMessage)
    }),
    ({ child }) => Effect.sync(() => child.kill("SIGKILL"))
  ).pipe(Effect.map(({ child, ready }): SimulatorProc => {
    const waiting = new Map<string, (value: { events: ReadonlyArray<unknown>; answers: number }) => void>()
    child.on("message", (message: { type?: string; id?: string; events?: ReadonlyArray<unknown>; answers?: number }) => {
      if (message.type === "script" && message.id !== undefined) {
        waiting.get(message.id)?.({ events: message.events ?? [], answers: message.answers ?? 0 })
        waiting.delete(message.id)
      }
    })
    return {
      ...ready,
      script: (id) =>
        Effect.async((resume) => {
          waiting.set(id, (value) => resume(Effect.succeed(value)))
          child.send({ type: "script", id })
        })
    }
  }))

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

let countTag = 0
/** Each runner's RSS in MiB after a full garbage collection (its `mem` command; the runners run with `--expose-gc`). */
const rssAfterGc = (runners: ReadonlyArray<Proc>) =>
  Effect.forEach(runners, (runner) => {
    const tag = `gc${++countTag}`
    runner.child.stdin!.write(`mem ${tag}\n`)
    return runner.nextLine((line) => line.startsWith(`mem ${tag} `)).pipe(
      Effect.map((line) => (JSON.parse(line.slice(`mem ${tag} `.length)) as { readonly rss: number }).rss / (1024 * 1024)),
      Effect.timeout("120 seconds"),
      Effect.orElseSucceed(() => Number.NaN)
    )
    // One runner at a time: a full collection pauses the runner, and its peers must answer its pings.
  }, { concurrency: 1 })

/** The entities active on each runner (its sessions held). */
const heldBy = (runners: ReadonlyArray<Proc>) =>
  Effect.forEach(runners, (runner) => {
    const tag = String(++countTag)
    runner.child.stdin!.write(`count ${tag}\n`)
    return runner.nextLine((line) => line.startsWith(`count ${tag} `)).pipe(
      Effect.map((line) => Number(line.split(" ")[2])),
      Effect.timeout("60 seconds"),
      Effect.orElseSucceed(() => Number.NaN)
    )
  }, { concurrency: "unbounded" })

interface RunResult {
  readonly sessions: number
  readonly frameMs: number
  readonly actions: number
  readonly followEvery: number
  readonly seconds: number
  readonly ports: ReadonlyArray<number>
  readonly victim: number
  readonly idleRss: ReadonlyArray<number>
  readonly steps: ReadonlyArray<{
    readonly sessions: number
    readonly held: ReadonlyArray<number>
    readonly rss: ReadonlyArray<number>
    /** The same runners' RSS right after, once each has run a full garbage collection. */
    readonly rssGc: ReadonlyArray<number>
  }>
  /** The runners' idle RSS after a full garbage collection. */
  readonly idleRssGc: ReadonlyArray<number>
  readonly failover: ReadonlyArray<number>
  /** For each session moved: kill to its run resumed on another runner (that runner's log line). */
  readonly resumed: ReadonlyArray<number>
  /** Kill to the killed runner marked unhealthy by a survivor (its log line). */
  readonly marked: number
  /** For each session moved: its run resumed to the next event delivered to the client. */
  readonly resumeToEvent: ReadonlyArray<number>
  readonly complete: number
  readonly contiguous: number
  readonly lost: number
  readonly lostMoved: number
  readonly repeated: number
  readonly falsePositives: number
  readonly healthPolls: number
  /** Runners seen unhealthy while the benchmark froze them with a full collection (polls × runners). */
  readonly frozenMarks: number
  readonly clientNice: number
  readonly runnerNodeOptions: ReadonlyArray<string>
}

const runOnce = (options: {
  readonly sessions: number
  readonly frameMs: number
  readonly actions: number
  readonly milestones: ReadonlyArray<number>
  readonly followEvery: number
}) =>
  Effect.scoped(Effect.gen(function*() {
    const startedAt = Date.now()
    const simulator = yield* simulatorProcess(options.actions, options.frameMs)
    const pg = yield* Postgres.start
    const env = fixtureEnv(simulator, pg.url)
    const ports = [yield* Postgres.freePort, yield* Postgres.freePort, yield* Postgres.freePort]
    const runners = yield* Effect.forEach(ports, (port) => fixture("runner.ts", { ...env, RUNNER_PORT: String(port) }, RUNNER_NODE_OPTIONS))
    yield* Effect.forEach(runners, (r) => r.nextLine((l) => l === "ready"), { concurrency: "unbounded" })
    const idleRss = runners.map((r) => rssMiB(r.child.pid))
    const idleRssGc = yield* rssAfterGc(runners)

    // The detection's false positives: a live runner seen unhealthy in the runners' table.
    const admin = yield* Layer.build(PgClient.layer({ url: Redacted.make(pg.url), maxConnections: 1 }))
    const sql = yield* Effect.provide(SqlClient.SqlClient, admin)
    const killed: { address?: string } = {}
    let falsePositives = 0
    let healthPolls = 0
    /** Set while a runner is frozen by a full collection the benchmark asked for (and until every runner is healthy again). */
    let collecting = false
    let frozenMarks = 0
    let unhealthy = 0
    const watcher = yield* sql<{ readonly address: string; readonly healthy: boolean }>`SELECT address, healthy FROM cluster_runners`.pipe(
      Effect.tap((rows) =>
        Effect.sync(() => {
          unhealthy = rows.filter((row) => !row.healthy).length
          if (collecting) {
            frozenMarks += unhealthy
            return
          }
          healthPolls += 1
          for (const row of rows) if (!row.healthy && row.address !== killed.address) falsePositives += 1
        })
      ),
      Effect.ignore,
      Effect.repeat(Schedule.spaced("250 millis")),
      Effect.forkScoped
    )

    // A measure that freezes runners: its marks are counted apart, and it ends once every runner
    // has been seen healthy for a second (4 polls in a row; at most 60 s).
    const allHealthy = Effect.gen(function*() {
      let healthyInARow = 0
      while (healthyInARow < 4) {
        yield* Effect.sleep("250 millis")
        healthyInARow = unhealthy === 0 ? healthyInARow + 1 : 0
      }
    }).pipe(Effect.timeout("60 seconds"), Effect.ignore)
    const collected = <A, E, R>(measure: Effect.Effect<A, E, R>) =>
      Effect.acquireUseRelease(
        Effect.sync(() => {
          collecting = true
        }),
        () => Effect.zipLeft(measure, allHealthy),
        () => Effect.sync(() => {
          collecting = false
        })
      )

    const client = yield* fixture("client.ts", {
      ...env,
      SESSIONS: String(options.sessions),
      MODE: "stream",
      MILESTONES: options.milestones.join(","),
      FOLLOW_EVERY: String(options.followEvery)
    })
    if (CLIENT_NICE !== 0) Os.setPriority(client.child.pid!, CLIENT_NICE)
    const steps: Array<RunResult["steps"][number]> = []
    for (const step of options.milestones.filter((m) => m < options.sessions)) {
      yield* client.nextLine((l) => l.includes(`"type":"milestone","sessions":${step},`))
      const held = yield* heldBy(runners)
      const rss = runners.map((r) => rssMiB(r.child.pid))
      steps.push({ sessions: step, held, rss, rssGc: yield* collected(rssAfterGc(runners)) })
      client.child.stdin!.write("go\n")
    }
    const ready = JSON.parse(yield* client.nextLine((l) => l.includes(`"type":"ready"`))) as {
      readonly runners: ReadonlyArray<string | null>
    }
    {
      const held = yield* heldBy(runners)
      const rss = runners.map((r) => rssMiB(r.child.pid))
      steps.push({ sessions: options.sessions, held, rss, rssGc: yield* collected(rssAfterGc(runners)) })
    }
    const held = new Map<string, number>()
    for (const runner of ready.runners) held.set(String(runner), (held.get(String(runner)) ?? 0) + 1)

    // (A session that already completed reports no runner: "null".)
    const [victimAddress] = [...held.entries()].filter(([address]) => address !== "null").sort((a, b) => b[1] - a[1])[0]!
    const victimIndex = ports.findIndex((port) => victimAddress.endsWith(`:${port}`))
    const victim = runners[victimIndex]!
    const survivors = runners.filter((r) => r !== victim)
    if (PROFILE_DIR !== "") {
      for (const r of survivors) r.child.stdin!.write("prof-start\n")
      yield* Effect.forEach(survivors, (r) => {
        const file = join(PROFILE_DIR, `takeover-${options.sessions}-${r.child.pid}.cpuprofile`)
        return Effect.zipRight(
          Effect.sync(() => r.child.stdin!.write(`prof-stop takeover ${file}\n`)),
          r.nextLine((l) => l === "prof takeover")
        ).pipe(Effect.delay(Duration.millis(PROFILE_MS)))
      }).pipe(Effect.ignore, Effect.forkScoped)
    }
    const killedAt = Date.now()
    process.stderr.write(`killed ${victimAddress} at ${new Date(killedAt).toISOString()}\n`)
    killed.address = victimAddress
    victim.child.kill("SIGKILL")
    client.child.stdin!.write("answer\n")
    const done = JSON.parse(yield* client.nextLine((l) => l.includes(`"type":"done"`))) as ClientDone
    yield* Fiber.interrupt(watcher)

    // When each session ran again after the kill, and when a survivor marked the killed runner
    // unhealthy: the survivors' log lines (the pretty logger: `[HH:MM:SS.mmm] INFO (#fiber): message`,
    // then the annotations indented, one a line).
    const resumedAt = new Map<string, number>()
    let markedAt = Number.POSITIVE_INFINITY
    const clock = (hms: string) => {
      const [h, m, rest] = hms.split(":")
      const at = new Date(killedAt)
      at.setHours(Number(h), Number(m), 0, 0)
      return at.getTime() + Math.round(Number(rest) * 1000)
    }
    for (const runner of runners) {
      if (runner === victim) continue
      let lines: Array<string> = []
      try {
        lines = readFileSync(runner.log, "utf8").split("\n")
      } catch {
        continue
      }
      lines.forEach((line, i) => {
        const m = /^\[(\d\d:\d\d:\d\d\.\d+)\] \w+ \([^)]*\): (.*)$/.exec(line)
        if (m === null) return
        const at = clock(m[1]!)
        if (at < killedAt) return
        if (m[2]!.startsWith(`Runner ${victimAddress} did not answer`)) markedAt = Math.min(markedAt, at)
        if (!m[2]!.startsWith("Session resumed at seq ")) return
        const id = /sessionId: (\S+)/.exec(lines[i + 1] ?? "")?.[1]
        if (id !== undefined && !resumedAt.has(id)) resumedAt.set(id, at)
      })
    }
    const failover: Array<number> = []
    const resumed: Array<number> = []
    const resumeToEvent: Array<number> = []
    let lost = 0
    let lostMoved = 0
    let repeated = 0
    let complete = 0
    let contiguous = 0
    for (const session of done.sessions) {
      if (session.run === "complete") complete += 1
      if (session.seqs.every((seq, i) => seq === i + 1)) contiguous += 1
      const script = decodeEvents((yield* simulator.script(session.id)).events)
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
        const again = resumedAt.get(session.id)
        if (again !== undefined) resumed.push(again - killedAt)
        if (again !== undefined && next !== undefined) resumeToEvent.push(next - again)
      }
    }
    return {
      sessions: options.sessions,
      frameMs: options.frameMs,
      actions: options.actions,
      followEvery: options.followEvery,
      seconds: (Date.now() - startedAt) / 1000,
      ports,
      victim: victimIndex,
      idleRss,
      idleRssGc,
      steps,
      failover,
      resumed,
      marked: markedAt - killedAt,
      resumeToEvent,
      complete,
      contiguous,
      lost,
      lostMoved,
      repeated,
      falsePositives,
      healthPolls,
      frozenMarks,
      clientNice: CLIENT_NICE,
      runnerNodeOptions: RUNNER_NODE_OPTIONS
    } satisfies RunResult
  }))

const row = (cells: ReadonlyArray<string | number>) => `| ${cells.join(" | ")} |`

const failoverRows = (r: RunResult) => [
  row(["sessions moved (held by the killed runner)", r.failover.length]),
  row([
    "failover: kill to the next event delivered to the client (another process)",
    `median ${median(r.failover).toFixed(0)} ms, min ${Math.min(...r.failover).toFixed(0)} ms, max ${Math.max(...r.failover).toFixed(0)} ms`
  ]),
  row(["... of it, kill to the killed runner marked unhealthy (a survivor's log line)", Number.isFinite(r.marked) ? `${r.marked.toFixed(0)} ms` : "-"]),
  row([
    "... of it, kill to the run resumed on another runner (its log line; detection, take-over, `Resume`, reconnection)",
    r.resumed.length === 0
      ? "-"
      : `median ${median(r.resumed).toFixed(0)} ms, min ${Math.min(...r.resumed).toFixed(0)} ms, max ${Math.max(...r.resumed).toFixed(0)} ms (${r.resumed.length} sessions)`
  ]),
  row([
    "... of it, the run resumed to the next event delivered (the service's next frame, persisted, sent to the subscriber)",
    r.resumeToEvent.length === 0 ? "-" : `median ${median(r.resumeToEvent).toFixed(0)} ms, min ${Math.min(...r.resumeToEvent).toFixed(0)} ms, max ${Math.max(...r.resumeToEvent).toFixed(0)} ms`
  ]),
  row(["sessions that reached `complete`", `${r.complete}/${r.sessions}`]),
  row(["logs with contiguous sequence numbers", `${r.contiguous}/${r.sessions}`]),
  row(["events lost (flushed by the service, never persisted): all sessions", r.lost]),
  row(["... of them, sessions of the killed runner (the kill window)", r.lostMoved]),
  row(["... of them, sessions whose shard moved between live runners (rebalancing)", r.lost - r.lostMoved]),
  row(["events delivered twice", r.repeated]),
  row(["runners seen unhealthy while alive (false positives of the detection), polls every 250 ms", `${r.falsePositives} in ${r.healthPolls} polls`]),
  row([
    "... not counted above: runners seen unhealthy while this benchmark froze them for a full collection (its RSS measures)",
    `${r.frozenMarks}`
  ]),
  row(["the client process's niceness (`--client-nice`); the runners' Node options (`--runner-node-options`)", `${r.clientNice}; ${r.runnerNodeOptions.length === 0 ? "none" : r.runnerNodeOptions.join(" ")}`])
]

const program = Effect.gen(function*() {
  const loadBefore = Os.loadavg()
  const failoverRun = ONLY === "scale" ? undefined : yield* runOnce({ sessions: SESSIONS, frameMs: FRAME_MS, actions: 60, milestones: [], followEvery: 1 })
  const curveSessions = Math.max(...CURVE)
  const scaleRun = ONLY === "failover"
    ? undefined
    : yield* runOnce({ sessions: curveSessions, frameMs: CURVE_FRAME_MS, actions: CURVE_ACTIONS, milestones: CURVE.filter((n) => n < curveSessions), followEvery: CURVE_FOLLOW_EVERY })
  const loadAfter = Os.loadavg()
  const cpus = Os.cpus()
  const detection = NodeClusterSessions.defaultDetection
  const config = NodeClusterSessions.defaultShardingConfig
  const ms = (d: Duration.DurationInput | undefined) => d === undefined ? "?" : Duration.format(Duration.decode(d))
  const section = [
    "<!-- cluster:begin -->",
    "## Cluster: sessions per runner and failover (packages/cluster/bench/cluster.ts)",
    "",
    `Run on ${new Date().toISOString()}: ${cpus[0]?.model ?? "?"}, ${cpus.length} cores, shared with other work (load average ${
      loadBefore[0]!.toFixed(1)
    } before, ${loadAfter[0]!.toFixed(1)} after), Node ${process.version}. PostgreSQL (local, fsync off), the simulator (its own`,
    "process), 3 runner processes and 1 client process on this one machine; sessions stream without pause (no request); the",
    "runner holding the most sessions is killed with SIGKILL mid-stream.",
    "",
    `Detection: health checks every ${ms(config.runnerHealthCheckInterval)}, a ping times out after ${ms(detection.pingTimeout)} and is tried ${
      detection.pingRetries + 1
    } times ${ms(detection.pingSpacing)} apart, a runner whose pings time out suspected for ${ms(detection.suspectFor)} (declared dead at a failed check that long after its first); assignments refreshed every ${ms(config.refreshAssignmentsInterval)}, unprocessed messages polled every ${
      ms(config.entityMessagePollInterval)
    }; every runner checks every other one at each health check (and \`@effect/cluster\`'s singleton check pings every runner). Cost: with 3 runners,`,
    `${(6 + 3) * (1000 / Duration.toMillis(Duration.decode(config.runnerHealthCheckInterval ?? "1 second")))} pings a second when no ping fails; each member reads the runners' table and each runner its unprocessed messages from PostgreSQL at those intervals.`,
    ...(failoverRun === undefined ? [] : [
      "",
      `### Failover: ${failoverRun.sessions} sessions of ${failoverRun.actions} actions, one event every ${failoverRun.frameMs} ms (${failoverRun.seconds.toFixed(0)} s)`,
      "",
      "| runner | sessions held | RSS idle (MiB) | RSS holding them (MiB) | KiB per session (RSS growth / sessions) |",
      "| --- | --- | --- | --- | --- |",
      ...failoverRun.ports.map((port, i) => {
        const last = failoverRun.steps[failoverRun.steps.length - 1]!
        const held = last.held[i]!
        return row([
          `127.0.0.1:${port}${i === failoverRun.victim ? " (killed)" : ""}`,
          held,
          failoverRun.idleRss[i]!.toFixed(0),
          last.rss[i]!.toFixed(0),
          held > 0 ? (((last.rss[i]! - failoverRun.idleRss[i]!) * 1024) / held).toFixed(0) : "-"
        ])
      }),
      "",
      "| figure | result |",
      "| --- | --- |",
      ...failoverRows(failoverRun)
    ]),
    ...(scaleRun === undefined ? [] : [
      "",
      `### Scale: sessions held, ${CURVE.join(" / ")}; ${scaleRun.actions} actions per session, one event every ${scaleRun.frameMs} ms per session (${scaleRun.seconds.toFixed(0)} s)`,
      "",
      "| sessions | held per runner | RSS per runner (MiB; idle " + scaleRun.idleRss.map((r) => r.toFixed(0)).join(", ") +
      ") | MiB of RSS per held session (growth / held, all runners) | RSS per runner after a full GC (MiB; idle " +
      scaleRun.idleRssGc.map((r) => r.toFixed(0)).join(", ") + ") | MiB per held session after a full GC |",
      "| --- | --- | --- | --- | --- | --- |",
      ...scaleRun.steps.map((step) => {
        const held = step.held.reduce((a, b) => a + b, 0)
        const growth = step.rss.reduce((a, b, i) => a + b - scaleRun.idleRss[i]!, 0)
        const growthGc = step.rssGc.reduce((a, b, i) => a + b - scaleRun.idleRssGc[i]!, 0)
        return row([
          step.sessions,
          step.held.join(", "),
          step.rss.map((r) => r.toFixed(0)).join(", "),
          (growth / held).toFixed(3),
          step.rssGc.map((r) => r.toFixed(0)).join(", "),
          (growthGc / held).toFixed(3)
        ])
      }),
      "",
      `At ${scaleRun.sessions} sessions, the runner holding the most (127.0.0.1:${scaleRun.ports[scaleRun.victim]}) killed. ${
        scaleRun.followEvery > 1
          ? `One session in ${scaleRun.followEvery} was followed live by a subscriber (the failover times are theirs); every session's log was read once it ended, and the losses and repeats are counted over all.`
          : "Every session was followed live by a subscriber."
      }`,
      "",
      "| figure | result |",
      "| --- | --- |",
      ...failoverRows(scaleRun)
    ]),
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

program.pipe(NodeRuntime.runMain)
