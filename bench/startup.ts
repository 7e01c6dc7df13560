/**
 * The command line's start-up (issue 22): wall time of `effect-agent-session --version`,
 * `--help`, `run --help` and an unknown command, against `node -e 0` measured in the same run,
 * round by round (alternating), as a new process each time; and, for the record, a command that
 * loads the command line (`simulate --port 99999`: parsed, refused, exit 2) and one that loads
 * the cluster commands (`watch` without its argument).
 *
 *   npx tsx bench/startup.ts [--rounds 15] [--from dist|source] [--no-write]
 *
 * `--from dist` (default) runs the compiled bin (`packages/cli/bin`, built first with
 * `npm run build -w effect-agent-session-cli` when `packages/cli/dist/main.js` is missing): what
 * a user runs. `--from source` runs the TypeScript entry through tsx (no build; a smoke run, its
 * figures are not the bin's). Writes the section between `<!-- startup:begin -->` and
 * `<!-- startup:end -->` of bench/RESULTS.md (appended when missing; `npm run bench` keeps it)
 * unless `--no-write`, and prints it.
 */
import { spawnSync } from "node:child_process"
import { existsSync, readFileSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import * as Os from "node:os"
import { dirname, join } from "node:path"
import { fromSource } from "effect-agent-session-test-support/launch"
import { startupMarkers } from "./report.js"

const root = join(import.meta.dirname, "..")
const argv = process.argv.slice(2)
const option = (name: string): string | undefined => {
  const i = argv.indexOf(`--${name}`)
  return i >= 0 ? argv[i + 1] : undefined
}
const ROUNDS = Number(option("rounds") ?? 15)
const FROM = option("from") === "source" ? "source" : "dist"
const WRITE = !argv.includes("--no-write")
/** The target of issue 22 for `--version` and `--help`, in milliseconds. */
const TARGET_MS = 400

/** The command line's package (`packages/cli`), as the workspace links it. */
const cli = dirname(createRequire(import.meta.url).resolve("effect-agent-session-cli/package.json"))
const bin = join(cli, "bin/effect-agent-session.js")
if (FROM === "dist" && !existsSync(join(cli, "dist/main.js"))) {
  const built = spawnSync("npm", ["run", "build", "-w", "effect-agent-session-cli"], { cwd: root, stdio: "inherit" })
  if (built.status !== 0) process.exit(built.status ?? 1)
}
const entry: ReadonlyArray<string> = FROM === "dist"
  ? [bin]
  : fromSource(join(cli, "src/main.ts"))

interface Case {
  readonly label: string
  readonly args: ReadonlyArray<string>
  /** Compared with the target. */
  readonly targeted: boolean
}
const cases: ReadonlyArray<Case> = [
  { label: "`node -e 0`", args: ["-e", "0"], targeted: false },
  { label: "`--version`", args: [...entry, "--version"], targeted: true },
  { label: "`--help`", args: [...entry, "--help"], targeted: true },
  { label: "`run --help`", args: [...entry, "run", "--help"], targeted: true },
  { label: "`rn` (unknown command, suggestion)", args: [...entry, "rn"], targeted: false },
  { label: "`simulate --port 99999` (loads the command line, exit 2)", args: [...entry, "simulate", "--port", "99999"], targeted: false },
  { label: "`watch` (loads the cluster commands, exit 2)", args: [...entry, "watch"], targeted: false }
]

const env: Record<string, string | undefined> = { ...process.env, NO_COLOR: "1" }
for (const key of Object.keys(env)) if (key.startsWith("AGENT_SESSION_") || key === "CLUSTER_DATABASE_URL") delete env[key]

const samples = new Map<string, Array<number>>(cases.map((c) => [c.label, []]))
// One warm-up round (file cache), then the rounds, each case once per round in turn.
for (let round = -1; round < ROUNDS; round++) {
  for (const c of cases) {
    const started = process.hrtime.bigint()
    spawnSync(process.execPath, c.args, { cwd: root, env, stdio: "ignore" })
    const ms = Number(process.hrtime.bigint() - started) / 1e6
    if (round >= 0) samples.get(c.label)?.push(ms)
  }
}

const median = (xs: ReadonlyArray<number>): number => {
  const sorted = [...xs].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[mid] ?? 0 : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2
}
const floor = median(samples.get(cases[0]?.label ?? "") ?? [])
const fmt = (ms: number) => `${ms.toFixed(0)} ms`
const rows = cases.map((c) => {
  const xs = samples.get(c.label) ?? []
  const med = median(xs)
  const verdict = c.targeted ? (med < TARGET_MS ? "yes" : "**no**") : ""
  return `| ${c.label} | ${fmt(Math.min(...xs))} / **${fmt(med)}** / ${fmt(Math.max(...xs))} | ${
    c === cases[0] ? "1.00" : (med / floor).toFixed(2)
  } | ${verdict} |`
})

const cpu = Os.cpus()[0]?.model.trim() ?? "unknown"
const section = [
  startupMarkers.begin,
  "## Command line start-up (bench/startup.ts)",
  "",
  `Measured ${new Date().toISOString()} on ${cpu} (${Os.cpus().length} cores), Node ${process.version}, ` +
  `${ROUNDS} rounds (each case a new process, in turn), ${
    FROM === "dist" ? "the compiled bin (`packages/cli/bin`)" : "the TypeScript sources through tsx (not the bin)"
  }. Target (issue 22): \`--version\` and \`--help\` under ${TARGET_MS} ms.`,
  "",
  "| command | min / **median** / max wall time | median / `node -e 0` | under the target |",
  "| --- | --- | --- | --- |",
  ...rows,
  "",
  "`--help`, `--version`, no arguments and an unknown command are answered by `Quick.ts` before",
  "anything else loads; a command loads the command line and the SDK; the cluster commands load",
  "`@effect/cluster` and the SQL packages only when one of them runs.",
  startupMarkers.end,
  ""
].join("\n")

if (WRITE) {
  const file = join(root, "bench", "RESULTS.md")
  const current = readFileSync(file, "utf8")
  const begin = current.indexOf(startupMarkers.begin)
  const end = current.indexOf(startupMarkers.end)
  const next = begin >= 0 && end > begin
    ? current.slice(0, begin) + section + current.slice(end + startupMarkers.end.length + 1)
    : current.trimEnd() + "\n\n" + section
  writeFileSync(file, next)
}
process.stdout.write(section)
