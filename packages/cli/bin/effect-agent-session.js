#!/usr/bin/env node
// The effect-agent-session command line: the compiled entry (built into dist/ by `npm pack`).
// In a clone of the repository, dist/ exists only once built: say what to run, not a stack trace.
import("../dist/main.js").catch((error) => {
  const missing = error?.code === "ERR_MODULE_NOT_FOUND" ? /^Cannot find module '([^']*)'/.exec(String(error.message)) : null
  if (missing !== null && /[\\/]dist[\\/]/.test(missing[1])) {
    process.stderr.write(
      "error: effect-agent-session is not built in this clone: run `npm run build -w effect-agent-session-cli` " +
        "(or run it from the sources: `npm run cli -- <command>`)\n"
    )
    process.exit(2)
  }
  throw error
})
