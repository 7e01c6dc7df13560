/**
 * What the measured clients share: result shapes, a connection pool, a heap sampler, statistics,
 * the memory measurement, the CPU profiler and a child process's main. Nothing here imports
 * Effect: the Effect 4 edition's child process (packages/effect4/bench/child.ts) shares it too.
 */
import * as Fs from "node:fs"
import * as Inspector from "node:inspector"
import * as Path from "node:path"
import * as Util from "node:util"
import * as V8 from "node:v8"

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

/** The `q` quantile (0..1) of some samples, nearest rank (NaN when there are none). */
export const percentile = (samples: ReadonlyArray<number>, q: number): number => {
  const sorted = [...samples].sort((a, b) => a - b)
  return sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? Number.NaN
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

/** Memory per open connection. */
export interface MemoryResult {
  readonly opened: number
  readonly openMs: number
  readonly rssPerConn: number
  readonly heapPerConn: number
  readonly externalPerConn: number
}

/**
 * Memory per open connection of a `hold`: a warm-up of 20 connections (every module loaded and
 * the paths compiled, so the baseline includes them), then `count` connections held, per
 * connection = (after - before) / count, both after a full GC.
 */
export const memory = async (
  hold: (url: string, count: number, concurrency: number) => Promise<HoldResult>,
  url: string,
  count: number,
  concurrency: number
): Promise<MemoryResult> => {
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

/** What one kind of heap object costs per open connection (a heap snapshot summary). */
export interface HeapKind {
  /** The snapshot's node type and name: `object:FiberImpl`, `closure:onFrame`, `string`, ... */
  readonly kind: string
  /** Objects per connection. */
  readonly count: number
  /** Their own (shallow) size per connection, bytes. */
  readonly bytes: number
}

/** The heap snapshot summary of a `hold`: the kinds of objects added per open connection, largest first. */
export interface HeapSummary {
  readonly connections: number
  /** The total self size added per connection (about the heap per connection), bytes. */
  readonly bytesPerConn: number
  readonly top: ReadonlyArray<HeapKind>
}

interface RawSnapshot {
  readonly snapshot: { readonly meta: { readonly node_fields: ReadonlyArray<string>; readonly node_types: ReadonlyArray<unknown> } }
  readonly nodes: ReadonlyArray<number>
  readonly strings: ReadonlyArray<string>
}

/** Self size and count per kind of object in a heap snapshot of this process (strings by type only). */
const snapshotKinds = async (): Promise<Map<string, { count: number; bytes: number }>> => {
  let text = ""
  for await (const piece of V8.getHeapSnapshot()) text += String(piece)
  const snapshot = JSON.parse(text) as RawSnapshot
  text = ""
  const fields = snapshot.snapshot.meta.node_fields
  const types = (snapshot.snapshot.meta.node_types[0] ?? []) as ReadonlyArray<string>
  const width = fields.length
  const typeAt = fields.indexOf("type")
  const nameAt = fields.indexOf("name")
  const sizeAt = fields.indexOf("self_size")
  const kinds = new Map<string, { count: number; bytes: number }>()
  for (let i = 0; i < snapshot.nodes.length; i += width) {
    const type = types[snapshot.nodes[i + typeAt] ?? 0] ?? "?"
    const name = snapshot.strings[snapshot.nodes[i + nameAt] ?? 0] ?? "?"
    // Strings and numbers by type (their "name" is their content); objects and closures by name.
    const kind = type === "object" || type === "closure" || type === "native" ? `${type}:${name.slice(0, 60)}` : type
    const entry = kinds.get(kind) ?? { count: 0, bytes: 0 }
    entry.count++
    entry.bytes += snapshot.nodes[i + sizeAt] ?? 0
    kinds.set(kind, entry)
  }
  return kinds
}

/**
 * A heap snapshot summary of a `hold` (`--expose-gc`): a snapshot after the warm-up and one with
 * `count` connections held, the difference per connection by kind of object, the `top` largest.
 */
export const heapSummary = async (
  hold: (url: string, count: number, concurrency: number) => Promise<HoldResult>,
  url: string,
  count: number,
  concurrency: number,
  top = 15
): Promise<HeapSummary> => {
  const warm = await hold(url, 20, 20)
  await warm.close()
  await sleep(100)
  fullGc()
  const before = await snapshotKinds()
  const held = await hold(url, count, concurrency)
  await sleep(300)
  fullGc()
  const after = await snapshotKinds()
  void held
  const added: Array<HeapKind> = []
  let total = 0
  for (const [kind, { bytes, count: n }] of after) {
    const was = before.get(kind) ?? { count: 0, bytes: 0 }
    total += bytes - was.bytes
    added.push({ kind, count: (n - was.count) / count, bytes: (bytes - was.bytes) / count })
  }
  for (const [kind, was] of before) {
    if (!after.has(kind)) total -= was.bytes
  }
  added.sort((a, b) => b.bytes - a.bytes)
  return { connections: count, bytesPerConn: total / count, top: added.slice(0, top) }
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

/**
 * A measured child process's main, when `moduleUrl` is the script Node was started with: runs
 * the task given as JSON in `argv[2]`, sends the result to the parent over IPC (or prints it),
 * and exits.
 */
export const runAsChild = <T extends { readonly kind: string }>(
  moduleUrl: string,
  run: (task: T) => Promise<unknown>
): void => {
  const main = process.argv[1]
  if (main === undefined || !moduleUrl.endsWith(main.replace(/\\/g, "/"))) return
  const task = JSON.parse(process.argv[2] ?? "{}") as T
  // A task whose program waits on nothing the event loop holds (every socket gone) would end
  // the process quietly with code 0: say so and fail instead.
  process.once("beforeExit", () => {
    process.stderr.write(
      `${task.kind} ${"variant" in task ? String(task.variant) : ""}: the task never finished (the event loop emptied)\n`,
      () => process.exit(1)
    )
  })
  run(task).then(
    (result) => {
      if (process.send !== undefined) process.send({ type: "result", result }, () => process.exit(0))
      else process.stdout.write(`${JSON.stringify(result)}\n`, () => process.exit(0))
    },
    (error: unknown) => process.stderr.write(`${Util.inspect(error)}\n`, () => process.exit(1))
  )
}
