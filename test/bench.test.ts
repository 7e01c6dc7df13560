/**
 * A small-N smoke run of the benchmark harness (bench/), so it cannot rot: the load generator,
 * the simulator and every measured client process start, every figure is produced as finite,
 * positive numbers, and the report names the five figures. No timing is asserted: speed is
 * measured by `npm run bench`, never by a test.
 */
import { assert, describe, it } from "@effect/vitest"
import { type Config, fullConfig, isSkipped, type Results, runBench } from "../bench/harness.js"
import { markdown, summary, verdicts } from "../bench/report.js"
import type { Stats } from "../bench/measure.js"

const smallConfig: Config = {
  ...fullConfig,
  frames: 2_000,
  warmupFrames: 200,
  throughputRounds: 1,
  connections: [20],
  memoryRounds: [1],
  floorConnections: 10,
  memoryConcurrency: 10,
  slowFrames: [1_000, 2_000],
  slowRounds: 1,
  reconnectDrops: 1,
  reconnectRounds: 1,
  createSession: { requests: 5, rounds: 1, warmup: 1 },
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
  const run = async (): Promise<Results> => results ??= await runBench(smallConfig)

  it("produces every figure as finite positive numbers", { timeout: 60_000 }, async () => {
    const r = await run()
    assertPositive("cores", r.machine.cores)
    const throughput = notSkipped("throughput", r.throughput)
    assertStats("raw frames/s", throughput.raw)
    assertStats("SDK frames/s", throughput.sdk)
    assertPositive("throughput ratio", throughput.ratio)
    assert.isTrue(throughput.ordered, "every run delivered the last frame last")

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

    const createSession = notSkipped("create session", r.createSession)
    assertStats("fetch latency", createSession.raw)
    assertStats("SDK latency", createSession.sdk)

    const reconnect = notSkipped("reconnect", r.reconnect)
    assertStats("raw reconnect", reconnect.raw)
    assertStats("SDK reconnect", reconnect.sdk)

    const slow = notSkipped("slow consumer", r.slow)
    assert.deepStrictEqual(slow.map((f) => f.frames), [1_000, 2_000])
    for (const figure of slow) {
      assertStats("SDK consumer rate", figure.sdkFramesPerSecond)
      assert.isTrue(Number.isFinite(figure.sdkLive.median) && Number.isFinite(figure.rawUnboundedLive.median))
    }

    const floors = notSkipped("floors", r.floors)
    assert.deepStrictEqual(floors.map((f) => f.variant), ["floor-fiber", "floor-stream", "floor-socket"])
    for (const floor of floors) assert.isTrue(Number.isFinite(floor.heapPerConn) && floor.openMs > 0)
  })

  it("reports the five figures with their targets", { timeout: 60_000 }, async () => {
    const r = await run()
    const v = verdicts(r)
    assert.deepStrictEqual(v.map((x) => x.figure.split(" (")[0]), [
      "Event pipeline throughput",
      "Memory per open session",
      "Create-session overhead",
      "Reconnect",
      "Slow consumer peak live heap"
    ])
    const text = markdown(r, "## Analysis\n\nsmoke")
    for (const heading of ["## Machine", "## 1. Event pipeline throughput", "## 2. Memory per open session", "## 3. Create-session overhead", "## 4. Reconnect", "## 5. Peak heap of a slow consumer", "## Analysis"]) {
      assert.include(text, heading)
    }
    assert.notInclude(text, "not measured")
    assert.strictEqual(summary(r).split("\n").length, 5)
  })
})
