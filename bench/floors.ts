/**
 * Memory floors: what the least Effect machinery per connection costs, to tell the SDK's own
 * cost from the cost of holding any fiber or any `Stream` per connection. Each is a `hold`
 * like raw.ts's, measured by the memory task (`--floors`).
 *
 * - `floor-fiber`: a raw `ws` socket and one Effect fiber per connection, waiting on a
 *   `Deferred` (the least an Effect program holding a connection can have).
 * - `floor-stream`: a raw `ws` socket feeding a `Mailbox`, consumed by `Stream.runForEach` in one
 *   fiber per connection (the least a `Stream` of events costs).
 * - `floor-socket`: the platform's `Socket.makeWebSocket` + `runRaw` in a fiber, feeding a
 *   `Mailbox` consumed as a `Stream` in another (the platform socket, over
 *   `NodeSocket.layerWebSocketConstructor`'s `ws` sockets, no SDK).
 *
 * And one throughput floor, `throughputStream`: the raw client's `ws` + `JSON.parse`, each frame
 * offered to a `Mailbox` read by `Stream.runForEachChunk` (the consumer the SDK's throughput runs
 * use): what any Effect `Stream` of a socket's frames costs, before any typing or guarantee.
 *
 * And one session floor, `firstEvent`: the short session of the create-to-first-event figure
 * (create, 5 events, close) written with the least Effect: the platform `HttpClient` (undici, as
 * the SDK's layer) for the POST, a raw `ws` socket feeding a `Mailbox` read as a `Stream` for the
 * events, in one `Effect.runPromise` per session. What a session costs in Effect before any
 * typing, retry, time-out, span or guarantee.
 *
 * Nothing here imports the library: the floors stay the same whatever the SDK becomes.
 */
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as Socket from "@effect/platform/Socket"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as NodeSocket from "@effect/platform-node/NodeSocket"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Mailbox from "effect/Mailbox"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Supervisor from "effect/Supervisor"
import { WebSocket } from "ws"
import { frameIndex, Scenario } from "effect-agent-session-test-support/frames"
import * as ManagedRuntime from "effect/ManagedRuntime"
import { randomUUID } from "node:crypto"
import {
  connectUrl,
  type createRequest,
  type FiberCount,
  type FirstEventResult,
  type FirstEventOptions,
  firstEventLoop,
  type HoldResult,
  pool,
  sleep,
  type ThroughputResult
} from "effect-agent-session-test-support/measure"

/** The floors. */
export type Floor = "floor-fiber" | "floor-stream" | "floor-socket"

const handshake = (i: number): string => JSON.stringify({ apiKey: "bench-key", sessionId: `${Scenario.hold}-${i}` })

const rawSocket = (url: string, i: number, onFrame: (frame: unknown) => void, scope: Scope.Scope) =>
  Effect.gen(function*() {
    const ws = new WebSocket(connectUrl(url))
    ws.on("open", () => ws.send(handshake(i)))
    ws.on("message", (data) => onFrame(JSON.parse(String(data))))
    ws.on("error", () => undefined)
    yield* Scope.addFinalizer(scope, Effect.sync(() => ws.terminate()))
  })

const openOne = (floor: Floor, url: string, i: number, scope: Scope.Scope): Effect.Effect<void> =>
  Effect.gen(function*() {
    const first = yield* Deferred.make<void>()
    switch (floor) {
      case "floor-fiber": {
        const closed = yield* Deferred.make<void>()
        yield* rawSocket(url, i, () => Deferred.unsafeDone(first, Exit.void), scope)
        yield* Effect.forkIn(Deferred.await(closed), scope)
        break
      }
      case "floor-stream": {
        const mailbox = yield* Mailbox.make<unknown>()
        yield* rawSocket(url, i, (frame) => mailbox.unsafeOffer(frame), scope)
        yield* Mailbox.toStream(mailbox).pipe(Stream.runForEach(() => Deferred.succeed(first, undefined)), Effect.forkIn(scope))
        break
      }
      case "floor-socket": {
        const mailbox = yield* Mailbox.make<unknown>()
        const socket = yield* Socket.makeWebSocket(connectUrl(url)).pipe(Scope.extend(scope))
        const write = yield* socket.writer.pipe(Scope.extend(scope))
        yield* socket.runRaw((data) => {
          mailbox.unsafeOffer(JSON.parse(typeof data === "string" ? data : new TextDecoder().decode(data)))
        }, { onOpen: Effect.ignore(write(handshake(i))) }).pipe(Effect.forkIn(scope))
        yield* Mailbox.toStream(mailbox).pipe(Stream.runForEach(() => Deferred.succeed(first, undefined)), Effect.forkIn(scope))
        break
      }
    }
    yield* Deferred.await(first)
  }).pipe(Effect.provide(NodeSocket.layerWebSocketConstructor))

/** Opens `count` connections of a floor; resolves once each got its first frame. */
export const hold = async (
  floor: Floor,
  url: string,
  count: number,
  concurrency: number,
  supervisor?: Supervisor.Supervisor<unknown>
): Promise<HoldResult> => {
  const scope = Effect.runSync(Scope.make())
  const start = performance.now()
  let opened = 0
  await pool(count, concurrency, async (i) => {
    const one = openOne(floor, url, i, scope)
    await Effect.runPromise(supervisor === undefined ? one : Effect.supervised(one, supervisor))
    opened++
  })
  return {
    opened,
    openMs: performance.now() - start,
    close: () => Effect.runPromise(Scope.close(scope, Exit.void))
  }
}

/**
 * Live fibers per open connection of a floor, counted as the SDK's are (bench/sdk.ts
 * `countFibers`): a `Supervisor.track` around each connection's program, with `Fiber.roots`.
 * A check of the method: `floor-fiber` and `floor-stream` hold one fiber per connection.
 */
export const countFibers = async (floor: Floor, url: string, count: number, concurrency: number): Promise<FiberCount> => {
  const supervisor = Effect.runSync(Supervisor.track)
  const alive = () =>
    Effect.runSync(Effect.zipWith(
      Fiber.roots,
      supervisor.value,
      (roots, tracked) => new Set([...roots, ...tracked].filter((f) => f.unsafePoll() === null))
    ))
  const warm = await hold(floor, url, 10, 10, supervisor)
  await warm.close()
  await sleep(200)
  const before = alive()
  const held = await hold(floor, url, count, concurrency, supervisor)
  await sleep(300)
  const after = alive()
  const added = [...after].filter((f) => !before.has(f)).length
  await held.close()
  return { sessions: count, before: before.size, after: after.size, perSession: added / count }
}

/** The throughput floor: raw `ws` + `JSON.parse` -> `Mailbox` -> `Stream.runForEachChunk`. */
export const throughputStream = (url: string, n: number): Promise<ThroughputResult> =>
  Effect.runPromise(Effect.gen(function*() {
    const mailbox = yield* Mailbox.make<{ readonly event?: string; readonly data?: { readonly content?: string } }>()
    const start = performance.now()
    const ws = new WebSocket(connectUrl(url))
    ws.on("open", () => ws.send(JSON.stringify({ apiKey: "bench-key", sessionId: `${Scenario.throughput}-${n}` })))
    ws.on("message", (data) => mailbox.unsafeOffer(JSON.parse(String(data))))
    ws.on("error", (error) => mailbox.unsafeDone(Exit.die(error)))
    ws.on("close", () => mailbox.unsafeDone(Exit.void))
    let frames = 0
    let lastIndex = -1
    let end = Number.NaN
    yield* Mailbox.toStream(mailbox).pipe(Stream.runForEachChunk((chunk) =>
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

/** The session floor (see the module's header): the same loop and result as raw.ts `firstEvent`. */
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
    HttpClientRequest.bodyUnsafeJson(request)
  )
  const once = Effect.gen(function*() {
    const start = performance.now()
    const client = yield* HttpClient.HttpClient
    const response = yield* client.execute(
      HttpClientRequest.setHeader(post, "idempotency-key", randomUUID())
    )
    const session = (yield* response.json) as { readonly session_id?: string }
    const sessionId = session.session_id ?? ""
    const mailbox = yield* Mailbox.make<unknown>()
    const ws = new WebSocket(wsUrl)
    ws.on("open", () => ws.send(JSON.stringify({ apiKey, sessionId })))
    ws.on("message", (data) => mailbox.unsafeOffer(JSON.parse(String(data))))
    ws.on("error", (error) => mailbox.unsafeDone(Exit.die(error)))
    ws.on("close", () => mailbox.unsafeDone(Exit.void))
    let first = Number.NaN
    let seen = 0
    yield* Mailbox.toStream(mailbox).pipe(
      Stream.take(options.events),
      Stream.runForEach(() =>
        Effect.sync(() => {
          if (seen++ === 0) first = performance.now()
        })
      )
    )
    yield* Effect.async<void>((resume) => {
      ws.once("close", () => resume(Effect.void))
      ws.close(1000)
    })
    return { firstMs: first - start, seen }
  })
  const result = await firstEventLoop(() => runtime.runPromise(once), options)
  await runtime.dispose()
  return result
}
