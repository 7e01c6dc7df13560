/**
 * Issue 25's fiber target, over real sockets against the simulator child: at most one fiber of the
 * SDK's per idle open session besides the consumer's. Effect 4 has no `Supervisor`; every fiber
 * started where the `Metric.FiberRuntimeMetrics` reference is provided reports its start and its
 * end to it, and a fiber inherits its parent's references (daemons included). The reference is
 * provided around the whole counted program, the SDK's layer built inside it, so the layer's own
 * fibers count too. The simulator waits a minute before each event (`--frame-delay 60000`), so an
 * open session stays idle: open, its consumer waiting, nothing arriving.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"
import * as Queue from "effect/Queue"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as AgentApi from "../../src/AgentApi.js"
import * as AgentSessions from "../../src/AgentSessions.js"
import * as EventStream from "../../src/EventStream.js"
import { Sim, sdkLayer, type TransportName } from "../helpers/sdk.js"
import { spawnSimulator } from "../helpers/simulator.js"

const request = { start_url: "https://example.com/", max_actions: 5, goal: "Find the opening hours" }

/** Sessions held open at once. */
const sessions = 20

/** A counter of live fibers, as the `Metric.FiberRuntimeMetrics` service. */
const fiberCounter = () => {
  let alive = 0
  const service: Metric.FiberRuntimeMetricsService = {
    recordFiberStart: () => {
      alive++
    },
    recordFiberEnd: () => {
      alive--
    }
  }
  return { service, alive: () => alive }
}

/** Waits until a connection's state is `Open`. */
const opened = (state: SubscriptionRef.SubscriptionRef<EventStream.ConnectionState>) =>
  SubscriptionRef.changes(state).pipe(
    Stream.filter((s) => s._tag === "Open"),
    Stream.runHead,
    Effect.timeout("30 seconds"),
    Effect.orDie
  )

/** How each way of watching a session is opened: its events and its state, in `scope`. */
/** A watched session: its events and its connection's state. */
interface Watched {
  readonly events: Stream.Stream<unknown, unknown>
  readonly state: SubscriptionRef.SubscriptionRef<EventStream.ConnectionState>
}

type Watcher = (
  scope: Scope.Scope
) => Effect.Effect<Watched, never, AgentApi.AgentApi | EventStream.EventStream | AgentSessions.AgentSessions>

const watchers: Record<"EventStream.connect" | "AgentSessions.start", Watcher> = {
  "EventStream.connect": (scope) =>
    Effect.gen(function*() {
      const api = yield* AgentApi.AgentApi
      const channel = yield* EventStream.EventStream
      const session = yield* Effect.orDie(api.createSession(request))
      const connection = yield* channel.connect(session.session_id).pipe(Scope.provide(scope), Effect.orDie)
      return { events: connection.events, state: connection.state }
    }),
  "AgentSessions.start": (scope) =>
    AgentSessions.start(request).pipe(
      Scope.provide(scope),
      Effect.orDie,
      Effect.map((running) => ({ events: running.events, state: running.state }))
    )
}

/**
 * Opens `n` sessions in a new scope, each consumed by one fiber of the caller's
 * (`Stream.runDrain`), and waits until every one is open.
 */
const hold = (watcher: Watcher, n: number) =>
  Effect.gen(function*() {
    const scope = yield* Scope.make()
    for (let i = 0; i < n; i++) {
      const { events, state } = yield* watcher(scope)
      yield* Effect.forkIn(Stream.runDrain(events).pipe(Effect.ignore), scope)
      yield* opened(state)
    }
    return scope
  })

/**
 * The floor, counted the same way: the same consumer (`Stream.runDrain` in a fiber of its own)
 * over a bare `Queue` stream that has delivered one event and waits. Its fibers per consumer.
 */
const consumerFibers = Effect.gen(function*() {
  const counter = fiberCounter()
  const counted = Effect.gen(function*() {
    const before = counter.alive()
    const scope = yield* Scope.make()
    for (let i = 0; i < sessions; i++) {
      const queue = yield* Queue.unbounded<number>()
      const first = yield* Deferred.make<void>()
      yield* Queue.offer(queue, 1)
      yield* Effect.forkIn(Stream.runForEach(Stream.fromQueue(queue), () => Deferred.succeed(first, undefined)), scope)
      yield* Deferred.await(first)
    }
    yield* Effect.sleep("100 millis")
    const after = counter.alive()
    yield* Scope.close(scope, Exit.void)
    return (after - before) / sessions
  })
  return yield* Effect.provideService(counted, Metric.FiberRuntimeMetrics, counter.service)
})

describe("live fibers per idle open session (issue 25, target 1)", () => {
  it.live("the floor: a Stream consumer on Effect 4 is one fiber", () =>
    Effect.gen(function*() {
      assert.strictEqual(yield* consumerFibers, 1)
    }))

  for (const transport of ["websocket", "sse"] as const satisfies ReadonlyArray<TransportName>) {
    for (const name of ["AgentSessions.start", "EventStream.connect"] as const) {
      // The connection's loop holds no fiber while the attempt is open. Over Server-Sent Events
      // the response body is an `effect/http` `Stream`, read by a fiber of its own: one of the SDK's.
      const sdkFibers = transport === "sse" ? 1 : 0
      const title = transport === "sse"
        ? "at most one fiber of the SDK's per idle open session besides the consumer's (the body's reader)"
        : "no fiber of the SDK's per idle open session besides the consumer's"
      it.live(`${transport}, ${name}: ${title}`, () =>
        Effect.gen(function*() {
          const sim = yield* spawnSimulator({ actions: 5, frameDelay: 60_000 })
          const counter = fiberCounter()
          const counted = Effect.gen(function*() {
            const context = yield* Layer.build(sdkLayer(transport).pipe(Layer.provide(Layer.succeed(Sim, sim))))
            const watch = watchers[name]
            // A first round warms what the SDK keeps across sessions (the HTTP client's pool).
            const warm = yield* hold(watch, 2).pipe(Effect.provideContext(context))
            yield* Scope.close(warm, Exit.void)
            yield* Effect.sleep("200 millis")
            const before = counter.alive()
            const held = yield* hold(watch, sessions).pipe(Effect.provideContext(context))
            yield* Effect.sleep("300 millis")
            const after = counter.alive()
            yield* Scope.close(held, Exit.void)
            yield* Effect.sleep("200 millis")
            return { before, after, closed: counter.alive() }
          }).pipe(Effect.scoped, Effect.provideService(Metric.FiberRuntimeMetrics, counter.service))
          const { after, before, closed } = yield* counted
          const perSession = (after - before) / sessions
          yield* Effect.logInfo(`${transport}, ${name}: ${perSession} fibers per idle open session`)
          // The consumer's own fibers are among them: the SDK's are the rest.
          const consumer = yield* consumerFibers
          assert.isAtLeast(perSession, consumer, "the count sees the consumers' fibers")
          assert.isAtMost(perSession - consumer, sdkFibers, `${after - before} fibers for ${sessions} idle open sessions`)
          assert.isAtMost(closed, before, "every fiber of a closed session ended")
        }), 120_000)
    }
  }
})
