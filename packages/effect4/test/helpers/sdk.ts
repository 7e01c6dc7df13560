/**
 * The SDK of the Effect 4 edition pointed at a simulator child process (`helpers/simulator.ts`),
 * and what the end-to-end suites check of a session's events. The simulator's script is
 * deterministic: each `action_run` says `(action i of n)` and each thought `Step i of n`, so a
 * client that got every event exactly once, in order, sees `1..n` once each, in order.
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { describe, layer, type Vitest } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import * as AgentApi from "../../src/AgentApi.js"
import * as Credentials from "../../src/Credentials.js"
import * as Dialect from "../../src/Dialect.js"
import * as EventStream from "../../src/EventStream.js"
import * as NodeAgentSessions from "../../src/NodeAgentSessions.js"
import type * as SessionEvent from "../../src/SessionEvent.js"
import * as WebSocket from "../../src/internal/webSocket.js"
import { type SimulatorInfo, type SimulatorOptions, spawnSimulator } from "./simulator.js"

/** The simulator of a describe block, as a service of its layer. */
export class Sim extends Context.Service<Sim, SimulatorInfo>()("test/helpers/Sim") {}

/** A simulator child process as the `Sim` service (stopped with the layer). */
export const simLayer = (options: SimulatorOptions): Layer.Layer<Sim> => Layer.effect(Sim, spawnSimulator(options))

/** Quick reconnects: every 30 ms, at most 8 retries. */
export const quick = Schedule.spaced("30 millis").pipe(Schedule.upTo({ times: 8 }))

/** The transports of the event channel. */
export type TransportName = "websocket" | "sse"

/**
 * `AgentApi`, `EventStream` (over the SDK's `ws` constructor, or Server-Sent Events over undici)
 * and `Credentials`, pointed at the simulator.
 */
export const channelLayer = (
  transport: TransportName,
  options: Omit<EventStream.Options, "url" | "dialect"> = {}
): Layer.Layer<AgentApi.AgentApi | EventStream.EventStream | Credentials.Credentials, never, Sim> =>
  Layer.unwrap(
    Effect.map(Effect.service(Sim), (sim) => {
      const dialect = Dialect.fromName(sim.dialect)
      const credentials = Credentials.layer({ apiKey: sim.accountKey })
      const api = AgentApi.layer({ baseUrl: sim.baseUrl, dialect })
      const events: Layer.Layer<EventStream.EventStream, never, EventStream.Requirements | EventStream.SseRequirements> =
        transport === "sse"
          ? EventStream.layerSse({ reconnect: quick, ...options, url: sim.baseUrl, dialect })
          : EventStream.layer({ reconnect: quick, ...options, url: sim.wsUrl, dialect })
      return Layer.merge(api, events).pipe(
        Layer.provideMerge(Layer.mergeAll(credentials, NodeHttpClient.layerUndici, WebSocket.layer())),
        Layer.orDie
      )
    })
  )

/** The whole SDK (`NodeAgentSessions.layer`) pointed at the simulator, in its dialect, with quick reconnects. */
export const sdkLayer = (transport: TransportName, options: { readonly apiKey?: string } = {}) =>
  Layer.unwrap(
    Effect.map(Effect.service(Sim), (sim) =>
      NodeAgentSessions.layer({
        apiKey: options.apiKey ?? sim.accountKey,
        baseUrl: sim.baseUrl,
        wsUrl: sim.wsUrl,
        dialect: Dialect.fromName(sim.dialect),
        transport,
        events: { reconnect: quick }
      }))
  ).pipe(Layer.orDie)

/** The events a client must receive exactly once: the script (keep-alives aside). */
export const meaningful = (events: ReadonlyArray<SessionEvent.SessionEvent>) =>
  events.filter((event) => event._tag !== "Heartbeat" && event._tag !== "Connected")

/** The action numbers of the `action_run` events, in the order received. */
export const actionNumbers = (events: ReadonlyArray<SessionEvent.SessionEvent>): ReadonlyArray<number> =>
  events.flatMap((event) => {
    if (event._tag !== "ActionRun") return []
    const match = /\(action (\d+) of \d+\)/.exec(event.content)
    return match?.[1] === undefined ? [] : [Number(match[1])]
  })

/** The step numbers of the thoughts of each step, in the order received. */
export const stepNumbers = (events: ReadonlyArray<SessionEvent.SessionEvent>): ReadonlyArray<number> =>
  events.flatMap((event) => {
    if (event._tag !== "ThoughtsAndMemories") return []
    const match = /^Step (\d+) of \d+/.exec(event.thought)
    return match?.[1] === undefined ? [] : [Number(match[1])]
  })

/** `1..n`. */
export const upTo = (n: number): ReadonlyArray<number> => Array.from({ length: n }, (_, i) => i + 1)

/**
 * A describe block over its own simulator child (`simulator`'s flags: its faults apply to every
 * session of it) and `sdk` pointed at it, shared by the block's tests.
 */
export const suiteOn = <R>(
  title: string,
  sdk: Layer.Layer<R, never, Sim>,
  simulator: SimulatorOptions,
  tests: (it: Vitest.MethodsNonLive<Sim | R>) => void
) =>
  describe(title, () => {
    layer(Layer.provideMerge(sdk, simLayer(simulator)), { excludeTestServices: true, timeout: "90 seconds" })(tests)
  })
