/**
 * Renders a run: the targets of issue 15 with their verdicts (printed) and RESULTS.md: the current
 * figures only (the machine, one row per measure with its ratio and target, how to rerun), the
 * sections packages/cluster/bench/cluster.ts and bench/startup.ts wrote kept as they were. Every figure of a run,
 * min/median/max and per round, is in RESULTS.json beside it; earlier runs are in git history.
 */
import { type Comparison, type FirstEventFigure, type Results } from "./harness.js"
import { isSkipped, type Skipped } from "./processes.js"
import { effect4Section, effect4Summary } from "./effect4Report.js"

/** A target and whether the run met it. */
export interface Verdict {
  readonly figure: string
  readonly value: string
  readonly target: string
  readonly met: boolean | "n/a"
}

const int = (n: number): string => Number.isFinite(n) ? Math.round(n).toLocaleString("en-US") : "n/a"
const fixed = (n: number, digits = 2): string => Number.isFinite(n) ? n.toFixed(digits) : "n/a"
const kib = (bytes: number): string => `${fixed(bytes / 1024, 1)} KiB`
const mib = (bytes: number): string => `${fixed(bytes / 1024 ** 2, 2)} MiB`
const ms = (n: number): string => `${fixed(n, n < 10 ? 3 : 1)} ms`
const skippedText = (s: Skipped): string => `not measured: ${s.skipped}`

/** The largest growth of the slow consumer's peak live heap from the shortest to the longest stream that still counts as flat. */
export const flatTolerance = 1024 * 1024

/** The targets of issue 15. */
export const targets = {
  /** SDK heap and RSS per open session over the "raw ws -> Mailbox -> Stream.runForEach" floor's, at 10k open. */
  memoryOverFloor: 1.5,
  /** The size target 1 is judged at. */
  memoryCount: 10_000,
  /** Live fibers per open, idle session, the caller's consumer included. */
  fibersPerSession: 2,
  /** Create to first event, median, SDK over raw fetch + ws. */
  firstEvent: 2,
  /** CPU per short session, SDK over raw. */
  cpuPerSession: 2,
  /** Throughput, SDK over raw ws + JSON.parse (both SDK paths). */
  throughput: 0.9,
  /** Create session alone, SDK over a bare fetch. */
  createSession: 1.15
} as const

/** The floor target 1 compares the SDK with. */
export const memoryFloor = "floor-stream"

const notInRun: Skipped = { skipped: "not in this run" }

/** The SDK and the floor at the largest size both were measured at. */
export const memoryAgainstFloor = (r: Results) => {
  const mem = r.memory
  const floors = r.floors
  if (isSkipped(mem) || isSkipped(floors)) return undefined
  const candidates = floors
    .filter((f) => f.variant === memoryFloor && mem.some((m) => m.count === f.count))
    .sort((a, b) => b.count - a.count)
  const floor = candidates[0]
  const sdk = floor === undefined ? undefined : mem.find((m) => m.count === floor.count)
  if (floor === undefined || sdk === undefined) return undefined
  return {
    count: floor.count,
    floor,
    sdk,
    heapRatio: sdk.heapPerConn.sdk.median / floor.heapPerConn,
    rssRatio: sdk.rssPerConn.sdk.median / floor.rssPerConn
  }
}

const ratioVerdict = (
  figure: string,
  c: Comparison | Skipped | undefined,
  describe: (c: Comparison) => string,
  target: string,
  met: (ratio: number) => boolean
): Verdict => {
  const value = c ?? notInRun
  return isSkipped(value)
    ? { figure, value: skippedText(value), target, met: false }
    : { figure, value: describe(value), target, met: met(value.ratio) }
}

/** The verdict on each target (issue 15's 1 to 4, and the slow consumer). */
export const verdicts = (r: Results): ReadonlyArray<Verdict> => {
  const out: Array<Verdict> = []
  const mf = memoryAgainstFloor(r)
  const memTarget = (what: string) =>
    `SDK ${what} <= ${targets.memoryOverFloor}x the floor "${floorLabels[memoryFloor]}" at ${int(targets.memoryCount)} open`
  const noFloor = isSkipped(r.memory)
    ? skippedText(r.memory)
    : isSkipped(r.floors)
    ? `floors ${skippedText(r.floors)}`
    : "no size at which both the SDK and the floor were measured"
  out.push(
    mf === undefined
      ? { figure: "1a. Memory per open session: heap", value: noFloor, target: memTarget("heap"), met: false }
      : {
        figure: `1a. Memory per open session: heap (${int(mf.count)} open)`,
        value: `SDK ${kib(mf.sdk.heapPerConn.sdk.median)} vs floor ${kib(mf.floor.heapPerConn)} per session: ratio ${
          fixed(mf.heapRatio)
        } (raw ws ${kib(mf.sdk.heapPerConn.raw.median)})`,
        target: memTarget("heap"),
        met: mf.heapRatio <= targets.memoryOverFloor && mf.count >= targets.memoryCount
      },
    mf === undefined
      ? { figure: "1b. Memory per open session: RSS", value: noFloor, target: memTarget("RSS"), met: false }
      : {
        figure: `1b. Memory per open session: RSS (${int(mf.count)} open)`,
        value: `SDK ${kib(mf.sdk.rssPerConn.sdk.median)} vs floor ${kib(mf.floor.rssPerConn)} per session: ratio ${
          fixed(mf.rssRatio)
        } (raw ws ${kib(mf.sdk.rssPerConn.raw.median)})`,
        target: memTarget("RSS"),
        met: mf.rssRatio <= targets.memoryOverFloor && mf.count >= targets.memoryCount
      }
  )
  const fibers = r.fibers ?? notInRun
  // The caller's consumer is what the floor "raw ws -> Mailbox -> Stream.runForEach" holds: on
  // Effect 3 that is two fibers (the caller's, and the channel executor's that every `Stream.run*`
  // forks). The issue's "at most two: the consumer and at most one of the SDK's" is therefore
  // the floor's count plus one.
  const fiberTarget =
    "the caller's consumer (as the floor counts it: 2 fibers on Effect 3, since every `Stream.run*` forks its channel executor) and at most one of the SDK's per idle open session"
  const streamFloor = isSkipped(fibers) ? undefined : fibers.floors.find((f) => f.variant === memoryFloor)
  out.push(
    isSkipped(fibers)
      ? { figure: "1c. Live fibers per open session", value: skippedText(fibers), target: fiberTarget, met: false }
      : {
        figure: `1c. Live fibers per open session (${int(fibers.sdk.sessions)} open)`,
        value: `SDK ${fixed(fibers.sdk.perSession)} per session${
          streamFloor === undefined ? "" : ` (floor "${floorLabels[memoryFloor]}": ${fixed(streamFloor.perSession)})`
        }`,
        target: fiberTarget,
        met: fibers.sdk.perSession <= (streamFloor?.perSession ?? targets.fibersPerSession) + 1 + 0.01
      }
  )
  const fe = r.firstEvent ?? notInRun
  out.push(
    ratioVerdict(
      "2a. Create to first event",
      isSkipped(fe) ? fe : fe.latency,
      (c) =>
        `SDK ${ms(c.sdk.median)} vs raw fetch + ws ${ms(c.raw.median)} median: ratio ${fixed(c.ratio)}${
          sessionFloorNote(fe, "latency", c.sdk.median)
        }`,
      `SDK/raw <= ${targets.firstEvent}`,
      (ratio) => ratio <= targets.firstEvent
    ),
    ratioVerdict(
      "2b. CPU per short session (create, 5 events, close)",
      isSkipped(fe) ? fe : fe.cpuPerSession,
      (c) =>
        `SDK ${ms(c.sdk.median)} vs raw ${ms(c.raw.median)} of CPU: ratio ${fixed(c.ratio)}${
          sessionFloorNote(fe, "cpuPerSession", c.sdk.median)
        }`,
      `SDK/raw <= ${targets.cpuPerSession}`,
      (ratio) => ratio <= targets.cpuPerSession
    ),
    ratioVerdict(
      "3a. Throughput, `EventStream.events`",
      r.throughput,
      (c) =>
        `SDK ${int(c.sdk.median)} vs raw ${int(c.raw.median)} frames/s: ratio ${fixed(c.ratio)}${floorNote(r, c.sdk.median)}`,
      `SDK/raw ws + JSON.parse >= ${targets.throughput}`,
      (ratio) => ratio >= targets.throughput
    ),
    ratioVerdict(
      "3b. Throughput, `AgentSessions.attach` (default options)",
      r.throughputAttach,
      (c) =>
        `SDK ${int(c.sdk.median)} vs raw ${int(c.raw.median)} frames/s: ratio ${fixed(c.ratio)}${floorNote(r, c.sdk.median)}`,
      `SDK/raw ws + JSON.parse >= ${targets.throughput}`,
      (ratio) => ratio >= targets.throughput
    ),
    ratioVerdict(
      "4. Create session alone",
      r.createSession,
      (c) => `SDK ${ms(c.sdk.median)} vs fetch ${ms(c.raw.median)} median: ratio ${fixed(c.ratio)}`,
      `SDK/fetch <= ${targets.createSession}`,
      (ratio) => ratio <= targets.createSession
    )
  )
  const s = r.slow
  const first = isSkipped(s) ? undefined : s[0]
  const last = isSkipped(s) ? undefined : s[s.length - 1]
  out.push(
    isSkipped(s) || first === undefined || last === undefined
      ? { figure: "5. Slow consumer peak live heap", value: isSkipped(s) ? skippedText(s) : "none", target: "bounded, flat", met: false }
      : {
        figure: `5. Slow consumer peak live heap (${int(first.frames)} vs ${int(last.frames)} frames)`,
        value: `SDK +${mib(first.sdkLive.median)} vs +${mib(last.sdkLive.median)} (raw unbounded queue: +${
          mib(first.rawUnboundedLive.median)
        } vs +${mib(last.rawUnboundedLive.median)})`,
        target: `flat: grows < ${mib(flatTolerance)} from the shortest to the longest stream`,
        met: last.sdkLive.median - first.sdkLive.median < flatTolerance
      }
  )
  return out
}

/**
 * The lines `npm run bench` prints at the end: issue 15's targets, then issue 25's (targets of
 * parts not run, with `--only`, left out).
 */
export const summary = (r: Results): string =>
  [
    ...verdicts(r).filter((v) => !v.value.startsWith("not measured: not run (--only")).map((v) =>
      `${v.figure}: ${v.value}  [target ${v.target}: ${v.met === "n/a" ? "reported" : v.met ? "MET" : "MISSED"}]`
    ),
    ...effect4Summary(r)
  ].join("\n")

/** The markers of the cluster section, which packages/cluster/bench/cluster.ts writes into RESULTS.md. */
export const clusterMarkers = { begin: "<!-- cluster:begin -->", end: "<!-- cluster:end -->" } as const

/** The markers of the take-over section, which packages/cluster/bench/clusterTakeover.ts writes into RESULTS.md. */
export const takeoverMarkers = { begin: "<!-- cluster-takeover:begin -->", end: "<!-- cluster-takeover:end -->" } as const

/** The markers of the command line's start-up section, which bench/startup.ts writes into RESULTS.md. */
export const startupMarkers = { begin: "<!-- startup:begin -->", end: "<!-- startup:end -->" } as const

/** The section between two markers of a RESULTS.md (markers included), or "" when it has none. */
export const keptSection = (existing: string, markers: { readonly begin: string; readonly end: string }): string => {
  const begin = existing.indexOf(markers.begin)
  const end = existing.indexOf(markers.end, begin)
  return begin >= 0 && end > begin ? existing.slice(begin, end + markers.end.length) : ""
}

/** The cluster section of a RESULTS.md (markers included), or "" when it has none. */
export const clusterSection = (existing: string): string => keptSection(existing, clusterMarkers)

const floorLabels: Record<string, string> = {
  "floor-fiber": "raw ws + one Effect fiber waiting on a Deferred",
  "floor-stream": "raw ws -> Mailbox -> Stream.runForEach (one fiber)",
  "floor-socket": "platform Socket.runRaw fiber -> Mailbox -> Stream consumer fiber"
}

/** The SDK's session figure against the session floor of the same run, when it was measured. */
const sessionFloorNote = (
  fe: FirstEventFigure | Skipped,
  figure: "latency" | "cpuPerSession",
  sdk: number
): string => {
  if (isSkipped(fe) || fe.floor === undefined) return ""
  const floor = fe.floor[figure]
  return ` (floor "HttpClient + ws -> Mailbox -> Stream": ${ms(floor.sdk.median)}, ${fixed(floor.ratio)} of raw; SDK/floor ${
    fixed(sdk / floor.sdk.median)
  })`
}

/** The SDK's throughput against the Stream floor of the same run, when it was measured. */
const floorNote = (r: Results, sdkFps: number): string => {
  const floor = r.throughputFloor
  if (floor === undefined || isSkipped(floor)) return ""
  return ` (floor "raw ws + JSON.parse -> Mailbox -> Stream": ${int(floor.sdk.median)} frames/s, ${
    fixed(floor.ratio)
  } of raw; SDK/floor ${fixed(sdkFps / floor.sdk.median)})`
}

/** RESULTS.md; `cluster` is the cluster section kept from the file it replaces (see {@link clusterSection}). */
/** The load average of the run (the machine is shared): at its start and at the end of each part. */
const loadLines = (r: Results): Array<string> => {
  const start = r.machine.loadAverage
  const parts = Object.entries(r.phaseLoad ?? {})
  if (start === undefined && parts.length === 0) return []
  const show = (l: readonly [number, number, number]) => l.map((n) => n.toFixed(2)).join(" / ")
  return [
    `Load average (1 / 5 / 15 min; ${r.machine.cores} cores): ${start === undefined ? "" : `${show(start)} at the start`}${
      parts.map(([name, l]) => `; ${show(l)} at the end of ${name}`).join("")
    }.`,
    ""
  ]
}

export const markdown = (r: Results, kept = ""): string => {
  const m = r.machine
  const fmtVerdict = (v: Verdict) => v.met === "n/a" ? "reported" : v.met ? "yes" : "**no**"
  const rc = r.reconnect
  const sse = r.sse ?? notInRun
  const reported: Array<Verdict> = [
    {
      figure: `6. Reconnect: an abrupt drop (1006) to the next event`,
      value: isSkipped(rc)
        ? skippedText(rc)
        : `SDK ${ms(rc.sdk.median)} (default schedule: the first retry after about 250 ms) vs raw ws reconnecting at once ${ms(rc.raw.median)}`,
      target: "none",
      met: "n/a"
    },
    {
      figure: `7. SSE parser: one ${int(r.config.sse.size)}-character event`,
      value: isSkipped(sse)
        ? skippedText(sse)
        : `${int(r.config.sse.piece)}-character pieces ${ms(sse.pieces.median)} vs one piece ${ms(sse.whole.median)}: ratio ${
          fixed(sse.pieces.median / sse.whole.median)
        }; ${fixed(sse.scannedPerChar)} characters scanned per character received`,
      target: "none (linear in the text)",
      met: "n/a"
    }
  ]
  return [
    "# Benchmark results",
    "",
    "The current figures of each benchmark, from its last full run; earlier runs are in this file's git history",
    "and every figure of the last run (min / median / max, per round) in [RESULTS.json](RESULTS.json). Written by the",
    "commands below: do not edit by hand. Why the missed targets are missed: [ANALYSIS.md](ANALYSIS.md).",
    "",
    "## Rerun",
    "",
    "```sh",
    "npm run bench                                  # the two editions' figures (about 8 minutes): rewrites this file",
    "npm run bench -- --quick --only=throughput     # one part, small: prints its figures, writes nothing",
    "npm run bench -- --only=effect4 --out=<file>   # the Effect 4 part alone (issue 39's table): writes <file> and <file>.json",
    "npx tsx bench/run.ts --render                  # this file again from RESULTS.json",
    "npx tsx packages/cluster/bench/cluster.ts                       # the cluster section (starts a local PostgreSQL, as the tests do)",
    "npx tsx packages/cluster/bench/clusterFloor.ts                  # @effect/cluster alone: prints a table",
    "npx tsx bench/startup.ts                       # the command line's start-up section",
    "```",
    "",
    "## Machine",
    "",
    `Run ${m.date} (${fixed(r.seconds, 0)} s): ${m.cpu}, ${m.cores} cores, ${m.memoryGiB} GiB, Node ${m.node}, ${m.platform}. The`,
    "machine is shared and noisy: absolute figures drift between runs; the ratios, both sides measured in the same run",
    "(each side in a fresh process, rounds alternating, medians over the rounds), are the figures to read.",
    "",
    ...loadLines(r),
    "## Effect 3 edition",
    "",
    "The library's public API over `NodeAgentSessions.layer`, against a raw `ws` + `JSON.parse` client and a bare `fetch`",
    "(bench/raw.ts), and against floors: the least Effect machinery that does the same (bench/floors.ts).",
    "",
    "| measure | result (medians) | target | met |",
    "| --- | --- | --- | --- |",
    ...[...verdicts(r), ...reported].map((v) => `| ${v.figure} | ${v.value} | ${v.target} | ${fmtVerdict(v)} |`),
    "",
    ...effect4Section(r),
    ...(kept.trim().length > 0 ? [kept.trim(), ""] : [])
  ].join("\n")
}
