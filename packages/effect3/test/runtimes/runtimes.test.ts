/**
 * The Effect 3 edition's end-to-end tier on other runtimes (the conformance package's
 * `runtimes.ts`: the runtimes, their commands, the scenarios and `runtimeVerdict`, written once for
 * both editions): Bun and Deno (the pinned packages the Effect 4 edition's `scripts/runtimes.mjs`
 * installs on first use, run here as a command, not imported), and Node 22
 * (`scripts/node22.mjs --print-node`: Node 20 has no global `WebSocket`), all through the
 * runtime-neutral layer (`FetchAgentSessions`: the runtime's `fetch` and `WebSocket`). The
 * simulators run in this process on port 0; each runtime runs `test/shared/scenarios.ts` (the
 * program written once for both editions) once as a child process through `test/shared/runtimes.ts`
 * (the runner both editions share), which reports facts per scenario, and the verdict judges them: whole sessions
 * over WebSocket and SSE in both dialects through drops and an answer, a slow consumer (bounded
 * where the socket cannot pause), and the paid calls.
 *
 * A runtime with no package pinned for this platform is skipped, and says so.
 */
import { describe, it, layer } from "@effect/vitest"
import * as ChildProcess from "node:child_process"
import * as Path from "node:path"
import * as Url from "node:url"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { PACED_ACTIONS, runtimeCommand, runtimeNames, type RuntimeTarget } from "effect-agent-session-conformance"
import * as Dialect from "../../src/Dialect.js"
import * as Simulator from "effect-agent-session-simulator/Simulator"
import { assertPinned, runTier, runtimesScript, scenariosScript } from "../shared/runtimes.js"

const here = Path.dirname(Url.fileURLToPath(import.meta.url))
const root = Path.resolve(here, "../../../..")

/** Node 22 (Node 20, which runs this suite, has no global `WebSocket`), or why there is none. */
const node22 = (): { readonly path: string } | { readonly error: string } => {
  const ran = ChildProcess.spawnSync(process.execPath, [Path.join(Path.dirname(runtimesScript), "node22.mjs"), "--print-node"], {
    encoding: "utf8"
  })
  return ran.status === 0 ? { path: ran.stdout.trim() } : { error: ran.stderr.trim() }
}

/** The simulators every runtime talks to (`RuntimeSimulators`). */
class Sims extends Context.Tag("test/runtimes/Sims")<Sims, {
  readonly documented: Simulator.Service
  readonly observed: Simulator.Service
  readonly fast: Simulator.Service
  readonly paid: Simulator.Service
}>() {}

const simsLayer = Layer.scoped(
  Sims,
  Effect.all({
    documented: Simulator.make({
      port: 0,
      dialect: Dialect.documented,
      scenario: { actions: 5, ask: "input", frameDelay: "2 millis" },
      faults: { ws: { dropAfter: [2, 5] } }
    }),
    observed: Simulator.make({
      port: 0,
      dialect: Dialect.observed,
      scenario: { actions: 5, ask: "input", frameDelay: "2 millis" },
      faults: { ws: { dropAfter: [2, 5] } }
    }),
    fast: Simulator.make({ port: 0, dialect: Dialect.documented, scenario: { actions: PACED_ACTIONS, ask: "none", frameDelay: 0 } }),
    paid: Simulator.make({
      port: 0,
      dialect: Dialect.documented,
      scenario: { actions: 5, ask: "none", frameDelay: "1 millis" },
      faults: { http: { fail503: 2 }, ws: { exceedMaxActions: 2 } }
    })
  }).pipe(Effect.orDie)
)

const target = (sim: Simulator.Service): RuntimeTarget => ({
  baseUrl: sim.baseUrl,
  wsUrl: sim.wsUrl,
  accountKey: sim.accountKey,
  dialect: sim.dialect.name === "observed" ? "observed" : "documented"
})

layer(simsLayer, { excludeTestServices: true })("the Effect 3 edition on Bun, Deno and Node 22 (FetchAgentSessions)", (it) => {
  for (const runtime of runtimeNames) {
    it.scoped(`${runtime}: sessions over WebSocket and SSE in both dialects through drops, an answer, a slow consumer, and the paid calls`, () =>
      Effect.gen(function*() {
        const command = runtimeCommand(runtime, scenariosScript, { runtimesScript, node: node22() })
        yield* runTier(runtime, command, yield* Sims, target, root)
      }), 240_000)
  }
})

describe("the runtimes the Effect 3 edition is tested on", () => {
  it("are the pinned ones: Bun 1.4.5 and Deno 2.9.6", () => assertPinned())
})
