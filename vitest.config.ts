import * as Fs from "node:fs"
import * as Path from "node:path"
import * as Url from "node:url"
import { defineConfig } from "vitest/config"

/**
 * A line of Effect's default logger (`timestamp=... level=... fiber=#...`). Tests that run the SDK
 * live (real sockets, `it.live`) keep that logger: its lines (a reconnect noted at INFO, a skipped
 * frame at WARN) are the SDK doing its job, not the test's output. Tests that assert on logs
 * capture them with their own `Logger`; the rest are dropped here so that the suite prints only
 * its results. `EAS_TEST_LOGS=1` shows them again.
 */
const effectLogLine = /^timestamp=\S+ level=(ALL|TRACE|DEBUG|INFO|WARN|ERROR|FATAL) fiber=#\d+/

const root = Path.dirname(Url.fileURLToPath(import.meta.url))
const src = Path.join(root, "packages/effect3/src")

export default defineConfig({
  resolve: {
    // The packages import one another by their names: in the tests each name is the package's
    // sources (packages/*/src), as the root's tsconfig `paths` say, so that a test and the
    // package it imports see the same modules.
    alias: [
      // The protocol core (packages/core) and the editions' shared glue (packages/shell): their
      // sources, as the root's tsconfig `paths` say.
      { find: /^effect-agent-session-core$/, replacement: Path.join(root, "packages/core/src/index.ts") },
      { find: /^effect-agent-session-shell$/, replacement: Path.join(root, "packages/shell/src/index.ts") },
      // The simulator (packages/simulator): its sources.
      { find: /^effect-agent-session-simulator$/, replacement: Path.join(root, "packages/simulator/src/index.ts") },
      { find: /^effect-agent-session-simulator\/(.+)$/, replacement: Path.join(root, "packages/simulator/src/$1.ts") },
      // The cluster edition (packages/cluster): its sources.
      { find: /^effect-agent-session-cluster$/, replacement: Path.join(root, "packages/cluster/src/index.ts") },
      { find: /^effect-agent-session-cluster\/(.+)$/, replacement: Path.join(root, "packages/cluster/src/$1.ts") },
      { find: /^effect-agent-session$/, replacement: Path.join(src, "index.ts") },
      // Entry points that are folders (testing, simulator, ...): their index.
      ...Fs.readdirSync(src, { withFileTypes: true })
        .filter((entry) => entry.isDirectory() && Fs.existsSync(Path.join(src, entry.name, "index.ts")))
        .map((entry) => ({
          find: new RegExp(`^effect-agent-session/${entry.name}$`),
          replacement: Path.join(src, entry.name, "index.ts")
        })),
      { find: /^effect-agent-session\/(.+)$/, replacement: Path.join(src, "$1.ts") },
      // The command line's modules the root's tests import (packages/cli's exports): its sources.
      { find: /^effect-agent-session-cli\/([A-Za-z]+)$/, replacement: Path.join(root, "packages/cli/src/$1.ts") }
    ]
  },
  test: {
    include: ["test/**/*.test.ts", "packages/effect3/test/**/*.test.ts", "examples/**/*.test.ts", "packages/core/test/**/*.test.ts", "packages/shell/test/**/*.test.ts", "packages/cli/test/**/*.test.ts", "packages/simulator/test/**/*.test.ts", "packages/cluster/test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // One temporary directory for the run, removed at its end.
    globalSetup: ["packages/test-support/src/temporaryDirectory.ts"],
    pool: "forks",
    // Memory tests measure the live heap after a collection, not garbage.
    poolOptions: { forks: { execArgv: ["--expose-gc"] } },
    reporters: ["default"],
    onConsoleLog: (log) => (process.env["EAS_TEST_LOGS"] === "1" || !effectLogLine.test(log) ? undefined : false)
  }
})
