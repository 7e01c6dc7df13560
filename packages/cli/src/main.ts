/**
 * The process entry of the `effect-agent-session` command line (`bin/effect-agent-session.js`
 * runs its compiled form). The help, `--version` and an unknown command are answered here
 * without loading anything else ({@link Quick}); a command loads the command line
 * (`Runtime.ts`), and the cluster commands load their packages only when they run.
 *
 * @since 0.1.0
 */
import * as Quick from "./Quick.js"

// The reader of our output went away (`effect-agent-session --help | head -3`): stop quietly, as
// command line tools do, rather than crash on EPIPE.
for (const stream of [process.stdout, process.stderr]) {
  stream.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code === "EPIPE") process.exit(process.exitCode ?? 0)
  })
}

const answered = Quick.answer(process.argv.slice(2))
if (answered === undefined) {
  await import("./Runtime.js")
} else {
  process.stdout.write(answered.stdout)
  process.stderr.write(answered.stderr)
  process.exitCode = answered.code
}
