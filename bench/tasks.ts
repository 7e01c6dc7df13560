/**
 * The tasks of the measured client process (bench/child.ts) and what they give back, shared as
 * types only by the harness that starts it (bench/harness.ts, bench/processes.ts), the child and
 * its parts (bench/sdk.ts, bench/createSession.ts): this module imports none of them, so the
 * imports run one way.
 */
import type { FiberCount, FirstEventResult, heapSampler, MemoryResult, ReconnectResult, SlowResult, ThroughputResult } from "effect-agent-session-test-support/measure"
import type { Floor } from "./floors.js"
import type { SseResult } from "./sse.js"
import type * as Raw from "./raw.js"

/** The side of a comparison. */
export type Variant = "raw" | "sdk"

/** One measurement. */
export type Task =
  | {
    readonly kind: "throughput"
    readonly variant: Variant
    /** The SDK's path: `EventStream.events` (default) or `AgentSessions.attach` (raw: ignored). */
    readonly path?: "events" | "attach" | "floor" | undefined
    readonly url: string
    readonly n: number
    readonly warmup: number
  }
  | {
    readonly kind: "fibers"
    readonly variant: "sdk" | Floor
    readonly url: string
    readonly count: number
    readonly concurrency: number
  }
  | {
    readonly kind: "firstEvent"
    readonly variant: Variant | "floor-stream"
    readonly baseUrl: string
    readonly apiKey: string
    readonly sessions: number
    readonly warmup: number
    /** Events taken per session (the short script's length) before closing. */
    readonly events: number
  }
  | {
    readonly kind: "memory"
    readonly variant: Variant | Floor
    /** How raw and SDK sessions are opened: connect only (default), or create then connect. */
    readonly path?: "connect" | "start" | undefined
    readonly url: string
    readonly count: number
    readonly concurrency: number
  }
  | {
    readonly kind: "slow"
    readonly variant: Variant | "raw-unbounded"
    readonly url: string
    readonly n: number
    readonly bufferSize: number
    readonly workMicros: number
    readonly yieldEvery: number
    readonly liveEvery: number
  }
  | {
    readonly kind: "reconnect"
    readonly variant: Variant
    readonly url: string
    readonly id: string
    readonly k: number
    readonly drops: number
  }
  | {
    readonly kind: "createSession"
    readonly baseUrl: string
    readonly apiKey: string
    readonly requests: number
    readonly rounds: number
    readonly warmup: number
  }
  | {
    readonly kind: "sse"
    readonly size: number
    readonly piece: number
    readonly rounds: number
  }

/** Create-session latencies: the median of each round, per side (the sides alternate request by request). */
export interface CreateSessionResult {
  readonly fetchMedianMs: ReadonlyArray<number>
  readonly sdkMedianMs: ReadonlyArray<number>
}

/** What a task gives back. */
export type TaskResult =
  | ThroughputResult
  | MemoryResult
  | SlowResult
  | ReconnectResult
  | CreateSessionResult
  | FiberCount
  | FirstEventResult
  | SseResult

/** What both sides implement. */
export interface Client {
  readonly throughput: typeof Raw.throughput
  readonly hold: typeof Raw.hold
  /** Sessions opened create-then-connect (`AgentSessions.start`; raw: `fetch` then `ws`). */
  readonly holdStarted: typeof Raw.holdStarted
  readonly slowConsumer: (
    url: string,
    n: number,
    options: {
      readonly bufferSize: number
      readonly workMicros: number
      readonly yieldEvery: number
      readonly sampler: ReturnType<typeof heapSampler>
    }
  ) => Promise<SlowResult>
  readonly reconnect: typeof Raw.reconnect
  readonly firstEvent: typeof Raw.firstEvent
}
