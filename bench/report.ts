/**
 * Renders a run: the targets of issue 15 with their verdicts (printed) and RESULTS.md (machine,
 * method, every figure with min/median/max, the ratios, the targets, the hand-written analysis,
 * and the cluster section bench/cluster.ts wrote, kept as it was).
 */
import { type Comparison, type FirstEventFigure, type Results, type ThroughputFigure } from "./harness.js"
import { isSkipped, type Skipped } from "./processes.js"
import type { Stats } from "./measure.js"
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
const mmm = (s: Stats, unit: (n: number) => string): string =>
  `${unit(s.min)} / **${unit(s.median)}** / ${unit(s.max)}`
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

/** The markers of the cluster section, which bench/cluster.ts writes into RESULTS.md. */
export const clusterMarkers = { begin: "<!-- cluster:begin -->", end: "<!-- cluster:end -->" } as const

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

const comparisonRows = (label: string, c: Comparison, unit: (n: number) => string, rawLabel = "raw ws"): Array<string> => [
  `| ${label} | ${rawLabel} | ${mmm(c.raw, unit)} |`,
  `| ${label} | SDK | ${mmm(c.sdk, unit)} |`,
  `| ${label} | ratio SDK/${rawLabel} (medians) | **${fixed(c.ratio)}** (per A/B pair: ${fixed(c.pairRatios.min)} / ${
    fixed(c.pairRatios.median)
  } / ${fixed(c.pairRatios.max)}) |`
]

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

const throughputSection = (t: ThroughputFigure, sdkLabel: string): Array<string> => [
  `${sdkLabel}. Every run delivered every frame${
    t.ordered ? ", the last one last (order kept)" : " (**the last frame delivered was not the last sent**)"
  }.`,
  "",
  "| figure | side | min / **median** / max |",
  "| --- | --- | --- |",
  ...comparisonRows("frames/s", t, int),
  ...comparisonRows("client CPU per frame (us)", t.cpuPerFrame, (n) => fixed(n, 2)),
  ""
]

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

export const markdown = (r: Results, analysis: string, cluster = ""): string => {
  const lines: Array<string> = []
  const push = (...more: Array<string>) => lines.push(...more)
  const m = r.machine
  const fmtVerdict = (v: Verdict) => v.met === "n/a" ? "reported" : v.met ? "yes" : "**no**"
  push(
    "# Benchmark results",
    "",
    `Generated by \`npm run bench\` (bench/run.ts) on ${m.date}, in ${fixed(r.seconds, 0)} s. Do not edit by hand:`,
    "the analysis comes from bench/ANALYSIS.md, the cluster section from bench/cluster.ts, the start-up section from bench/startup.ts.",
    "",
    "## Machine",
    "",
    "| CPU | cores | memory | Node | OS | open-file limit |",
    "| --- | --- | --- | --- | --- | --- |",
    `| ${m.cpu} | ${m.cores} | ${m.memoryGiB} GiB | ${m.node} | ${m.platform} | ${m.fdLimit} |`,
    "",
    "This machine is shared and noisy: absolute numbers drift between runs; the ratios, taken",
    "side by side in the same run, are the figures to read.",
    "",
    ...loadLines(r),
    "## The targets (issue 15)",
    "",
    "| figure | result | target | met |",
    "| --- | --- | --- | --- |",
    ...verdicts(r).map((v) => `| ${v.figure} | ${v.value} | ${v.target} | ${fmtVerdict(v)} |`),
    "",
    "## Method",
    "",
    "- The load generator (bench/loadgen.ts) is a raw `ws` server in its own process, the same",
    "  server for both sides. It waits for the documented handshake (`{apiKey, sessionId}` as the",
    "  first message), then writes pre-framed `action_run` frames (about 200 bytes each,",
    "  `{\"event\":\"action_run\",\"data\":{\"name\",\"action_session_id\",\"content\"}}`) in one socket",
    "  write: the kernel's socket buffer is the only back-pressure, so the client is the bottleneck.",
    "- The simulator (src/simulator, bench/simulatorServer.ts) in its own process serves the",
    "  create-session and create-to-first-event figures.",
    "- Every measurement runs in a fresh client process (bench/child.ts, `--expose-gc`); rounds",
    "  alternate raw, SDK, raw, SDK. Figures are min / **median** / max over the rounds.",
    "- Raw side: `ws` client, `JSON.parse(String(data))` per message, nothing else (no types, no",
    "  typed errors, no reconnect); bare `fetch` for HTTP. SDK side: the library's public API only",
    "  (`src/index.ts`), over `NodeAgentSessions.layer` (documented dialect, default options unless",
    "  stated), decoding every frame to the typed `SessionEvent` union.",
    "",
    `Configuration: \`${JSON.stringify(r.config)}\``,
    "",
    `Time per part (s): ${Object.entries(r.phases).map(([name, seconds]) => `${name} ${fixed(seconds, 0)}`).join("; ")}.`,
    ""
  )

  push("## 1. Memory per open session", "")
  const mem = r.memory
  if (isSkipped(mem)) push(skippedText(mem), "")
  else {
    push(
      `Connections opened ${r.config.memoryConcurrency} at a time in one client process (SDK: \`EventStream.connect\` with default options but \`idleTimeout: "1 hour"\`, since the held connections receive one frame and opening 10k on a loaded machine took over the default minute; its \`events\` run by one fiber per connection), each held until it has received its first event (\`started\`); per connection = (after - before) / count, both after a full GC. ${r.memoryNote}`,
      "",
      "| open | figure | side | min / **median** / max |",
      "| --- | --- | --- | --- |"
    )
    for (const f of mem) {
      push(
        ...comparisonRows("RSS per connection", f.rssPerConn, kib).map((row) => `| ${int(f.count)} ${row}`),
        ...comparisonRows("heap per connection", f.heapPerConn, kib).map((row) => `| ${int(f.count)} ${row}`),
        ...comparisonRows("time to open all", f.openMs, ms).map((row) => `| ${int(f.count)} ${row}`)
      )
    }
    push("")
  }
  const floors = r.floors
  if (isSkipped(floors)) push(`Floors ${skippedText(floors)}`, "")
  else if (floors.length > 0) {
    push(
      "Floors (bench/floors.ts, which does not import the library), one run each per size: what the least Effect machinery per connection costs, whatever the SDK does.",
      "",
      "| open | variant | RSS per connection | heap per connection | time to open all |",
      "| --- | --- | --- | --- | --- |"
    )
    const counts = [...new Set(floors.map((f) => f.count))]
    for (const count of counts) {
      const same = isSkipped(mem) ? undefined : mem.find((f) => f.count === count)
      push(
        ...(same === undefined ? [] : [
          `| ${int(count)} | raw ws (median above) | ${kib(same.rssPerConn.raw.median)} | ${kib(same.heapPerConn.raw.median)} | ${
            ms(same.openMs.raw.median)
          } |`
        ]),
        ...floors.filter((f) => f.count === count).map((f) =>
          `| ${int(count)} | ${floorLabels[f.variant] ?? f.variant} | ${kib(f.rssPerConn)} | ${kib(f.heapPerConn)} | ${ms(f.openMs)} |`
        ),
        ...(same === undefined ? [] : [
          `| ${int(count)} | SDK EventStream (median above) | ${kib(same.rssPerConn.sdk.median)} | ${kib(same.heapPerConn.sdk.median)} | ${
            ms(same.openMs.sdk.median)
          } |`
        ])
      )
    }
    push("")
    const mf = memoryAgainstFloor(r)
    if (mf !== undefined) {
      push(
        `Against the floor "${floorLabels[memoryFloor]}" at ${int(mf.count)} open (same run): SDK heap ${fixed(mf.heapRatio)}x, RSS ${fixed(mf.rssRatio)}x (target <= ${targets.memoryOverFloor}x each).`,
        ""
      )
    }
  }
  const fibers = r.fibers ?? notInRun
  if (isSkipped(fibers)) push(`Live fibers ${skippedText(fibers)}`, "")
  else {
    push(
      `Live fibers per open, idle session, in a separate client process (the counting costs memory of its own): ${int(fibers.sdk.sessions)} sessions opened as above under a \`Supervisor.track\` installed with \`Effect.supervised\` around the bench's program (every fiber forked from it, the SDK's included), together with \`Fiber.roots\` (fibers started outside it, daemons included); the fibers alive once every session is open and idle, less those alive before, per session. The caller's consumer fiber is one of them. The floors are counted the same way, as a check of the method.`,
      "",
      "| variant | live fibers per open session |",
      "| --- | --- |",
      ...fibers.floors.map((f) => `| ${floorLabels[f.variant] ?? f.variant} | ${fixed(f.perSession)} |`),
      `| SDK EventStream | **${fixed(fibers.sdk.perSession)}** |`,
      ""
    )
  }

  push("## 2. Create to first event", "")
  const fe = r.firstEvent ?? notInRun
  if (isSkipped(fe)) push(skippedText(fe), "")
  else {
    const cfg = r.config.firstEvent
    push(
      `The simulator in its own process, each session's script short and immediate (\`bench/simulatorServer.ts short\`: one action, no request, no pause: exactly ${cfg.events} events, \`started\` first). Per round, one client process runs ${int(cfg.warmup)} warm-up sessions, then ${int(cfg.sessions)} sequential short sessions (create, connect, the ${cfg.events} events, close); ${cfg.rounds} rounds per side, sides alternating. Latency: from the call to the first event delivered (per-round medians); CPU: \`process.cpuUsage\` of the client process over the ${int(cfg.sessions)} sessions, per session.`,
      "",
      "- Raw: a bare `fetch` POST of the create request (the SDK's body and Bearer key, and an `Idempotency-Key` as the SDK sends), the JSON parsed, then a `ws` socket to the documented connect path, the `{apiKey, sessionId}` handshake as the first message, `JSON.parse` of each frame; after the last event the client closes (1000) and waits for the close.",
      `- SDK: ${fe.api}; the scope's close ends each session.`,
      "",
      "| figure | side | min / **median** / max |",
      "| --- | --- | --- |",
      ...comparisonRows("create to first event", fe.latency, ms, "raw"),
      `| create to first event, every session | raw | ${mmm(fe.allLatencies.raw, ms)} |`,
      `| create to first event, every session | SDK | ${mmm(fe.allLatencies.sdk, ms)} |`,
      ...comparisonRows(`CPU per short session (${cfg.events} events)`, fe.cpuPerSession, ms, "raw"),
      ""
    )
  }

  push("## 3. Event pipeline throughput", "")
  const t = r.throughput
  push(
    `${int(r.config.frames)} action_run frames per run, after a ${int(r.config.warmupFrames)}-frame warm-up run in the same process; the time runs from opening the socket to the last frame delivered to the consumer. Each round runs raw, the floor (below), the SDK's \`EventStream.events\`, then \`AgentSessions.attach\`, each in its own process; all are compared with the same raw rounds.`,
    ""
  )
  if (isSkipped(t)) push(skippedText(t), "")
  else push(...throughputSection(t, "`EventStream.events(sessionId)`, consumed with `Stream.runForEachChunk`"))
  const ta = r.throughputAttach ?? notInRun
  if (isSkipped(ta)) push(`\`AgentSessions.attach\`: ${skippedText(ta)}`, "")
  else {
    push(
      ...throughputSection(
        ta,
        "`AgentSessions.attach(session, maxActions)` with default options (the budget guard, the last 100 events kept, the outcome), `running.events` consumed with `Stream.runForEachChunk`"
      )
    )
  }

  const tf = r.throughputFloor ?? notInRun
  if (isSkipped(tf)) push(`Floor: ${skippedText(tf)}`, "")
  else {
    push(
      ...throughputSection(
        tf,
        "The floor (bench/floors.ts `throughputStream`): the raw client's `ws` + `JSON.parse`, each frame offered to a `Mailbox` read by `Stream.runForEachChunk`, the SDK runs' consumer; no typing, no guarantee: what any Effect `Stream` of a socket's frames costs. In the table, its figures are the \"SDK\" side"
      )
    )
  }

  push("## 4. Create session alone", "")
  const c = r.createSession
  if (isSkipped(c)) push(skippedText(c), "")
  else {
    push(
      `The simulator (src/simulator) in its own process; one client process sends ${r.config.createSession.rounds} rounds of ${r.config.createSession.requests} sequential request pairs: a bare \`fetch\` of the same POST (same body, same Bearer key, an \`Idempotency-Key\` as the SDK sends, JSON parsed) and \`AgentApi.createSession\` (over \`NodeHttpClient.layerUndici\`, as \`NodeAgentSessions\`), alternating request by request, after ${r.config.createSession.warmup} warm-up pairs. Figures are the per-round medians of the latency.`,
      "",
      "| figure | side | min / **median** / max |",
      "| --- | --- | --- |",
      ...comparisonRows("latency", c, ms, "fetch"),
      ""
    )
  }

  push("## 5. Peak heap of a slow consumer", "")
  const s = r.slow
  if (isSkipped(s)) push(skippedText(s), "")
  else {
    push(
      `The consumer spends ${r.config.workMicros} us of CPU per event and lets I/O in every ${r.config.yieldEvery} events (\`setImmediate\`), so it is slower than the socket; \`bufferSize\` ${r.config.bufferSize} for the SDK and the same bound on the bounded raw client's queue (\`ws.pause()\`/\`resume()\`). The live heap is sampled after a forced full GC every ${r.config.liveEvery} frames; figures are the peak above the heap before the stream started. "Peak heap" includes garbage not yet collected.`,
      "",
      "| frames | side | peak live heap min / **median** / max |",
      "| --- | --- | --- |"
    )
    for (const f of s) {
      push(
        `| ${int(f.frames)} | SDK (bufferSize ${r.config.bufferSize}) | ${mmm(f.sdkLive, mib)} |`,
        `| ${int(f.frames)} | raw ws, bounded queue | ${mmm(f.rawBoundedLive, mib)} |`,
        `| ${int(f.frames)} | raw ws, unbounded queue (naive) | ${mmm(f.rawUnboundedLive, mib)} (queue reached ${int(f.rawUnboundedMaxQueued.median)} frames) |`,
        `| ${int(f.frames)} | SDK peak heap incl. garbage | ${mmm(f.sdkPeak, mib)} |`,
        `| ${int(f.frames)} | SDK consumer rate (frames/s) | ${mmm(f.sdkFramesPerSecond, int)} |`
      )
    }
    push("")
  }

  push("## 6. Reconnect (reported, no target)", "")
  const rc = r.reconnect
  if (isSkipped(rc)) push(skippedText(rc), "")
  else {
    push(
      `The server drops the socket abruptly (no close frame: 1006) after 5 frames, ${r.config.reconnectDrops} times per run; the first frame after each reconnect carries the time of the drop, so the gap is measured from the drop to the event's delivery (same machine clock). The SDK uses its default schedule (exponential from 250 ms, factor 2, jittered, capped at 10 s); the raw client reconnects at once, which is the floor (socket + handshake + first frame).`,
      "",
      "| side | min / **median** / max | every gap |",
      "| --- | --- | --- |",
      `| raw ws, immediate | ${mmm(rc.raw, ms)} | ${rc.raw.samples.map((g) => fixed(g, 1)).join(", ")} |`,
      `| SDK, default schedule | ${mmm(rc.sdk, ms)} | ${rc.sdk.samples.map((g) => fixed(g, 1)).join(", ")} |`,
      ""
    )
  }

  push("## 7. SSE parser (reported, no target)", "")
  const sse = r.sse ?? notInRun
  if (isSkipped(sse)) push(skippedText(sse), "")
  else {
    push(
      `One legal event of ${int(r.config.sse.size)} characters (\`event: thoughts_and_memories\`, one \`data:\` line) parsed by the protocol core's \`Sse.SseParser\` in one piece and in ${int(r.config.sse.piece)}-character pieces, ${r.config.sse.rounds} rounds alternating, in one process (process CPU time). The parser is linear in the text received (issue 20, item 4: the parser it replaced rescanned the unfinished line on every piece, about 4 s of CPU for this event in 256-byte pieces): the pieces cost about what one piece does.`,
      "",
      "| parse | min / **median** / max |",
      "| --- | --- |",
      `| whole event, one piece | ${mmm(sse.whole, ms)} |`,
      `| ${int(r.config.sse.piece)}-character pieces | ${mmm(sse.pieces, ms)} |`,
      `| pieces / whole (medians) | **${fixed(sse.pieces.median / sse.whole.median)}** |`,
      `| characters scanned per character received | ${fixed(sse.scannedPerChar)} |`,
      ""
    )
  }

  push(...effect4Section(r))

  if (analysis.trim().length > 0) push(analysis.trim(), "")
  if (cluster.trim().length > 0) push(cluster.trim(), "")
  return lines.join("\n")
}
