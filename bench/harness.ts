/**
 * The benchmark harness: starts the load generator (and the simulator) in their own processes,
 * runs every measurement in a fresh client process, alternating the sides (A B A B), and gathers
 * min/median/max and ratios. `bench/run.ts` runs it at full size and writes RESULTS.md;
 * `test/bench.test.ts` runs it at a small size.
 */
import { execSync } from "node:child_process"
import * as Os from "node:os"
import { join } from "node:path"
import type { CreateSessionResult, Task, Variant } from "./tasks.js"
import type { Floor } from "./floors.js"
import { type Effect4Config, type Effect4Figure, effect4Figure } from "./effect4.js"
import type { SseResult } from "./sse.js"
import {
  type FiberCount,
  type FirstEventResult,
  type MemoryResult,
  type ReconnectResult,
  type SlowResult,
  type Stats,
  stats,
  type ThroughputResult
} from "effect-agent-session-test-support/measure"
import {
  attempt,
  fdLimit,
  fromSource,
  isSkipped,
  root,
  runChild,
  type Server,
  type Skipped,
  startServer
} from "./processes.js"

/** What to run, and how much of it. */
export interface Config {
  /** action_run frames per throughput run (200k). */
  readonly frames: number
  /** Frames of the warm-up run before each measured throughput run. */
  readonly warmupFrames: number
  /** Throughput rounds per side. */
  readonly throughputRounds: number
  /** Open connections per memory measurement (1k, 5k, 10k). */
  readonly connections: ReadonlyArray<number>
  /** Memory rounds per side, for each size of `connections` (the last applies to any further size). */
  readonly memoryRounds: ReadonlyArray<number>
  /**
   * Connections at which the memory floors (bench/floors.ts) are measured, once each per size
   * (1k and 10k); 0 or []: not measured. Target 1 compares the SDK with the floor at the largest
   * size both were measured at.
   */
  readonly floorConnections: number | ReadonlyArray<number>
  /** Open SDK sessions (and floor connections) whose live fibers are counted; 0: not counted. */
  readonly fiberSessions: number
  /**
   * Create to first event against the simulator: sequential short sessions per round (the
   * simulator's script: `events` events), rounds per side (separate processes, sides
   * alternating), warm-up sessions per process.
   */
  readonly firstEvent: { readonly sessions: number; readonly rounds: number; readonly warmup: number; readonly events: number }
  /** Connections opening at once. */
  readonly memoryConcurrency: number
  /** Frames of the slow-consumer runs (50k, 200k). */
  readonly slowFrames: ReadonlyArray<number>
  /** Slow-consumer rounds per side and size. */
  readonly slowRounds: number
  /** The SDK's `bufferSize` (and the bounded raw client's queue bound) in the slow-consumer runs. */
  readonly bufferSize: number
  /** The slow consumer's work per event (a busy loop), in microseconds: more than the socket needs per frame. */
  readonly workMicros: number
  /** The slow consumer lets I/O run (`setImmediate`) every this many events. */
  readonly yieldEvery: number
  /** The slow consumer forces a full GC and samples the live heap every this many frames. */
  readonly liveEvery: number
  /** Abrupt drops per reconnect run. */
  readonly reconnectDrops: number
  /** Reconnect runs per side. */
  readonly reconnectRounds: number
  /** Create-session request pairs per round (fetch and SDK alternating request by request), rounds, warm-up pairs. */
  readonly createSession: { readonly requests: number; readonly rounds: number; readonly warmup: number }
  /** The SSE parser: one event of `size` characters, parsed whole and in `piece`-character pieces, `rounds` times. */
  readonly sse: { readonly size: number; readonly piece: number; readonly rounds: number }
  /**
   * Run the SDK side from another copy of the repository (its `bench/child.ts`, hence its
   * `src/`): to measure a proposed change against the raw floor with everything else equal.
   */
  readonly sdkRoot?: string | undefined
  /** Write a CPU profile of the measured part of every client process (both sides) to this directory. */
  readonly cpuProfileDir?: string | undefined
  /**
   * Run the parts at the same time (the smoke test: the figures then mean nothing, only that
   * every part runs). Default false: one measurement at a time.
   */
  readonly parallel?: boolean | undefined
  /** The Effect 4 edition's part (bench/effect4.ts). */
  readonly effect4: Effect4Config
  /** Run only these parts (see {@link parts}); default every part. */
  readonly only?: ReadonlyArray<Part> | undefined
  /** Progress lines. */
  readonly log: (line: string) => void
}

/** The parts of a run, in the order they run; `--only=<part>[,<part>]` picks some. */
export const parts = [
  "throughput",
  "memory",
  "floors",
  "fibers",
  "firstEvent",
  "createSession",
  "reconnect",
  "slow",
  "sse",
  "effect4"
] as const

/** A part of a run. */
export type Part = typeof parts[number]

/** The full-size configuration `npm run bench` uses. */
export const fullConfig: Config = {
  frames: 200_000,
  warmupFrames: 20_000,
  throughputRounds: 4,
  connections: [1_000, 5_000, 10_000],
  memoryRounds: [3, 2, 2],
  floorConnections: [1_000, 10_000],
  fiberSessions: 1_000,
  firstEvent: { sessions: 200, rounds: 3, warmup: 20, events: 5 },
  memoryConcurrency: 250,
  slowFrames: [50_000, 200_000],
  slowRounds: 2,
  bufferSize: 1024,
  workMicros: 5,
  yieldEvery: 100,
  liveEvery: 10_000,
  reconnectDrops: 4,
  reconnectRounds: 2,
  createSession: { requests: 100, rounds: 5, warmup: 100 },
  sse: { size: 1024 * 1024, piece: 256, rounds: 5 },
  effect4: {
    connections: [2_000, 10_000],
    memoryRounds: 2,
    heapConnections: 1_000,
    fiberSessions: 1_000,
    firstEvent: { sessions: 200, rounds: 3, warmup: 20, events: 5 },
    throughputRounds: 4
  },
  log: (line) => console.log(line)
}

/** The machine a run was made on. */
export interface Machine {
  readonly cpu: string
  readonly cores: number
  readonly memoryGiB: number
  readonly node: string
  readonly platform: string
  readonly date: string
  readonly fdLimit: number
  /** The load average (1, 5 and 15 minutes) when the run started (absent from older runs). */
  readonly loadAverage?: readonly [number, number, number] | undefined
}

/** The two sides of a comparison and their ratio (SDK over raw, of the medians). */
export interface Comparison {
  readonly raw: Stats
  readonly sdk: Stats
  /** median(SDK) / median(raw). */
  readonly ratio: number
  /** The ratio within each A/B pair of rounds. */
  readonly pairRatios: Stats
}

/** Live fibers per open, idle session (bench/sdk.ts `countFibers`), and the floors' counted the same way. */
export interface FiberFigure {
  readonly sdk: FiberCount
  readonly floors: ReadonlyArray<FiberCount & { readonly variant: string }>
}

/** Create to first event and CPU per short session (create, the script's events, close). */
export interface FirstEventFigure {
  /** The SDK's path. */
  readonly api: string
  /** Per round (one process), the median latency from the call to the first event. */
  readonly latency: Comparison
  /** Per round, the client process's CPU over the loop / sessions, in ms. */
  readonly cpuPerSession: Comparison
  /** Every latency of every round, per side (their median is the figure's "all sessions" median). */
  readonly allLatencies: { readonly raw: Stats; readonly sdk: Stats }
  /** The session floor (bench/floors.ts `firstEvent`), one run per round: latency and CPU, raw being the raw rounds. */
  readonly floor?: { readonly latency: Comparison; readonly cpuPerSession: Comparison } | undefined
}

/** Memory at one number of open connections. */
export interface MemoryFigure {
  readonly count: number
  readonly rssPerConn: Comparison
  readonly heapPerConn: Comparison
  readonly openMs: Comparison
}

/** A memory floor: the least Effect machinery per connection (bench/floors.ts), measured once. */
export interface FloorFigure {
  readonly variant: string
  readonly count: number
  readonly rssPerConn: number
  readonly heapPerConn: number
  readonly openMs: number
}

/** The slow consumer at one stream length. */
export interface SlowFigure {
  readonly frames: number
  /** Peak live heap above the baseline, bytes. */
  readonly sdkLive: Stats
  readonly rawBoundedLive: Stats
  readonly rawUnboundedLive: Stats
  /** Peak heapUsed (garbage included) above the baseline, bytes. */
  readonly sdkPeak: Stats
  readonly rawUnboundedMaxQueued: Stats
  readonly sdkFramesPerSecond: Stats
}

/** Everything a run measured. */
export interface Results {
  readonly machine: Machine
  readonly config: Omit<Config, "log">
  readonly seconds: number
  readonly throughput: ThroughputFigure | Skipped
  /** `AgentSessions.attach` (default options) consuming `running.events`, against the same raw rounds. */
  readonly throughputAttach?: ThroughputFigure | Skipped | undefined
  /** The throughput floor (raw ws + JSON.parse -> Mailbox -> Stream), against the same raw rounds. */
  readonly throughputFloor?: ThroughputFigure | Skipped | undefined
  readonly memory: ReadonlyArray<MemoryFigure> | Skipped
  readonly memoryNote: string
  readonly floors: ReadonlyArray<FloorFigure> | Skipped
  readonly fibers?: FiberFigure | Skipped | undefined
  readonly firstEvent?: FirstEventFigure | Skipped | undefined
  /** Seconds each part of the run took. */
  readonly phases: Readonly<Record<string, number>>
  /**
   * The load average (1, 5 and 15 minutes) at the end of each part: the machine is shared, and
   * what else ran beside a part is part of its figures (absent from older runs).
   */
  readonly phaseLoad?: Readonly<Record<string, readonly [number, number, number]>> | undefined
  readonly createSession: Comparison | Skipped
  readonly reconnect: { readonly sdk: Stats; readonly raw: Stats } | Skipped
  readonly slow: ReadonlyArray<SlowFigure> | Skipped
  /** The SSE parser on one long event (absent from runs made before it was measured). */
  readonly sse?: SseFigure | Skipped | undefined
  /** The Effect 4 edition (issue 25; absent from runs made before it was measured). */
  readonly effect4?: Effect4Figure | Skipped | undefined
}

/** The SSE parser's CPU on one long event, whole and in pieces. */
export interface SseFigure {
  readonly whole: Stats
  readonly pieces: Stats
  readonly scannedPerChar: number
}

/** A throughput comparison. */
export type ThroughputFigure = Comparison & { readonly cpuPerFrame: Comparison; readonly ordered: boolean }

/** The machine this runs on. */
export const machine = (): Machine => ({
  cpu: Os.cpus()[0]?.model ?? "unknown",
  cores: Os.availableParallelism(),
  memoryGiB: Math.round((Os.totalmem() / 1024 ** 3) * 10) / 10,
  node: process.version,
  platform: `${Os.type()} ${Os.release()} ${Os.arch()}`,
  date: new Date().toISOString(),
  fdLimit: fdLimit(),
  loadAverage: loadAverage()
})

/** The load average (1, 5 and 15 minutes), two decimals. */
export const loadAverage = (): readonly [number, number, number] => {
  const [one = 0, five = 0, fifteen = 0] = Os.loadavg().map((n) => Math.round(n * 100) / 100)
  return [one, five, fifteen]
}

export const compare = (raw: ReadonlyArray<number>, sdk: ReadonlyArray<number>): Comparison => {
  const r = stats(raw)
  const s = stats(sdk)
  const pairs: Array<number> = []
  for (let i = 0; i < Math.min(raw.length, sdk.length); i++) pairs.push((sdk[i] ?? Number.NaN) / (raw[i] ?? Number.NaN))
  return { raw: r, sdk: s, ratio: s.median / r.median, pairRatios: stats(pairs) }
}

const alternate = async <A>(
  rounds: number,
  run: (variant: Variant, round: number) => Promise<A>
): Promise<{ readonly raw: Array<A>; readonly sdk: Array<A> }> => {
  const raw: Array<A> = []
  const sdk: Array<A> = []
  for (let round = 0; round < rounds; round++) {
    raw.push(await run("raw", round))
    sdk.push(await run("sdk", round))
  }
  return { raw, sdk }
}

/**
 * Throughput: rounds of raw, SDK `EventStream.events`, SDK `AgentSessions.attach`, each in its
 * own process; both SDK paths are compared with the same raw rounds.
 */
const throughputFigure = async (
  config: Config,
  url: string
): Promise<
  { readonly events: ThroughputFigure; readonly attach: ThroughputFigure; readonly floor: ThroughputFigure }
> => {
  type Run = { readonly fps: number; readonly cpuUsPerFrame: number; readonly ordered: boolean }
  const one = async (variant: Variant, path: "events" | "attach" | "floor", round: number): Promise<Run> => {
    const r = await runChild<ThroughputResult>(
      { kind: "throughput", variant, path, url, n: config.frames, warmup: config.warmupFrames },
      config.cpuProfileDir,
      config.sdkRoot
    )
    const label = variant === "raw" ? (path === "floor" ? "floor (raw -> Mailbox -> Stream)" : "raw") : `SDK ${path}`
    if (r.frames !== config.frames) throw new Error(`${label} delivered ${r.frames} of ${config.frames} frames`)
    const fps = r.frames / (r.ms / 1000)
    config.log(
      `  throughput round ${round + 1} ${label}: ${Math.round(fps).toLocaleString("en-US")} frames/s, ${
        (((r.cpuMs ?? Number.NaN) * 1000) / r.frames).toFixed(2)
      } us CPU per frame`
    )
    return { fps, cpuUsPerFrame: ((r.cpuMs ?? Number.NaN) * 1000) / r.frames, ordered: r.lastIndex === config.frames - 1 }
  }
  const raw: Array<Run> = []
  const events: Array<Run> = []
  const attach: Array<Run> = []
  const floor: Array<Run> = []
  for (let round = 0; round < config.throughputRounds; round++) {
    raw.push(await one("raw", "events", round))
    floor.push(await one("raw", "floor", round))
    events.push(await one("sdk", "events", round))
    attach.push(await one("sdk", "attach", round))
  }
  const figure = (sdk: ReadonlyArray<Run>): ThroughputFigure => ({
    ...compare(raw.map((r) => r.fps), sdk.map((r) => r.fps)),
    cpuPerFrame: compare(raw.map((r) => r.cpuUsPerFrame), sdk.map((r) => r.cpuUsPerFrame)),
    ordered: [...raw, ...sdk].every((r) => r.ordered)
  })
  return { events: figure(events), attach: figure(attach), floor: figure(floor) }
}

const memoryFigures = async (config: Config, url: string, counts: ReadonlyArray<number>) => {
  const figures: Array<MemoryFigure> = []
  for (const [index, count] of counts.entries()) {
    const rounds = config.memoryRounds[Math.min(index, config.memoryRounds.length - 1)] ?? 1
    const { raw, sdk } = await alternate(rounds, async (variant, round) => {
      const r = await runChild<MemoryResult>(
        { kind: "memory", variant, url, count, concurrency: config.memoryConcurrency },
        config.cpuProfileDir,
        config.sdkRoot
      )
      if (r.opened !== count) throw new Error(`${variant} opened ${r.opened} of ${count} connections`)
      config.log(
        `  memory ${count} round ${round + 1} ${variant}: ${(r.rssPerConn / 1024).toFixed(1)} KiB RSS, ${
          (r.heapPerConn / 1024).toFixed(1)
        } KiB heap per connection (opened in ${Math.round(r.openMs)} ms)`
      )
      return r
    })
    figures.push({
      count,
      rssPerConn: compare(raw.map((r) => r.rssPerConn), sdk.map((r) => r.rssPerConn)),
      heapPerConn: compare(raw.map((r) => r.heapPerConn), sdk.map((r) => r.heapPerConn)),
      openMs: compare(raw.map((r) => r.openMs), sdk.map((r) => r.openMs))
    })
  }
  return figures
}

const floorVariants: ReadonlyArray<Floor> = ["floor-fiber", "floor-stream", "floor-socket"]

const floorFigures = async (config: Config, url: string, count: number) => {
  const figures: Array<FloorFigure> = []
  for (const variant of floorVariants) {
    const r = await runChild<MemoryResult>(
      { kind: "memory", variant, url, count, concurrency: config.memoryConcurrency },
      config.cpuProfileDir,
      config.sdkRoot
    )
    if (r.opened !== count) throw new Error(`${variant} opened ${r.opened} of ${count} connections`)
    config.log(
      `  ${variant} ${count}: ${(r.rssPerConn / 1024).toFixed(1)} KiB RSS, ${
        (r.heapPerConn / 1024).toFixed(1)
      } KiB heap per connection (opened in ${Math.round(r.openMs)} ms)`
    )
    figures.push({ variant, count, rssPerConn: r.rssPerConn, heapPerConn: r.heapPerConn, openMs: r.openMs })
  }
  return figures
}

const fiberFigure = async (config: Config, url: string, count: number): Promise<FiberFigure> => {
  const task = (variant: "sdk" | Floor): Task => ({
    kind: "fibers",
    variant,
    url,
    count,
    concurrency: Math.min(config.memoryConcurrency, count)
  })
  const sdk = await runChild<FiberCount>(task("sdk"), undefined, config.sdkRoot)
  config.log(`  fibers: SDK ${sdk.perSession.toFixed(2)} per open session (${count} sessions)`)
  const floors: Array<FiberCount & { readonly variant: string }> = []
  for (const variant of floorVariants) {
    const r = await runChild<FiberCount>(task(variant))
    config.log(`  fibers: ${variant} ${r.perSession.toFixed(2)} per connection`)
    floors.push({ ...r, variant })
  }
  return { sdk, floors }
}

const firstEventFigure = async (config: Config): Promise<FirstEventFigure> => {
  const simulator = await startServer("simulatorServer.ts", ["short"])
  try {
    const { sessions, warmup, events } = config.firstEvent
    const runRound = (variant: Variant | "floor-stream") =>
      runChild<FirstEventResult>({
        kind: "firstEvent",
        variant,
        baseUrl: `http://127.0.0.1:${simulator.port}`,
        apiKey: simulator.accountKey,
        sessions,
        warmup,
        events
      }, config.cpuProfileDir, config.sdkRoot)
    const { raw, sdk } = await alternate(config.firstEvent.rounds, async (variant, round) => {
      const r = await runRound(variant)
      if (r.events !== sessions * events) {
        throw new Error(`${variant} received ${r.events} of ${sessions * events} events`)
      }
      const median = stats(r.latenciesMs).median
      config.log(
        `  create to first event round ${round + 1} ${variant}: median ${median.toFixed(3)} ms, ${
          (r.cpuMs / sessions).toFixed(3)
        } ms CPU per short session`
      )
      return r
    })
    const floor: Array<FirstEventResult> = []
    for (let round = 0; round < config.firstEvent.rounds; round++) {
      const r = await runRound("floor-stream")
      if (r.events !== sessions * events) throw new Error(`floor received ${r.events} of ${sessions * events} events`)
      config.log(
        `  create to first event round ${round + 1} floor (HttpClient + ws -> Mailbox -> Stream): median ${
          stats(r.latenciesMs).median.toFixed(3)
        } ms, ${(r.cpuMs / sessions).toFixed(3)} ms CPU per short session`
      )
      floor.push(r)
    }
    return {
      floor: {
        latency: compare(raw.map((r) => stats(r.latenciesMs).median), floor.map((r) => stats(r.latenciesMs).median)),
        cpuPerSession: compare(raw.map((r) => r.cpuMs / sessions), floor.map((r) => r.cpuMs / sessions))
      },
      api: "AgentSessions.start(request) (create, then connect), its `events` (Stream.take of the script's events); NodeAgentSessions.layer",
      latency: compare(raw.map((r) => stats(r.latenciesMs).median), sdk.map((r) => stats(r.latenciesMs).median)),
      cpuPerSession: compare(raw.map((r) => r.cpuMs / sessions), sdk.map((r) => r.cpuMs / sessions)),
      allLatencies: { raw: stats(raw.flatMap((r) => r.latenciesMs)), sdk: stats(sdk.flatMap((r) => r.latenciesMs)) }
    }
  } finally {
    await simulator.stop()
  }
}

const slowFigures = async (config: Config, url: string) => {
  const figures: Array<SlowFigure> = []
  for (const n of config.slowFrames) {
    const runs: Record<"sdk" | "raw" | "raw-unbounded", Array<SlowResult>> = { sdk: [], raw: [], "raw-unbounded": [] }
    for (let round = 0; round < config.slowRounds; round++) {
      for (const variant of ["raw", "sdk", "raw-unbounded"] as const) {
        const r = await runChild<SlowResult>({
          kind: "slow",
          variant,
          url,
          n,
          bufferSize: config.bufferSize,
          workMicros: config.workMicros,
          yieldEvery: config.yieldEvery,
          liveEvery: config.liveEvery
        }, config.cpuProfileDir, config.sdkRoot)
        if (r.frames !== n) throw new Error(`${variant} delivered ${r.frames} of ${n} frames`)
        config.log(
          `  slow consumer ${n} round ${round + 1} ${variant}: peak live heap +${
            ((r.peakLiveHeap - r.baseHeap) / 1024 ** 2).toFixed(2)
          } MiB, peak heap +${((r.peakHeap - r.baseHeap) / 1024 ** 2).toFixed(2)} MiB`
        )
        runs[variant].push(r)
      }
    }
    const live = (rs: ReadonlyArray<SlowResult>) => stats(rs.map((r) => r.peakLiveHeap - r.baseHeap))
    figures.push({
      frames: n,
      sdkLive: live(runs.sdk),
      rawBoundedLive: live(runs.raw),
      rawUnboundedLive: live(runs["raw-unbounded"]),
      sdkPeak: stats(runs.sdk.map((r) => r.peakHeap - r.baseHeap)),
      rawUnboundedMaxQueued: stats(runs["raw-unbounded"].map((r) => r.maxQueued)),
      sdkFramesPerSecond: stats(runs.sdk.map((r) => r.frames / (r.ms / 1000)))
    })
  }
  return figures
}

const reconnectFigure = async (config: Config, url: string) => {
  const { raw, sdk } = await alternate(config.reconnectRounds, async (variant, round) => {
    const id = `${variant}${round}x${Date.now()}`
    const r = await runChild<ReconnectResult>(
      { kind: "reconnect", variant, url, id, k: 5, drops: config.reconnectDrops },
      config.cpuProfileDir,
      config.sdkRoot
    )
    if (r.gapsMs.length !== config.reconnectDrops) {
      throw new Error(`${variant} saw ${r.gapsMs.length} of ${config.reconnectDrops} reconnects`)
    }
    config.log(`  reconnect round ${round + 1} ${variant}: ${r.gapsMs.map((g) => g.toFixed(1)).join(", ")} ms`)
    return r.gapsMs
  })
  return { raw: stats(raw.flat()), sdk: stats(sdk.flat()) }
}

const sseFigure = async (config: Config): Promise<SseFigure> => {
  const r = await runChild<SseResult>({ kind: "sse", ...config.sse }, config.cpuProfileDir, config.sdkRoot)
  config.log(
    `  SSE parser: whole ${r.wholeMs.map((m) => m.toFixed(2)).join(", ")} ms; in pieces ${
      r.piecesMs.map((m) => m.toFixed(2)).join(", ")
    } ms; ${r.scannedPerChar.toFixed(2)} characters scanned per character`
  )
  return { whole: stats(r.wholeMs), pieces: stats(r.piecesMs), scannedPerChar: r.scannedPerChar }
}

const createSessionFigure = async (config: Config) => {
  const simulator = await startServer("simulatorServer.ts")
  try {
    const r = await runChild<CreateSessionResult>({
      kind: "createSession",
      baseUrl: `http://127.0.0.1:${simulator.port}`,
      apiKey: simulator.accountKey,
      ...config.createSession
    }, config.cpuProfileDir, config.sdkRoot)
    config.log(
      `  create session: fetch ${r.fetchMedianMs.map((m) => m.toFixed(3)).join(", ")} ms; SDK ${
        r.sdkMedianMs.map((m) => m.toFixed(3)).join(", ")
      } ms`
    )
    return compare(r.fetchMedianMs, r.sdkMedianMs)
  } finally {
    await simulator.stop()
  }
}

/** Runs every measurement. */
export const runBench = async (config: Config): Promise<Results> => {
  // The SDK side runs the library as users get it: the compiled package (`dist/`, by its name),
  // not the TypeScript sources through tsx (whose `keepNames` gives every closure a property:
  // about 8 KiB more per open connection, measured). Built here, where the SDK side comes from.
  // `BENCH_SDK_FROM=source` (the harness's smoke test) skips the build and reads the sources.
  const selected = (part: Part) => config.only === undefined || config.only.includes(part)
  if (!fromSource()) {
    config.log("building the library (npm run build)")
    execSync("npm run build", { cwd: config.sdkRoot ?? root, stdio: "ignore" })
    if (selected("effect4")) {
      config.log("installing and building the Effect 4 edition (npm run build in packages/effect4)")
      const effect4Dir = join(config.sdkRoot ?? root, "packages", "effect4")
      execSync("node scripts/node22.mjs --install && npm run build", { cwd: effect4Dir, stdio: "ignore" })
    }
  }
  const started = performance.now()
  const info = machine()
  const { log: _log, ...shown } = config
  const phases: Record<string, number> = {}
  const phaseLoad: Record<string, readonly [number, number, number]> = {}
  const phase = async <A>(name: string, body: () => Promise<A>): Promise<A | Skipped> => {
    config.log(name)
    const start = performance.now()
    const result = await attempt(name, config.log, body)
    phases[name] = (performance.now() - start) / 1000
    phaseLoad[name] = loadAverage()
    config.log(`  load average ${phaseLoad[name].join(" / ")} (1 / 5 / 15 min) at the end of ${name}`)
    return result
  }
  // The load generator serves every part but the two against the simulator.
  const prebuilt = [config.frames, config.warmupFrames, ...config.slowFrames, 1000].join(",")
  const loadgen: Server = parts.some((p) => p !== "firstEvent" && p !== "createSession" && p !== "sse" && selected(p))
    ? await startServer("loadgen.ts", ["0", prebuilt])
    : { url: "ws://127.0.0.1:0", stop: () => Promise.resolve() }
  try {
    if (loadgen.url !== "ws://127.0.0.1:0") config.log(`load generator on ${loadgen.url}`)
    const reachable = Math.max(0, info.fdLimit - 256)
    const counts = config.connections.map((c) => Math.min(c, reachable))
    const floorCounts = (typeof config.floorConnections === "number" ? [config.floorConnections] : config.floorConnections)
      .filter((c) => c > 0)
      .map((c) => Math.min(c, reachable))
    const memoryNote = [...config.connections, ...floorCounts].some((c) => c > reachable)
      ? `The open-file limit here is ${info.fdLimit} (hard), so at most ${reachable} connections per process were measured.`
      : `Open-file limit ${info.fdLimit}: every size was reached.`
    const notRun: Skipped = { skipped: `not run (--only=${(config.only ?? []).join(",")})` }
    const run = <A>(part: Part, name: string, body: () => Promise<A>): Promise<A | Skipped> =>
      selected(part) ? phase(name, body) : Promise.resolve(notRun)
    const tasks = {
      throughput: () => run("throughput", "event pipeline throughput", () => throughputFigure(config, loadgen.url)),
      memory: () => run("memory", "memory per open connection", () => memoryFigures(config, loadgen.url, counts)),
      floors: async (): Promise<ReadonlyArray<FloorFigure> | Skipped> =>
        floorCounts.length === 0 ? [] : run("floors", "memory floors", async () => {
          const all: Array<FloorFigure> = []
          for (const count of floorCounts) all.push(...(await floorFigures(config, loadgen.url, count)))
          return all
        }),
      fibers: async (): Promise<FiberFigure | Skipped> =>
        config.fiberSessions <= 0
          ? { skipped: "not counted (fiberSessions 0)" }
          : run("fibers", "live fibers per open session", () =>
            fiberFigure(config, loadgen.url, Math.min(config.fiberSessions, reachable))),
      firstEvent: () => run("firstEvent", "create to first event", () => firstEventFigure(config)),
      createSession: () => run("createSession", "create-session overhead", () => createSessionFigure(config)),
      reconnect: () => run("reconnect", "reconnect", () => reconnectFigure(config, loadgen.url)),
      slow: () => run("slow", "slow consumer", () => slowFigures(config, loadgen.url)),
      sse: () => run("sse", "SSE parser", () => sseFigure(config)),
      effect4: () => run("effect4", "the Effect 4 edition (Node 22)", () => effect4Figure(config, loadgen.url))
    }
    const [throughputBoth, memory, floors, fibers, firstEvent, createSession, reconnect, slow, sse, effect4] = config.parallel === true
      ? await Promise.all([
        tasks.throughput(),
        tasks.memory(),
        tasks.floors(),
        tasks.fibers(),
        tasks.firstEvent(),
        tasks.createSession(),
        tasks.reconnect(),
        tasks.slow(),
        tasks.sse(),
        tasks.effect4()
      ])
      : [
        await tasks.throughput(),
        await tasks.memory(),
        await tasks.floors(),
        await tasks.fibers(),
        await tasks.firstEvent(),
        await tasks.createSession(),
        await tasks.reconnect(),
        await tasks.slow(),
        await tasks.sse(),
        await tasks.effect4()
      ]
    return {
      machine: info,
      config: shown,
      seconds: (performance.now() - started) / 1000,
      phases,
      phaseLoad,
      throughput: isSkipped(throughputBoth) ? throughputBoth : throughputBoth.events,
      throughputAttach: isSkipped(throughputBoth) ? throughputBoth : throughputBoth.attach,
      throughputFloor: isSkipped(throughputBoth) ? throughputBoth : throughputBoth.floor,
      memory,
      memoryNote,
      floors,
      fibers,
      firstEvent,
      createSession,
      reconnect,
      slow,
      sse,
      effect4
    }
  } finally {
    await loadgen.stop()
  }
}
