/**
 * The end-to-end tier on other runtimes: Bun and Deno (the pinned packages of `runtimes/`,
 * installed on first use by `scripts/runtimes.mjs`), and Node 22 through the same runtime-neutral
 * layer (`FetchAgentSessions`: the runtime's `fetch` and `WebSocket`). The simulators run on Node
 * as child processes (`helpers/simulator.ts`), started once for every runtime; each runtime runs
 * `scenarios.ts` once, which reports facts per scenario, and the facts are asserted here:
 *
 * - a whole session over WebSocket and over SSE, in both dialects, dropped twice and reconnected,
 *   with the agent's request answered once and echoed by the service;
 * - a slow consumer: on a socket that cannot pause (Deno's, Node's standard `WebSocket`) the events
 *   stop at a bound with `BufferOverflow`, every event before it delivered in order; on Deno run with
 *   `--unstable-net` the layer reads a `WebSocketStream` only while the consumer wants more: every
 *   event arrives, no overflow, at most `bufferSize` waiting; on a socket
 *   that pauses (Bun's) every event arrives and few wait at once;
 * - the paid calls: a create answered 503 is sent again (it provably did not act) and the session
 *   runs; an agent that runs over its budget fails the run with `ActionBudgetExceeded`; a create
 *   whose answer is lost after the server acted fails with `OutcomeUnknown` and created exactly
 *   one session (never sent again).
 *
 * A runtime with no package pinned for this platform is skipped, and says so.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import * as ChildProcess from "node:child_process"
import * as Path from "node:path"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { startActingServer } from "effect-agent-session-conformance"
import { type SimulatorInfo, spawnSimulator } from "../helpers/simulator.js"
import type { Facts, Scenario, Target } from "./scenarios.js"

const packageDir = Path.resolve(import.meta.dirname, "../..")
const script = Path.join(import.meta.dirname, "scenarios.ts")

/**
 * The runtimes: Bun, Deno as it starts (a standard `WebSocket`, which cannot pause), Deno with
 * `--unstable-net` (its `WebSocketStream`, read only while the consumer wants more), Node 22.
 */
type Runtime = "bun" | "deno" | "deno --unstable-net" | "node"

/** The command of each runtime running `scenarios.ts` from the sources, or why it cannot. */
const commandOf = (runtime: Runtime): ReadonlyArray<string> | string => {
  const condition = "--conditions=effect-agent-session-source"
  if (runtime === "node") return [process.execPath, condition, "--import", "tsx", script]
  const streams = runtime === "deno --unstable-net"
  const printed = ChildProcess.spawnSync(process.execPath, [Path.join(packageDir, "scripts/runtimes.mjs"), "--print", streams ? "deno" : runtime], {
    encoding: "utf8"
  })
  if (printed.status !== 0) return printed.stderr.trim()
  const binary = printed.stdout.trim()
  return runtime === "bun"
    ? [binary, condition, script]
    : [binary, "run", "--allow-all", "--sloppy-imports", "--no-lock", ...(streams ? ["--unstable-net"] : []), condition, script]
}

/** The environment of a runner: none of this machine's AGENT_SESSION_*, npm_* or VITEST* variables. */
const cleanEnv = (): NodeJS.ProcessEnv => ({
  ...Object.fromEntries(
    Object.entries(process.env).filter(([name]) =>
      !name.startsWith("AGENT_SESSION_") && !name.startsWith("npm_") && name !== "NODE_OPTIONS" &&
      !name.startsWith("VITEST")
    )
  ),
  NO_COLOR: "1",
  DENO_NO_UPDATE_CHECK: "1"
})

/** Runs the scenarios on a runtime: the facts of each, by name. */
const runScenarios = (command: ReadonlyArray<string>, scenarios: ReadonlyArray<Scenario>) =>
  Effect.callback<Map<string, Facts>, Error>((resume) => {
    const [binary = "", ...args] = command
    const child = ChildProcess.execFile(
      binary,
      [...args, JSON.stringify(scenarios)],
      { cwd: packageDir, env: cleanEnv(), timeout: 180_000, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const facts = new Map<string, Facts>()
        for (const line of stdout.split("\n")) {
          if (line.startsWith("{")) {
            const parsed = JSON.parse(line) as Facts
            facts.set(parsed.name, parsed)
          }
        }
        if (error !== null || facts.size !== scenarios.length) {
          resume(Effect.fail(new Error(`${command.join(" ")} (${String(error?.code ?? "ok")}):\n${stdout}\n${stderr}`)))
        } else {
          resume(Effect.succeed(facts))
        }
      }
    )
    return Effect.sync(() => child.kill("SIGKILL"))
  })

const SLOW_BUFFER = 4
const PACED_ACTIONS = 400

/** The simulators every runtime talks to. */
class Sims extends Context.Service<Sims, {
  readonly documented: SimulatorInfo
  readonly observed: SimulatorInfo
  readonly fast: SimulatorInfo
  readonly paid: SimulatorInfo
}>()("test/runtimes/Sims") {}

const simsLayer = Layer.effect(
  Sims,
  Effect.all({
    // Dropped after the 2nd and 5th frames of each session; the agent asks for an input.
    documented: spawnSimulator({ dialect: "documented", actions: 5, ask: "input", frameDelay: 2, faults: ["drop-after=2,5"] }),
    observed: spawnSimulator({ dialect: "observed", actions: 5, ask: "input", frameDelay: 2, faults: ["drop-after=2,5"] }),
    // As fast as it can: the socket outruns a slow consumer.
    fast: spawnSimulator({ dialect: "documented", actions: PACED_ACTIONS, ask: "none", frameDelay: 0 }),
    // The first create is answered 503 twice; the agent runs 2 actions over its budget.
    paid: spawnSimulator({ dialect: "documented", actions: 5, ask: "none", frameDelay: 1, faults: ["fail-503=2", "exceed-max-actions=2"] })
  }, { concurrency: "unbounded" })
)

const target = (sim: SimulatorInfo): Target => ({
  baseUrl: sim.baseUrl,
  wsUrl: sim.wsUrl,
  accountKey: sim.accountKey,
  dialect: sim.dialect
})

const upTo = (n: number): ReadonlyArray<number> => Array.from({ length: n }, (_, i) => i + 1)

const facts = (all: Map<string, Facts>, name: string): Facts => {
  const found = all.get(name)
  assert.isDefined(found, name)
  return found!
}

/** A whole session received exactly once, in order, with the one request answered and echoed. */
const assertWholeSession = (got: Facts) => {
  assert.isUndefined(got.failure, `${got.name}: ${got.failure}`)
  assert.strictEqual(got.tags?.[0], "Started", got.name)
  assert.strictEqual(got.tags?.at(-1), "Complete", got.name)
  assert.deepStrictEqual(got.actions, upTo(5), got.name)
  assert.strictEqual(got.asked, 1, got.name)
  assert.deepStrictEqual(got.granted, ["jane@example.com"], got.name)
}

layer(simsLayer, { excludeTestServices: true, timeout: "120 seconds" })("the end-to-end tier on Bun, Deno and Node (FetchAgentSessions)", (it) => {
  for (const runtime of ["bun", "deno", "deno --unstable-net", "node"] as const) {
    it.effect(`${runtime}: sessions over WebSocket and SSE in both dialects through drops, an answer, a slow consumer, and the paid calls`, () =>
      Effect.gen(function*() {
        const command = commandOf(runtime)
        if (typeof command === "string") {
          // No package pinned for this platform: nothing to run it with.
          console.warn(`skipped on ${runtime}: ${command}`)
          return
        }
        const sims = yield* Sims
        const acting = yield* Effect.acquireRelease(
          Effect.promise(() => startActingServer("reset")),
          ({ close }) => Effect.promise(close)
        )
        const scenarios: Array<Scenario> = [
          ...(["documented", "observed"] as const).flatMap((dialect) =>
            (["websocket", "sse"] as const).map((transport): Scenario => ({
              kind: "run",
              name: `run ${transport} ${dialect}`,
              target: target(sims[dialect]),
              transport
            }))
          ),
          { kind: "slow", name: "slow", target: target(sims.fast), transport: "websocket", bufferSize: SLOW_BUFFER },
          {
            kind: "paced",
            name: "paced",
            target: target(sims.fast),
            bufferSize: SLOW_BUFFER,
            pauseMillis: 2,
            maxActions: PACED_ACTIONS
          },
          { kind: "run", name: "paid", target: target(sims.paid), transport: "websocket" },
          { kind: "create", name: "create lost after acting", baseUrl: acting.acting.url, key: "sk-runtime-key" }
        ]
        const all = yield* runScenarios(command, scenarios)
        const ran = facts(all, "run websocket documented").runtime
        assert.match(ran, new RegExp(`^${runtime.split(" ")[0]} `))

        for (const dialect of ["documented", "observed"]) {
          for (const transport of ["websocket", "sse"]) assertWholeSession(facts(all, `run ${transport} ${dialect}`))
        }

        // The slow consumer.
        const slow = facts(all, "slow")
        const paced = facts(all, "paced")
        assert.strictEqual(slow.pausable, paced.pausable)
        // A consumer slower than the socket: at most 2 x bufferSize events ever waited; it kept up
        // (every event) or the events stopped with BufferOverflow after every event before it.
        for (const got of [paced, ...(slow.pausable === true ? [] : [slow])]) {
          if (got.failure === undefined) {
            assert.deepStrictEqual(got.actions, upTo(PACED_ACTIONS), got.name)
          } else {
            assert.strictEqual(got.failure, "BufferOverflow", got.name)
            assert.strictEqual(got.limit, 2 * SLOW_BUFFER, got.name)
            assert.strictEqual(got.mayStillBeRunning, true, got.name)
            assert.deepStrictEqual(got.actions, upTo(got.actions?.length ?? 0), `${got.name}: a prefix, in order`)
          }
        }
        assert.isAtMost(paced.peakBuffered ?? Infinity, 2 * SLOW_BUFFER)
        // Bun's WebSocket has pause()/resume() (its pause lets frames already read through: the
        // bound holds there too); Deno's and Node's have not. Deno's WebSocketStream (with
        // --unstable-net) is read only while the consumer wants more: every event arrives, no
        // overflow, and no more than bufferSize ever wait.
        assert.strictEqual(paced.pausable, runtime === "bun" || runtime === "deno --unstable-net")
        assert.strictEqual(paced.streams, runtime === "deno --unstable-net")
        if (runtime === "deno --unstable-net") {
          assert.isUndefined(paced.failure, `paced: ${paced.failure}`)
          assert.deepStrictEqual(paced.actions, upTo(PACED_ACTIONS))
          assert.isAtMost(paced.peakBuffered ?? Infinity, SLOW_BUFFER)
        }
        if (slow.pausable !== true) {
          // One pull taken, then nothing: the bound is reached for sure, the connection closed;
          // what the pull took, and at most 2 x bufferSize more, were delivered.
          assert.strictEqual(slow.failure, "BufferOverflow")
          assert.strictEqual(slow.closedReason, "failed")
          assert.strictEqual(slow.tags?.[0], "Started")
          assert.isAtLeast(slow.firstChunk ?? 0, 1)
          assert.isAtMost(slow.tags?.length ?? Infinity, (slow.firstChunk ?? 0) + 2 * SLOW_BUFFER)
        }

        // The paid calls.
        assert.strictEqual(facts(all, "paid").failure, "ActionBudgetExceeded")
        assert.strictEqual(facts(all, "create lost after acting").failure, "OutcomeUnknown")
        assert.strictEqual(acting.acting.created(), 1, "one create, one session: never sent again")
      }), 240_000)
  }
})

describe("the runtimes' packages", () => {
  it("are pinned: Bun 1.4.5 and Deno 2.9.6", () => {
    for (const [runtime, version] of [["bun", "1.4.5"], ["deno", "2.9.6"]] as const) {
      const printed = ChildProcess.spawnSync(process.execPath, [Path.join(packageDir, "scripts/runtimes.mjs"), "--version", runtime], {
        encoding: "utf8"
      })
      if (printed.status === 3) continue
      assert.strictEqual(printed.stdout.trim(), version)
    }
  })
})
