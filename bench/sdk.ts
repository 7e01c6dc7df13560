/**
 * The SDK side: the same measurements as raw.ts through `EventStream` (documented dialect, the
 * SDK's own `ws`-based WebSocket constructor, default options unless a measurement sets one).
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Credentials from "../src/Credentials.js"
import * as EventStream from "../src/EventStream.js"
import * as WebSocket from "../src/internal/webSocket.js"
import type * as SessionEvent from "../src/SessionEvent.js"
import type { Client } from "./child.js"
import { droppedAt, frameIndex, Scenario, sharedNow } from "./frames.js"
import { busy, type HoldResult, type ReconnectResult, type SlowResult, type ThroughputResult, yieldToIo } from "./measure.js"

const runtimes = new Map<string, ManagedRuntime.ManagedRuntime<EventStream.EventStream, never>>()

/** The runtime of the event channel at a base URL (one per process and URL). */
export const runtimeFor = (url: string): ManagedRuntime.ManagedRuntime<EventStream.EventStream, never> => {
  let runtime = runtimes.get(url)
  if (runtime === undefined) {
    runtime = ManagedRuntime.make(
      EventStream.layer({ url }).pipe(
        Layer.provide(Credentials.layer({ apiKey: "bench-key" })),
        Layer.provide(WebSocket.layer())
      )
    )
    runtimes.set(url, runtime)
  }
  return runtime
}

const throughput = (url: string, n: number): Promise<ThroughputResult> =>
  runtimeFor(url).runPromise(Effect.gen(function*() {
    const eventStream = yield* EventStream.EventStream
    let frames = 0
    let last: SessionEvent.ActionRun | undefined
    let end = Number.NaN
    const start = performance.now()
    yield* eventStream.events(`${Scenario.throughput}-${n}`).pipe(
      Stream.runForEachChunk((chunk) =>
        Effect.sync(() => {
          for (const event of chunk) {
            if (event._tag === "ActionRun") {
              frames++
              last = event
            } else if (event._tag === "Complete") {
              end = performance.now()
            }
          }
        })
      )
    )
    return { frames, ms: end - start, lastIndex: last === undefined ? -1 : frameIndex(last.content) }
  }))

const hold = (url: string, count: number, concurrency: number): Promise<HoldResult> =>
  runtimeFor(url).runPromise(Effect.gen(function*() {
    const eventStream = yield* EventStream.EventStream
    const scope = yield* Scope.make()
    const start = performance.now()
    // One connection: connect, consume its events in a fiber of the scope, wait for the first.
    const open = (i: number) =>
      Effect.gen(function*() {
        const connection = yield* eventStream.connect(`${Scenario.hold}-${i}`)
        const first = yield* Deferred.make<void>()
        yield* connection.events.pipe(
          Stream.runForEach(() => Deferred.succeed(first, undefined)),
          Effect.forkIn(scope)
        )
        yield* Deferred.await(first)
      }).pipe(Scope.extend(scope))
    yield* Effect.forEach(Array.from({ length: count }, (_, i) => i), open, { concurrency, discard: true })
    const openMs = performance.now() - start
    return {
      opened: count,
      openMs,
      close: () => Effect.runPromise(Scope.close(scope, Exit.void))
    }
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

/** The SDK client. */
export const client: Client = { throughput, hold, slowConsumer, reconnect }
