/**
 * The `effect-agent-session` command line as a value: the root command and {@link main}, which
 * runs it on arguments and gives the exit code. The process entry is `main.ts`.
 *
 * Exit codes (see `docs/cli.md`): 0 complete, 2 usage, 3 authentication, 4 rate limit
 * exhausted, 5 connection lost, 6 budget exceeded, 7 session ended without complete, 8 other
 * service error, 130 interrupted, 143 terminated (SIGTERM).
 *
 * @since 0.1.0
 */
import * as Command from "@effect/cli/Command"
import * as ValidationError from "@effect/cli/ValidationError"
import type * as NodeContext from "@effect/platform-node/NodeContext"
import * as HelpDoc from "@effect/cli/HelpDoc"
import * as Cause from "effect/Cause"
import * as Console from "effect/Console"
import * as Either from "effect/Either"
import * as Effect from "effect/Effect"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Help from "./Help.js"
import { version } from "./version.js"
import { classify, ExitCode } from "./ExitCode.js"
import * as Attach from "./Attach.js"
import * as Cluster from "./Cluster.js"
import * as Onboard from "./Onboard.js"
import * as Run from "./Run.js"
import * as Simulate from "./Simulate.js"

/**
 * The root command.
 *
 * @since 0.1.0
 * @category constructors
 */
export const command = Command.make("effect-agent-session").pipe(
  Command.withDescription("Run agent sessions from the terminal, against the service or its simulator"),
  Command.withSubcommands([
    Run.command,
    Attach.command,
    Simulate.command,
    Onboard.command,
    Cluster.runner,
    Cluster.submit,
    Cluster.watch,
    Cluster.answer
  ])
)

const cli = Command.run(command, { name: "effect-agent-session", version })

/** A console that prints nothing: @effect/cli's own printing of usage errors is replaced by ours. */
const silentConsole: Console.Console = {
  [Console.TypeId]: Console.TypeId,
  assert: () => Effect.void,
  clear: Effect.void,
  count: () => Effect.void,
  countReset: () => Effect.void,
  debug: () => Effect.void,
  dir: () => Effect.void,
  dirxml: () => Effect.void,
  error: () => Effect.void,
  group: () => Effect.void,
  groupEnd: Effect.void,
  info: () => Effect.void,
  log: () => Effect.void,
  table: () => Effect.void,
  time: () => Effect.void,
  timeEnd: () => Effect.void,
  timeLog: () => Effect.void,
  trace: () => Effect.void,
  warn: () => Effect.void,
  unsafe: globalThis.console
}

/**
 * The arguments once `--log-level` (accepted anywhere, as `--log-level X` or `--log-level=X`) is
 * taken out, and the level it names (else `EFFECT_LOG_LEVEL`, else `Warning`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const extractLogLevel = (
  args: ReadonlyArray<string>,
  env: string | undefined = process.env["EFFECT_LOG_LEVEL"]
): Either.Either<{ readonly args: ReadonlyArray<string>; readonly level: LogLevel.LogLevel }, string> => {
  const rest: Array<string> = []
  let wanted: string | undefined
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] ?? ""
    if (arg === "--") {
      rest.push(...args.slice(i))
      break
    }
    if (arg === "--log-level") {
      const value = args[i + 1]
      if (value === undefined) return Either.left("--log-level needs a level: " + levelNames)
      wanted = value
      i++
    } else if (arg.startsWith("--log-level=")) {
      wanted = arg.slice("--log-level=".length)
    } else {
      rest.push(arg)
    }
  }
  if (wanted === undefined) {
    return Either.right({ args: rest, level: findLevel(env ?? "") ?? LogLevel.Warning })
  }
  const level = findLevel(wanted)
  return level === undefined
    ? Either.left(`--log-level must be one of ${levelNames}, not "${wanted}"`)
    : Either.right({ args: rest, level })
}

/** The level names `--log-level` accepts (Effect's labels too: `warn`, `off`). */
const levels: ReadonlyArray<readonly [string, LogLevel.LogLevel]> = [
  ["all", LogLevel.All],
  ["trace", LogLevel.Trace],
  ["debug", LogLevel.Debug],
  ["info", LogLevel.Info],
  ["warning", LogLevel.Warning],
  ["warn", LogLevel.Warning],
  ["error", LogLevel.Error],
  ["fatal", LogLevel.Fatal],
  ["none", LogLevel.None],
  ["off", LogLevel.None]
]

const levelNames = "all, trace, debug, info, warning, error, fatal, none"

const findLevel = (name: string): LogLevel.LogLevel | undefined =>
  levels.find(([label]) => label === name.trim().toLowerCase())?.[1]

const oneLine = (text: string): string =>
  text.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, "").replace(/\s+/g, " ").trim()

/**
 * Runs the command line on the given arguments (`process.argv`) and gives the exit code.
 *
 * - no arguments: the help on standard error, exit 2;
 * - `--help` / `-h` (anywhere): the help of the command, exit 0; `--version`: the version;
 * - a usage error: one line, `error: ...`, naming the flag, exit 2.
 *
 * @since 0.1.0
 * @category constructors
 */
export const main = (argv: ReadonlyArray<string>): Effect.Effect<number, never, NodeContext.NodeContext> =>
  Effect.suspend(() => {
    const extracted = extractLogLevel(argv.slice(2))
    if (Either.isLeft(extracted)) return usage(extracted.left, "")
    const { args, level } = extracted.right
    const first = args[0]
    if (first === undefined) {
      return Effect.sync(() => {
        process.stderr.write(Help.texts[""] ?? "")
        return ExitCode.usage as number
      })
    }
    const beforeDashes = args.indexOf("--") < 0 ? args : args.slice(0, args.indexOf("--"))
    if (beforeDashes.includes("--help") || beforeDashes.includes("-h")) {
      const text = Help.forCommand(first.startsWith("-") ? "" : first)
      if (text !== undefined) {
        return Effect.sync(() => {
          process.stdout.write(text)
          return ExitCode.ok as number
        })
      }
    }
    if (args.length === 1 && (first === "--version" || first === "-v")) {
      return Effect.sync(() => {
        process.stdout.write(`effect-agent-session ${version}\n`)
        return ExitCode.ok as number
      })
    }
    const commandName = first.startsWith("-") ? "" : first
    return cli([argv[0] ?? "node", argv[1] ?? "effect-agent-session", ...args]).pipe(
      Effect.withConsole(silentConsole),
      Effect.as(ExitCode.ok as number),
      Effect.catchAll((error): Effect.Effect<number> => {
        if (ValidationError.isValidationError(error)) {
          const text = HelpDoc.isEmpty(error.error) ? "invalid arguments" : HelpDoc.toAnsiText(error.error)
          return usage(text, Help.forCommand(commandName) === undefined ? "" : commandName)
        }
        if (error._tag === "CliExit") return Effect.succeed(error.code)
        const { code, message } = classify(error)
        return Effect.sync(() => {
          process.stderr.write(`error: ${message}\n`)
          return code
        })
      }),
      Effect.catchAllDefect((defect) =>
        Effect.sync(() => {
          process.stderr.write(`internal error: ${Cause.pretty(Cause.die(defect)).split("\n")[0] ?? ""}\n`)
          return ExitCode.internal as number
        })
      ),
      // Library logs go to standard error, warnings and above unless --log-level or EFFECT_LOG_LEVEL says otherwise.
      Effect.provide(Logger.replace(Logger.defaultLogger, Logger.withConsoleError(Logger.logfmtLogger))),
      Logger.withMinimumLogLevel(level)
    )
  })

const usage = (message: string, commandName: string): Effect.Effect<number> =>
  Effect.sync(() => {
    const help = commandName === "" ? "effect-agent-session --help" : `effect-agent-session ${commandName} --help`
    process.stderr.write(`error: ${oneLine(message)} (see '${help}')\n`)
    return ExitCode.usage as number
  })
