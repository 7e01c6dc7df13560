import { defineConfig } from "vitest/config"

export default defineConfig({
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
