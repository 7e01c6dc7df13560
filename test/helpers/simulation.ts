/**
 * Shared pieces of the suites that run the SDK against the simulator (test/e2e): the events a
 * client must receive exactly once, and faults set for one effect then put back.
 */
import * as Effect from "effect/Effect"
import type * as SessionEvent from "../../src/SessionEvent.js"
import * as Simulator from "../../src/simulator/Simulator.js"

/** The events a client must receive exactly once: the simulator's script (keep-alives aside). */
export const meaningful = (events: ReadonlyArray<SessionEvent.SessionEvent>) =>
  events.filter((event) => event._tag !== "Heartbeat" && event._tag !== "Connected")

/**
 * Runs with faults and a scenario on the simulator (for sessions created inside), then puts back
 * no faults and the `base` scenario.
 */
export const withFaults = (
  faults: Simulator.Faults,
  scenario: Partial<Simulator.Scenario> = {},
  base: Partial<Simulator.Scenario> = {}
) =>
<A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R | Simulator.Simulator> =>
  Effect.flatMap(Simulator.Simulator, (simulator) =>
    Effect.acquireUseRelease(
      Effect.zipRight(simulator.setFaults(faults), simulator.setScenario(scenario)),
      () => self,
      () => Effect.zipRight(simulator.setFaults({}), simulator.setScenario(base))
    ))
