/**
 * How tests start a program of the repository as a child process: from its TypeScript sources
 * (no build), in an environment without the developer's `AGENT_SESSION_*` settings. Nothing here
 * imports Effect.
 */
import * as Fs from "node:fs"
import { createRequire } from "node:module"
import * as Path from "node:path"
import { pathToFileURL } from "node:url"

/** tsx's loader, as this repository installs it. */
const tsxLoader = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href

/**
 * Node's arguments that run the TypeScript module `entry` (an absolute path) through tsx, with
 * the workspace packages resolved to their sources (the `effect-agent-session-source` export
 * condition), so no build is needed.
 */
export const fromSource = (entry: string): ReadonlyArray<string> => [
  "--conditions=effect-agent-session-source",
  "--import",
  tsxLoader,
  entry
]

/** An environment without any `AGENT_SESSION_*` variable of the developer's shell. */
export const cleanEnv = (extra: Record<string, string> = {}): Record<string, string> => {
  const env: Record<string, string> = {}
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !key.startsWith("AGENT_SESSION_") && key !== "EFFECT_LOG_LEVEL") env[key] = value
  }
  return { ...env, NO_COLOR: "1", ...extra }
}

const quote = (word: string) => `'${word.replaceAll("'", "'\\''")}'`

/**
 * An `npx` (in `<dir>/bin`, returned) that runs this repository's command line from its sources
 * (`npx effect-agent-session ...`, also as `npx -p effect-agent-session-cli effect-agent-session ...`,
 * `cli` its TypeScript entry) or a program through tsx (`npx tsx <file> ...`), under this
 * process's Node, and fails for anything else: a document's commands, run as a reader would.
 */
export const npxShim = (dir: string, cli: string): string => {
  const bin = Path.join(dir, "bin")
  Fs.mkdirSync(bin, { recursive: true })
  const node = (args: ReadonlyArray<string>) => [process.execPath, ...args].map(quote).join(" ")
  Fs.writeFileSync(
    Path.join(bin, "npx"),
    [
      "#!/bin/sh",
      `[ "$1" = "-p" ] && shift 2`,
      `[ "$1" = "effect-agent-session" ] && { shift; exec ${node(fromSource(cli))} "$@"; }`,
      `[ "$1" = "tsx" ] && { shift; exec ${node(fromSource("").slice(0, -1))} "$@"; }`,
      `echo "npx $* is neither the command line nor tsx" >&2; exit 127`,
      ""
    ].join("\n"),
    { mode: 0o755 }
  )
  return bin
}
