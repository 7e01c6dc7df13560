/**
 * The conformance suite (`packages/conformance`, effect-agent-session-conformance) run with the
 * Effect 4 edition: every scenario in each of its variants, against its own simulator, the root's
 * command line as a child process (`simulate --port 0 --json` with the scenario's flags,
 * `helpers/simulator.ts`; one child for the cases of the same dialect and flags), through
 * `AgentSessions` over `NodeAgentSessions.layer`, over real sockets (`runCase` of
 * `shared/conformance.ts`, written once for both editions). What the scenario expects is judged by the suite's `verdict`, once for both editions;
 * `packages/effect3/test/conformance.test.ts` runs the same scenarios with the Effect 3 edition. The
 * replay scenarios run over each edition's in-memory replay in `shared/conformance.test.ts`,
 * written once for both editions.
 */
import { describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { type Case, cases, scenarios } from "effect-agent-session-conformance"
import * as Dialect from "../src/Dialect.js"
import { quick, Sim, simLayer } from "./helpers/sdk.js"
import { runCase } from "./shared/conformance.js"

/**
 * The cases that can share one simulator child (starting one takes seconds): those of the same
 * dialect and flags, whose faults apply to each session apart. A case with the witness counts the
 * HTTP faults, which the simulator spends across sessions: it gets its own.
 */
const groups = (all: ReadonlyArray<Case>): ReadonlyArray<ReadonlyArray<Case>> => {
  const byKey = new Map<string, Array<Case>>()
  for (const c of all) {
    const key = c.scenario.witness ? c.title : JSON.stringify([c.variant.dialect, c.scenario.simulator])
    byKey.set(key, [...(byKey.get(key) ?? []), c])
  }
  return [...byKey.values()]
}

/** Runs a case against the simulator of its group; what must hold is asserted. */
const runGroupCase = (c: Case) =>
  Effect.flatMap(Sim, (sim) => runCase(c, { ...sim, dialect: Dialect.fromName(sim.dialect) }, quick))

describe("conformance (Effect 4 edition)", () => {
  for (const group of groups(cases(scenarios))) {
    const first = group[0]
    if (first === undefined) continue
    layer(simLayer({ dialect: first.variant.dialect, ...first.scenario.simulator }), {
      excludeTestServices: true,
      timeout: "90 seconds"
    })((it) => {
      for (const c of group) it.effect(c.title, () => runGroupCase(c), 90_000)
    })
  }
})
