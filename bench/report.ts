/**
 * Renders a run: the five headline figures (printed) and RESULTS.md (machine, method, every
 * figure with min/median/max, the ratios, the targets, and the hand-written analysis).
 */
import { type Comparison, isSkipped, type Results, type Skipped } from "./harness.js"
import type { Stats } from "./measure.js"

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

/** The verdict on each of the five figures. */
export const verdicts = (r: Results): ReadonlyArray<Verdict> => {
  const out: Array<Verdict> = []
  const t = r.throughput
  out.push(
    isSkipped(t)
      ? { figure: "Event pipeline throughput", value: skippedText(t), target: "SDK/raw >= 1.0", met: false }
      : {
        figure: "Event pipeline throughput",
        value: `SDK ${int(t.sdk.median)} vs raw ${int(t.raw.median)} frames/s: ratio ${fixed(t.ratio)}`,
        target: "SDK/raw >= 1.0",
        met: t.ratio >= 1.0
      }
  )
  const m = r.memory
  const largest = isSkipped(m) ? undefined : m[m.length - 1]
  out.push(
    isSkipped(m) || largest === undefined
      ? { figure: "Memory per open session", value: isSkipped(m) ? skippedText(m) : "none", target: "<= 1.5x raw RSS at 10k", met: false }
      : {
        figure: `Memory per open session (${int(largest.count)} open)`,
        value: `SDK ${kib(largest.rssPerConn.sdk.median)} vs raw ${kib(largest.rssPerConn.raw.median)} RSS per connection: ratio ${
          fixed(largest.rssPerConn.ratio)
        } (heap ${kib(largest.heapPerConn.sdk.median)} vs ${kib(largest.heapPerConn.raw.median)})`,
        target: "SDK/raw RSS <= 1.5 at 10k",
        met: largest.rssPerConn.ratio <= 1.5 && largest.count >= 10_000
      }
  )
  const c = r.createSession
  out.push(
    isSkipped(c)
      ? { figure: "Create-session overhead", value: skippedText(c), target: "SDK/fetch <= 1.2", met: false }
      : {
        figure: "Create-session overhead",
        value: `SDK ${ms(c.sdk.median)} vs fetch ${ms(c.raw.median)} median: ratio ${fixed(c.ratio)}`,
        target: "SDK/fetch <= 1.2",
        met: c.ratio <= 1.2
      }
  )
  const rc = r.reconnect
  out.push(
    isSkipped(rc)
      ? { figure: "Reconnect", value: skippedText(rc), target: "report (default schedule)", met: "n/a" }
      : {
        figure: "Reconnect (drop to next event)",
        value: `SDK ${ms(rc.sdk.median)} median (${ms(rc.sdk.min)}..${ms(rc.sdk.max)}) with the default schedule; raw floor (immediate reconnect) ${
          ms(rc.raw.median)
        }`,
        target: "report (default schedule: first retry after 250 ms, jittered)",
        met: "n/a"
      }
  )
  const s = r.slow
  const first = isSkipped(s) ? undefined : s[0]
  const last = isSkipped(s) ? undefined : s[s.length - 1]
  out.push(
    isSkipped(s) || first === undefined || last === undefined
      ? { figure: "Slow consumer peak heap", value: isSkipped(s) ? skippedText(s) : "none", target: "bounded, flat", met: false }
      : {
        figure: `Slow consumer peak live heap (${int(first.frames)} vs ${int(last.frames)} frames)`,
        value: `SDK +${mib(first.sdkLive.median)} vs +${mib(last.sdkLive.median)} (raw unbounded queue: +${
          mib(first.rawUnboundedLive.median)
        } vs +${mib(last.rawUnboundedLive.median)})`,
        target: `flat: grows < ${mib(flatTolerance)} from the shortest to the longest stream`,
        met: last.sdkLive.median - first.sdkLive.median < flatTolerance
      }
  )
  return out
}

/** The lines `npm run bench` prints at the end. */
export const summary = (r: Results): string =>
  verdicts(r).map((v, i) =>
    `${i + 1}. ${v.figure}: ${v.value}  [target ${v.target}: ${v.met === "n/a" ? "reported" : v.met ? "MET" : "MISSED"}]`
  ).join("\n")

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

/** RESULTS.md. */
export const markdown = (r: Results, analysis: string): string => {
  const lines: Array<string> = []
  const push = (...more: Array<string>) => lines.push(...more)
  const m = r.machine
  push(
    "# Benchmark results",
    "",
    `Generated by \`npm run bench\` (bench/run.ts) on ${m.date}, in ${fixed(r.seconds, 0)} s. Do not edit by hand:`,
    "the analysis at the end comes from bench/ANALYSIS.md.",
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
    "## The five figures",
    "",
    "| # | figure | result | target | met |",
    "| --- | --- | --- | --- | --- |",
    ...verdicts(r).map((v, i) =>
      `| ${i + 1} | ${v.figure} | ${v.value} | ${v.target} | ${v.met === "n/a" ? "reported" : v.met ? "yes" : "**no**"} |`
    ),
    "",
    "## Method",
    "",
    "- The load generator (bench/loadgen.ts) is a raw `ws` server in its own process, the same",
    "  server for both sides. It waits for the documented handshake (`{apiKey, sessionId}` as the",
    "  first message), then writes pre-framed `action_run` frames (about 200 bytes each,",
    "  `{\"event\":\"action_run\",\"data\":{\"name\",\"action_session_id\",\"content\"}}`) in one socket",
    "  write: the kernel's socket buffer is the only back-pressure, so the client is the bottleneck.",
    "- Every measurement runs in a fresh client process (bench/child.ts, `--expose-gc`); rounds",
    "  alternate raw, SDK, raw, SDK. Figures are min / **median** / max over the rounds.",
    "- Raw side: `ws` client, `JSON.parse(String(data))` per message, nothing else (no types, no",
    "  typed errors, no reconnect). SDK side: `EventStream.events(sessionId)` (documented dialect,",
    "  default options unless stated), decoding every frame to the typed `SessionEvent` union.",
    "",
    `Configuration: \`${JSON.stringify(r.config)}\``,
    "",
    `Time per part (s): ${Object.entries(r.phases).map(([name, seconds]) => `${name} ${fixed(seconds, 0)}`).join("; ")}.`,
    ""
  )

  push("## 1. Event pipeline throughput", "")
  const t = r.throughput
  if (isSkipped(t)) push(skippedText(t), "")
  else {
    push(
      `${int(r.config.frames)} action_run frames per run, after a ${int(r.config.warmupFrames)}-frame warm-up run in the same process; the time runs from opening the socket to the last frame delivered to the consumer. Every run delivered every frame${
        t.ordered ? ", the last one last (order kept)" : " (**the last frame delivered was not the last sent**)"
      }.`,
      "",
      "| figure | side | min / **median** / max |",
      "| --- | --- | --- |",
      ...comparisonRows("frames/s", t, int),
      ...comparisonRows("client CPU per frame (us)", t.cpuPerFrame, (n) => fixed(n, 2)),
      ""
    )
  }

  push("## 2. Memory per open session", "")
  const mem = r.memory
  if (isSkipped(mem)) push(skippedText(mem), "")
  else {
    push(
      `Connections opened ${r.config.memoryConcurrency} at a time in one client process, each held until it has received its first event (\`started\`); per connection = (after - before) / count, both after a full GC. ${r.memoryNote}`,
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
    const count = floors[0]?.count ?? 0
    const same = isSkipped(mem) ? undefined : mem.find((f) => f.count === count)
    push(
      `Floors (bench/floors.ts), ${int(count)} connections, one run each: what the least Effect machinery per connection costs, whatever the SDK does.`,
      "",
      "| variant | RSS per connection | heap per connection | time to open all |",
      "| --- | --- | --- | --- |",
      ...(same === undefined ? [] : [
        `| raw ws (median above) | ${kib(same.rssPerConn.raw.median)} | ${kib(same.heapPerConn.raw.median)} | ${ms(same.openMs.raw.median)} |`
      ]),
      ...floors.map((f) => `| ${floorLabels[f.variant] ?? f.variant} | ${kib(f.rssPerConn)} | ${kib(f.heapPerConn)} | ${ms(f.openMs)} |`),
      ...(same === undefined ? [] : [
        `| SDK EventStream (median above) | ${kib(same.rssPerConn.sdk.median)} | ${kib(same.heapPerConn.sdk.median)} | ${ms(same.openMs.sdk.median)} |`
      ]),
      ""
    )
  }

  push("## 3. Create-session overhead", "")
  const c = r.createSession
  if (isSkipped(c)) push(skippedText(c), "")
  else {
    push(
      `The simulator (src/simulator) in its own process; one client process sends ${r.config.createSession.rounds} rounds of ${r.config.createSession.requests} sequential request pairs: a bare \`fetch\` of the same POST (same body, same Bearer key, JSON parsed) and \`AgentApi.createSession\` (over \`NodeHttpClient.layerUndici\`, as \`NodeAgentSessions\`), alternating request by request, after ${r.config.createSession.warmup} warm-up pairs. Figures are the per-round medians of the latency.`,
      "",
      "| figure | side | min / **median** / max |",
      "| --- | --- | --- |",
      ...comparisonRows("latency", c, ms, "fetch"),
      ""
    )
  }

  push("## 4. Reconnect", "")
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

  if (analysis.trim().length > 0) push(analysis.trim(), "")
  return lines.join("\n")
}
