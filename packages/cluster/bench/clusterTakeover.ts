/**
 * What a take-over costs per session, in CPU, against `@effect/cluster`'s own floor measured in
 * the same run: for each size (`--sizes 200,1000`),
 *
 * - the floor: `packages/cluster/bench/clusterFloor.ts --entities <n>` (a child process: its own PostgreSQL, three
 *   runners, entities that hold one persisted request and do nothing else), its survivors' CPU per
 *   entity moved and its median time from the kill to the request back;
 * - the SDK: PostgreSQL, the simulator (its own process, sessions that ask for a permission after
 *   a few actions and then wait: a held session that sends nothing, so the survivors' CPU after
 *   the kill is the take-over's), three runner processes (packages/cluster/test/fixtures/runner.ts) and
 *   this process as the client-only member that starts the sessions. Once every session waits for
 *   its answer and has logged its one warning of it (`Session.defaultWarnAfterMillis` later), and
 *   the entities the start made are passivated (`@effect/cluster`'s reaper closes them in sweeps
 *   every 30 s, once idle for a minute: `passivationWait`), the
 *   runner holding the most is killed (SIGKILL); the survivors' CPU (user +
 *   system, /proc) is counted from the kill until every session of the killed runner has been
 *   taken over (each survivor's notice `Took session <id> over`, by id) and one second more, less
 *   what the survivors spent idle over as long (measured for `idleWindow` before the kill), and
 *   divided by every take-over in that time: the killed runner's sessions, and those whose shards
 *   `@effect/cluster`'s hash ring moved from one survivor to the other as it spread the killed
 *   runner's (a hand-over on one, a take-over on the other; the column "taken over" counts them
 *   apart). Of it: the survivors' main-thread garbage collection pauses, and their CPU off their
 *   main threads (`procCpu.ts`: V8's helper threads), each less its idle rate.
 *
 * `--profile <dir>` writes a CPU profile of each survivor over the take-over of the last size
 * (V8's `.cpuprofile`) and prints its self time by function.
 *
 * `--allocations <dir>`, instead, writes a sampling profile of what each survivor allocated over the
 * take-over of the last size, collected objects included (V8's `.heapprofile`), and prints its
 * bytes by function, by package and by nearest frame of this project, per session taken over.
 *
 * `--logs <dir>` writes each runner's output (its log) to `<dir>/runner-<pid>.out`.
 *
 * `--repeat <n>` measures each size n times, the floor and the SDK one after the other each time
 * (a row each), then a row of medians: the median SDK CPU per session, the median floor, their
 * ratio, and the median of the runs' own ratios. On a 2-core machine one run's floor varies by 2x,
 * so a single run's ratio is a ratio of two noisy figures; the medians are the figures to read.
 *
 * `--runner-flags "<flags>"` sets the runners' young generation flags, the floor's runners' too
 * (default `--max-semi-space-size=64`, as `docs/scale-out.md` advises; `--runner-flags ""`: Node's
 * default): `runnerFlags.ts`.
 *
 * `--line effect4` measures the Effect 4 cluster (`effect-agent-session-effect4/cluster`) instead:
 * its runner fixture (`packages/effect4/cluster/test/fixtures/runner.ts`, the same contract) started
 * as the shared cross-process tests start it (the `fixtureCommand` of
 * `packages/effect4/cluster/test/helpers/processLine.ts`, under Node 22: asked of that module once,
 * by the Node 22 of `packages/effect4/scripts/node22.mjs`), and the sessions started by an Effect 4
 * client: the shared client fixture (`test/shared/fixtures/client.ts`) on the Effect 4 line, which
 * follows one session only and never answers (`FOLLOW_EVERY`), so the runners' work after the kill
 * is the take-over's, as with the Effect 3 client in this process. Its floor is
 * `clusterFloor.ts --line effect4` (its runners the Effect 4 copy of `packages/cluster/test/shared/fixtures/floorRunner.ts`:
 * `effect/cluster` 4.1, the same entity and steps, under Node 22). With `--write`, an
 * Effect 4 run writes its table to its own block (`<!-- cluster-takeover-effect4:begin -->`) inside
 * the section, which an Effect 3 `--write` keeps.
 *
 *   npx tsx packages/cluster/bench/clusterTakeover.ts [--line effect3|effect4] [--sizes 200,1000] [--repeat 1] [--no-floor] [--profile <dir>] [--allocations <dir>] [--logs <dir>] [--runner-flags "<flags>"] [--write]
 *
 * Prints a table (markdown), the failover projection and its model; with `--write`, writes them
 * to their section of bench/RESULTS.md (after the cluster section).
 */
import { type ChildProcess, fork, spawn } from "node:child_process"
import { appendFileSync, readFileSync, writeFileSync } from "node:fs"
import * as Os from "node:os"
import { join } from "node:path"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as PgClient from "@effect/sql-pg/PgClient"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import { Session as CoreSession } from "effect-agent-session-core"
import { ClusterSessions, NodeClusterSessions } from "../src/index.js"
import { NodeAgentSessions } from "effect-agent-session"
import { readLines } from "../test/shared/fixtures/lines.js"
import { fixtureEnv } from "../test/shared/fixtures/process.js"
import { lease } from "../binding/internal/writer.js"
import { effect4FixtureCommands } from "./effect4Fixtures.js"
import { cpuMs, offMainCpuMs } from "./procCpu.js"
import { baseRunnerFlags, defaultRunnerTuning, runnerTuning } from "./runnerFlags.js"
import * as Postgres from "effect-agent-session-test-support/Postgres"
import { stats } from "effect-agent-session-test-support/measure"

const root = join(import.meta.dirname, "..", "..", "..")
const flag = (name: string, fallback: string): string => {
  const i = process.argv.indexOf(`--${name}`)
  return i >= 0 ? process.argv[i + 1] ?? fallback : fallback
}
const SIZES = flag("sizes", "200,1000").split(",").map(Number)
/** The cluster edition measured: `effect3` (`packages/cluster`, the default) or `effect4`. */
const LINE = flag("line", "effect3")
if (LINE !== "effect3" && LINE !== "effect4") {
  process.stderr.write(`--line: effect3 or effect4, not ${LINE}\n`)
  process.exit(2)
}
const EFFECT4 = LINE === "effect4"
const FLOOR = !process.argv.includes("--no-floor")
/** How many times each size is measured (`--repeat`), the floor and the SDK alternately. */
const REPEAT = Math.max(1, Math.floor(Number(flag("repeat", "1"))) || 1)
const PROFILE_DIR = flag("profile", "")
const ALLOCATIONS_DIR = flag("allocations", "")
/**
 * How long the survivors' idle rate is measured before the kill. A runner's idle work is periodic
 * (claims renewed every 1.5 s, answers read every 2 s, the engine's own polls): a window of a few
 * seconds catches one or two of each, and the idle rate it gives varies from run to run by as
 * much as a take-over's own CPU.
 */
const idleWindow = "10 seconds"
/**
 * The longest the bench waits, before the idle window, for the entities of the start to be
 * passivated: a session's entity is closed by the first sweep of the reaper (every 30 s) once it
 * has been idle for its `maxIdleTime` (1 minute).
 */
const passivationWait = 150_000
/** Writes each runner's standard output (its log) to `<dir>/runner-<pid>.out`. */
const LOGS = flag("logs", "")
/** The runners' tuning flags (`--runner-flags`), the floor's runners' too. */
const RUNNER_FLAGS = runnerTuning(flag("runner-flags", defaultRunnerTuning))
/** Writes the section between `<!-- cluster-takeover:begin -->` and `<!-- cluster-takeover:end -->` of bench/RESULTS.md. */
const WRITE = process.argv.includes("--write")

const sum = (xs: ReadonlyArray<number>) => xs.reduce((a, b) => a + b, 0)
/** The median (of an even count, the mean of the middle two). */
const median = (xs: ReadonlyArray<number>): number => stats(xs).median
const quantile = (xs: ReadonlyArray<number>, q: number): number => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length === 0 ? Number.NaN : s[Math.min(s.length - 1, Math.floor(s.length * q))]!
}

/** The Effect 4 fixtures' commands (`runner.ts`, `client.ts`), when the Effect 4 line is measured. */
const EFFECT4_COMMANDS = EFFECT4 ? effect4FixtureCommands(root, ["runner.ts", "client.ts"]) : undefined

/** The runner fixture of the line measured, with the Node flags of this bench before the fixture's own. */
const runnerCommand = (): { readonly command: string; readonly args: ReadonlyArray<string> } => {
  const flags = [...baseRunnerFlags, ...RUNNER_FLAGS]
  return EFFECT4_COMMANDS === undefined
    ? { command: process.execPath, args: [...flags, "--import", "tsx", join("packages", "cluster", "test", "fixtures", "runner.ts")] }
    : { command: EFFECT4_COMMANDS["runner.ts"]!.command, args: [...flags, ...EFFECT4_COMMANDS["runner.ts"]!.args] }
}

interface Proc {
  readonly child: ChildProcess
  /** The runner's port (its sessions' log claims name it: `127.0.0.1:<port>/...`). */
  readonly port: number
  readonly lines: ReadonlyArray<string>
  readonly nextLine: (predicate: (line: string) => boolean) => Effect.Effect<string>
  /** When each session's take-over notice reached this process (ms since the epoch). */
  readonly tookOver: Map<string, number>
}

const runnerProcess = (env: NodeJS.ProcessEnv & { readonly RUNNER_PORT: string }) =>
  Effect.acquireRelease(
    Effect.sync((): Proc => {
      const command = runnerCommand()
      const child = spawn(command.command, [...command.args], {
        cwd: root,
        env: { ...process.env, ...env },
        stdio: ["pipe", "pipe", "pipe"]
      })
      const log = join(Os.tmpdir(), `eas-cluster-takeover-${child.pid}.err`)
      child.stderr!.on("data", (chunk: Buffer) => appendFileSync(log, chunk))
      const tookOver = new Map<string, number>()
      const { lines, nextLine } = readLines(child.stdout!, (line) => {
        if (LOGS !== "") appendFileSync(join(LOGS, `runner-${child.pid}.out`), line + "\n")
        const m = /Took session (\S+) over/.exec(line)
        if (m !== null && !tookOver.has(m[1]!)) tookOver.set(m[1]!, Date.now())
      })
      return { child, port: Number(env.RUNNER_PORT), lines, nextLine, tookOver }
    }),
    (proc) => Effect.sync(() => proc.child.kill("SIGKILL"))
  )

const simulatorProcess = Effect.acquireRelease(
  Effect.async<{ readonly child: ChildProcess; readonly ready: { baseUrl: string; wsUrl: string; accountKey: string } }>((resume) => {
    // 6 actions, the permission asked after a few of them, 20 ms between frames.
    const child = fork(join(root, "packages", "cluster", "bench", "clusterSimulator.ts"), ["6", "20", "permission"], {
      execArgv: ["--import", "tsx"],
      stdio: ["ignore", "inherit", "inherit", "ipc"]
    })
    child.on("message", (message: { type?: string; baseUrl?: string; wsUrl?: string; accountKey?: string }) => {
      if (message.type === "ready") resume(Effect.succeed({ child, ready: message as { baseUrl: string; wsUrl: string; accountKey: string } }))
    })
  }),
  ({ child }) => Effect.sync(() => child.kill("SIGKILL"))
)

let tags = 0
const ask = (proc: Proc, command: string) =>
  Effect.suspend(() => {
    const tag = String(++tags)
    proc.child.stdin!.write(`${command} ${tag}\n`)
    return Effect.map(proc.nextLine((l) => l.startsWith(`${command} ${tag} `)), (l) => l.slice(`${command} ${tag} `.length))
  })

/** The package of a profile frame's script: its npm package, Node's own, or this project. */
const packageOf = (url: string) =>
  url.includes("node_modules/")
    ? url.replace(/^.*node_modules\//, "").split("/").slice(0, url.includes("node_modules/@") ? 2 : 1).join("/")
    : url.startsWith("node:") || url === "" ? "(node, native)" : "(project)"

/** Self time by function of a V8 `.cpuprofile`, the top `n`, as lines. */
const summarize = (file: string, n: number): Array<string> => {
  const profile = JSON.parse(readFileSync(file, "utf8")) as {
    readonly nodes: ReadonlyArray<{ readonly id: number; readonly children?: ReadonlyArray<number>; readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number } }>
    readonly samples: ReadonlyArray<number>
  }
  const byId = new Map(profile.nodes.map((node) => [node.id, node]))
  const self = new Map<string, number>()
  for (const id of profile.samples) {
    const frame = byId.get(id)?.callFrame
    const url = (frame?.url ?? "").replace(/^.*node_modules\//, "").replace(/^file:\/\/.*\/wt-[^/]+\//, "")
    const key = `${frame?.functionName || "(anonymous)"} ${url}:${(frame?.lineNumber ?? 0) + 1}`
    self.set(key, (self.get(key) ?? 0) + 1)
  }
  // Each sample also by package (its own frame's) and by the nearest frame of this project
  // (src/, packages/) above it: the fiber runtime cuts stacks, so the second is a lower bound.
  const parent = new Map<number, number>()
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id)
  const byPackage = new Map<string, number>()
  const byProject = new Map<string, number>()
  for (const id of profile.samples) {
    const frame = byId.get(id)?.callFrame
    if (frame?.functionName === "(idle)") continue
    const pkg = packageOf(frame?.url ?? "")
    byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + 1)
    let at: number | undefined = id
    let found = "(no project frame)"
    while (at !== undefined) {
      const f = byId.get(at)?.callFrame
      if (f !== undefined && !f.url.includes("node_modules") && /\/(src|packages)\//.test(f.url)) {
        found = `${f.functionName || "(anonymous)"} ${f.url.replace(/^file:\/\/.*\/wt-[^/]+\//, "")}:${f.lineNumber + 1}`
        break
      }
      at = parent.get(at)
    }
    byProject.set(found, (byProject.get(found) ?? 0) + 1)
  }
  const total = profile.samples.length
  const busy = profile.samples.filter((id) => byId.get(id)?.callFrame.functionName !== "(idle)").length
  const top = (map: Map<string, number>, of: number) =>
    [...map.entries()].sort((a, b) => b[1] - a[1]).slice(0, n).map(([key, count]) =>
      `${(100 * count / of).toFixed(1).padStart(5)}%  ${key}`
    )
  return [
    `samples ${total}, busy ${busy}`,
    "self time (of all samples):",
    ...top(self, total),
    "busy samples by package:",
    ...top(byPackage, busy),
    "busy samples by nearest project frame:",
    ...top(byProject, busy)
  ]
}

/** A V8 `.heapprofile` by function, package and nearest project frame, the top `n`, in KiB per `per`. */
const summarizeAllocations = (file: string, n: number, per: number): Array<string> => {
  interface HeapNode {
    readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number }
    readonly selfSize: number
    readonly children: ReadonlyArray<HeapNode>
  }
  const { head } = JSON.parse(readFileSync(file, "utf8")) as { readonly head: HeapNode }
  const self = new Map<string, number>()
  const byPackage = new Map<string, number>()
  const byProject = new Map<string, number>()
  const add = (map: Map<string, number>, key: string, bytes: number) => map.set(key, (map.get(key) ?? 0) + bytes)
  const frameKey = (f: HeapNode["callFrame"]) =>
    `${f.functionName || "(anonymous)"} ${f.url.replace(/^.*node_modules\//, "").replace(/^file:\/\/.*?\/(packages|src)\//, "$1/")}:${f.lineNumber + 1}`
  let total = 0
  const walk = (node: HeapNode, project: string) => {
    const { url } = node.callFrame
    const here = !url.includes("node_modules") && /\/(src|packages)\//.test(url) ? frameKey(node.callFrame) : project
    if (node.selfSize > 0) {
      total += node.selfSize
      add(self, frameKey(node.callFrame), node.selfSize)
      add(byPackage, packageOf(url), node.selfSize)
      add(byProject, here, node.selfSize)
    }
    for (const child of node.children) walk(child, here)
  }
  walk(head, "(no project frame)")
  const kib = (bytes: number) => (bytes / 1024 / per).toFixed(1).padStart(6)
  const top = (map: Map<string, number>) =>
    [...map.entries()].sort((a, b) => b[1] - a[1]).slice(0, n).map(([key, bytes]) => `${kib(bytes)} KiB  ${key}`)
  return [
    `allocated ${kib(total)} KiB a session taken over (${per} sessions)`,
    "by function:",
    ...top(self),
    "by package:",
    ...top(byPackage),
    "by nearest project frame:",
    ...top(byProject)
  ]
}

interface SdkRun {
  readonly sessions: number
  readonly moved: number
  /** The sessions the killed runner ran (not ended): those to take over. */
  readonly running: number
  /**
   * Every take-over on the survivors: the killed runner's sessions, and the sessions one survivor
   * took over from the other (their shards moved between them).
   */
  readonly takenOver: number
  /** Of the killed runner's sessions, how many were taken over. */
  readonly ofKilled: number
  readonly cpuMs: number
  readonly idleMs: number
  /**
   * The survivors' main-thread garbage collection pauses over as long (V8's `gc` performance
   * entries), less their idle rate's: a part of `cpuMs - idleMs`.
   */
  readonly gcMs: number
  /** The survivors' CPU off their main threads over as long ({@link offMainCpuMs}), less their idle rate's: a part of `cpuMs - idleMs`. */
  readonly offMainMs: number
  /** The survivors' CPU from the kill to the first take-over notice, and their idle rate over as long. */
  readonly cpuBeforeFirstMs: number
  readonly idleBeforeFirstMs: number
  /** The first take-over notice, ms after the kill. */
  readonly firstAt: number
  /** The load average (1 minute) at the end of the run. */
  readonly load: number
  readonly seconds: number
  readonly median: number
  readonly p90: number
  readonly max: number
}

/** The sessions started by this process as an Effect 3 client-only member: the sessions that failed to start. */
const startEffect3 = (
  sessions: number,
  service: { readonly accountKey: string; readonly baseUrl: string; readonly wsUrl: string },
  env: ReturnType<typeof fixtureEnv>
) =>
  Effect.gen(function*() {
    // The runners' secret: without it every connection to a runner is refused, and the messages
    // reach the runners only by the storage's poll.
    const client = yield* Layer.build(
      NodeClusterSessions.layerClient({ databaseUrl: env.CLUSTER_DATABASE_URL, secret: env.CLUSTER_SECRET, maxConnections: 4 }).pipe(
        Layer.provide(NodeAgentSessions.layer({
          apiKey: service.accountKey,
          baseUrl: service.baseUrl,
          wsUrl: service.wsUrl
        }))
      )
    )
    const cluster = yield* Effect.provide(ClusterSessions.ClusterSessions, client)
    let failed = 0
    yield* Effect.forEach(
      Array.from({ length: sessions }, (_, i) => i),
      (i) =>
        cluster.start({ start_url: `https://example.com/${i}`, max_actions: 100, goal: `Goal ${i}` }).pipe(
          Effect.catchAll((error) =>
            Effect.sync(() => {
              failed += 1
              process.stderr.write(`start ${i}: ${error._tag}\n`)
            })
          )
        ),
      { concurrency: 50, discard: true }
    )
    return { failed, ready: Effect.void }
  })

/**
 * The sessions started by an Effect 4 client: the shared client fixture on the Effect 4 line (its
 * own process, killed when the scope closes), following one session only (`FOLLOW_EVERY`) and never
 * answering. The sessions that failed to start: none once the client has started them all
 * (`started`), else (a start that failed ends it) those the cluster does not know. `ready`: the client's
 * `ready` (it has read where each session runs), waited for at most 120 s before the kill so that the
 * client is quiet during the take-over.
 */
const startEffect4 = (sessions: number, env: NodeJS.ProcessEnv, known: Effect.Effect<number, unknown>) =>
  Effect.gen(function*() {
    const command = EFFECT4_COMMANDS!["client.ts"]!
    const client = yield* Effect.acquireRelease(
      Effect.sync(() => {
        const child = spawn(command.command, [...command.args], {
          cwd: command.cwd,
          env: {
            ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("AGENT_SESSION_"))),
            ...env,
            SESSIONS: String(sessions),
            FOLLOW_EVERY: String(sessions + 1),
            MAX_ACTIONS: "100"
          },
          stdio: ["pipe", "pipe", "pipe"]
        })
        const log = join(Os.tmpdir(), `eas-cluster-takeover-client-${child.pid}.err`)
        child.stderr!.on("data", (chunk: Buffer) => appendFileSync(log, chunk))
        const exited = Effect.async<void>((resume) => {
          if (child.exitCode !== null || child.signalCode !== null) return resume(Effect.void)
          child.once("exit", () => resume(Effect.void))
        })
        return { child, exited, ...readLines(child.stdout!), log }
      }),
      ({ child }) => Effect.sync(() => child.kill("SIGKILL"))
    )
    yield* Effect.race(client.nextLine((l) => l.includes(`"type":"started"`)), client.exited)
    // The client prints `started` only once every start succeeded (a failed start ends it, and
    // what it had started runs on): then none failed, else those the cluster does not know a
    // few seconds on (a session's row is written by its runner, after its start returned).
    const exited = client.child.exitCode !== null || client.child.signalCode !== null
    if (exited) process.stderr.write(`client exited ${client.child.exitCode}: see ${client.log}\n`)
    const failed = exited ? sessions - (yield* Effect.zipRight(Effect.sleep("5 seconds"), Effect.orDie(known))) : 0
    return {
      failed,
      ready: Effect.asVoid(Effect.race(
        client.nextLine((l) => l.includes(`"type":"ready"`)),
        Effect.zipRight(Effect.sleep("120 seconds"), Effect.sync(() => process.stderr.write("client not ready after 120 s: going on\n")))
      ))
    }
  })

const sdkRun = (sessions: number, profile: "cpu" | "allocations" | undefined) =>
  Effect.scoped(Effect.gen(function*() {
    const simulator = yield* simulatorProcess
    const pg = yield* Postgres.start
    // The sessions are held waiting for an answer, their channels silent: with the SDK's idle
    // time-out (1 minute) each would reconnect every minute while the 10,000 start and through the
    // take-over, the reconnects a load of their own in the survivors' CPU, idle rate included.
    const env = { ...fixtureEnv(simulator.ready, pg.url), IDLE_TIMEOUT: "30 minutes" }
    const runners: Array<Proc> = []
    // One after another: the first creates the tables.
    for (let i = 0; i < 3; i++) {
      const port = yield* Postgres.freePort
      const runner = yield* runnerProcess({ ...env, RUNNER_PORT: String(port) })
      yield* runner.nextLine((l) => l === "ready")
      runners.push(runner)
    }
    const admin = yield* Layer.build(PgClient.layer({ url: Redacted.make(pg.url), maxConnections: 1 }))
    const sql = yield* Effect.provide(SqlClient.SqlClient, admin)
    // Sessions waiting for their answer, and sessions whose run ended (on this shared machine a
    // channel can fail to open in time: such a session ends, and is not taken over).
    const waiting = Effect.map(
      sql<{ readonly n: string }>`SELECT count(DISTINCT session_id) AS n FROM agent_session_events
        WHERE event ILIKE '%external%requested%'`,
      (rows) => Number(rows[0]?.n ?? 0)
    )
    const ended = Effect.map(
      sql<{ readonly n: string }>`SELECT count(*) AS n FROM agent_session_sessions WHERE end_status IS NOT NULL`,
      (rows) => Number(rows[0]?.n ?? 0)
    )
    const known = Effect.map(
      sql<{ readonly n: string }>`SELECT count(*) AS n FROM agent_session_sessions`,
      (rows) => Number(rows[0]?.n ?? 0)
    )
    const started = EFFECT4 ? yield* startEffect4(sessions, env, known) : yield* startEffect3(sessions, simulator.ready, env)
    const failed = started.failed
    const deadline = Date.now() + 600_000
    while ((yield* waiting) + (yield* ended) < sessions - failed && Date.now() < deadline) yield* Effect.sleep("500 millis")
    // Each waiting session logs one warning, `Session.defaultWarnAfterMillis` after its request
    // arrived: the runners' own scheduled work, over by then (the idle window and the take-over's
    // would hold a varying share of it, as the 10,000 start over tens of seconds).
    const warningsOverAt = Date.now() + CoreSession.defaultWarnAfterMillis + 1_000
    yield* started.ready
    const endedBefore = yield* ended
    if (endedBefore > 0) {
      // Why: the runs' end reasons, the most frequent first.
      const reasons = yield* sql<{ readonly status: string; readonly reason: string | null; readonly n: string }>`SELECT end_status AS status,
          left(end_reason, 160) AS reason, count(*) AS n FROM agent_session_sessions WHERE end_status IS NOT NULL
          GROUP BY 1, 2 ORDER BY 3 DESC LIMIT 5`
      for (const r of reasons) process.stderr.write(`ended before the kill: ${r.n} ${r.status} (${r.reason ?? "no reason"})\n`)
    }
    // Settle (3 s at least, and until the warnings are over), then the survivors' idle rate.
    yield* Effect.sleep(Math.max(3_000, warningsOverAt - Date.now()))
    // And until the entities the start made are passivated: `@effect/cluster`'s reaper closes the
    // entities idle past their `maxIdleTime` (a session's: 1 minute after its last command) in one
    // sweep every 30 s, a thousand of them at once on a runner here. A sweep in the take-over's
    // window is the runner's own work, not the take-over's; one in the idle window raises the idle
    // rate subtracted from the take-over's CPU. All but one: the Effect 4 client follows one
    // session (`FOLLOW_EVERY`), and its subscription keeps that session's entity active.
    const subscribed = EFFECT4 ? 1 : 0
    const activeEntities = Effect.map(Effect.forEach(runners, (r) => Effect.map(ask(r, "count"), Number)), sum)
    const passivatedBy = Date.now() + passivationWait
    let active = yield* activeEntities
    while (active > subscribed && Date.now() < passivatedBy) {
      yield* Effect.sleep("2 seconds")
      active = yield* activeEntities
    }
    if (active > subscribed) process.stderr.write(`${active} entities still active before the idle window: going on\n`)
    // Every session held somewhere before the kill: on a loaded machine a runner can lose its
    // shards for a while (its lock refreshes late), and their sessions run again only after. A
    // runner holds the sessions whose run is there: those whose log it claims (its entities are
    // passivated by now).
    const idsOn = (r: Proc) =>
      Effect.map(
        sql<{ readonly id: string }>`SELECT session_id AS id FROM agent_session_sessions
          WHERE end_status IS NULL AND writer LIKE ${`127.0.0.1:${r.port}/%`}`,
        (rows) => rows.map((row) => row.id)
      )
    const heldOn = (r: Proc) => Effect.map(idsOn(r), (ids) => ids.length)
    let held = yield* Effect.forEach(runners, heldOn)
    const heldBy = Date.now() + 300_000
    while (sum(held) < sessions - failed - (yield* ended) && Date.now() < heldBy) {
      process.stderr.write(`held ${JSON.stringify(held)} of ${sessions - failed} (ended ${yield* ended}): waiting\n`)
      yield* Effect.sleep("5 seconds")
      held = yield* Effect.forEach(runners, heldOn)
    }
    process.stderr.write(`held ${JSON.stringify(held)}\n`)
    const victimIndex = held.indexOf(Math.max(...held))
    const moved = held[victimIndex]!
    // The sessions to take over: those whose run the killed runner holds (its claim on their log),
    // not ended (on a loaded machine thousands can end while the 10,000 start: `NeverConnected`).
    // By id: the survivors also take over sessions of each other, whose shards `@effect/cluster`'s
    // hash ring moves between them as it spreads the killed runner's, and those do not count
    // towards the killed runner's.
    const toTakeOver = new Set(yield* idsOn(runners[victimIndex]!))
    const running = toTakeOver.size
    const survivors = runners.filter((_, i) => i !== victimIndex)
    /** The survivors' main-thread garbage collection pauses so far, summed (ms). */
    const gcPauses = Effect.map(Effect.forEach(survivors, (r) => Effect.map(ask(r, "gc"), Number)), sum)
    const gcIdleFrom = yield* gcPauses
    const idleFrom = survivors.map((r) => cpuMs(r.child.pid))
    const offMainIdleFrom = sum(survivors.map((r) => offMainCpuMs(r.child.pid)))
    const idleAt = Date.now()
    yield* Effect.sleep(idleWindow)
    const idleRate = (sum(survivors.map((r) => cpuMs(r.child.pid))) - sum(idleFrom)) / (Date.now() - idleAt)
    const offMainIdleRate = (sum(survivors.map((r) => offMainCpuMs(r.child.pid))) - offMainIdleFrom) / (Date.now() - idleAt)
    const gcBefore = yield* gcPauses
    const gcIdleRate = (gcBefore - gcIdleFrom) / (Date.now() - idleAt)
    if (profile !== undefined) {
      for (const r of survivors) r.child.stdin!.write(profile === "cpu" ? "prof-start\n" : "heap-start\n")
    }
    const before = survivors.map((r) => cpuMs(r.child.pid))
    const offMainBefore = sum(survivors.map((r) => offMainCpuMs(r.child.pid)))
    const killedAt = Date.now()
    runners[victimIndex]!.child.kill("SIGKILL")
    const takenOver = () => sum(survivors.map((r) => [...r.tookOver.values()].filter((t) => t >= killedAt).length))
    /** How many of the killed runner's sessions a survivor has taken over. */
    const ofKilled = () => {
      const ids = new Set<string>()
      for (const r of survivors) for (const [id, t] of r.tookOver) if (t >= killedAt && toTakeOver.has(id)) ids.add(id)
      return ids.size
    }
    // Until every session the killed runner ran is taken over, or none is for 10 s (a session that
    // ended between the count and the kill).
    const until = killedAt + 600_000
    let last = 0
    let lastAt = Date.now()
    // The survivors' CPU when the first take-over notice came (polled every 10 ms until then):
    // what they spent before (the engine's redelivery, waiting for the killed runner's claims to
    // lapse) and after (the take-overs themselves).
    let atFirst: number | undefined
    let reportedAt = Date.now()
    let firstAt = Number.NaN
    while (ofKilled() < running && Date.now() < until) {
      yield* Effect.sleep(atFirst === undefined ? "10 millis" : "100 millis")
      if (atFirst === undefined && takenOver() > 0) {
        atFirst = sum(survivors.map((r) => cpuMs(r.child.pid)))
        firstAt = Date.now() - killedAt
      }
      const n = ofKilled()
      if (Date.now() - reportedAt >= 10_000) {
        reportedAt = Date.now()
        process.stderr.write(`taken over ${n} of ${running} (ended before the kill: ${endedBefore}), ${((reportedAt - killedAt) / 1000).toFixed(0)} s after the kill\n`)
      }
      if (n !== last) {
        last = n
        lastAt = Date.now()
      } else if (n > 0 && Date.now() - lastAt > 10_000) break
    }
    yield* Effect.sleep("1 second")
    const after = survivors.map((r) => cpuMs(r.child.pid))
    const offMainAfter = sum(survivors.map((r) => offMainCpuMs(r.child.pid)))
    const elapsed = Date.now() - killedAt
    const gcAfter = yield* gcPauses
    if (profile !== undefined) {
      yield* Effect.forEach(survivors, (r) => {
        const cpu = profile === "cpu"
        const file = join(cpu ? PROFILE_DIR : ALLOCATIONS_DIR, `takeover-${sessions}-${r.child.pid}.${cpu ? "cpuprofile" : "heapprofile"}`)
        const taken = [...r.tookOver.values()].filter((t) => t >= killedAt).length
        return Effect.zipRight(
          Effect.sync(() => r.child.stdin!.write(`${cpu ? "prof" : "heap"}-stop takeover ${file}\n`)),
          Effect.zipRight(
            r.nextLine((l) => l === `${cpu ? "prof" : "heap"} takeover`),
            Effect.sync(() =>
              process.stdout.write(
                `\nprofile ${file}:\n${(cpu ? summarize(file, 30) : summarizeAllocations(file, 30, Math.max(1, taken))).join("\n")}\n`
              )
            )
          )
        )
      })
    }
    const times = survivors.flatMap((r) => [...r.tookOver.values()].filter((t) => t >= killedAt).map((t) => t - killedAt))
    const run: SdkRun = {
      sessions,
      moved,
      running,
      takenOver: times.length,
      ofKilled: ofKilled(),
      cpuMs: sum(after) - sum(before),
      idleMs: idleRate * elapsed,
      gcMs: gcAfter - gcBefore - gcIdleRate * elapsed,
      offMainMs: offMainAfter - offMainBefore - offMainIdleRate * elapsed,
      cpuBeforeFirstMs: (atFirst ?? Number.NaN) - sum(before),
      idleBeforeFirstMs: idleRate * firstAt,
      firstAt,
      load: Os.loadavg()[0]!,
      seconds: elapsed / 1000,
      median: quantile(times, 0.5),
      p90: quantile(times, 0.9),
      max: Math.max(...times)
    }
    process.stderr.write(`sdk ${JSON.stringify({ ...run, failed, endedBefore })}\n`)
    return run
  }))

interface FloorRun {
  readonly perEntity: number
  /** Of it, off the survivors' main threads. */
  readonly offMain: number
  readonly median: string
  readonly moved: string
}

/**
 * `packages/cluster/bench/clusterFloor.ts --line <line> --entities <n>` in a child process (on the
 * Effect 4 line, its runners are the Effect 4 copy of `test/shared/fixtures/floorRunner.ts`, under Node 22);
 * its table read back.
 */
const floorRun = (entities: number) =>
  Effect.async<FloorRun>((resume) => {
    const args = ["--import", "tsx", join("packages", "cluster", "bench", "clusterFloor.ts"), "--line", LINE, "--runner-flags", RUNNER_FLAGS.join(" ")]
    const child = spawn(process.execPath, [...args, "--entities", String(entities)], {
      cwd: root,
      stdio: ["ignore", "pipe", "inherit"]
    })
    let out = ""
    child.stdout!.on("data", (chunk: Buffer) => {
      out += chunk.toString("utf8")
    })
    child.once("exit", () => {
      const row = (name: string) => out.split("\n").find((l) => l.startsWith(`| ${name}`))?.split("|")[2]?.trim() ?? "?"
      const run = {
        perEntity: Number.parseFloat(row("... per entity moved")),
        offMain: Number.parseFloat(row("... of it off the main threads")),
        median: row("kill to request back: median"),
        moved: row("requests back on a survivor")
      }
      process.stderr.write(`floor ${entities} ${JSON.stringify(run)}\n`)
      resume(Effect.succeed(run))
    })
    return Effect.sync(() => child.kill("SIGKILL"))
  })

const EFFECT4_BEGIN = "<!-- cluster-takeover-effect4:begin -->"
const EFFECT4_END = "<!-- cluster-takeover-effect4:end -->"
/** What an Effect 4 run's table is, printed above it. */
const effect4Note =
  "Line: Effect 4 (`effect-agent-session-effect4/cluster` on `effect/cluster` 4.1; runner fixture `packages/effect4/cluster/test/fixtures/runner.ts`, sessions started by the shared client fixture on the Effect 4 line)." +
  (FLOOR
    ? " Floor: `clusterFloor.ts --line effect4` (its runners the Effect 4 copy of `packages/cluster/test/shared/fixtures/floorRunner.ts`: `effect/cluster` 4.1, the same entity holding one persisted request, three runners, the one holding the most killed), in the same run."
    : " No floor in this run (`--no-floor`).")

/** Parses "934 ms" (the floor's median) to a number of ms. */
const ms = (text: string): number => Number.parseFloat(text)

const main = Effect.gen(function*() {
  const rows: Array<string> = []
  const measured: Array<{ readonly size: number; readonly moved: number; readonly per: number; readonly pre: number; readonly post: number; readonly floor: number; readonly sdk: SdkRun; readonly floorMedian: number }> = []
  for (const [i, size] of SIZES.entries()) {
    const runs: Array<{ readonly per: number; readonly floor: number }> = []
    for (let rep = 1; rep <= REPEAT; rep++) {
      const floor = FLOOR ? yield* floorRun(size) : undefined
      const last = i === SIZES.length - 1 && rep === REPEAT
      const sdk = yield* sdkRun(
        size,
        !last ? undefined : PROFILE_DIR !== "" ? "cpu" : ALLOCATIONS_DIR !== "" ? "allocations" : undefined
      )
      const n = Math.max(1, sdk.takenOver)
      const per = (sdk.cpuMs - sdk.idleMs) / n
      const pre = (sdk.cpuBeforeFirstMs - sdk.idleBeforeFirstMs) / n
      const post = per - pre
      runs.push({ per, floor: floor?.perEntity ?? Number.NaN })
      measured.push({ size, moved: sdk.takenOver, per, pre, post, floor: floor?.perEntity ?? Number.NaN, sdk, floorMedian: floor === undefined ? Number.NaN : ms(floor.median) })
      rows.push(
        `| ${size.toLocaleString("en-US")}${REPEAT > 1 ? `, run ${rep}` : ""} | ${sdk.load.toFixed(1)} | ${sdk.ofKilled}/${sdk.running}${sdk.takenOver > sdk.ofKilled ? ` (+${sdk.takenOver - sdk.ofKilled} between the survivors)` : ""} | ${(sdk.cpuMs / 1000).toFixed(1)} s (idle ${
          (sdk.idleMs / 1000).toFixed(1)
        } s) over ${sdk.seconds.toFixed(1)} s | **${per.toFixed(2)} ms** | ${pre.toFixed(2)} / ${post.toFixed(2)} ms | ${(sdk.gcMs / n).toFixed(2)} ms | ${(sdk.offMainMs / n).toFixed(2)} ms | ${
          floor === undefined ? "-" : `${floor.perEntity.toFixed(2)} ms (off the main thread: ${floor.offMain.toFixed(2)} ms)`
        } | ${floor === undefined ? "-" : (per / floor.perEntity).toFixed(1)} | ${sdk.firstAt.toFixed(0)} / ${sdk.median.toFixed(0)} / ${sdk.p90.toFixed(0)} / ${
          sdk.max.toFixed(0)
        } ms | ${floor?.median ?? "-"} |`
      )
      process.stderr.write(`${rows[rows.length - 1]}\n`)
    }
    if (REPEAT > 1) {
      const per = median(runs.map((r) => r.per))
      const floor = median(runs.map((r) => r.floor))
      const ratios = median(runs.map((r) => r.per / r.floor))
      rows.push(
        `| ${size.toLocaleString("en-US")}, median of ${REPEAT} | - | - | - | **${per.toFixed(2)} ms** | - | - | - | ${FLOOR ? `${floor.toFixed(2)} ms` : "-"} | ${
          FLOOR ? `${(per / floor).toFixed(1)} (of the runs' ratios: ${ratios.toFixed(1)})` : "-"
        } | - | - |`
      )
    }
  }
  const table = [
    "| sessions | load (1 min, at the end) | taken over | survivors' CPU, kill to last take-over + 1 s | SDK CPU per session | of it: before the first take-over / after | of it: garbage collection pauses | of it: off the main thread | floor CPU per entity | ratio | SDK kill to take-over: first / median / p90 / max | floor kill to request back: median |",
    "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ...rows
  ].join("\n")
  process.stdout.write(`\n${EFFECT4 ? `${effect4Note}\n\n` : ""}${table}\n`)

  // The projection. A survivor can take a session over only once the killed runner's claim on
  // its log has lapsed: D, the claim lease (a claim renewed just before the kill lapses D later).
  // Before that, the survivors do the engine's redelivery (c_pre a session); after it, the
  // take-overs (c_post a session). The killed runner's n sessions are spread over the k - 1
  // survivors, each on a core of its own (a runner is one Node thread): the first phase is
  // hidden behind the lease unless it is longer.
  // The largest size's c_pre and c_post: with `--repeat`, the medians of its runs.
  const largestSize = measured[measured.length - 1]!.size
  const largestRuns = measured.filter((m) => m.size === largestSize)
  const largest = { size: largestSize, pre: median(largestRuns.map((m) => m.pre)), post: median(largestRuns.map((m) => m.post)) }
  const d = lease
  const projected = (n: number, cores: number) =>
    ((Math.max(d, n * largest.pre / (cores - 1)) + n * largest.post / (cores - 1)) / 1000).toFixed(1)
  const perRunner = [...new Set([...measured.map((m) => m.moved), 10_000])].sort((a, b) => a - b)
  const projection = [
    "| sessions on the killed runner | measured here (3 runners, 2 cores shared with PostgreSQL and the service): last taken over | 4 cores | 8 cores | 16 cores |",
    "| --- | --- | --- | --- | --- |",
    ...perRunner.map((n) => {
      const here = measured.find((m) => m.moved === n)
      return `| ${n.toLocaleString("en-US")} | ${here === undefined ? "-" : `${(here.sdk.max / 1000).toFixed(1)} s`} | ${projected(n, 4)} s | ${projected(n, 8)} s | ${
        projected(n, 16)
      } s |`
    })
  ].join("\n")
  /** The model, then the projected table: in the section of either line. */
  const projectionText = [
    `Failover (kill to the last session taken over) by sessions on the killed runner (n) and cores (k), projected: max(D, n x c_pre / (k - 1)) + n x c_post / (k - 1), with D = ${
      (d / 1000).toFixed(1)
    } s (the claim lease: a session is taken over only once the killed runner's claim on its log has lapsed), c_pre = ${largest.pre.toFixed(2)} ms and c_post = ${
      largest.post.toFixed(2)
    } ms (the SDK's CPU per session before and after the first take-over, at ${largest.size.toLocaleString("en-US")} sessions${
      largestRuns.length > 1 ? `, the medians of ${largestRuns.length} runs` : ""
    }), k cores each running one runner (PostgreSQL and the service elsewhere): the killed runner's sessions are taken over by the k - 1 survivors at once, each on a core of its own (a runner takes sessions over on one Node thread: more cores than runners do not help).`,
    "",
    projection
  ].join("\n")
  if (EFFECT4) {
    // The Effect 4 line's table, in its own block of the section (an Effect 3 `--write` keeps it).
    const block = [
      EFFECT4_BEGIN,
      `### Effect 4 (\`--line effect4\`), run ${new Date().toISOString()}`,
      "",
      `${Os.cpus()[0]?.model ?? "?"}, ${Os.cpus().length} cores, bench on Node ${process.version}, runners and client on Node 22, shared with other work. ${effect4Note}`,
      "",
      table,
      "",
      projectionText,
      EFFECT4_END
    ].join("\n")
    process.stdout.write(`\n${block}\n`)
    if (WRITE) {
      const file = join(root, "bench", "RESULTS.md")
      const text = readFileSync(file, "utf8")
      const begin = text.indexOf(EFFECT4_BEGIN)
      const end = text.indexOf(EFFECT4_END)
      const sectionEnd = text.indexOf("<!-- cluster-takeover:end -->")
      const next = begin >= 0 && end > begin
        ? text.slice(0, begin) + block + text.slice(end + EFFECT4_END.length)
        : sectionEnd >= 0
        ? text.slice(0, sectionEnd) + block + "\n" + text.slice(sectionEnd)
        : text + "\n<!-- cluster-takeover:begin -->\n" + block + "\n<!-- cluster-takeover:end -->\n"
      writeFileSync(file, next)
    }
    return
  }
  const section = [
    "<!-- cluster-takeover:begin -->",
    "## Cluster: CPU per session taken over, against `@effect/cluster`'s floor (packages/cluster/bench/clusterTakeover.ts)",
    "",
    `Run ${new Date().toISOString()}: ${Os.cpus()[0]?.model ?? "?"}, ${Os.cpus().length} cores, Node ${process.version}, shared with other work. For each size, in one run: the floor (\`packages/cluster/bench/clusterFloor.ts --entities <n>\`: \`@effect/cluster\` alone, entities holding one persisted request) and the SDK (3 runner processes, PostgreSQL, the simulator, sessions that ask for a permission after a few actions and wait: held sessions that send nothing); the runner holding the most is killed (SIGKILL), once each session has logged its one warning of the wait (${CoreSession.defaultWarnAfterMillis / 1000} s after its request) and the entities the start made are passivated. Runners (the floor's too) started with ${[...baseRunnerFlags, ...RUNNER_FLAGS].map((f) => `\`${f}\``).join(" ")}. SDK CPU per session: the survivors' CPU (user + system) from the kill until every moved session was taken over (its runner's notice) and 1 s more, less the survivors' idle rate over as long, divided by the sessions taken over; split at the first take-over notice; of it, the survivors' main-thread garbage collection pauses (V8's \`gc\` performance entries), less their idle rate's, and their CPU off their main threads (V8's helper threads: the garbage collector's concurrent and parallel work, background compilation), less its idle rate. The floor's: its survivors' CPU from the kill to the last request back, divided by the entities moved (idle not subtracted). Target: SDK <= 1.2 ms a session (3x the floor at 10,000 sessions).`,
    "",
    table,
    "",
    projectionText,
    "",
    "Reproduce: `npx tsx packages/cluster/bench/clusterTakeover.ts --sizes 200,1000,10000 --write` (`--repeat <n>` measures each size n times, with a row of medians; `--profile <dir>` also writes and summarizes a CPU profile of each survivor at the largest size).",
    "<!-- cluster-takeover:end -->"
  ].join("\n")
  process.stdout.write(`\n${section}\n`)
  if (WRITE) {
    const file = join(root, "bench", "RESULTS.md")
    const text = readFileSync(file, "utf8")
    const begin = text.indexOf("<!-- cluster-takeover:begin -->")
    const end = text.indexOf("<!-- cluster-takeover:end -->")
    const anchor = text.indexOf("<!-- cluster:end -->")
    // The Effect 4 line's block, if the section has one, is kept.
    const effect4Begin = text.indexOf(EFFECT4_BEGIN)
    const effect4End = text.indexOf(EFFECT4_END)
    const effect4Block = effect4Begin > begin && effect4End > effect4Begin && effect4End < end
      ? text.slice(effect4Begin, effect4End + EFFECT4_END.length)
      : undefined
    const kept = effect4Block === undefined ? section : section.replace("<!-- cluster-takeover:end -->", `${effect4Block}\n<!-- cluster-takeover:end -->`)
    const next = begin >= 0 && end > begin
      ? text.slice(0, begin) + kept + text.slice(end + "<!-- cluster-takeover:end -->".length)
      : anchor >= 0
      ? text.slice(0, anchor + "<!-- cluster:end -->".length) + "\n\n" + section + text.slice(anchor + "<!-- cluster:end -->".length)
      : text + "\n" + section + "\n"
    writeFileSync(file, next)
  }
})

NodeRuntime.runMain(main)
