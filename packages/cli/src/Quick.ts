/**
 * What the command line answers without loading a command (nor the SDK, nor Effect): the help
 * (`--help`, `-h`, no arguments), `--version`, and an unknown command (with a suggestion when one
 * is close). These answer in about the time Node takes to start (bench/startup.ts).
 *
 * @since 0.1.0
 */
import * as Help from "./Help.js"
import { didYouMean } from "./Suggest.js"
import { version } from "./version.js"

/**
 * An answer: what to print on standard output and standard error, and the exit code.
 *
 * @since 0.1.0
 * @category models
 */
export interface Answer {
  readonly stdout: string
  readonly stderr: string
  readonly code: number
}

/**
 * The names of the commands (those of the help).
 *
 * @since 0.1.0
 * @category accessors
 */
export const commandNames: ReadonlyArray<string> = Object.keys(Help.texts).filter((name) => name.length > 0)

/**
 * The answer to the arguments (without `node` and the script), or `undefined` when a command
 * must run (or `--log-level` is given, which the full parser checks).
 *
 * @since 0.1.0
 * @category constructors
 */
export const answer = (args: ReadonlyArray<string>): Answer | undefined => {
  if (args.some((arg) => arg === "--log-level" || arg.startsWith("--log-level="))) return undefined
  const [first] = args
  if (first === undefined) return { stdout: "", stderr: Help.texts[""] ?? "", code: 2 }
  const dashes = args.indexOf("--")
  const beforeDashes = dashes < 0 ? args : args.slice(0, dashes)
  const named = first.startsWith("-") ? "" : first
  if (named !== "" && !commandNames.includes(named)) {
    return {
      stdout: "",
      stderr: `error: unknown command ${JSON.stringify(named)}${didYouMean(named, commandNames)} (see 'effect-agent-session --help')\n`,
      code: 2
    }
  }
  if (beforeDashes.includes("--help") || beforeDashes.includes("-h")) {
    return { stdout: Help.texts[named] ?? "", stderr: "", code: 0 }
  }
  if (args.length === 1 && (first === "--version" || first === "-v")) {
    return { stdout: `effect-agent-session ${version}\n`, stderr: "", code: 0 }
  }
  return undefined
}
