/**
 * `npm run bench`: runs every measurement at full size, prints the targets of issue 15 with their
 * verdicts and writes bench/RESULTS.md (and the raw results, bench/RESULTS.json).
 *
 * Options:
 * - `--quick`: small sizes, a smoke run (seconds to a minute).
 * - `--only=<part>[,<part>...]`: run only these parts (throughput, memory, floors, fibers,
 *   firstEvent, createSession, reconnect, slow, sse, effect4); the others show as "not run". Prints the
 *   verdicts; writes a report only with `--out` (so RESULTS.md keeps the last full run).
 * - `--profile`: a CPU profile of the measured part of every client process, both sides, in
 *   bench/profiles/.
 * - `--out=<file>`: write the report (and `<file>.json`) somewhere else.
 * - `--sdk-root=<dir>`: run the SDK side (and the create-session process) from another copy of
 *   the repository, such as one with a local change applied, to measure it against the same floor.
 * - `--render`: rewrite the report from the results kept beside it (RESULTS.json), without
 *   measuring (after a change of bench/report.ts).
 *
 * The report keeps the cluster section (`<!-- cluster:begin -->` ... `<!-- cluster:end -->`)
 * that packages/cluster/bench/cluster.ts wrote into the file it replaces, the take-over section of
 * packages/cluster/bench/clusterTakeover.ts (`<!-- cluster-takeover:begin -->` ...), and the command line's start-up section
 * (`<!-- startup:begin -->` ... `<!-- startup:end -->`) of bench/startup.ts.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { type Config, fullConfig, type Part, parts, type Results, runBench } from "./harness.js"
import { root } from "./processes.js"
import { clusterSection, keptSection, markdown, startupMarkers, summary, takeoverMarkers } from "./report.js"

const args = process.argv.slice(2)
const flag = (name: string): string | undefined => {
  const prefix = `--${name}=`
  const hit = args.find((a) => a === `--${name}` || a.startsWith(prefix))
  return hit === undefined ? undefined : hit.startsWith(prefix) ? hit.slice(prefix.length) : ""
}

/** A small run (seconds), for trying the harness. */
export const quickConfig: Config = {
  ...fullConfig,
  frames: 20_000,
  warmupFrames: 2_000,
  throughputRounds: 2,
  connections: [100, 500],
  memoryRounds: [1],
  floorConnections: [500],
  fiberSessions: 100,
  firstEvent: { sessions: 20, rounds: 1, warmup: 5, events: 5 },
  slowFrames: [5_000, 20_000],
  slowRounds: 1,
  reconnectDrops: 2,
  reconnectRounds: 1,
  createSession: { requests: 20, rounds: 2, warmup: 5 },
  sse: { size: 256 * 1024, piece: 256, rounds: 2 },
  effect4: {
    connections: [500],
    memoryRounds: 1,
    heapConnections: 200,
    fiberSessions: 100,
    firstEvent: { sessions: 20, rounds: 1, warmup: 5, events: 5 },
    throughputRounds: 1
  }
}

const isPart = (name: string): name is Part => (parts as ReadonlyArray<string>).includes(name)
const onlyFlag = flag("only")
const only = onlyFlag === undefined ? undefined : onlyFlag.split(",").map((p) => p.trim()).filter((p) => p !== "")
const unknown = (only ?? []).filter((p) => !isPart(p))
if (unknown.length > 0 || (only !== undefined && only.length === 0)) {
  console.error(`--only takes one or more of: ${parts.join(", ")} (got ${onlyFlag})`)
  process.exit(2)
}

const profileDir = flag("profile") !== undefined ? Path.join(root, "bench", "profiles") : undefined
if (profileDir !== undefined) Fs.mkdirSync(profileDir, { recursive: true })
const sdkRoot = flag("sdk-root")
const config: Config = {
  ...(flag("quick") !== undefined ? quickConfig : fullConfig),
  cpuProfileDir: profileDir,
  sdkRoot: sdkRoot === undefined ? undefined : Path.resolve(sdkRoot),
  only: only?.filter(isPart)
}
const outFlag = flag("out")
const out = outFlag ?? Path.join(root, "bench", "RESULTS.md")
const write = only === undefined || outFlag !== undefined

// The results are kept as JSON beside the report, so `--render` can rewrite the report without
// measuring again.
const json = out.replace(/\.md$/, "") + ".json"
const results: Results = flag("render") !== undefined
  ? (JSON.parse(Fs.readFileSync(json, "utf8")) as Results)
  : await runBench(config)
if (write) {
  if (flag("render") === undefined) Fs.writeFileSync(json, `${JSON.stringify(results, null, 2)}\n`)
  // The cluster, take-over and start-up sections are packages/cluster/bench/cluster.ts's, packages/cluster/bench/clusterTakeover.ts's
  // and bench/startup.ts's: kept from the report this one replaces.
  const existing = Fs.existsSync(out) ? Fs.readFileSync(out, "utf8") : ""
  const kept = [clusterSection(existing), keptSection(existing, takeoverMarkers), keptSection(existing, startupMarkers)]
    .filter((s) => s.length > 0)
    .join("\n\n")
  Fs.writeFileSync(out, markdown(results, kept))
}
console.log("")
console.log(summary(results))
console.log("")
console.log(
  write
    ? `wrote ${Path.relative(process.cwd(), out)} (${results.seconds.toFixed(0)} s)`
    : `--only: no report written (add --out=<file> to write one); ${results.seconds.toFixed(0)} s`
)
