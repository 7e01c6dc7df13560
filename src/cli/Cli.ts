/**
 * The `effect-agent-session` command line as a value: the root command and {@link main}, which
 * runs it on arguments and gives the exit code. The process entry is `main.ts`.
 *
 * Exit codes (see `docs/cli.md`): 0 complete, 2 usage, 3 authentication, 4 rate limit
 * exhausted, 5 connection lost, 6 budget exceeded, 7 session ended without complete, 8 other
 * service error, 130 interrupted.
 *
 * @since 0.1.0
 */
import * as Command from "@effect/cli/Command"
import * as ValidationError from "@effect/cli/ValidationError"
import type * as NodeContext from "@effect/platform-node/NodeContext"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import { version } from "../internal/version.js"
import { classify, ExitCode } from "./ExitCode.js"
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
  Command.withSubcommands([Run.command, Simulate.command, Onboard.command, Cluster.runner, Cluster.watch, Cluster.answer])
)

const cli = Command.run(command, { name: "effect-agent-session", version })

/**
 * Runs the command line on the given arguments (`process.argv`) and gives the exit code.
 *
 * @since 0.1.0
 * @category constructors
 */
export const main = (argv: ReadonlyArray<string>): Effect.Effect<number, never, NodeContext.NodeContext> =>
  cli(argv).pipe(
    Effect.as(ExitCode.ok as number),
    Effect.catchAll((error): Effect.Effect<number> => {
      if (ValidationError.isValidationError(error)) {
        // @effect/cli has printed the problem and the usage already.
        return Effect.succeed(ExitCode.usage)
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
    // Library logs go to standard error, warnings and above unless EFFECT_LOG_LEVEL says otherwise.
    Effect.provide(Logger.replace(Logger.defaultLogger, Logger.withConsoleError(Logger.logfmtLogger))),
    Logger.withMinimumLogLevel(logLevel())
  )

function logLevel(): LogLevel.LogLevel {
  const wanted = (process.env["EFFECT_LOG_LEVEL"] ?? "").toLowerCase()
  const found = LogLevel.allLevels.find((level) => level.label.toLowerCase() === wanted)
  return found ?? LogLevel.Warning
}
