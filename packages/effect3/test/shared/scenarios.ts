/**
 * The end-to-end scenarios of the runtime tier, as a plain program written once for both editions:
 * run by Bun and by Deno (and Node 22) as a child process of each edition's
 * `runtimes/runtimes.test.ts`, which starts the simulators and asserts what this program reports.
 * The Effect 4 edition runs its copy (`packages/effect4/test/shared/scenarios.ts`, made by
 * `scripts/binding.mjs`), whose imports reach that edition's sources. It uses `FetchAgentSessions`
 * (the runtime's own `fetch` and `WebSocket`) or, for the SSE transport, the same layer's `fetch`;
 * it decides nothing itself: per scenario it prints one JSON line of facts (the events received,
 * how the run ended), never a verdict. What the two lines name differently comes from the
 * edition's `helpers/programLine.ts` (not `helpers/line.ts`: the runtime loads no vitest).
 *
 * Usage: `<runtime> scenarios.ts '<JSON array of Scenario>'`.
 */
import * as Cause from "effect/Cause"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"
import { Socket as CoreSocket, StreamWebSocket } from "effect-agent-session-shell"
// The scenarios and the facts of the tier, as the conformance package defines them (types only:
// nothing of it is loaded by the runtime).
import type {
  RuntimeFacts as Facts,
  RuntimeScenario as Scenario,
  RuntimeTarget as Target
} from "effect-agent-session-conformance"
import * as AgentApi from "../../src/AgentApi.js"
import * as AgentSessions from "../../src/AgentSessions.js"
import * as Answer from "../../src/Answer.js"
import * as Credentials from "../../src/Credentials.js"
import * as Dialect from "../../src/Dialect.js"
import * as FetchAgentSessions from "../../src/FetchAgentSessions.js"
import * as EventStreamInternal from "../../binding/internal/eventStream.js"
import * as StandardWebSocket from "../../binding/internal/standardWebSocket.js"
import type * as SessionEvent from "../../src/SessionEvent.js"
import { changesOf, FetchHttpClient, pullOnce, spacedRetries } from "../helpers/programLine.js"

const runtimeName = (): string => {
  const global = globalThis as { readonly Bun?: { readonly version: string }; readonly Deno?: { readonly version: { readonly deno: string } } }
  if (global.Bun !== undefined) return `bun ${global.Bun.version}`
  if (global.Deno !== undefined) return `deno ${global.Deno.version.deno}`
  return `node ${process.versions.node}`
}

const request = { start_url: "https://example.com", max_actions: 8, goal: "Find the opening hours" }
const quick = spacedRetries(30, 8)

const meaningful = (events: ReadonlyArray<SessionEvent.SessionEvent>) =>
  events.filter((event) => event._tag !== "Heartbeat" && event._tag !== "Connected")

const actionNumbers = (events: ReadonlyArray<SessionEvent.SessionEvent>): ReadonlyArray<number> =>
  events.flatMap((event) => {
    if (event._tag !== "ActionRun") return []
    const match = /\(action (\d+) of \d+\)/.exec(event.content)
    return match?.[1] === undefined ? [] : [Number(match[1])]
  })

const errorFacts = (error: unknown) => {
  const fields = error as { readonly _tag?: string; readonly limit?: number; readonly mayStillBeRunning?: boolean }
  return { failure: fields._tag ?? String(error), limit: fields.limit, mayStillBeRunning: fields.mayStillBeRunning }
}

const sdk = (target: Target, transport: "websocket" | "sse", bufferSize?: number) =>
  FetchAgentSessions.layer({
    apiKey: target.accountKey,
    baseUrl: target.baseUrl,
    wsUrl: target.wsUrl,
    dialect: Dialect.fromName(target.dialect),
    transport,
    events: { reconnect: quick, ...(bufferSize === undefined ? {} : { bufferSize }) }
  })

const run = (scenario: Extract<Scenario, { kind: "run" }>) => {
  let asked = 0
  return AgentSessions.run(request, {
    onRequest: () => Effect.sync(() => (asked += 1)).pipe(Effect.as(Answer.grant("jane@example.com")))
  }).pipe(
    Effect.map((outcome): Omit<Facts, "name" | "runtime"> => {
      const events = meaningful(outcome.events)
      return {
        tags: events.map((event) => event._tag),
        actions: actionNumbers(events),
        granted: events.flatMap((e) => e._tag === "ExternalResourceGranted" ? [Option.getOrUndefined(e.input)] : []),
        asked
      }
    }),
    Effect.provide(sdk(scenario.target, scenario.transport))
  )
}

/** Whether the runtime has `WebSocketStream` (Deno with `--unstable-net`): the layer's sockets then pause. */
const streams = StreamWebSocket.available() !== undefined

/**
 * Whether the layer's sockets can pause their reading: over `WebSocketStream`, yes; else as the
 * runtime's own `WebSocket` (Bun's has `pause()`/`resume()`).
 */
const pausable = streams || CoreSocket.isPausable(globalThis.WebSocket.prototype)

const slow = (scenario: Extract<Scenario, { kind: "slow" }>) =>
  // A socket that pauses would wait for the consumer for ever: the paced scenario is its test.
  pausable ? Effect.succeed({ pausable }) : Effect.scoped(Effect.gen(function*() {
    const running = yield* AgentSessions.start(request)
    const pull = yield* Stream.toPull(running.events)
    const first = yield* pullOnce(pull)
    // Nothing more is taken until the connection is closed (it never is while it can pause).
    const closed = yield* changesOf(running.state).pipe(
      Stream.filter((state) => state._tag === "Closed"),
      Stream.runHead
    )
    const rest: Array<SessionEvent.SessionEvent> = []
    const ended = yield* Effect.match(
      Stream.runForEach(Stream.fromPull(Effect.succeed(pull)), (event) => Effect.sync(() => void rest.push(event))),
      { onFailure: errorFacts, onSuccess: () => ({}) }
    )
    const events = meaningful([...first, ...rest])
    return {
      tags: events.map((event) => event._tag),
      actions: actionNumbers(events),
      pausable,
      firstChunk: first.length,
      closedReason: Option.match(closed, { onNone: () => undefined, onSome: (state) => state._tag === "Closed" ? state.reason : undefined }),
      ...ended
    }
  })).pipe(Effect.provide(sdk(scenario.target, scenario.transport, scenario.bufferSize)))

const paced = (scenario: Extract<Scenario, { kind: "paced" }>) =>
  Effect.scoped(Effect.gen(function*() {
    const { target } = scenario
    const dialect = Dialect.fromName(target.dialect)
    const api = yield* AgentApi.AgentApi
    const session = yield* api.createSession({ ...request, max_actions: scenario.maxActions })
    const engine = yield* EventStreamInternal.connectEngine(
      { url: target.wsUrl, dialect, reconnect: quick },
      session.session_id,
      { bufferSize: scenario.bufferSize }
    )
    const received: Array<SessionEvent.SessionEvent> = []
    const ended = yield* Effect.match(
      engine.connection.events.pipe(
        Stream.tap(() => Effect.sleep(Duration.millis(scenario.pauseMillis))),
        Stream.runForEach((event) => Effect.sync(() => void received.push(event)))
      ),
      { onFailure: errorFacts, onSuccess: () => ({}) }
    )
    const events = meaningful(received)
    return {
      tags: events.map((event) => event._tag),
      actions: actionNumbers(events),
      peakBuffered: engine.peakBuffered(),
      pausable,
      streams,
      ...ended
    }
  })).pipe(
    Effect.provide(Layer.mergeAll(
      AgentApi.layer({ baseUrl: scenario.target.baseUrl, dialect: Dialect.fromName(scenario.target.dialect) }),
      StandardWebSocket.layer
    ).pipe(
      Layer.provideMerge(
        Layer.merge(FetchHttpClient.layer, Credentials.layer({ apiKey: Redacted.make(scenario.target.accountKey) }))
      )
    ))
  )

const create = (scenario: Extract<Scenario, { kind: "create" }>) =>
  Effect.gen(function*() {
    const api = yield* AgentApi.AgentApi
    yield* api.createSession(request)
    return { tags: [] }
  }).pipe(
    Effect.provide(
      AgentApi.layer({ baseUrl: scenario.baseUrl, dialect: Dialect.documented }).pipe(
        Layer.provideMerge(Layer.merge(FetchHttpClient.layer, Credentials.layer({ apiKey: Redacted.make(scenario.key) })))
      )
    )
  )

const one = (scenario: Scenario): Effect.Effect<Facts> => {
  const body: Effect.Effect<Omit<Facts, "name" | "runtime">, unknown> = scenario.kind === "run"
    ? run(scenario)
    : scenario.kind === "slow"
    ? slow(scenario)
    : scenario.kind === "paced"
    ? paced(scenario)
    : create(scenario)
  return Effect.map(Effect.exit(body), (exit) => ({
    name: scenario.name,
    runtime: runtimeName(),
    ...(Exit.isSuccess(exit)
      ? exit.value
      : errorFacts(Cause.squash(exit.cause)))
  }))
}

const scenarios = JSON.parse(process.argv[2] ?? "[]") as ReadonlyArray<Scenario>
const program = Effect.forEach(
  scenarios,
  (scenario) => Effect.flatMap(one(scenario), (facts) => Effect.sync(() => console.log(JSON.stringify(facts))))
)
Effect.runPromise(program).then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error)
    process.exit(1)
  }
)
