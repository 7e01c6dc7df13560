/**
 * What the end-to-end suites (each edition's `e2e/` tests and `e2e.*.test.ts` here, against the
 * simulator over real sockets) do alike: create a session, drain a connection answering every
 * request, and read what it received; an `AgentApi` over undici pointed at a simulator, and the
 * attempts it sent as its own metrics count them; the SDK pointed at a describe block's simulator
 * (`Sim`), and what the suites check of a session's events. The simulator's script is
 * deterministic: each `action_run` says `(action i of n)` and each thought `Step i of n`, so a
 * client that got every event exactly once, in order, sees `1..n` once each, in order. Written once for both editions;
 * `../helpers/line.ts` binds it to the edition's Effect line (and starts its simulator, `simLayer`).
 * What each edition asks of its own simulator stays in its own suite.
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"
import * as AgentApi from "../../src/AgentApi.js"
import * as Answer from "../../src/Answer.js"
import * as Credentials from "../../src/Credentials.js"
import * as Dialect from "../../src/Dialect.js"
import type { EventStreamError } from "../../src/Errors.js"
import * as EventStream from "../../src/EventStream.js"
import * as Metrics from "../../src/Metrics.js"
import * as NodeAgentSessions from "../../src/NodeAgentSessions.js"
import type * as Session from "../../src/Session.js"
import type * as SessionEvent from "../../src/SessionEvent.js"
import * as WebSocket from "../../src/internal/webSocket.js"
import {
  failureIn,
  type LayerMethods,
  type Outcome,
  outcomeOf,
  outcomes,
  Sim,
  simLayer,
  spacedRetries,
  successOf,
  unwrapLayer
} from "../helpers/line.js"

/** What a connection's stream gave, one by one: an event, or the failure it ended with. */
export type Received = Outcome<SessionEvent.SessionEvent, EventStreamError>

/** The events received, in order. */
export const eventsOf = (results: ReadonlyArray<Received>): ReadonlyArray<SessionEvent.SessionEvent> =>
  results.flatMap((result) => {
    const event = successOf(result)
    return event === undefined ? [] : [event]
  })

/** The failure the stream ended with, if it failed. */
export const lastFailure = (results: ReadonlyArray<Received>): EventStreamError | undefined => {
  const last = results.at(-1)
  return last === undefined ? undefined : failureIn(last)
}

/** Creates a session (a failure is a defect): its id. */
export const createSession = (input: Session.CreateSessionInput) =>
  Effect.gen(function*() {
    const api = yield* AgentApi.AgentApi
    const session = yield* api.createSession(input)
    return session.session_id
  }).pipe(Effect.orDie)

/** Consumes a connection's events, answering every request with `answer`, until the stream ends. */
export const drain = (connection: EventStream.Connection, answer: Answer.Answer = Answer.grant("jane@example.com")) =>
  outcomes(connection.events).pipe(
    Stream.tap((result) => {
      const event = successOf(result)
      return event?._tag === "ExternalResourceRequested" ? Effect.orDie(connection.respond(event, answer)) : Effect.void
    }),
    Stream.runCollect,
    Effect.map((all): ReadonlyArray<Received> => Array.from(all))
  )

let names = 0

/** A name no other test of this process uses: `prefix`, the process id and a counter. */
export const uniqueName = (prefix: string): string => `${prefix}-${process.pid}-${++names}`

/** An `AgentApi` pointed at the simulator over undici, its dispatcher open for the test's scope. */
export const apiFor = (
  sim: SimInfo,
  options: Partial<AgentApi.Options> & { readonly credentials?: Credentials.Options } = {}
) =>
  Effect.gen(function*() {
    const { credentials, ...rest } = options
    const context = yield* Layer.build(
      Layer.merge(NodeHttpClient.layerUndici, Credentials.layer(credentials ?? { apiKey: Redacted.make(sim.accountKey) }))
    )
    return yield* AgentApi.make({ baseUrl: sim.baseUrl, dialect: Dialect.fromName(sim.dialect), ...rest }).pipe(
      Effect.provide(context),
      Effect.orDie
    )
  })

/** The attempts the SDK sent for an operation, by status, while `effect` ran (its own metrics). */
export const attemptsDuring = <A, E>(operation: string, statuses: ReadonlyArray<string>, effect: Effect.Effect<A, E>) =>
  Effect.gen(function*() {
    const count = (status: string) => Metrics.counterValue("agent_session_http_attempts_total", { operation, status })
    const before = yield* Effect.forEach(statuses, count)
    const result = yield* outcomeOf(effect)
    const after = yield* Effect.forEach(statuses, count)
    return { result, sent: Object.fromEntries(statuses.map((status, i) => [status, (after[i] ?? 0) - (before[i] ?? 0)])) }
  })

/** A reference simulator as the end-to-end tests reach it: its addresses, account key and dialect. */
export interface SimInfo {
  readonly baseUrl: string
  readonly wsUrl: string
  readonly accountKey: string
  readonly dialect: "documented" | "observed"
}

/**
 * How a test's simulator is started (`simLayer`, `startSimulatorIn` of `../helpers/line.ts`): the
 * flags of `simulate` (see `effect-agent-session simulate --help`), with its defaults.
 */
export interface SimOptions {
  readonly dialect?: "documented" | "observed" | undefined
  readonly actions?: number | undefined
  readonly ask?: "none" | "input" | "permission" | undefined
  /** Milliseconds between frames. */
  readonly frameDelay?: number | undefined
  /** `--fault` values, such as `fail-503=2` or `rate-limit=1:2`. */
  readonly faults?: ReadonlyArray<string> | undefined
}

/** Quick reconnects: every 30 ms, at most 8 retries. */
export const quick = spacedRetries(30, 8)

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
  unwrapLayer(
    Effect.gen(function*() {
      const sim = yield* Sim
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
  unwrapLayer(
    Effect.gen(function*() {
      const sim = yield* Sim
      return NodeAgentSessions.layer({
        apiKey: options.apiKey ?? sim.accountKey,
        baseUrl: sim.baseUrl,
        wsUrl: sim.wsUrl,
        dialect: Dialect.fromName(sim.dialect),
        transport,
        events: { reconnect: quick }
      })
    })
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
 * A describe block over its own simulator (`simulator`'s flags: its faults apply to every session
 * of it) and `sdk` pointed at it, shared by the block's tests.
 */
export const suiteOn = <R>(
  title: string,
  sdk: Layer.Layer<R, never, Sim>,
  simulator: SimOptions,
  tests: (it: LayerMethods<Sim | R>) => void
) =>
  describe(title, () => {
    layer(Layer.provideMerge(sdk, simLayer(simulator)), { excludeTestServices: true, timeout: "90 seconds" })(tests)
  })
