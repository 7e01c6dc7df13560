/**
 * The process entry of the `effect-agent-session` command line (`bin/effect-agent-session.js`
 * runs its compiled form).
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

// The reader of our output went away (`effect-agent-session --help | head -3`): stop quietly, as
// command line tools do, rather than crash on EPIPE.
for (const stream of [process.stdout, process.stderr]) {
  stream.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code === "EPIPE") process.exit(exitCode)
  })
}

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
