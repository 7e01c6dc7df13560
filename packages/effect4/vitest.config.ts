import { createRequire } from "node:module"
import * as Path from "node:path"
import { defineConfig } from "vitest/config"

/**
 * The Effect 4 edition's suite, run under Node 22 by `scripts/node22.mjs` (`npm test` here, or the
 * root's `npm test`). A line of Effect's default logger is dropped unless `EAS_TEST_LOGS=1`, as in
 * the Effect 3 edition's suite.
 */
const effectLogLine = /^timestamp=\S+ level=(ALL|TRACE|DEBUG|INFO|WARN|ERROR|FATAL) fiber=#\d+/

/**
 * The sources of the protocol core (`effect-agent-session-core`) and of the editions' shared glue
 * (`effect-agent-session-shell`), the repository's packages linked by the lock file, as tsconfig's
 * condition says.
 */
const sourceOf = (name: string) =>
  Path.join(Path.dirname(createRequire(import.meta.url).resolve(`${name}/package.json`)), "src/index.ts")
const coreSource = sourceOf("effect-agent-session-core")
const shellSource = sourceOf("effect-agent-session-shell")

export default defineConfig({
  resolve: {
    alias: [
      { find: /^effect-agent-session-core$/, replacement: coreSource },
      { find: /^effect-agent-session-shell$/, replacement: shellSource }
    ]
  },
  test: {
    include: ["test/**/*.test.ts", "cluster/test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // One temporary directory for the run, removed at its end (the root's set-up).
    globalSetup: ["../test-support/src/temporaryDirectory.ts"],
    pool: "forks",
    // Memory tests (the hostile cases) measure the live heap after a collection, not garbage.
    execArgv: ["--expose-gc"],
    reporters: ["default"],
    onConsoleLog: (log) => (process.env["EAS_TEST_LOGS"] === "1" || !effectLogLine.test(log) ? undefined : false)
  }
})
