/**
 * The end-to-end tier on other runtimes (the conformance package's `runtimes.ts`: the runtimes,
 * their commands, the scenarios and `runtimeVerdict`, written once for both editions): Bun and Deno
 * (the pinned packages of `runtimes/`, installed on first use by `scripts/runtimes.mjs`), and Node 22,
 * all through the runtime-neutral layer (`FetchAgentSessions`: the runtime's `fetch` and
 * `WebSocket`). The simulators run on Node as child processes (`helpers/simulator.ts`), started once
 * for every runtime; each runtime runs `test/shared/scenarios.ts` (the program written once for both
 * editions, copied from the Effect 3 edition) once through `test/shared/runtimes.ts` (the runner
 * both editions share), which reports facts per scenario, and the verdict judges them: whole sessions over WebSocket and SSE in both dialects
 * through drops and an answer, a slow consumer (bounded where the socket cannot pause), and the
 * paid calls.
 *
 * A runtime with no package pinned for this platform is skipped, and says so.
 */
import { describe, it, layer } from "@effect/vitest"
import * as Path from "node:path"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { PACED_ACTIONS, runtimeCommand, runtimeNames, type RuntimeTarget } from "effect-agent-session-conformance"
import { type SimulatorInfo, spawnSimulator } from "../helpers/simulator.js"
import { assertPinned, runTier, runtimesScript, scenariosScript } from "../shared/runtimes.js"

const packageDir = Path.resolve(import.meta.dirname, "../..")

/** The simulators every runtime talks to (`RuntimeSimulators`). */
class Sims extends Context.Service<Sims, {
  readonly documented: SimulatorInfo
  readonly observed: SimulatorInfo
  readonly fast: SimulatorInfo
  readonly paid: SimulatorInfo
}>()("test/runtimes/Sims") {}

const simsLayer = Layer.effect(
  Sims,
  Effect.all({
    documented: spawnSimulator({ dialect: "documented", actions: 5, ask: "input", frameDelay: 2, faults: ["drop-after=2,5"] }),
    observed: spawnSimulator({ dialect: "observed", actions: 5, ask: "input", frameDelay: 2, faults: ["drop-after=2,5"] }),
    fast: spawnSimulator({ dialect: "documented", actions: PACED_ACTIONS, ask: "none", frameDelay: 0 }),
    paid: spawnSimulator({ dialect: "documented", actions: 5, ask: "none", frameDelay: 1, faults: ["fail-503=2", "exceed-max-actions=2"] })
  }, { concurrency: "unbounded" })
)

const target = (sim: SimulatorInfo): RuntimeTarget => ({
  baseUrl: sim.baseUrl,
  wsUrl: sim.wsUrl,
  accountKey: sim.accountKey,
  dialect: sim.dialect
})

layer(simsLayer, { excludeTestServices: true, timeout: "120 seconds" })("the end-to-end tier on Bun, Deno and Node (FetchAgentSessions)", (it) => {
  for (const runtime of runtimeNames) {
    it.effect(`${runtime}: sessions over WebSocket and SSE in both dialects through drops, an answer, a slow consumer, and the paid calls`, () =>
      Effect.gen(function*() {
        const command = runtimeCommand(runtime, scenariosScript, { runtimesScript, node: { path: process.execPath } })
        yield* runTier(runtime, command, yield* Sims, target, packageDir)
      }), 240_000)
  }
})

describe("the runtimes' packages", () => {
  it("are pinned: Bun 1.4.5 and Deno 2.9.6", () => assertPinned())
})
