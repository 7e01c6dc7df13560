/**
 * The SDK's share of a take-over's CPU, without the cluster: what attaching a session taken over
 * costs (`AgentSessions.attach` with its open request, then its events run), per session, on each
 * line. A take-over (packages/cluster/bench/clusterTakeover.ts) costs `@effect/cluster`'s floor,
 * this, and the cluster edition's own work (its log, claims, answer watch, notice).
 *
 * For each run: the simulator (its own process, sessions that ask for a permission after a few
 * actions and then wait, as in clusterTakeover.ts); a holder process (the shared fixture
 * `test/shared/fixtures/attacher.ts`, MODE=hold) starts `--sessions` sessions and is killed
 * (SIGKILL) once each asked; an attacher process (the same fixture, MODE=attach, `--expose-gc`)
 * measures its idle rate, then attaches them all. Once the simulator has seen every session's
 * channel open again, the attacher waits 1 s and reports its CPU since the first attach. CPU per
 * session: that CPU, less the idle rate over as long, divided by the sessions.
 *
 *   npx tsx packages/cluster/bench/attachCost.ts [--line effect3|effect4] [--raw | --fiber] [--sessions 3400] [--runs 3] [--profile <dir>] [--allocations <dir>]
 *
 * `--raw` opens each channel with a bare `ws` socket instead of the SDK (the documented dialect's
 * handshake, nothing read), under the line's Node: the floor of the SDK's share. `--fiber`, the
 * same socket waited on by one fiber of the line's Effect (its open, then its close): the least
 * an attach on that line's runtime can cost.
 *
 * `--profile <dir>` writes each run's attacher's CPU profile from the first attach on
 * (`attach-<line>-<run>.cpuprofile`) there; `--allocations <dir>`, instead, a sampling profile of
 * what it allocated (`attach-<line>-<run>.heapprofile`, collected objects included).
 */
import { type ChildProcess, fork, spawn } from "node:child_process"
import { join } from "node:path"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Effect from "effect/Effect"
import { readLines } from "../test/shared/fixtures/lines.js"
import { fixtureCommand } from "../test/helpers/processLine.js"
import { effect4FixtureCommands, type FixtureCommand } from "./effect4Fixtures.js"

const root = join(import.meta.dirname, "..", "..", "..")
const flag = (name: string, fallback: string): string => {
  const i = process.argv.indexOf(`--${name}`)
  return i >= 0 ? process.argv[i + 1] ?? fallback : fallback
}
const LINE = flag("line", "effect3")
const SESSIONS = Number(flag("sessions", "3400"))
const RUNS = Number(flag("runs", "3"))
const PROFILE_DIR = flag("profile", "")
const ALLOCATIONS_DIR = flag("allocations", "")
const RAW = process.argv.includes("--raw") ? "1" : process.argv.includes("--fiber") ? "fiber" : ""
/** What attaches, as a row names it (by the attacher's RAW). */
const attaching: Record<string, string> = { "": "", "1": ", bare ws", fiber: ", bare ws in a fiber" }

/** The attacher fixture of the line measured (Effect 4: its copy, under the Node 22 the fixtures run on). */
const attacherCommand = (): FixtureCommand =>
  LINE === "effect3" ? fixtureCommand("attacher.ts") : effect4FixtureCommands(root, ["attacher.ts"])["attacher.ts"]!

interface Ready {
  readonly baseUrl: string
  readonly wsUrl: string
  readonly accountKey: string
}

const simulatorProcess = Effect.acquireRelease(
  Effect.async<{ readonly child: ChildProcess; readonly ready: Ready }>((resume) => {
    // 6 actions, the permission asked after a few of them, 20 ms between frames.
    const child = fork(join(root, "packages", "cluster", "bench", "clusterSimulator.ts"), ["6", "20", "permission"], {
      execArgv: ["--import", "tsx"],
      stdio: ["ignore", "inherit", "inherit", "ipc"]
    })
    child.on("message", (message: { type?: string } & Ready) => {
      if (message.type === "ready") resume(Effect.succeed({ child, ready: message }))
    })
  }),
  ({ child }) => Effect.sync(() => child.kill("SIGKILL"))
)

/** How many of `ids` the simulator has accepted at least `at` channels of. */
const connected = (simulator: ChildProcess, ids: ReadonlyArray<string>, at: number) =>
  Effect.async<number>((resume) => {
    const onMessage = (message: { type?: string; count?: number }) => {
      if (message.type !== "connected") return
      simulator.off("message", onMessage)
      resume(Effect.succeed(message.count ?? 0))
    }
    simulator.on("message", onMessage)
    simulator.send({ type: "connected", ids, at })
  })

const fixture = (command: FixtureCommand, env: NodeJS.ProcessEnv, flags: ReadonlyArray<string>) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const child = spawn(command.command, [...flags, ...command.args], {
        cwd: root,
        env: { ...process.env, ...env },
        stdio: ["pipe", "pipe", "inherit"]
      })
      return { child, ...readLines(child.stdout!) }
    }),
    ({ child }) => Effect.sync(() => child.kill("SIGKILL"))
  )

const oneRun = (command: FixtureCommand, simulator: { readonly child: ChildProcess; readonly ready: Ready }, run: number) =>
  Effect.scoped(Effect.gen(function*() {
    const env = {
      AGENT_SESSION_API_KEY: simulator.ready.accountKey,
      AGENT_SESSION_BASE_URL: simulator.ready.baseUrl,
      AGENT_SESSION_WS_URL: simulator.ready.wsUrl,
      SESSIONS: String(SESSIONS)
    }
    const holder = yield* fixture(command, { ...env, MODE: "hold" }, [])
    yield* holder.nextLine((line) => line === "held-all")
    const held = holder.lines.filter((line) => line.startsWith("held\t"))
    const ids = held.map((line) => (JSON.parse(line.split("\t")[1]!) as { session_id: string }).session_id)
    holder.child.kill("SIGKILL")
    yield* Effect.sleep("1 second")
    const profile = PROFILE_DIR === "" ? "" : join(PROFILE_DIR, `attach-${LINE}-${run}.cpuprofile`)
    const allocations = ALLOCATIONS_DIR === "" ? "" : join(ALLOCATIONS_DIR, `attach-${LINE}-${run}.heapprofile`)
    const attacher = yield* fixture(command, { ...env, MODE: "attach", RAW, PROFILE: profile, ALLOCATIONS: allocations }, ["--expose-gc"])
    attacher.child.stdin!.write(held.join("\n") + "\ngo\n")
    yield* attacher.nextLine((line) => line === "attaching")
    const since = Date.now()
    while ((yield* connected(simulator.child, ids, 2)) < ids.length) {
      if (Date.now() - since > 120_000) return yield* Effect.dieMessage("not every channel opened again in 120 s")
      yield* Effect.sleep("50 millis")
    }
    const openMs = Date.now() - since
    attacher.child.stdin!.write("stop\n")
    const [, n, cpu, idle] = (yield* attacher.nextLine((line) => line.startsWith("attached "))).split(" ").map(Number)
    const window = (openMs + 1000) / 1000
    const perSession = (cpu! - idle! * window) / n! / 1000
    process.stdout.write(
      `| ${LINE}${attaching[RAW]} | ${run} | ${n} | ${openMs} ms | ${(cpu! / 1000).toFixed(0)} ms (idle ${(idle! / 1000).toFixed(1)} ms/s) | **${perSession.toFixed(3)} ms** |\n`
    )
  }))

const program = Effect.gen(function*() {
  const command = attacherCommand()
  const simulator = yield* simulatorProcess
  process.stdout.write(
    `Node ${process.version} (this process), ${LINE}; ${SESSIONS} sessions a run\n\n| line | run | sessions | every channel open again after | attacher CPU, first attach to open + 1 s | CPU per session |\n| --- | --- | --- | --- | --- | --- |\n`
  )
  for (let run = 1; run <= RUNS; run++) yield* oneRun(command, simulator, run)
})

NodeRuntime.runMain(Effect.scoped(program))
