/**
 * Runs the command line in this process (loaded by `main.ts` when a command must run): the
 * program of `Cli.main` on `process.argv` under `NodeRuntime.runMain`, the exit code, the
 * terminal restored on every way out.
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
import { unmuteProcessInput } from "./Render.js"

let exitCode: number = ExitCode.ok

// NodeRuntime.runMain interrupts the program on SIGINT and SIGTERM alike (everything closes
// cleanly); this only remembers which one came, for the exit code (130 or 143).
let terminated = false
process.once("SIGTERM", () => {
  terminated = true
})

NodeRuntime.runMain(
  main(process.argv).pipe(
    Effect.tap((code) =>
      Effect.sync(() => {
        exitCode = code
        // main.ts exits with it when the reader of the output goes away (EPIPE).
        process.exitCode = code
      })
    ),
    Effect.provide(NodeContext.layer)
  ),
  {
    disableErrorReporting: true,
    disablePrettyLogger: true,
    teardown: (exit, onExit) => {
      // The live view hides the cursor and mutes the keyboard while it draws: make sure both are
      // back, whatever happened.
      unmuteProcessInput()
      if (process.stdout.isTTY) process.stdout.write("\x1b[?25h")
      const interrupted = Exit.isFailure(exit) && Cause.isInterruptedOnly(exit.cause)
      onExit(
        terminated
          ? ExitCode.terminated
          : interrupted || exitCode === ExitCode.interrupted
          ? ExitCode.interrupted
          : exitCode
      )
    }
  }
)
