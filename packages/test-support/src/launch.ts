/**
 * How tests start a program of the repository as a child process: from its TypeScript sources
 * (no build), in an environment without the developer's `AGENT_SESSION_*` settings. Nothing here
 * imports Effect.
 */
import { createRequire } from "node:module"
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
