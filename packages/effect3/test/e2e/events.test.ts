/**
 * The event channel end to end against the simulator in this process on port 0, with the
 * simulator's faults, checked against its own state (its script, its answers, its connection
 * count) and through the engine: over WebSocket (the SDK's `ws` constructor) in both dialects, and
 * over Server-Sent Events (`EventStream.layerSse`, undici) in both dialects. The cases both editions
 * make, read from what the client received (hostile frames, an answer given while disconnected),
 * are written once (`test/shared/e2e.events.test.ts`). A malformed frame that fails the stream, a
 * frame too large, an unknown event (loose and strict), a stall the idle time-out reconnects, a
 * drained connection and a refused handshake are cases of the conformance suite both editions run
 * (`test/conformance.test.ts`, scenarios in `packages/conformance`).
 */
import type * as HttpClient from "@effect/platform/HttpClient"
import type * as Socket from "@effect/platform/Socket"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { assert, describe, layer } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as AgentApi from "../../src/AgentApi.js"
import * as Answer from "../../src/Answer.js"
import * as Credentials from "../../src/Credentials.js"
import * as Dialect from "../../src/Dialect.js"
import type { InsecureTransport } from "../../src/Errors.js"
import * as EventStream from "../../src/EventStream.js"
import * as internal from "../../binding/internal/eventStream.js"
import * as Sse from "../../binding/internal/sse.js"
import * as WebSocket from "../../src/internal/webSocket.js"
import type * as SessionEvent from "../../src/SessionEvent.js"
import * as Simulator from "effect-agent-session-simulator/Simulator"
import { meaningful, withFaults as withFaultsAnd } from "../helpers/simulation.js"
import { createSession, drain, eventsOf, lastFailure } from "../shared/e2e.js"

/** Quick reconnects: every 30 ms, at most 8 retries. */
const quick = Schedule.spaced("30 millis").pipe(Schedule.intersect(Schedule.recurs(8)))

const request = { start_url: "https://example.com/", max_actions: 6, goal: "Find the opening hours" }

const baseScenario: Partial<Simulator.Scenario> = { actions: 5, ask: "input", frameDelay: "2 millis" }
const withFaults = (faults: Simulator.Faults, scenario: Partial<Simulator.Scenario> = {}) =>
  withFaultsAnd(faults, scenario, baseScenario)

/** The clients the suite's layer provides: HTTP (undici) and the SDK's WebSocket constructor. */
type Clients = HttpClient.HttpClient | Socket.WebSocketConstructor

/** How each transport is wired and what differs between them. */
interface Transport {
  readonly name: "websocket" | "sse"
  readonly events: (simulator: Simulator.Service) => Layer.Layer<EventStream.EventStream, never, Credentials.Credentials | Clients>
  readonly connectEngine: (
    simulator: Simulator.Service,
    sessionId: string,
    options: EventStream.ConnectOptions
  ) => Effect.Effect<internal.Engine, InsecureTransport, Scope.Scope | Credentials.Credentials | Clients>
}

const webSocket: Transport = {
  name: "websocket",
  events: (simulator) =>
    EventStream.layer({ url: simulator.wsUrl, dialect: simulator.dialect, reconnect: quick }),
  connectEngine: (simulator, sessionId, options) =>
    internal.connectEngine({ url: simulator.wsUrl, dialect: simulator.dialect, reconnect: quick }, sessionId, options)
}

const sse: Transport = {
  name: "sse",
  events: (simulator) =>
    EventStream.layerSse({ url: simulator.baseUrl, dialect: simulator.dialect, reconnect: quick }),
  connectEngine: (simulator, sessionId, options) =>
    Sse.connectEngine({ url: simulator.baseUrl, dialect: simulator.dialect, reconnect: quick }, sessionId, options)
}

const sdk = (transport: Transport) =>
  Layer.unwrapEffect(
    Effect.map(Simulator.Simulator, (simulator) => {
      const credentials = Credentials.layer({ apiKey: simulator.accountKey })
      const api = AgentApi.layer({ baseUrl: simulator.baseUrl, dialect: simulator.dialect })
      return Layer.merge(api, transport.events(simulator)).pipe(
        Layer.provideMerge(Layer.mergeAll(credentials, NodeHttpClient.layerUndici, WebSocket.layer())),
        Layer.orDie
      )
    })
  )

const variants = [
  { transport: webSocket, dialect: Dialect.documented },
  { transport: webSocket, dialect: Dialect.observed },
  { transport: sse, dialect: Dialect.documented },
  { transport: sse, dialect: Dialect.observed }
]

describe.each(variants)("EventStream end to end ($transport.name, $dialect.name dialect)", ({ dialect, transport }) => {
  const SimulatorLive = Simulator.layer({ port: 0, dialect, scenario: baseScenario })

  layer(Layer.provideMerge(sdk(transport), SimulatorLive), { excludeTestServices: true })((it) => {
    it.scoped("U08 a whole session arrives in order, typed fields equal to the script, answer delivered", () =>
      Effect.gen(function*() {
        const simulator = yield* Simulator.Simulator
        const channel = yield* EventStream.EventStream
        const sessionId = yield* createSession(request)
        const connection = yield* channel.connect(sessionId)
        const results = yield* drain(connection)
        assert.isUndefined(lastFailure(results))
        const events = meaningful(eventsOf(results))
        assert.deepStrictEqual(events, yield* simulator.script(sessionId))
        assert.strictEqual(events.at(-1)?._tag, "Complete")
        assert.strictEqual(events[0]?._tag, "Started", "subscribe-then-connect: the first event arrives")
        assert.deepStrictEqual((yield* simulator.answers(sessionId)).map((a) => [a.granted, a.input]), [
          [true, "jane@example.com"]
        ])
        assert.strictEqual(yield* simulator.connections(sessionId), 1)
        const state = yield* connection.state.get
        assert.deepStrictEqual(state, EventStream.ConnectionState.Closed({ reason: "complete" }))
      }))

    it.scoped("U17 the socket dropped 3 times mid-session still gives every event exactly once, in order", () =>
      Effect.gen(function*() {
        const simulator = yield* Simulator.Simulator
        const channel = yield* EventStream.EventStream
        const { results, sessionId, states } = yield* Effect.gen(function*() {
          const sessionId = yield* createSession(request)
          const connection = yield* channel.connect(sessionId)
          const states: Array<EventStream.ConnectionState> = []
          yield* Effect.forkScoped(Stream.runForEach(connection.state.changes, (s) => Effect.sync(() => states.push(s))))
          const results = yield* drain(connection)
          return { results, sessionId, states }
        }).pipe(withFaults({ ws: { dropAfter: [2, 4, 7] } }))
        assert.isUndefined(lastFailure(results))
        const events = meaningful(eventsOf(results))
        assert.deepStrictEqual(events, yield* simulator.script(sessionId))
        assert.strictEqual(events.at(-1)?._tag, "Complete")
        assert.strictEqual(yield* simulator.connections(sessionId), 4)
        // The request is the 7th event: its answer, written as the socket dropped, was sent again.
        assert.deepStrictEqual((yield* simulator.answers(sessionId)).map((a) => a.input), ["jane@example.com"])
        const reopened = states.filter((s) => s._tag === "Open")
        assert.deepStrictEqual(reopened.map((s) => s._tag === "Open" ? s.reconnects : -1), [0, 1, 2, 3])
      }))

    it.scoped("U16 an answer given while disconnected reaches the simulator after the reconnect", () =>
      Effect.gen(function*() {
        const simulator = yield* Simulator.Simulator
        const channel = yield* EventStream.EventStream
        // Where the request falls in this scenario's script: the last event before the answer.
        const probe = yield* createSession(request)
        const position = (yield* simulator.script(probe)).length
        const { results, sessionId } = yield* Effect.gen(function*() {
          const sessionId = yield* createSession(request)
          // A slow reconnect, so the answer is given while the socket is down.
          const connection = yield* channel.connect(sessionId, {
            reconnect: Schedule.spaced("400 millis").pipe(Schedule.intersect(Schedule.recurs(3)))
          })
          const results = yield* Stream.either(connection.events).pipe(
            Stream.tap((result) =>
              Either.isRight(result) && result.right._tag === "ExternalResourceRequested"
                ? Effect.gen(function*() {
                  const request = result.right as SessionEvent.ExternalResourceRequested
                  yield* connection.state.changes.pipe(
                    Stream.filter((s) => s._tag === "Reconnecting"),
                    Stream.runHead
                  )
                  yield* connection.respond(request, Answer.grant("while-down@example.com"))
                  assert.deepStrictEqual(yield* simulator.answers(sessionId), [], "not sent while down")
                }).pipe(Effect.orDie)
                : Effect.void
            ),
            Stream.runCollect,
            Effect.map(Chunk.toReadonlyArray)
          )
          return { results, sessionId }
        }).pipe(withFaults({ ws: { dropAfter: [position] } }))
        assert.isUndefined(lastFailure(results))
        const answers = yield* simulator.answers(sessionId)
        assert.deepStrictEqual(answers.map((a) => a.input), ["while-down@example.com"])
        assert.deepStrictEqual(meaningful(eventsOf(results)), yield* simulator.script(sessionId))
        assert.strictEqual(yield* simulator.connections(sessionId), 2)
      }))

    it.scoped("U09 with failOnFrameError: false the malformed frame is skipped and the session completes", () =>
      Effect.gen(function*() {
        const simulator = yield* Simulator.Simulator
        const channel = yield* EventStream.EventStream
        const { results, sessionId } = yield* Effect.gen(function*() {
          const sessionId = yield* createSession(request)
          const results = yield* Effect.flatMap(channel.connect(sessionId, { failOnFrameError: false }), drain)
          return { results, sessionId }
        }).pipe(withFaults({ ws: { malformedAt: 3 } }))
        assert.isUndefined(lastFailure(results))
        assert.deepStrictEqual(meaningful(eventsOf(results)), yield* simulator.script(sessionId))
      }))

    it.scoped("a slow consumer of 100k frames keeps the buffer bounded and memory flat", () =>
      Effect.gen(function*() {
        const simulator = yield* Simulator.Simulator
        const total = 100_000
        const bufferSize = 512
        const sessionId = yield* createSession({ ...request, max_actions: total }).pipe(
          withFaults({}, { bulkActions: total })
        )
        const engine = yield* transport.connectEngine(simulator, sessionId, { bufferSize })
        const before = process.memoryUsage().heapUsed
        let peakHeap = 0
        let count = 0
        const result = yield* engine.connection.events.pipe(
          Stream.filter((e) => e._tag !== "Heartbeat" && e._tag !== "Connected"),
          Stream.runForEach(() => {
            count += 1
            if (count % 2000 === 0) {
              peakHeap = Math.max(peakHeap, process.memoryUsage().heapUsed)
              // Slower than the socket: a real sleep now and then.
              return Effect.sleep(Duration.millis(1))
            }
            return Effect.void
          }),
          Effect.either
        )
        assert.isTrue(Either.isRight(result))
        assert.strictEqual(count, total + 3) // started, browser_started, the actions, complete
        // Frames the socket had already read when reading paused may still arrive: one read's worth.
        assert.isAtMost(engine.peakBuffered(), bufferSize + 2048)
        assert.isBelow(peakHeap - before, 96 * 1024 * 1024)
      }))
  })
})
