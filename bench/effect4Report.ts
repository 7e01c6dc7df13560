/**
 * The Effect 4 edition's part of RESULTS.md and of the printed summary: issue 25's targets with
 * their verdicts, and every figure of bench/effect4.ts with min / median / max.
 */
import type { Effect4Figure, Effect4MemoryFigure, MemorySide, MemorySideFigure, RateFigure } from "./effect4.js"
import type { Results } from "./harness.js"
import { isSkipped, type Skipped } from "./processes.js"
import type { Stats } from "./measure.js"

/** A target and whether the run met it. */
export interface Effect4Verdict {
  readonly figure: string
  readonly value: string
  readonly target: string
  readonly met: boolean
}

/** Issue 25's targets. */
export const effect4Targets = {
  /** SDK heap and RSS per open session over the Effect 4 floor's (raw ws -> Queue -> Stream.runForEach). */
  memoryOverFloor: 1.25,
  /** SDK heap per open session over the Effect 3 edition's (on Node 20 and on Node 22). */
  heapOverEffect3: 0.35,
  /** The size target 1 is judged at. */
  memoryCount: 10_000,
  /** The SDK's live fibers per idle open session besides the consumer's. */
  sdkFibers: 1,
  /** Create to first event, median, SDK over raw fetch + ws. */
  firstEvent: 1.5,
  /** Throughput, SDK over raw ws + JSON.parse (`EventStream.events` and `AgentSessions.attach`). */
  throughput: 1.0
} as const

const int = (n: number): string => Number.isFinite(n) ? Math.round(n).toLocaleString("en-US") : "n/a"
const fixed = (n: number, digits = 2): string => Number.isFinite(n) ? n.toFixed(digits) : "n/a"
const kib = (bytes: number): string => `${fixed(bytes / 1024, 1)} KiB`
const ms = (n: number): string => `${fixed(n, n < 10 ? 3 : 1)} ms`

/** The labels of the memory sides. */
export const sideLabels: Record<MemorySide, string> = {
  raw: "raw ws + JSON.parse (Node 22)",
  "floor-stream": "Effect 4 floor: raw ws -> Queue -> Stream.runForEach (one fiber)",
  "floor-fiber": "Effect 4: raw ws + one fiber waiting on a Deferred",
  "floor-socket": "Effect 4: effect/socket Socket, its reader pulled by one fiber",
  sdk: "Effect 4 edition: EventStream.connect + one consumer fiber (Node 22)",
  "e3-node22": "Effect 3 edition, the same (Node 22)",
  "e3-node20": "Effect 3 edition, the same (Node 20)"
}

const figureOf = (r: Results): Effect4Figure | Skipped => r.effect4 ?? { skipped: "not in this run" }

const sideOf = (m: Effect4MemoryFigure, side: MemorySide): MemorySideFigure | Skipped =>
  m.sides[side] ?? { skipped: "not measured" }

/** The memory figure target 1 is judged at: the largest size measured. */
const judgedMemory = (e4: Effect4Figure): Effect4MemoryFigure | undefined =>
  isSkipped(e4.memory) ? undefined : [...e4.memory].sort((a, b) => b.count - a.count)[0]

const nan: Stats = { min: Number.NaN, median: Number.NaN, max: Number.NaN, samples: [] }
const sideMissing: MemorySideFigure = { heapPerConn: nan, rssPerConn: nan, openMs: nan }

const why = (...values: ReadonlyArray<unknown>): string => {
  const skipped = values.find(isSkipped)
  return skipped === undefined ? "not measured" : `not measured: ${skipped.skipped}`
}

/** The verdict on each of issue 25's targets. */
export const effect4Verdicts = (r: Results): ReadonlyArray<Effect4Verdict> => {
  const e4 = figureOf(r)
  const out: Array<Effect4Verdict> = []
  const t = effect4Targets
  const m = isSkipped(e4) ? undefined : judgedMemory(e4)
  const at = m === undefined ? "" : ` (${int(m.count)} open)`
  const big = m !== undefined && m.count >= t.memoryCount
  const memory = (
    figure: string,
    target: string,
    value: (side: (name: MemorySide) => MemorySideFigure) => { readonly text: string; readonly met: boolean },
    names: ReadonlyArray<MemorySide>
  ) => {
    const sides = new Map(m === undefined ? [] : names.map((n) => [n, sideOf(m, n)] as const))
    const measured = new Map<MemorySide, MemorySideFigure>()
    for (const [name, f] of sides) if (!isSkipped(f)) measured.set(name, f)
    if (m === undefined || measured.size < names.length) {
      const reason = isSkipped(e4) ? e4 : isSkipped(e4.memory) ? e4.memory : undefined
      out.push({ figure: `${figure}${at}`, value: why(reason, ...sides.values()), target, met: false })
      return
    }
    const v = value((name) => measured.get(name) ?? sideMissing)
    out.push({ figure: `${figure}${at}`, value: v.text, target, met: v.met && big })
  }
  memory(
    "1a. Heap per open session, against the Effect 4 floor",
    `<= ${t.memoryOverFloor}x the floor "raw ws -> Queue -> Stream.runForEach" at ${int(t.memoryCount)} open`,
    (side) => {
      const ratio = side("sdk").heapPerConn.median / side("floor-stream").heapPerConn.median
      return {
        text: `SDK ${kib(side("sdk").heapPerConn.median)} vs floor ${kib(side("floor-stream").heapPerConn.median)}: ratio ${fixed(ratio)}`,
        met: ratio <= t.memoryOverFloor
      }
    },
    ["sdk", "floor-stream"]
  )
  memory(
    "1b. Heap per open session, against the Effect 3 edition",
    `<= ${t.heapOverEffect3}x the Effect 3 edition's, on Node 20 and on Node 22`,
    (side) => {
      const sdk = side("sdk").heapPerConn.median
      const n20 = sdk / side("e3-node20").heapPerConn.median
      const n22 = sdk / side("e3-node22").heapPerConn.median
      return {
        text: `SDK ${kib(sdk)} vs Effect 3 ${kib(side("e3-node20").heapPerConn.median)} (Node 20): ratio ${fixed(n20)}; vs ${
          kib(side("e3-node22").heapPerConn.median)
        } (Node 22): ratio ${fixed(n22)}`,
        met: n20 <= t.heapOverEffect3 && n22 <= t.heapOverEffect3
      }
    },
    ["sdk", "e3-node20", "e3-node22"]
  )
  memory(
    "1c. RSS per open session, against the Effect 4 floor",
    `<= ${t.memoryOverFloor}x the floor's`,
    (side) => {
      const ratio = side("sdk").rssPerConn.median / side("floor-stream").rssPerConn.median
      return {
        text: `SDK ${kib(side("sdk").rssPerConn.median)} vs floor ${kib(side("floor-stream").rssPerConn.median)}: ratio ${
          fixed(ratio)
        } (raw ws ${kib(side("raw").rssPerConn.median)})`,
        met: ratio <= t.memoryOverFloor
      }
    },
    ["sdk", "floor-stream", "raw"]
  )
  const fibersTarget = `the SDK's at most ${t.sdkFibers} per idle open session besides the consumer's (the floor's count)`
  const fibers = isSkipped(e4) ? e4 : e4.fibers
  const streamFloor = isSkipped(fibers) ? undefined : fibers.floors.find((f) => f.variant === "floor-stream")
  out.push(
    isSkipped(fibers) || isSkipped(fibers.sdk) || streamFloor === undefined
      ? { figure: "1d. Live fibers per idle open session", value: why(fibers, isSkipped(fibers) ? fibers : fibers.sdk), target: fibersTarget, met: false }
      : {
        figure: `1d. Live fibers per idle open session (${int(fibers.sdk.sessions)} open)`,
        value: `SDK ${fixed(fibers.sdk.perSession)} per session, floor ${fixed(streamFloor.perSession)}: the SDK's own ${
          fixed(fibers.sdk.perSession - streamFloor.perSession)
        }`,
        target: fibersTarget,
        met: fibers.sdk.perSession - streamFloor.perSession <= t.sdkFibers + 0.01
      }
  )
  const fe = isSkipped(e4) ? e4 : e4.firstEvent
  const feTarget = `SDK/raw <= ${t.firstEvent}`
  out.push(
    isSkipped(fe) || isSkipped(fe.latency.sdk)
      ? { figure: "2. Create to first event", value: why(fe, isSkipped(fe) ? fe : fe.latency.sdk), target: feTarget, met: false }
      : {
        figure: `2. Create to first event (${int(fe.sessions)} sequential sessions per round)`,
        value: `SDK ${ms(fe.latency.sdk.median)} vs raw fetch + ws ${ms(fe.latency.raw.median)} median: ratio ${
          fixed(fe.latency.sdk.median / fe.latency.raw.median)
        } (floor "HttpClient + ws -> Queue -> Stream": ${ms(fe.latency.floor.median)}, ${fixed(fe.latency.floor.median / fe.latency.raw.median)} of raw)`,
        target: feTarget,
        met: fe.latency.sdk.median / fe.latency.raw.median <= t.firstEvent
      }
  )
  const tp = isSkipped(e4) ? e4 : e4.throughput
  const rate = (figure: string, pick: (t: Exclude<Effect4Figure["throughput"], Skipped>) => RateFigure | Skipped) => {
    const target = `SDK/raw ws + JSON.parse >= ${fixed(t.throughput, 1)}`
    const sdk = isSkipped(tp) ? tp : pick(tp)
    if (isSkipped(tp) || isSkipped(sdk)) return out.push({ figure, value: why(tp, sdk), target, met: false })
    const ratio = sdk.fps.median / tp.raw.fps.median
    return out.push({
      figure,
      value: `SDK ${int(sdk.fps.median)} vs raw ${int(tp.raw.fps.median)} frames/s: ratio ${fixed(ratio)} (floor "ws + JSON.parse -> Queue -> Stream": ${
        int(tp.floor.fps.median)
      }, ${fixed(tp.floor.fps.median / tp.raw.fps.median)} of raw)`,
      target,
      met: ratio >= t.throughput && sdk.ordered
    })
  }
  rate("3a. Throughput, `EventStream.events`", (x) => x.events)
  rate("3b. Throughput, `AgentSessions.attach`", (x) => x.attach)
  return out
}

/** The Effect 4 section of RESULTS.md: one row per measure, with its ratio and target. */
export const effect4Section = (r: Results): Array<string> => {
  const e4 = figureOf(r)
  const lines: Array<string> = ["## Effect 4 edition", ""]
  if (isSkipped(e4)) return [...lines, `not measured: ${e4.skipped}`, ""]
  return [
    ...lines,
    `\`packages/effect4\` (effect 4.1) on Node ${e4.node}, against floors measured in the same run on the same Node (child processes: packages/effect4/bench/child.ts).`,
    "",
    "| measure | result (medians) | target | met |",
    "| --- | --- | --- | --- |",
    ...effect4Verdicts(r).map((v) => `| ${v.figure} | ${v.value} | ${v.target} | ${v.met ? "yes" : "**no**"} |`),
    ""
  ]
}

export const effect4Summary = (r: Results): ReadonlyArray<string> =>
  r.effect4 === undefined || (isSkipped(r.effect4) && r.effect4.skipped.startsWith("not run (--only"))
    ? []
    : effect4Verdicts(r).map((v) => `Effect 4 ${v.figure}: ${v.value}  [target ${v.target}: ${v.met ? "MET" : "MISSED"}]`)
