/**
 * `npm run bench`: runs every measurement at full size, prints the five figures and writes
 * bench/RESULTS.md.
 *
 * Options: `--quick` (small sizes, a smoke run); `--profile` (a CPU profile of the measured part of every
 * client process, both sides, in bench/profiles/); `--out=<file>` (write the results somewhere else);
 * `--sdk-root=<dir>` (run the SDK side from another copy of the repository, such as one with a
 * local change applied, to measure it against the same floor); `--render` (rewrite
 * the report from the results kept beside it, RESULTS.json, with the current bench/ANALYSIS.md).
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { type Config, fullConfig, type Results, root, runBench } from "./harness.js"
import { markdown, summary } from "./report.js"

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
  floorConnections: 100,
  slowFrames: [5_000, 20_000],
  slowRounds: 1,
  reconnectDrops: 2,
  reconnectRounds: 1,
  createSession: { requests: 20, rounds: 2, warmup: 5 }
}

const profileDir = flag("profile") !== undefined ? Path.join(root, "bench", "profiles") : undefined
if (profileDir !== undefined) Fs.mkdirSync(profileDir, { recursive: true })
const sdkRoot = flag("sdk-root")
const config: Config = {
  ...(flag("quick") !== undefined ? quickConfig : fullConfig),
  cpuProfileDir: profileDir,
  sdkRoot: sdkRoot === undefined ? undefined : Path.resolve(sdkRoot)
}
const out = flag("out") ?? Path.join(root, "bench", "RESULTS.md")

// The results are kept as JSON beside the report, so `--render` can rewrite the report (after an
// edit of bench/ANALYSIS.md) without measuring again.
const json = out.replace(/\.md$/, "") + ".json"
const results: Results = flag("render") !== undefined
  ? (JSON.parse(Fs.readFileSync(json, "utf8")) as Results)
  : await runBench(config)
if (flag("render") === undefined) Fs.writeFileSync(json, `${JSON.stringify(results, null, 2)}\n`)
const analysisFile = Path.join(root, "bench", "ANALYSIS.md")
const analysis = Fs.existsSync(analysisFile) ? Fs.readFileSync(analysisFile, "utf8") : ""
Fs.writeFileSync(out, markdown(results, analysis))
console.log("")
console.log(summary(results))
console.log("")
console.log(`wrote ${Path.relative(process.cwd(), out)} (${results.seconds.toFixed(0)} s)`)
