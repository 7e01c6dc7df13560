/**
 * The SDK side of the Effect 4 edition's measurements: the same as the Effect 3 edition's
 * (bench/sdk.ts) through this edition's public API only (`effect-agent-session-effect4`, as users
 * import it), over `NodeAgentSessions.layer` (the edition's `ws`-based WebSocket constructor and
 * undici, documented dialect, default options unless a measurement sets one).
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Metric from "effect/Metric"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { AgentSessions, EventStream, NodeAgentSessions, Session, type SessionEvent } from "effect-agent-session-effect4"
import { frameIndex, Scenario } from "effect-agent-session-test-support/frames"
import {
  createRequest,
  type FiberCount,
  type FirstEventOptions,
  type FirstEventResult,
  fullGc,
  type HoldResult,
  sleep,
  type ThroughputResult
} from "effect-agent-session-test-support/measure"
import { fiberCounter } from "./floors.js"

type Runtime = ManagedRuntime.ManagedRuntime<NodeAgentSessions.Services, unknown>

const runtimes = new Map<string, Runtime>()

/**
 * The SDK's runtime for a WebSocket base URL (the load generator) or an HTTP one (the simulator),
 * one per process and address; with `fibers`, every fiber of the runtime (the layer's included)
 * reports to it.
 */
const runtimeFor = (url: string, apiKey = "bench-key", fibers?: Metric.FiberRuntimeMetricsService): Runtime => {
  const key = `${url} ${apiKey}`
  let runtime = fibers === undefined ? runtimes.get(key) : undefined
  if (runtime === undefined) {
    const http = url.replace(/^ws/, "http")
    const sdk = NodeAgentSessions.layer({ apiKey, baseUrl: http, wsUrl: http.replace(/^http/, "ws") })
    runtime = ManagedRuntime.make(
      fibers === undefined ? sdk : sdk.pipe(Layer.provideMerge(Layer.succeed(Metric.FiberRuntimeMetrics, fibers)))
    )
    if (fibers === undefined) runtimes.set(key, runtime)
  }
  return runtime
}

const countActions = (
  into: { frames: number; last: SessionEvent.ActionRun | undefined; end: number }
) =>
(chunk: Iterable<SessionEvent.SessionEvent>) =>
  Effect.sync(() => {
    for (const event of chunk) {
      if (event._tag === "ActionRun") {
        into.frames++
        into.last = event
      } else if (event._tag === "Complete") {
        into.end = performance.now()
      }
    }
  })

const result = (seen: { frames: number; last: SessionEvent.ActionRun | undefined; end: number }, start: number): ThroughputResult => ({
  frames: seen.frames,
  ms: seen.end - start,
  lastIndex: seen.last === undefined ? -1 : frameIndex(seen.last.content)
})

/** `EventStream.events(sessionId)`, consumed array by array. */
export const throughput = (url: string, n: number): Promise<ThroughputResult> =>
  runtimeFor(url).runPromise(Effect.gen(function*() {
    const eventStream = yield* EventStream.EventStream
    const seen = { frames: 0, last: undefined as SessionEvent.ActionRun | undefined, end: Number.NaN }
    const start = performance.now()
    yield* eventStream.events(`${Scenario.throughput}-${n}`).pipe(Stream.runForEachArray(countActions(seen)))
    return result(seen, start)
  }))

/** The session the load generator serves as `sessionId`, as `attach` takes it. */
const sessionInfo = (sessionId: string): Session.SessionInfo =>
  new Session.SessionInfo({
    session_id: Session.SessionId.make(sessionId),
    status: Option.none(),
    start_time: Option.none(),
    end_time: Option.none(),
    error: Option.none()
  })

/**
 * The path users take: `AgentSessions.attach(session, maxActions)` with default options (the
 * budget guard, the kept events, the outcome), consuming `running.events` array by array.
 */
export const throughputAttach = (url: string, n: number): Promise<ThroughputResult> =>
  runtimeFor(url).runPromise(Effect.scoped(Effect.gen(function*() {
    const seen = { frames: 0, last: undefined as SessionEvent.ActionRun | undefined, end: Number.NaN }
    const start = performance.now()
    const running = yield* AgentSessions.attach(sessionInfo(`${Scenario.throughput}-${n}`), n)
    yield* running.events.pipe(Stream.runForEachArray(countActions(seen)))
    return result(seen, start)
  })))

/**
 * The options of a held connection: the defaults, but for an idle time-out longer than any run
 * (as the Effect 3 edition's bench: a held connection receives one frame).
 */
const holdOptions: EventStream.ConnectOptions = { idleTimeout: "1 hour" }

/**
 * Opens `count` connections with `EventStream.connect`, each consumed by its own fiber, held
 * open. A connection whose events fail (or end) before the first fails the whole hold.
 */
const holdProgram = (count: number, concurrency: number) =>
  Effect.gen(function*() {
    const eventStream = yield* EventStream.EventStream
    const scope = yield* Scope.make()
    const start = performance.now()
    const open = (i: number) =>
      Effect.gen(function*() {
        const connection = yield* eventStream.connect(`${Scenario.hold}-${i}`, holdOptions)
        const first = yield* Deferred.make<void, unknown>()
        yield* connection.events.pipe(
          Stream.runForEach(() => Deferred.succeed(first, undefined)),
          Effect.onExit((exit) =>
            Exit.isFailure(exit)
              ? Deferred.failCause(first, exit.cause)
              : Deferred.die(first, new Error(`hold-${i}: the events ended`))
          ),
          Effect.forkIn(scope)
        )
        yield* Deferred.await(first)
      }).pipe(Scope.provide(scope))
    yield* Effect.forEach(Array.from({ length: count }, (_, i) => i), open, { concurrency, discard: true })
    return { scope, openMs: performance.now() - start }
  })

/** Opens `count` connections (`concurrency` opening at a time); resolves once each got its first event. */
export const hold = (url: string, count: number, concurrency: number): Promise<HoldResult> =>
  runtimeFor(url).runPromise(Effect.map(holdProgram(count, concurrency), ({ openMs, scope }) => ({
    opened: count,
    openMs,
    close: () => Effect.runPromise(Scope.close(scope, Exit.void))
  })))

/**
 * Opens `count` sessions with `AgentSessions.start` (create, then connect, as users call it; the
 * load generator answers the create with a `hold` session), each session's events consumed by its
 * own fiber, held open. A session whose events fail (or end) before the first fails the whole hold.
 */
const holdStartedProgram = (count: number, concurrency: number) =>
  Effect.gen(function*() {
    const scope = yield* Scope.make()
    const start = performance.now()
    const open = (i: number) =>
      Effect.gen(function*() {
        const running = yield* AgentSessions.start(createRequest, holdOptions)
        const first = yield* Deferred.make<void, unknown>()
        yield* running.events.pipe(
          Stream.runForEach(() => Deferred.succeed(first, undefined)),
          Effect.onExit((exit) =>
            Exit.isFailure(exit)
              ? Deferred.failCause(first, exit.cause)
              : Deferred.die(first, new Error(`start ${i}: the events ended`))
          ),
          Effect.forkIn(scope)
        )
        yield* Deferred.await(first)
      }).pipe(Scope.provide(scope))
    yield* Effect.forEach(Array.from({ length: count }, (_, i) => i), open, { concurrency, discard: true })
    return { scope, openMs: performance.now() - start }
  })

/** Opens `count` sessions through `AgentSessions.start`; resolves once each got its first event. */
export const holdStarted = (url: string, count: number, concurrency: number): Promise<HoldResult> =>
  runtimeFor(url).runPromise(Effect.map(holdStartedProgram(count, concurrency), ({ openMs, scope }) => ({
    opened: count,
    openMs,
    close: () => Effect.runPromise(Scope.close(scope, Exit.void))
  })))

/**
 * Live fibers per open, idle session: the hold above in a runtime whose every fiber (the SDK
 * layer's included) reports to a counter (floors.ts `fiberCounter`); the fibers alive once every
 * session is open and idle, less those alive before, per session. The consumer's fiber (one per
 * session here) is counted.
 */
export const countFibers = async (url: string, count: number, concurrency: number): Promise<FiberCount> => {
  const counter = fiberCounter()
  const runtime = runtimeFor(url, "bench-key", counter)
  const r = await runtime.runPromise(Effect.gen(function*() {
    const warm = yield* holdProgram(10, 10)
    yield* Scope.close(warm.scope, Exit.void)
    yield* Effect.promise(() => sleep(200))
    const before = counter.alive()
    const held = yield* holdProgram(count, concurrency)
    yield* Effect.promise(() => sleep(300))
    const after = counter.alive()
    yield* Scope.close(held.scope, Exit.void)
    return { sessions: count, before, after, perSession: (after - before) / count }
  }))
  await runtime.dispose()
  return r
}

/**
 * Create to first event against the simulator: `sessions` sequential
 * `AgentSessions.start(request)` (create, then connect), each taking its first `events` events
 * (the whole short script) and closing with its scope. The latency runs from the call to the
 * first event delivered; the CPU is the process's over the whole loop.
 */
export const firstEvent = (
  baseUrl: string,
  apiKey: string,
  request: typeof createRequest,
  options: FirstEventOptions
): Promise<FirstEventResult> => {
  const runtime = runtimeFor(baseUrl, apiKey)
  const once = Effect.scoped(Effect.gen(function*() {
    const start = performance.now()
    let first = Number.NaN
    let seen = 0
    const running = yield* AgentSessions.start(request)
    yield* running.events.pipe(
      Stream.take(options.events),
      Stream.runForEach(() =>
        Effect.sync(() => {
          if (seen++ === 0) first = performance.now()
        })
      )
    )
    return { firstMs: first - start, seen }
  }))
  const loop = (n: number) =>
    Effect.gen(function*() {
      const latencies: Array<number> = []
      let events = 0
      for (let i = 0; i < n; i++) {
        const r = yield* once
        latencies.push(r.firstMs)
        events += r.seen
      }
      return { latencies, events }
    })
  return (async () => {
    await runtime.runPromise(loop(options.warmup))
    fullGc()
    return options.measure(async () => {
      const cpu = process.cpuUsage()
      const started = performance.now()
      const { events, latencies } = await runtime.runPromise(loop(options.sessions))
      const used = process.cpuUsage(cpu)
      return { latenciesMs: latencies, events, cpuMs: (used.user + used.system) / 1000, wallMs: performance.now() - started }
    })
  })()
}
