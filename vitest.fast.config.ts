import { defineConfig } from "vitest/config"
import { fast, pattern } from "./test/suites.js"
import base from "./vitest.config.js"

/**
 * The fast inner loop (`npm run test:fast`): the suite's configuration, restricted to the unit and
 * layer tests that test/suites.ts lists (no socket, child process, database or package build).
 * `npm test` still runs every test.
 */
export default defineConfig({
  ...base,
  test: { ...base.test, include: fast.map(pattern) }
})
