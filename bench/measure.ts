/**
 * What the measured clients share: result shapes, a connection pool, a heap sampler, statistics.
 */

/** One throughput run. */
export interface ThroughputResult {
  /** action_run frames delivered (the `complete` is not counted). */
  readonly frames: number
  /** From opening the socket to the last frame delivered. */
  readonly ms: number
  /** The index carried by the last action_run delivered (n - 1 when nothing was lost or reordered). */
  readonly lastIndex: number
  /** The client process's CPU time (user + system) over the run, when measured. */
  readonly cpuMs?: number | undefined
}

/** Connections held open. */
export interface HoldResult {
  readonly opened: number
  readonly openMs: number
  readonly close: () => Promise<void>
}

/** What the heap sampler saw. */
export interface HeapSample {
  /** The highest `heapUsed` sampled (garbage included), in bytes. */
  readonly peakHeap: number
  /** The highest heap after a forced full GC (live data only), in bytes. */
  readonly peakLiveHeap: number
  /** The live heap before the stream started, in bytes. */
  readonly baseHeap: number
}

/** One slow-consumer run. */
export interface SlowResult extends HeapSample {
  readonly frames: number
  readonly ms: number
  /** The most frames the client's own queue held at once (raw clients only; -1 when not known). */
  readonly maxQueued: number
}

/** One reconnect run: per drop, the time from the server dropping the socket to the next event delivered. */
export interface ReconnectResult {
  readonly frames: number
  readonly gapsMs: ReadonlyArray<number>
}

/** Create to first event, over sequential short sessions (create, the script's events, close). */
export interface FirstEventResult {
  /** Per session: from the call to the first event delivered. */
  readonly latenciesMs: ReadonlyArray<number>
  /** Events delivered in all (sessions x events per session when nothing was lost). */
  readonly events: number
  /** The client process's CPU time (user + system) over the measured loop. */
  readonly cpuMs: number
  /** Wall time of the measured loop. */
  readonly wallMs: number
}

/** Live fibers per open, idle session. */
export interface FiberCount {
  readonly sessions: number
  /** Fibers alive (supervised or roots) before the sessions were opened, and once they were. */
  readonly before: number
  readonly after: number
  /** (fibers alive after that were not before) / sessions. */
  readonly perSession: number
}

/** The request both sides of the create-session and create-to-first-event figures send. */
export const createRequest = { start_url: "https://example.com/start", max_actions: 5, goal: "Find the pricing page" }

/** The event channel's address under a base URL. */
export const connectUrl = (base: string): string => `${base}/v1/connect`

/** Milliseconds of sleep. */
export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/** Burns `micros` microseconds of CPU (a consumer's per-event work). */
export const busy = (micros: number): void => {
  const until = performance.now() + micros / 1000
  while (performance.now() < until) {
    // spin
  }
}

/** Lets pending I/O callbacks run (socket reads), then resumes: a consumer's pause without a timer. */
export const yieldToIo = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

/** Runs `task(0..count-1)` with at most `concurrency` running at once. */
export const pool = async (count: number, concurrency: number, task: (i: number) => Promise<void>): Promise<void> => {
  let next = 0
  const worker = async (): Promise<void> => {
    while (next < count) {
      const i = next++
      await task(i)
    }
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker))
}

/** A full GC (the child runs with `--expose-gc`; without it, nothing). */
export const fullGc = (): void => {
  const gc = (globalThis as { gc?: () => void }).gc
  if (gc !== undefined) {
    gc()
    gc()
  }
}

/** Samples the heap: `heapUsed` on every tick, and the live heap (after a full GC) every `liveEvery` frames. */
export interface HeapSampler {
  readonly tick: (frames: number) => void
  readonly result: () => HeapSample
}

/** A heap sampler; call it just before the stream starts (it records the live baseline). */
export const heapSampler = (liveEvery: number): HeapSampler => {
  fullGc()
  const baseHeap = process.memoryUsage().heapUsed
  let peakHeap = baseHeap
  let peakLiveHeap = baseHeap
  const interval = setInterval(() => {
    const used = process.memoryUsage().heapUsed
    if (used > peakHeap) peakHeap = used
  }, 5)
  return {
    tick: (frames) => {
      if (frames % 100 === 0) {
        const used = process.memoryUsage().heapUsed
        if (used > peakHeap) peakHeap = used
      }
      if (frames % liveEvery === 0) {
        fullGc()
        const live = process.memoryUsage().heapUsed
        if (live > peakLiveHeap) peakLiveHeap = live
      }
    },
    result: () => {
      clearInterval(interval)
      return { peakHeap, peakLiveHeap, baseHeap }
    }
  }
}

/** Minimum, median and maximum. */
export interface Stats {
  readonly min: number
  readonly median: number
  readonly max: number
  readonly samples: ReadonlyArray<number>
}

/** The statistics of some samples (NaN everywhere when there are none). */
export const stats = (samples: ReadonlyArray<number>): Stats => {
  const sorted = [...samples].sort((a, b) => a - b)
  const n = sorted.length
  const median = n === 0
    ? Number.NaN
    : n % 2 === 1
    ? (sorted[(n - 1) / 2] ?? Number.NaN)
    : ((sorted[n / 2 - 1] ?? Number.NaN) + (sorted[n / 2] ?? Number.NaN)) / 2
  return { min: sorted[0] ?? Number.NaN, median, max: sorted[n - 1] ?? Number.NaN, samples }
}

/** The options of a create-to-first-event client (raw.ts, floors.ts, sdk.ts). */
export interface FirstEventOptions {
  readonly sessions: number
  readonly warmup: number
  readonly events: number
  readonly measure: (body: () => Promise<FirstEventResult>) => Promise<FirstEventResult>
}

/**
 * Runs `once` (one short session: its latency to the first event, and the events it saw) for the
 * warm-up, then `sessions` times under `measure`, with the process's CPU over the loop.
 */
export const firstEventLoop = async (
  once: () => Promise<{ readonly firstMs: number; readonly seen: number }>,
  options: FirstEventOptions
): Promise<FirstEventResult> => {
  const loop = async (n: number) => {
    const latencies: Array<number> = []
    let events = 0
    for (let i = 0; i < n; i++) {
      const r = await once()
      latencies.push(r.firstMs)
      events += r.seen
    }
    return { latencies, events }
  }
  await loop(options.warmup)
  fullGc()
  return options.measure(async () => {
    const cpu = process.cpuUsage()
    const started = performance.now()
    const { events, latencies } = await loop(options.sessions)
    const used = process.cpuUsage(cpu)
    return { latenciesMs: latencies, events, cpuMs: (used.user + used.system) / 1000, wallMs: performance.now() - started }
  })
}
