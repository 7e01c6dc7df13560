import * as Path from "node:path"
import * as Url from "node:url"
import { defineConfig } from "vitest/config"

const src = Path.join(Path.dirname(Url.fileURLToPath(import.meta.url)), "src")

export default defineConfig({
  resolve: {
    // The command line (packages/cli) imports the library by its package name: in the tests it is
    // the library's sources, the same modules the tests import by relative path.
    alias: [
      { find: /^effect-agent-session$/, replacement: Path.join(src, "index.ts") },
      { find: /^effect-agent-session\/(testing|simulator)$/, replacement: Path.join(src, "$1/index.ts") },
      { find: /^effect-agent-session\/(.+)$/, replacement: Path.join(src, "$1.ts") }
    ]
  },
  test: {
    include: ["test/**/*.test.ts", "examples/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Memory tests measure the live heap after a collection, not garbage.
    poolOptions: { forks: { execArgv: ["--expose-gc"] } },
    reporters: ["default"]
  }
})
