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
import * as HashMap from "effect/HashMap"
import * as Inspectable from "effect/Inspectable"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Predicate from "effect/Predicate"
import * as Help from "./Help.js"
import { version } from "./version.js"
import { classify, CliExit, ExitCode, UsageError } from "./ExitCode.js"
import * as Attach from "./Attach.js"
import type * as ClusterCommands from "./Cluster.js"
import * as Onboard from "./Onboard.js"
import * as Quick from "./Quick.js"
import * as Render from "./Render.js"
import * as Run from "./Run.js"
import * as Sanitize from "./Sanitize.js"
import * as Simulate from "./Simulate.js"
import { didYouMean } from "./Suggest.js"

const root = Command.make("effect-agent-session").pipe(
  Command.withDescription("Run agent sessions from the terminal, against the service or its simulator")
)

/**
 * The root command with the commands that load with the command line. The other commands of the
 * help (the cluster commands: `runner`, `submit`, `watch`, `answer`) are in `Cluster.ts`, loaded only when
 * one of them runs ({@link withCluster}): they need `@effect/cluster` and the SQL packages,
 * optional peers of this package.
 *
 * @since 0.1.0
 * @category constructors
 */
export const command = root.pipe(Command.withSubcommands([Run.command, Attach.command, Simulate.command, Onboard.command]))

const coreNames: ReadonlyArray<string> = ["run", "attach", "simulate", "onboard"]

/**
 * The root command with the cluster commands too, once `Cluster.ts` is loaded.
 *
 * @since 0.1.0
 * @category constructors
 */
export const withCluster = (cluster: typeof ClusterCommands) =>
  root.pipe(
    Command.withSubcommands([
      Run.command,
      Attach.command,
      Simulate.command,
      Onboard.command,
      cluster.runner,
      cluster.submit,
      cluster.watch,
      cluster.answer
    ])
  )

/**
 * The packages the cluster commands need, with their ranges: the optional peers of this package
 * (a test keeps them equal to `package.json`). `@effect/workflow` and `@effect/experimental` are
 * peers of `@effect/cluster` and `@effect/sql` that npm does not install by itself: the six are
 * the set the docs install.
 *
 * @since 0.1.0
 * @category models
 */
export const clusterPackages: Readonly<Record<string, string>> = {
  "@effect/cluster": "^0.60.2",
  "@effect/rpc": "^0.76.2",
  "@effect/sql": "^0.52.1",
  "@effect/sql-pg": "^0.53.0",
  "@effect/workflow": "^0.19.1",
  "@effect/experimental": "^0.61.1"
}

/**
 * Loads the cluster commands. A package they need that is not installed is a one-line usage
 * error naming what to install.
 */
const loadClusterCommands = Effect.tryPromise({
  try: () => import("./Cluster.js"),
  catch: (error) => error
}).pipe(
  Effect.mapError((error) => {
    const text = error instanceof Error ? error.message : String(error)
    const names = Object.keys(clusterPackages)
    const missing = names.find((name) => text.includes(`'${name}'`) || text.includes(`"${name}"`))
    return Predicate.hasProperty(error, "code") && error.code === "ERR_MODULE_NOT_FOUND" && missing !== undefined
      ? `the cluster commands need ${names.join(", ")} (${missing} is not installed): ` +
        `npm install ${Object.entries(clusterPackages).map(([name, range]) => `${name}@${range}`).join(" ")}`
      : `the cluster commands could not be loaded: ${text}`
  })
)

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
): Either.Either<
  { readonly args: ReadonlyArray<string>; readonly level: LogLevel.LogLevel; readonly explicit: boolean },
  string
> => {
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
    const fromEnv = findLevel(env ?? "")
    return Either.right({ args: rest, level: fromEnv ?? LogLevel.Warning, explicit: fromEnv !== undefined })
  }
  const level = findLevel(wanted)
  return level === undefined
    ? Either.left(`--log-level must be one of ${levelNames}, not "${wanted}"`)
    : Either.right({ args: rest, level, explicit: true })
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

/** The flags a command's help lists (the help names every flag), and the ones accepted everywhere. */
const flagsOf = (commandName: string): ReadonlyArray<string> => [
  ...new Set([...(Help.texts[commandName] ?? "").matchAll(/^\s+(?:-\w, )?(--[a-z][a-z-]*)/gm)].map((m) => m[1] ?? "")),
  "--help",
  "--log-level"
]

/** `--start-url <url>`: a flag with the value its help shows, else the flag. */
const flagWithValue = (flag: string, commandName: string): string =>
  (Help.texts[commandName] ?? "").match(new RegExp(`^\\s+(${flag} <[^>]+>)`, "m"))?.[1] ?? flag

/** The flag given just before (or with `=`) a value on the command line. */
const flagOfValue = (value: string, args: ReadonlyArray<string>): string | undefined => {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] ?? ""
    if (arg.startsWith("--") && arg.endsWith(`=${value}`)) return arg.slice(0, arg.indexOf("="))
    if (args[i + 1] === value && arg.startsWith("--")) return arg
  }
  return undefined
}

/**
 * The usage errors of a failed parse, one per line, in the command line's words: each names the
 * flag (or the command), says what was expected, and suggests a close name where one exists.
 *
 * @since 0.1.0
 * @category constructors
 */
export const usageLines = (
  error: ValidationError.ValidationError,
  args: ReadonlyArray<string>,
  commandName: string
): ReadonlyArray<string> => {
  if (!("error" in error)) return ["invalid arguments"]
  const text = HelpDoc.isEmpty(error.error) ? "invalid arguments" : HelpDoc.toAnsiText(error.error)
  const lines = text.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, "").split("\n").map((l) => l.trim()).filter((l) => l.length > 0)
  // @effect/cli puts several problems in one paragraph: one per line.
  const problems = lines.flatMap((l) => l.split(/(?<=\S) (?=Expected to find option:)/))
  return problems.map((problem): string => {
    let m: RegExpMatchArray | null
    if ((m = problem.match(/^Expected to find option: '(--[\w-]+)'/)) !== null) {
      return `missing ${flagWithValue(m[1] ?? "", commandName)}`
    }
    if ((m = problem.match(/^The flag '(.+)' is not recognized\. Did you mean '(.+)'\?$/)) !== null) {
      return `unknown flag ${m[1]}; did you mean ${m[2]}?`
    }
    if ((m = problem.match(/^Received unknown argument: '(.*)'$/)) !== null) {
      const arg = m[1] ?? ""
      return arg.startsWith("-")
        ? `unknown flag ${arg.split("=")[0]}${didYouMean(arg.split("=")[0] ?? "", flagsOf(commandName))}`
        : `unexpected argument ${JSON.stringify(arg)}`
    }
    if ((m = problem.match(/^Invalid subcommand for /)) !== null) {
      const name = args.find((arg) => !arg.startsWith("-")) ?? ""
      return `unknown command ${JSON.stringify(name)}${didYouMean(name, Quick.commandNames)}`
    }
    if ((m = problem.match(/^Missing argument (<[^>]+>)/)) !== null) return `missing ${m[1]}`
    if ((m = problem.match(/^'(.*)' is not a (\w+)$/)) !== null) {
      const value = m[1] ?? ""
      const what = m[2] === "integer" ? "a whole number" : m[2] === "float" ? "a number" : `a ${m[2]}`
      return `${flagOfValue(value, args) ?? "a flag"} must be ${what}, not ${JSON.stringify(value)}`
    }
    return problem
  })
}

/**
 * Runs the command line on the given arguments (`process.argv`) and gives the exit code.
 *
 * - no arguments: the help on standard error, exit 2;
 * - `--help` / `-h` (anywhere): the help of the command, exit 0; `--version`: the version;
 * - usage errors: one per line, `error: ...`, each naming the flag, exit 2.
 *
 * @since 0.1.0
 * @category constructors
 */
export const main = (argv: ReadonlyArray<string>): Effect.Effect<number, never, NodeContext.NodeContext> =>
  Effect.suspend(() => {
    const extracted = extractLogLevel(argv.slice(2))
    if (Either.isLeft(extracted)) return usage([extracted.left], "")
    const { args, explicit, level } = extracted.right
    const quick = Quick.answer(args)
    if (quick !== undefined) {
      return Effect.sync(() => {
        Render.processSink.out(quick.stdout)
        Render.processSink.err(quick.stderr)
        return quick.code
      })
    }
    const commandName = args[0] !== undefined && !args[0].startsWith("-") ? args[0] : ""
    const cliArgs = [argv[0] ?? "node", argv[1] ?? "effect-agent-session", ...args]
    const options = { name: "effect-agent-session", version }
    const program: Effect.Effect<void, unknown, NodeContext.NodeContext> = commandName === "" || coreNames.includes(commandName)
      ? Command.run(command, options)(cliArgs)
      : Effect.flatMap(
        Effect.catchAll(loadClusterCommands, (message) => Effect.fail(new UsageError({ message }))),
        (cluster) => Command.run(withCluster(cluster), options)(cliArgs)
      )
    return program.pipe(
      Effect.withConsole(silentConsole),
      Effect.as(ExitCode.ok as number),
      Effect.catchAll((error): Effect.Effect<number> => {
        if (ValidationError.isValidationError(error)) {
          return usage(usageLines(error, args, commandName), Help.forCommand(commandName) === undefined ? "" : commandName)
        }
        if (error instanceof CliExit) return Effect.succeed(error.code)
        const { code, message } = classify(error)
        return Effect.sync(() => {
          Render.processSink.err(`error: ${Sanitize.line(message)}\n`)
          return code
        })
      }),
      Effect.catchAllDefect((defect) =>
        Effect.sync(() => {
          Render.processSink.err(`internal error: ${Sanitize.line(Cause.pretty(Cause.die(defect)).split("\n")[0] ?? "")}\n`)
          return ExitCode.internal as number
        })
      ),
      // Library logs go to standard error (made safe for a terminal), warnings and above unless
      // --log-level or EFFECT_LOG_LEVEL says otherwise: logfmt when asked for, else as a
      // `warning: ...` line like the command's own (a raw logfmt line reads as a crash).
      Effect.provide(
        Logger.replace(
          Logger.defaultLogger,
          explicit
            ? Logger.withConsoleError(Logger.map(Logger.logfmtLogger, Sanitize.block))
            : noticeLogger
        )
      ),
      // By default, info logs reach the logger too: it shows the notices among them.
      Logger.withMinimumLogLevel(explicit ? level : LogLevel.Info)
    )
  })

/**
 * A log line for a person: `warning: <message> (sessionId=...)`, the level in words, the
 * annotations after.
 *
 * @since 0.1.0
 * @category constructors
 */
export const plainLogger: Logger.Logger<unknown, string> = Logger.make(({ annotations, logLevel, message }) => {
  const text = (Array.isArray(message) ? message : [message])
    .map((part) => typeof part === "string" ? part : Inspectable.toStringUnknown(part))
    .join(" ")
  const notes = Array.from(HashMap.toEntries(HashMap.remove(annotations, "notice")), ([key, value]) =>
    `${key}=${typeof value === "string" ? value : Inspectable.toStringUnknown(value)}`)
  return `${logLevel._tag.toLowerCase()}: ${text}${notes.length > 0 ? ` (${notes.join(", ")})` : ""}`
})

/**
 * The logger when no level was asked for: warnings and above, and the library's notices (info
 * logs annotated `notice`, such as a runner taking a session over), as {@link plainLogger} lines
 * on standard error.
 *
 * @since 0.1.0
 * @category constructors
 */
export const noticeLogger: Logger.Logger<unknown, void> = Logger.make((options) => {
  if (LogLevel.lessThan(options.logLevel, LogLevel.Warning) && !HashMap.has(options.annotations, "notice")) return
  Render.processSink.err(`${Sanitize.line(plainLogger.log(options))}\n`)
})

/** Usage errors, one per line; the last names the help to read. */
const usage = (messages: ReadonlyArray<string>, commandName: string): Effect.Effect<number> =>
  Effect.sync(() => {
    const help = commandName === "" ? "effect-agent-session --help" : `effect-agent-session ${commandName} --help`
    const lines = messages.map((message) => `error: ${Sanitize.line(message)}`)
    Render.processSink.err(lines.map((line, i) => i === lines.length - 1 ? `${line} (see '${help}')` : line).join("\n") + "\n")
    return ExitCode.usage as number
  })
