/**
 * Shared pieces of the suites that run the SDK against the simulator (test/e2e): the events a
 * client must receive exactly once, and faults set for one effect then put back.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import * as Dialect from "../../src/Dialect.js"
import * as NodeAgentSessions from "../../src/NodeAgentSessions.js"
import type * as SessionEvent from "../../src/SessionEvent.js"
import * as Simulator from "effect-agent-session-simulator/Simulator"

/** Quick reconnects: every 20 ms, at most 10 retries. */
export const fastReconnect = Schedule.spaced("20 millis").pipe(Schedule.intersect(Schedule.recurs(10)))

/** The whole SDK (`NodeAgentSessions.layer`) pointed at the simulator, in its dialect, with quick reconnects. */
export const sdkFor = (options: { readonly apiKey?: string; readonly transport: "websocket" | "sse" }) =>
  Layer.unwrapEffect(
    Effect.map(Simulator.Simulator, (simulator) =>
      NodeAgentSessions.layer({
        apiKey: options.apiKey ?? simulator.accountKey,
        baseUrl: simulator.baseUrl,
        wsUrl: simulator.wsUrl,
        dialect: simulator.dialect,
        transport: options.transport,
        events: { reconnect: fastReconnect }
      }))
  )

/** The dialect and transport pairs the simulator suites run in. */
export const variants = [
  { dialect: Dialect.documented, transport: "websocket" },
  { dialect: Dialect.observed, transport: "websocket" },
  { dialect: Dialect.observed, transport: "sse" }
] as const

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
