/**
 * A small-N smoke run of the benchmark harness (bench/), so it cannot rot: the load generator,
 * the simulator and every measured client process start, every figure is produced as finite,
 * positive numbers, and the report names the targets of issues 15 and 25 (the Effect 4 edition,
 * its side on Node 22) and keeps the cluster section. The command line's start-up bench
 * (bench/startup.ts) runs one round from the sources.
 * No timing is asserted: speed is measured by `npm run bench`, never by a test. The time-outs
 * are hang guards for a loaded machine (every part runs at once).
 */
import { assert, describe, it } from "@effect/vitest"
import { execFile } from "node:child_process"
import { join } from "node:path"
import { type Config, fullConfig, type Results, runBench } from "../bench/harness.js"
import { isSkipped } from "../bench/processes.js"
import { clusterSection, markdown, summary, verdicts } from "../bench/report.js"
import { startSides } from "../bench/effect4.js"
import { effect4Verdicts, issue39Rows } from "../bench/effect4Report.js"
import { cleanEnv } from "effect-agent-session-test-support/launch"
import type { Stats } from "effect-agent-session-test-support/measure"

const smallConfig: Config = {
  ...fullConfig,
  frames: 2_000,
  warmupFrames: 200,
  throughputRounds: 1,
  connections: [20],
  memoryRounds: [1],
  floorConnections: 10,
  fiberSessions: 10,
  firstEvent: { sessions: 3, rounds: 1, warmup: 1, events: 5 },
  memoryConcurrency: 10,
  slowFrames: [1_000, 2_000],
  slowRounds: 1,
  reconnectDrops: 1,
  reconnectRounds: 1,
  createSession: { requests: 5, rounds: 1, warmup: 1 },
  sse: { size: 64 * 1024, piece: 256, rounds: 1 },
  effect4: {
    connections: [20],
    memoryRounds: 1,
    heapConnections: 10,
    fiberSessions: 10,
    firstEvent: { sessions: 3, rounds: 1, warmup: 1, events: 5 },
    throughputRounds: 1
  },
  // Every part at once: this run proves the harness works, its figures mean nothing.
  parallel: true,
  log: () => undefined
}

const assertPositive = (label: string, value: number) => {
  assert.isTrue(Number.isFinite(value), `${label} is finite (${value})`)
  assert.isTrue(value > 0, `${label} is positive (${value})`)
}

const assertStats = (label: string, stats: Stats) => {
  assert.isAbove(stats.samples.length, 0, `${label} has samples`)
  assertPositive(`${label} min`, stats.min)
  assertPositive(`${label} median`, stats.median)
  assertPositive(`${label} max`, stats.max)
}

const notSkipped = <A extends object>(label: string, value: A | { readonly skipped: string }): A => {
  if (isSkipped(value)) assert.fail(`${label} was not measured: ${value.skipped}`)
  return value
}

describe("bench harness (smoke run at small N)", () => {
  let results: Results | undefined
  // The smoke test reads the sources (a fresh clone has no dist/, and the consumer test builds it).
  const run = async (): Promise<Results> => {
    process.env["BENCH_SDK_FROM"] = "source"
    return results ??= await runBench(smallConfig)
  }

  it("produces every figure as finite positive numbers", { timeout: 240_000 }, async () => {
    const r = await run()
    assertPositive("cores", r.machine.cores)
    const throughput = notSkipped("throughput", r.throughput)
    assertStats("raw frames/s", throughput.raw)
    assertStats("SDK frames/s", throughput.sdk)
    assertPositive("throughput ratio", throughput.ratio)
    assert.isTrue(throughput.ordered, "every run delivered the last frame last")
    const attach = notSkipped("attach throughput", r.throughputAttach ?? { skipped: "missing" })
    assertStats("SDK attach frames/s", attach.sdk)
    assert.isTrue(attach.ordered, "every attach run delivered the last frame last")

    const memory = notSkipped("memory", r.memory)
    assert.strictEqual(memory.length, 1)
    for (const figure of memory) {
      assert.strictEqual(figure.count, 20)
      assertStats("raw open time", figure.openMs.raw)
      assertStats("SDK open time", figure.openMs.sdk)
      // RSS and heap deltas of 20 connections can be swamped by the allocator: finite is what holds.
      assert.isTrue(Number.isFinite(figure.rssPerConn.raw.median) && Number.isFinite(figure.rssPerConn.sdk.median))
      assert.isTrue(Number.isFinite(figure.heapPerConn.raw.median) && Number.isFinite(figure.heapPerConn.sdk.median))
    }

    const firstEvent = notSkipped("create to first event", r.firstEvent ?? { skipped: "missing" })
    assertStats("raw first event", firstEvent.latency.raw)
    assertStats("SDK first event", firstEvent.latency.sdk)
    assertStats("raw CPU per short session", firstEvent.cpuPerSession.raw)
    assertStats("SDK CPU per short session", firstEvent.cpuPerSession.sdk)

    const fibers = notSkipped("fibers", r.fibers ?? { skipped: "missing" })
    // The SDK holds at least the caller's consumer per session; the one-fiber floor holds one.
    assert.isAtLeast(fibers.sdk.perSession, 1)
    assert.closeTo(fibers.floors.find((f) => f.variant === "floor-fiber")?.perSession ?? 0, 1, 0.25)

    const createSession = notSkipped("create session", r.createSession)
    assertStats("fetch latency", createSession.raw)
    assertStats("SDK latency", createSession.sdk)

    const reconnect = notSkipped("reconnect", r.reconnect)
    assertStats("raw reconnect", reconnect.raw)
    assertStats("SDK reconnect", reconnect.sdk)

    const sse = notSkipped("SSE parser", r.sse ?? { skipped: "missing" })
    assertStats("SSE parser, whole", sse.whole)
    assertStats("SSE parser, in pieces", sse.pieces)
    // Linear in the text received: every character scanned once and joined into its line once.
    assert.isAtMost(sse.scannedPerChar, 2)

    const slow = notSkipped("slow consumer", r.slow)
    assert.deepStrictEqual(slow.map((f) => f.frames), [1_000, 2_000])
    for (const figure of slow) {
      assertStats("SDK consumer rate", figure.sdkFramesPerSecond)
      assert.isTrue(Number.isFinite(figure.sdkLive.median) && Number.isFinite(figure.rawUnboundedLive.median))
    }

    const floors = notSkipped("floors", r.floors)
    assert.deepStrictEqual(floors.map((f) => f.variant), ["floor-fiber", "floor-stream", "floor-socket"])
    for (const floor of floors) assert.isTrue(Number.isFinite(floor.heapPerConn) && floor.openMs > 0)

    // The Effect 4 edition's part (issue 25), on Node 22: every side of every figure measured.
    const e4 = notSkipped("effect4", r.effect4 ?? { skipped: "missing" })
    assert.match(e4.node, /^v2[2-9]\./)
    const [e4Memory] = notSkipped("effect4 memory", e4.memory)
    const sides = ["raw", "floor-stream", "floor-fiber", "floor-socket", "sdk", "e3-node22", "e3-node20", ...startSides] as const
    for (const side of sides) {
      const figure = notSkipped(`effect4 memory ${side}`, e4Memory?.sides[side] ?? { skipped: "missing" })
      assertStats(`effect4 ${side} open time`, figure.openMs)
      assert.isTrue(Number.isFinite(figure.heapPerConn.median) && Number.isFinite(figure.rssPerConn.median))
    }
    for (const heap of notSkipped("effect4 heap summaries", e4.heap)) {
      const summary = notSkipped(`effect4 heap summary ${heap.variant}`, heap.summary)
      assert.isAbove(summary.top.length, 0)
    }
    const e4Fibers = notSkipped("effect4 fibers", e4.fibers)
    assert.closeTo(e4Fibers.floors.find((f) => f.variant === "floor-stream")?.perSession ?? 0, 1, 0.25)
    assert.isAtLeast(notSkipped("effect4 SDK fibers", e4Fibers.sdk).perSession, 1)
    const e4FirstEvent = notSkipped("effect4 create to first event", e4.firstEvent)
    assertStats("effect4 raw first event", e4FirstEvent.latency.raw)
    assertStats("effect4 floor first event", e4FirstEvent.latency.floor)
    assertStats("effect4 SDK first event", notSkipped("effect4 SDK first event", e4FirstEvent.latency.sdk))
    const e4Throughput = notSkipped("effect4 throughput", e4.throughput)
    for (const [side, figure] of Object.entries(e4Throughput)) {
      const rate = notSkipped(`effect4 throughput ${side}`, figure)
      assertStats(`effect4 ${side} frames/s`, rate.fps)
      assert.isTrue(rate.ordered, `effect4 ${side}: every run delivered the last frame last`)
    }
  })

  it("reports issue 15's targets, and keeps the cluster section", { timeout: 240_000 }, async () => {
    const r = await run()
    const v = verdicts(r)
    assert.deepStrictEqual(v.map((x) => x.figure.split(" (")[0]), [
      "1a. Memory per open session: heap",
      "1b. Memory per open session: RSS",
      "1c. Live fibers per open session",
      "2a. Create to first event",
      "2b. CPU per short session",
      "3a. Throughput, `EventStream.events`",
      "3b. Throughput, `AgentSessions.attach`",
      "4. Create session alone",
      "5. Slow consumer peak live heap"
    ])
    const cluster = "<!-- cluster:begin -->\n## Cluster\n\nkept\n<!-- cluster:end -->"
    const text = markdown(r, clusterSection(`# old\n\n${cluster}\n`))
    for (const heading of ["## Rerun", "## Machine", "## Effect 3 edition", "## Effect 4 edition"]) {
      assert.include(text, `\n${heading}\n`)
    }
    // The current figures only: one row per measure, with its ratio (the history is in git).
    for (const row of [...v, ...effect4Verdicts(r)]) assert.include(text, `| ${row.figure} | ${row.value} |`)
    assert.include(text, "| 6. Reconnect")
    assert.include(text, "| 7. SSE parser")
    // Issue 39's table adds its own section (a heading, two notes, one row per figure and size).
    assert.isBelow(text.split("\n").length, 80 + 8 + issue39Rows(r).length)
    // The machine is shared: the load average at the start and at the end of every part is kept.
    assert.strictEqual(r.machine.loadAverage?.length, 3)
    assert.deepStrictEqual(Object.keys(r.phaseLoad ?? {}), Object.keys(r.phases))
    assert.match(text, /Load average \(1 \/ 5 \/ 15 min; \d+ cores\): [\d.]+ \/ [\d.]+ \/ [\d.]+ at the start; /)
    assert.notInclude(text, "not measured")
    assert.isTrue(text.endsWith(`${cluster}\n`), "the cluster section is kept, last")
    const v4 = effect4Verdicts(r)
    assert.deepStrictEqual(v4.map((x) => x.figure.split(" (")[0]), [
      "1a. Heap per open session, against the Effect 4 floor",
      "1b. Heap per open session, against the Effect 3 edition",
      "1c. RSS per open session, against the Effect 4 floor",
      "1d. Live fibers per idle open session",
      "2. Create to first event",
      "3a. Throughput, `EventStream.events`",
      "3b. Throughput, `AgentSessions.attach`"
    ])
    assert.strictEqual(summary(r).split("\n").length, v.length + v4.length + issue39Rows(r).length)
  })
})

describe("issue 22: start-up", () => {
  const root = join(import.meta.dirname, "..")

  it("bench/startup.ts runs (one round, from the sources) and reports every case", { timeout: 120_000 }, async () => {
    const result = await new Promise<{ readonly code: number | null; readonly stdout: string; readonly stderr: string }>((resolve) => {
      const args = ["--import", "tsx", join(root, "bench/startup.ts"), "--rounds", "1", "--from", "source", "--no-write"]
      execFile(process.execPath, args, { cwd: root, env: cleanEnv() }, (error, stdout, stderr) =>
        resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : null, stdout, stderr }))
    })
    assert.strictEqual(result.code, 0, result.stderr)
    for (const label of ["`node -e 0`", "`--version`", "`--help`", "`run --help`", "`watch`"]) {
      assert.match(result.stdout, new RegExp(`^\\| ${label.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}.* ms`, "m"))
    }
  })
})

describe("the SDK's share of a cluster take-over (packages/cluster/bench/attachCost.ts)", () => {
  const root = join(import.meta.dirname, "..")
  const attachCost = (args: ReadonlyArray<string>) =>
    new Promise<{ readonly code: number | null; readonly stdout: string; readonly stderr: string }>((resolve) => {
      const all = ["--import", "tsx", join(root, "packages/cluster/bench/attachCost.ts"), "--sessions", "5", "--runs", "1", ...args]
      execFile(process.execPath, all, { cwd: root, env: cleanEnv() }, (error, stdout, stderr) =>
        resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : null, stdout, stderr }))
    })

  for (const [label, args] of [
    ["effect3", []],
    ["effect4", ["--line", "effect4"]],
    ["effect3, bare ws", ["--raw"]]
  ] as const) {
    it(`${label}: every session attached again, its CPU per session reported`, { timeout: 120_000 }, async () => {
      const result = await attachCost(args)
      assert.strictEqual(result.code, 0, result.stderr)
      const row = result.stdout.split("\n").find((line) => line.startsWith(`| ${label} | 1 |`))
      assert.isDefined(row, result.stdout)
      const cells = row!.split("|").map((cell) => cell.trim())
      assert.strictEqual(cells[3], "5")
      assertPositive("the attacher's CPU", Number(/^(\d+) ms/.exec(cells[5] ?? "")?.[1]))
      // Less the idle rate: at 5 sessions it may be near zero, even below; finite is what holds.
      assert.isTrue(Number.isFinite(Number(/\*\*(-?[\d.]+) ms\*\*/.exec(row!)?.[1])), row)
    })
  }
})
