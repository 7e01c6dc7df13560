import { defineConfig } from "vitest/config"

/**
 * The Effect 4 edition's suite, run under Node 22 by `scripts/node22.mjs` (`npm test` here, or the
 * root's `npm test`). A line of Effect's default logger is dropped unless `EAS_TEST_LOGS=1`, as in
 * the Effect 3 edition's suite.
 */
const effectLogLine = /^timestamp=\S+ level=(ALL|TRACE|DEBUG|INFO|WARN|ERROR|FATAL) fiber=#\d+/

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    reporters: ["default"],
    onConsoleLog: (log) => (process.env["EAS_TEST_LOGS"] === "1" || !effectLogLine.test(log) ? undefined : false)
  }
})
