/**
 * The floors of the Effect 4 edition's targets (issue 25): what the least Effect 4 machinery
 * costs, measured in the same run as the SDK, on the same Node (22). Nothing here imports the
 * library: the floors stay the same whatever the SDK becomes. The raw floors (a `ws` client and
 * `JSON.parse`, a bare `fetch`) are the root's bench/raw.ts, run on Node 22.
 *
 * Memory (a `hold`, measured by `memory` of test-support's measure.ts):
 * - `floor-stream` (target 1's floor): a raw `ws` socket feeding a `Queue`, consumed by
 *   `Stream.runForEach` in one fiber per connection (the least a `Stream` of events costs).
 * - `floor-fiber`: a raw `ws` socket and one fiber per connection waiting on a `Deferred`.
 * - `floor-socket`: `effect/socket`'s `Socket.makeWebSocket` (over
 *   `NodeSocket.layerWebSocketConstructor`'s `ws`), its reader pulled by one fiber per
 *   connection, each frame parsed (the platform socket, no SDK).
 *
 * Throughput, `throughputStream`: the raw client's `ws` + `JSON.parse`, each frame offered to a
 * `Queue` read by `Stream.runForEachArray` (the SDK runs' consumer).
 *
 * A session, `firstEvent`: create (the `effect/http` `HttpClient` over undici), then a raw `ws`
 * socket -> `Queue` -> `Stream`, in one `runPromise` per session.
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as NodeSocket from "@effect/platform-node/NodeSocket"
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Metric from "effect/Metric"
import * as Queue from "effect/Queue"
import * as Scope from "effect/Scope"
import * as Socket from "effect/socket/Socket"
import * as Stream from "effect/Stream"
import { randomUUID } from "node:crypto"
import { WebSocket } from "ws"
import type { Effect4Floor } from "effect-agent-session-test-support/effect4Tasks"
import { frameIndex, Scenario } from "effect-agent-session-test-support/frames"
import {
  connectUrl,
  type createRequest,
  type FiberCount,
  type FirstEventOptions,
  type FirstEventResult,
  firstEventLoop,
  type HoldResult,
  pool,
  sleep,
  type ThroughputResult
} from "effect-agent-session-test-support/measure"

const handshake = (i: number): string => JSON.stringify({ apiKey: "bench-key", sessionId: `${Scenario.hold}-${i}` })

const rawSocket = (url: string, i: number, onFrame: (frame: unknown) => void, scope: Scope.Scope) =>
  Effect.gen(function*() {
    const ws = new WebSocket(connectUrl(url))
    ws.on("open", () => ws.send(handshake(i)))
    ws.on("message", (data) => onFrame(JSON.parse(String(data))))
    ws.on("error", () => undefined)
    yield* Scope.addFinalizer(scope, Effect.sync(() => ws.terminate()))
  })

const decoder = new TextDecoder()

const openOne = (floor: Effect4Floor, url: string, i: number, scope: Scope.Scope): Effect.Effect<void> =>
  Effect.gen(function*() {
    const first = yield* Deferred.make<void>()
    switch (floor) {
      case "floor-fiber": {
        const closed = yield* Deferred.make<void>()
        yield* rawSocket(url, i, () => Deferred.doneUnsafe(first, Exit.void), scope)
        yield* Effect.forkIn(Deferred.await(closed), scope)
        break
      }
      case "floor-stream": {
        const queue = yield* Queue.unbounded<unknown>()
        yield* rawSocket(url, i, (frame) => Queue.offerUnsafe(queue, frame), scope)
        yield* Stream.fromQueue(queue).pipe(
          Stream.runForEach(() => Deferred.succeed(first, undefined)),
          Effect.forkIn(scope)
        )
        break
      }
      case "floor-socket": {
        const socket = yield* Socket.makeWebSocket(connectUrl(url))
        const reader = yield* Scope.provide(scope)(socket.reader)
        const writer = yield* Scope.provide(scope)(socket.writer)
        yield* Effect.orDie(writer.write(handshake(i)))
        yield* reader.pull.pipe(
          Effect.flatMap((chunk) => {
            for (const data of chunk) JSON.parse(typeof data === "string" ? data : decoder.decode(data))
            return Deferred.succeed(first, undefined)
          }),
          Effect.forever,
          Effect.ignore,
          Effect.forkIn(scope)
        )
        break
      }
    }
    yield* Deferred.await(first)
  }).pipe(Effect.orDie, Effect.provide(NodeSocket.layerWebSocketConstructor))

/**
 * Opens `count` connections of a floor; resolves once each got its first frame. `fibers`, when
 * given, is provided to every connection's program (so that every fiber it forks is counted).
 */
export const hold = async (
  floor: Effect4Floor,
  url: string,
  count: number,
  concurrency: number,
  fibers?: Metric.FiberRuntimeMetricsService
): Promise<HoldResult> => {
  const scope = Effect.runSync(Scope.make())
  const start = performance.now()
  let opened = 0
  await pool(count, concurrency, async (i) => {
    const one = openOne(floor, url, i, scope)
    await Effect.runPromise(fibers === undefined ? one : Effect.provideService(one, Metric.FiberRuntimeMetrics, fibers))
    opened++
  })
  return {
    opened,
    openMs: performance.now() - start,
    close: () => Effect.runPromise(Scope.close(scope, Exit.void))
  }
}

/**
 * Counts live fibers: Effect 4 has no `Supervisor`, but every fiber started where the
 * `Metric.FiberRuntimeMetrics` reference is provided reports its start and its end to it (and
 * a fiber inherits its parent's references, daemons included).
 */
export const fiberCounter = (): Metric.FiberRuntimeMetricsService & { readonly alive: () => number } => {
  let alive = 0
  return {
    recordFiberStart: () => {
      alive++
    },
    recordFiberEnd: () => {
      alive--
    },
    alive: () => alive
  }
}

/**
 * Live fibers per open connection of a floor, counted as the SDK's are (sdk.ts `countFibers`).
 * A check of the method: `floor-fiber` and `floor-stream` hold one fiber per connection.
 */
export const countFibers = async (floor: Effect4Floor, url: string, count: number, concurrency: number): Promise<FiberCount> => {
  const counter = fiberCounter()
  const warm = await hold(floor, url, 10, 10, counter)
  await warm.close()
  await sleep(200)
  const before = counter.alive()
  const held = await hold(floor, url, count, concurrency, counter)
  await sleep(300)
  const after = counter.alive()
  await held.close()
  return { sessions: count, before, after, perSession: (after - before) / count }
}

/** The throughput floor: raw `ws` + `JSON.parse` -> `Queue` -> `Stream.runForEachArray`. */
export const throughputStream = (url: string, n: number): Promise<ThroughputResult> =>
  Effect.runPromise(Effect.gen(function*() {
    const queue = yield* Queue.unbounded<
      { readonly event?: string; readonly data?: { readonly content?: string } },
      Cause.Done
    >()
    const start = performance.now()
    const ws = new WebSocket(connectUrl(url))
    ws.on("open", () => ws.send(JSON.stringify({ apiKey: "bench-key", sessionId: `${Scenario.throughput}-${n}` })))
    ws.on("message", (data) => Queue.offerUnsafe(queue, JSON.parse(String(data))))
    ws.on("error", (error) => Queue.failCauseUnsafe(queue, Cause.die(error)))
    ws.on("close", () => Queue.endUnsafe(queue))
    let frames = 0
    let lastIndex = -1
    let end = Number.NaN
    yield* Stream.fromQueue(queue).pipe(Stream.runForEachArray((chunk) =>
      Effect.sync(() => {
        for (const frame of chunk) {
          if (frame.event === "complete") {
            end = performance.now()
          } else {
            frames++
            if (frames === n) lastIndex = frameIndex(frame.data?.content ?? "")
          }
        }
      })
    ))
    return { frames, ms: end - start, lastIndex }
  }))

/** The session floor: the same loop and result as raw.ts `firstEvent`. */
export const firstEvent = async (
  baseUrl: string,
  apiKey: string,
  request: typeof createRequest,
  options: FirstEventOptions
): Promise<FirstEventResult> => {
  const runtime = ManagedRuntime.make(NodeHttpClient.layerUndici)
  const wsUrl = connectUrl(baseUrl.replace(/^http/, "ws"))
  const post = HttpClientRequest.post(`${baseUrl}/api/v1sessions`).pipe(
    HttpClientRequest.bearerToken(apiKey),
    HttpClientRequest.bodyJsonUnsafe(request)
  )
  const once = Effect.gen(function*() {
    const start = performance.now()
    const client = yield* HttpClient.HttpClient
    const response = yield* client.execute(HttpClientRequest.setHeader(post, "idempotency-key", randomUUID()))
    const session = (yield* response.json) as { readonly session_id?: string }
    const sessionId = session.session_id ?? ""
    const queue = yield* Queue.unbounded<unknown, Cause.Done>()
    const ws = new WebSocket(wsUrl)
    ws.on("open", () => ws.send(JSON.stringify({ apiKey, sessionId })))
    ws.on("message", (data) => Queue.offerUnsafe(queue, JSON.parse(String(data))))
    ws.on("error", (error) => Queue.failCauseUnsafe(queue, Cause.die(error)))
    ws.on("close", () => Queue.endUnsafe(queue))
    let first = Number.NaN
    let seen = 0
    yield* Stream.fromQueue(queue).pipe(
      Stream.take(options.events),
      Stream.runForEach(() =>
        Effect.sync(() => {
          if (seen++ === 0) first = performance.now()
        })
      )
    )
    yield* Effect.callback<void>((resume) => {
      ws.once("close", () => resume(Effect.void))
      ws.close(1000)
    })
    return { firstMs: first - start, seen }
  })
  const result = await firstEventLoop(() => runtime.runPromise(Effect.orDie(once)), options)
  await runtime.dispose()
  return result
}
