/**
 * The process entry of the `effect-agent-session` command line (see `bin/effect-agent-session.js`).
 *
 * @since 0.1.0
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import { main } from "./Cli.js"
import { ExitCode } from "./ExitCode.js"

let exitCode: number = ExitCode.ok

NodeRuntime.runMain(
  main(process.argv).pipe(
    Effect.tap((code) =>
      Effect.sync(() => {
        exitCode = code
      })
    ),
    Effect.provide(NodeContext.layer)
  ),
  {
    disableErrorReporting: true,
    disablePrettyLogger: true,
    teardown: (exit, onExit) => {
      // The live view hides the cursor while it draws: make sure it is back, whatever happened.
      if (process.stdout.isTTY) process.stdout.write("\x1b[?25h")
      onExit(Exit.isFailure(exit) && Cause.isInterruptedOnly(exit.cause) ? ExitCode.interrupted : exitCode)
    }
  }
)
