/**
 * The measured client process: `node --import tsx --expose-gc bench/child.ts '<task as JSON>'`.
 * It runs one task against the load generator (or the simulator), sends the result to its parent
 * over IPC (or prints it), and exits. One process per measurement keeps the sides apart: the SDK
 * never shares a heap, a JIT or a GC with the raw client it is compared with.
 */
import * as Fs from "node:fs"
import * as Inspector from "node:inspector"
import * as Path from "node:path"
import { createRequest, fullGc, heapSampler, type HeapSample, sleep } from "./measure.js"
import type { FiberCount, FirstEventResult, ReconnectResult, SlowResult, ThroughputResult } from "./measure.js"
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

/** Memory per open connection. */
export interface MemoryResult {
  readonly opened: number
  readonly openMs: number
  readonly rssPerConn: number
  readonly heapPerConn: number
  readonly externalPerConn: number
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

const rawClient = async (bounded: boolean): Promise<Client> => {
  const raw = await import("./raw.js")
  return { ...raw, slowConsumer: (url, n, options) => raw.slowConsumer(url, n, { ...options, bounded }) }
}

const clientFor = async (variant: Variant | "raw-unbounded"): Promise<Client> => {
  if (variant === "sdk") return (await import("./sdk.js")).client
  return rawClient(variant === "raw")
}

const memory = async (hold: Client["hold"], url: string, count: number, concurrency: number): Promise<MemoryResult> => {
  // Warm up: load every module and compile the paths once, so the baseline includes them.
  const warm = await hold(url, 20, 20)
  await warm.close()
  await sleep(100)
  fullGc()
  const before = process.memoryUsage()
  const held = await hold(url, count, concurrency)
  await sleep(300)
  fullGc()
  const after = process.memoryUsage()
  // Not closed: the process exits next, which drops every socket at once (closing 10k scopes
  // one by one would only add minutes to the run).
  void held
  return {
    opened: held.opened,
    openMs: held.openMs,
    rssPerConn: (after.rss - before.rss) / count,
    heapPerConn: (after.heapUsed - before.heapUsed) / count,
    externalPerConn: (after.external - before.external) / count
  }
}

const post = <A>(session: Inspector.Session, method: string, params?: object): Promise<A> =>
  new Promise((resolve, reject) => {
    session.post(method, params, (error, result) => (error === null ? resolve(result as A) : reject(error)))
  })

/**
 * Runs the measured part of a task under the CPU profiler when `BENCH_CPU_PROFILE_DIR` is set
 * (warm-up, set-up and module loading are left out), writing `<label>-<pid>.cpuprofile` there.
 */
export const profiled = async <A>(label: string, body: () => Promise<A>): Promise<A> => {
  const dir = process.env["BENCH_CPU_PROFILE_DIR"]
  if (dir === undefined || dir === "") return body()
  const session = new Inspector.Session()
  session.connect()
  await post(session, "Profiler.enable")
  await post(session, "Profiler.setSamplingInterval", { interval: 100 })
  await post(session, "Profiler.start")
  try {
    return await body()
  } finally {
    const { profile } = await post<{ profile: object }>(session, "Profiler.stop")
    Fs.mkdirSync(dir, { recursive: true })
    Fs.writeFileSync(Path.join(dir, `${label}-${process.pid}.cpuprofile`), JSON.stringify(profile))
    session.disconnect()
  }
}

/** Runs one task. */
export const runTask = async (task: Task): Promise<TaskResult> => {
  switch (task.kind) {
    case "throughput": {
      const client = await clientFor(task.variant)
      const run = task.variant === "sdk" && task.path === "attach"
        ? (await import("./sdk.js")).throughputAttach
        : task.variant === "raw" && task.path === "floor"
        ? (await import("./floors.js")).throughputStream
        : client.throughput
      if (task.warmup > 0) await run(task.url, task.warmup)
      fullGc()
      const label = task.variant === "sdk" && task.path === "attach"
        ? "sdk-attach"
        : task.path === "floor"
        ? "floor-stream"
        : task.variant
      return profiled(`throughput-${label}`, async () => {
        const cpu = process.cpuUsage()
        const result = await run(task.url, task.n)
        const used = process.cpuUsage(cpu)
        return { ...result, cpuMs: (used.user + used.system) / 1000 }
      })
    }
    case "memory": {
      const variant = task.variant
      let hold: Client["hold"]
      if (variant === "raw" || variant === "sdk") hold = (await clientFor(variant)).hold
      else {
        const floors = await import("./floors.js")
        hold = (url, count, concurrency) => floors.hold(variant, url, count, concurrency)
      }
      return profiled(`memory-${variant}`, () => memory(hold, task.url, task.count, task.concurrency))
    }
    case "slow": {
      const client = await clientFor(task.variant)
      // Warm up with a short run, so compiling is not counted as heap.
      await client.slowConsumer(task.url, 1000, {
        bufferSize: task.bufferSize,
        workMicros: task.workMicros,
        yieldEvery: task.yieldEvery,
        sampler: heapSampler(task.liveEvery)
      })
      return profiled(`slow-${task.variant}`, () =>
        client.slowConsumer(task.url, task.n, {
          bufferSize: task.bufferSize,
          workMicros: task.workMicros,
          yieldEvery: task.yieldEvery,
          sampler: heapSampler(task.liveEvery)
        }))
    }
    case "fibers": {
      const variant = task.variant
      return variant === "sdk"
        ? (await import("./sdk.js")).countFibers(task.url, task.count, task.concurrency)
        : (await import("./floors.js")).countFibers(variant, task.url, task.count, task.concurrency)
    }
    case "firstEvent": {
      const firstEvent = task.variant === "floor-stream"
        ? (await import("./floors.js")).firstEvent
        : (await clientFor(task.variant)).firstEvent
      return firstEvent(task.baseUrl, task.apiKey, createRequest, {
        sessions: task.sessions,
        warmup: task.warmup,
        events: task.events,
        measure: (body) => profiled(`firstEvent-${task.variant}`, body)
      })
    }
    case "reconnect":
      return (await clientFor(task.variant)).reconnect(task.url, task.id, task.k, task.drops)
    case "createSession": {
      const createSession = await import("./createSession.js")
      return profiled("createSession", () => createSession.run(task))
    }
    case "sse": {
      const sse = await import("./sse.js")
      return profiled("sse", async () => sse.run(task))
    }
  }
}

export type { HeapSample }

const isMain = process.argv[1] !== undefined && import.meta.url.endsWith(process.argv[1].replace(/\\/g, "/"))
if (isMain) {
  const task = JSON.parse(process.argv[2] ?? "{}") as Task
  // A task whose program waits on nothing the event loop holds (every socket gone) would end
  // the process quietly with code 0: say so and fail instead.
  process.once("beforeExit", () => {
    console.error(`${task.kind} ${"variant" in task ? task.variant : ""}: the task never finished (the event loop emptied)`)
    process.exit(1)
  })
  runTask(task).then(
    (result) => {
      if (process.send !== undefined) process.send({ type: "result", result }, () => process.exit(0))
      else {
        console.log(JSON.stringify(result))
        process.exit(0)
      }
    },
    (error: unknown) => {
      console.error(error)
      process.exit(1)
    }
  )
}
