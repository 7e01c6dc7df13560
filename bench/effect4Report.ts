/**
 * The Effect 4 edition's part of RESULTS.md and of the printed summary: issue 25's targets with
 * their verdicts, and every figure of bench/effect4.ts with min / median / max.
 */
import type { Effect4Figure, Effect4MemoryFigure, MemorySide, MemorySideFigure, RateFigure } from "./effect4.js"
import type { Results } from "./harness.js"
import { isSkipped, type Skipped } from "./processes.js"
import type { Stats } from "effect-agent-session-test-support/measure"

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
  "e3-node20": "Effect 3 edition, the same (Node 20)",
  "raw-start": "raw fetch + ws + JSON.parse, create then connect (Node 22)",
  "sdk-start": "Effect 4 edition: AgentSessions.start + one consumer fiber (Node 22)",
  "e3-start": "Effect 3 edition: AgentSessions.start + one consumer fiber (Node 22)"
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

/** Issue 39's targets: ratios to raw (`fetch` + `ws` + `JSON.parse`) measured in the same run. */
export const issue39Targets = {
  /** Heap per open session (through `AgentSessions.start`), over raw. */
  heap: 4,
  /** RSS per open session, over raw. */
  rss: 2,
  /** Time to open N sessions, over raw. */
  open: 2,
  /** Create to first event, median and p90, over raw. */
  firstEvent: 2,
  /** Throughput of one session, over raw (at least). */
  throughput: 0.75
} as const

/** One row of issue 39's table: a figure of raw, both editions, the ratios and the verdict. */
export interface Issue39Row {
  readonly figure: string
  readonly raw: string
  readonly e4: string
  readonly e4Ratio: number
  readonly e3: string
  readonly e3Ratio: number
  readonly target: string
  /** undefined: a side was not measured; "no ratio": every side measured, raw not above 0. */
  readonly met: boolean | "no ratio" | undefined
}

/** The verdict of an issue 39 row, as the report prints it. */
const verdictText = (met: Issue39Row["met"], yes: string, no: string): string =>
  met === undefined ? "not measured" : met === "no ratio" ? "no ratio (raw <= 0)" : met ? yes : no

const valueOf = (x: Stats | Skipped | undefined): number => x === undefined || isSkipped(x) ? Number.NaN : x.median

/** Issue 39's rows: every figure with its ratio to raw, at each size measured. */
export const issue39Rows = (r: Results): ReadonlyArray<Issue39Row> => {
  const e4 = figureOf(r)
  if (isSkipped(e4)) return []
  const t = issue39Targets
  const rows: Array<Issue39Row> = []
  const row = (
    figure: string,
    show: (n: number) => string,
    raw: number,
    e4Value: number,
    e3Value: number,
    target: string,
    meets: (ratio: number) => boolean
  ) => {
    const e4Ratio = e4Value / raw
    const e3Ratio = e3Value / raw
    rows.push({
      figure,
      raw: show(raw),
      e4: show(e4Value),
      e4Ratio,
      e3: show(e3Value),
      e3Ratio,
      target,
      met: Number.isNaN(raw) || Number.isNaN(e4Value) ? undefined : raw > 0 ? meets(e4Ratio) : "no ratio"
    })
  }
  const seconds = (n: number) => `${fixed(n / 1000, 2)} s`
  if (!isSkipped(e4.memory)) {
    for (const m of e4.memory) {
      const side = (name: MemorySide) => {
        const f = m.sides[name]
        return f === undefined || isSkipped(f) ? sideMissing : f
      }
      const at = `${int(m.count)} open`
      const pick = (get: (f: MemorySideFigure) => Stats) => [
        get(side("raw-start")).median,
        get(side("sdk-start")).median,
        get(side("e3-start")).median
      ] as const
      row(`heap per open session (${at})`, kib, ...pick((f) => f.heapPerConn), `<= ${t.heap}x raw`, (x) => x <= t.heap)
      row(`RSS per open session (${at})`, kib, ...pick((f) => f.rssPerConn), `<= ${t.rss}x raw`, (x) => x <= t.rss)
      row(`time to open ${int(m.count)}`, seconds, ...pick((f) => f.openMs), `<= ${t.open}x raw`, (x) => x <= t.open)
    }
  }
  const fe = e4.firstEvent
  if (!isSkipped(fe)) {
    row(
      "create -> first event, median",
      ms,
      fe.latency.raw.median,
      valueOf(fe.latency.sdk),
      valueOf(fe.latency.e3),
      `<= ${t.firstEvent}x raw`,
      (x) => x <= t.firstEvent
    )
    if (fe.p90 !== undefined) {
      row(
        "create -> first event, p90",
        ms,
        fe.p90.raw.median,
        valueOf(fe.p90.sdk),
        valueOf(fe.p90.e3),
        `<= ${t.firstEvent}x raw`,
        (x) => x <= t.firstEvent
      )
    }
  }
  const tp = e4.throughput
  if (!isSkipped(tp)) {
    const fps = (x: RateFigure | Skipped | undefined) => x === undefined || isSkipped(x) ? Number.NaN : x.fps.median
    const perSecond = (n: number) => `${int(n)}/s`
    const ordered = (x: RateFigure | Skipped) => !isSkipped(x) && x.ordered
    row("throughput, `EventStream.events`", perSecond, tp.raw.fps.median, fps(tp.events), fps(tp.e3Events), `>= ${t.throughput}x raw`, (x) =>
      x >= t.throughput && ordered(tp.events))
    row("throughput, `AgentSessions.attach`", perSecond, tp.raw.fps.median, fps(tp.attach), fps(tp.e3Attach), `>= ${t.throughput}x raw`, (x) =>
      x >= t.throughput && ordered(tp.attach))
  }
  return rows
}

/** Issue 39's table (the Effect 4 edition, the Effect 3 edition beside it, ratios to raw in the same run). */
export const issue39Section = (r: Results): Array<string> => {
  const rows = issue39Rows(r)
  if (rows.length === 0) return []
  const e4 = figureOf(r)
  const node = isSkipped(e4) ? "" : ` on Node ${e4.node}`
  return [
    "### Issue 39: against raw, through `AgentSessions.start`",
    "",
    `${isSkipped(e4) || e4.at === undefined ? "" : `Run ${e4.at}. `}Reproduce: \`npm run bench -- --only=effect4 --out=<file>\` (this part alone, about 25 minutes: both sizes, the issue 25 rows too) or \`npm run bench\` (every part, this file).`,
    "",
    `Every side${node}, each in its own process; raw is \`fetch\` + \`ws\` + \`JSON.parse\` (bench/raw.ts: sessions opened by a POST to the load generator, then the socket). Sessions held through \`AgentSessions.start\` (create, then connect; the load generator answers the create), one consumer fiber each; create -> first event against the simulator; throughput of one session on the load generator. Medians over the rounds (p90: the median over the rounds of each round's 90th percentile).`,
    "",
    "| figure | raw | Effect 4 edition | E4 / raw | Effect 3 edition | E3 / raw | target (E4) | met |",
    "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ...rows.map((x) =>
      `| ${x.figure} | ${x.raw} | ${x.e4} | ${fixed(x.e4Ratio)} | ${x.e3} | ${fixed(x.e3Ratio)} | ${x.target} | ${verdictText(x.met, "yes", "**no**")} |`
    ),
    ""
  ]
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
    "",
    ...issue39Section(r)
  ]
}

export const effect4Summary = (r: Results): ReadonlyArray<string> =>
  r.effect4 === undefined || (isSkipped(r.effect4) && r.effect4.skipped.startsWith("not run (--only"))
    ? []
    : [
      ...effect4Verdicts(r).map((v) => `Effect 4 ${v.figure}: ${v.value}  [target ${v.target}: ${v.met ? "MET" : "MISSED"}]`),
      ...issue39Rows(r).map((x) =>
        `Issue 39 ${x.figure}: raw ${x.raw}, Effect 4 ${x.e4} (${fixed(x.e4Ratio)}x), Effect 3 ${x.e3} (${fixed(x.e3Ratio)}x)  [target ${x.target}: ${verdictText(x.met, "MET", "MISSED")}]`
      )
    ]
