/**
 * The SDK side: the same measurements as raw.ts through the library's public API only (what
 * `src/index.ts` exports), so the bench keeps working whatever the engine's internals become.
 * Every runtime is `NodeAgentSessions.layer` (the SDK's own `ws`-based WebSocket constructor and
 * Node's HTTP client, documented dialect, default options unless a measurement sets one).
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Supervisor from "effect/Supervisor"
import { AgentSessions, EventStream, NodeAgentSessions, Session, type SessionEvent } from "effect-agent-session"
import type { Client } from "./tasks.js"
import { droppedAt, frameIndex, Scenario, sharedNow } from "effect-agent-session-test-support/frames"
import {
  busy,
  createRequest,
  type FiberCount,
  type FirstEventResult,
  fullGc,
  type HoldResult,
  type ReconnectResult,
  type SlowResult,
  sleep,
  type ThroughputResult,
  yieldToIo
} from "effect-agent-session-test-support/measure"

type Runtime = ManagedRuntime.ManagedRuntime<NodeAgentSessions.Services, unknown>

const runtimes = new Map<string, Runtime>()

/**
 * The runtime of the SDK for a WebSocket base URL (the load generator) or an HTTP one (the
 * simulator), one per process and address.
 */
export const runtimeFor = (url: string, apiKey = "bench-key"): Runtime => {
  const key = `${url} ${apiKey}`
  let runtime = runtimes.get(key)
  if (runtime === undefined) {
    const http = url.replace(/^ws/, "http")
    runtime = ManagedRuntime.make(
      NodeAgentSessions.layer({ apiKey, baseUrl: http, wsUrl: http.replace(/^http/, "ws") })
    )
    runtimes.set(key, runtime)
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

/** `EventStream.events(sessionId)`, consumed chunk by chunk. */
const throughput = (url: string, n: number): Promise<ThroughputResult> =>
  runtimeFor(url).runPromise(Effect.gen(function*() {
    const eventStream = yield* EventStream.EventStream
    const seen = { frames: 0, last: undefined as SessionEvent.ActionRun | undefined, end: Number.NaN }
    const start = performance.now()
    yield* eventStream.events(`${Scenario.throughput}-${n}`).pipe(Stream.runForEachChunk(countActions(seen)))
    return { frames: seen.frames, ms: seen.end - start, lastIndex: seen.last === undefined ? -1 : frameIndex(seen.last.content) }
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
 * budget guard, the kept events, the outcome), consuming `running.events` chunk by chunk.
 */
export const throughputAttach = (url: string, n: number): Promise<ThroughputResult> =>
  runtimeFor(url).runPromise(Effect.scoped(Effect.gen(function*() {
    const seen = { frames: 0, last: undefined as SessionEvent.ActionRun | undefined, end: Number.NaN }
    const start = performance.now()
    const running = yield* AgentSessions.attach(sessionInfo(`${Scenario.throughput}-${n}`), n)
    yield* running.events.pipe(Stream.runForEachChunk(countActions(seen)))
    return { frames: seen.frames, ms: seen.end - start, lastIndex: seen.last === undefined ? -1 : frameIndex(seen.last.content) }
  })))

/**
 * The options of a held connection: the defaults, but for an idle time-out longer than any run.
 * The load generator sends a held connection one frame (`started`); opening 10k SDK sessions on
 * a loaded machine took over the default minute, so the first connections timed out and
 * reconnected while the last ones opened (a different measurement). The time-out's length
 * changes nothing of what a connection holds.
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
    // One connection: connect, consume its events in a fiber of the scope, wait for the first.
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
      }).pipe(Scope.extend(scope))
    yield* Effect.forEach(Array.from({ length: count }, (_, i) => i), open, { concurrency, discard: true })
    return { scope, openMs: performance.now() - start }
  })

const hold = (url: string, count: number, concurrency: number): Promise<HoldResult> =>
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
      }).pipe(Scope.extend(scope))
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
 * Live fibers per open, idle session: the hold above run under a `Supervisor.track` installed
 * with `Effect.supervised` (every fiber forked from the program, the SDK's included), together
 * with `Fiber.roots` (fibers started outside it, such as daemons); the fibers alive once every
 * session is open and idle, less those alive before, per session. The caller's consumer fiber
 * (one per session here) is counted.
 */
export const countFibers = (url: string, count: number, concurrency: number): Promise<FiberCount> =>
  runtimeFor(url).runPromise(Effect.gen(function*() {
    const supervisor = yield* Supervisor.track
    const alive = Effect.zipWith(
      Fiber.roots,
      supervisor.value,
      (roots, tracked) => new Set([...roots, ...tracked].filter((f) => f.unsafePoll() === null))
    )
    const program = Effect.gen(function*() {
      // Warm up (modules, compiled paths), then let everything of it end.
      const warm = yield* holdProgram(10, 10)
      yield* Scope.close(warm.scope, Exit.void)
      yield* Effect.promise(() => sleep(200))
      const before = yield* alive
      const held = yield* holdProgram(count, concurrency)
      yield* Effect.promise(() => sleep(300))
      const after = yield* alive
      const added = [...after].filter((f) => !before.has(f)).length
      yield* Scope.close(held.scope, Exit.void)
      return { sessions: count, before: before.size, after: after.size, perSession: added / count }
    })
    return yield* Effect.supervised(program, supervisor)
  }))

const slowConsumer: Client["slowConsumer"] = (url, n, options) =>
  runtimeFor(url).runPromise(Effect.gen(function*() {
    const eventStream = yield* EventStream.EventStream
    let frames = 0
    const start = performance.now()
    yield* eventStream.events(`${Scenario.throughput}-${n}`, { bufferSize: options.bufferSize }).pipe(
      Stream.runForEach((event) => {
        if (event._tag !== "ActionRun") return Effect.void
        busy(options.workMicros)
        frames++
        options.sampler.tick(frames)
        return frames % options.yieldEvery === 0 ? Effect.promise(yieldToIo) : Effect.void
      })
    )
    const result: SlowResult = { frames, ms: performance.now() - start, maxQueued: -1, ...options.sampler.result() }
    return result
  }))

const reconnect = (url: string, id: string, k: number, drops: number): Promise<ReconnectResult> =>
  runtimeFor(url).runPromise(Effect.gen(function*() {
    const eventStream = yield* EventStream.EventStream
    const gaps: Array<number> = []
    let frames = 0
    yield* eventStream.events(`${Scenario.drop}-${id}-${k}-${drops}`).pipe(
      Stream.runForEach((event) =>
        Effect.sync(() => {
          if (event._tag !== "ActionRun") return
          frames++
          const at = droppedAt(event.content)
          if (!Number.isNaN(at)) gaps.push(sharedNow() - at)
        })
      )
    )
    return { frames, gapsMs: gaps }
  }))

/**
 * Create to first event, and CPU per short session, against the simulator: `sessions`
 * sequential `AgentSessions.start(request)` (create, then connect), each taking its first
 * `events` events (the whole short script) and closing with its scope. The latency runs from
 * the call to the first event delivered; the CPU is the process's over the whole loop.
 */
export const firstEvent: Client["firstEvent"] = (baseUrl, apiKey, request, options) => {
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
      const result: FirstEventResult = {
        latenciesMs: latencies,
        events,
        cpuMs: (used.user + used.system) / 1000,
        wallMs: performance.now() - started
      }
      return result
    })
  })()
}

/** The SDK client. */
export const client: Client = { throughput, hold, holdStarted, slowConsumer, reconnect, firstEvent }
