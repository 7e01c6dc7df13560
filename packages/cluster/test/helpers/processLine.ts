/**
 * How the cross-process cluster tests (`test/shared/*.e2e.test.ts`, written once for both cluster
 * editions) start this edition's fixtures (`test/fixtures/runner.ts`, `client.ts`): the Effect 4
 * cluster's `cluster/test/helpers/processLine.ts` exports the same names, bound to its fixtures.
 * Apart from `line.ts` because the benchmarks load the shared fixtures' helpers outside Vitest
 * (`line.ts` imports `@effect/vitest`, which only loads under Vitest).
 */
import * as Path from "node:path"

/** The repository's root. */
const root = Path.join(import.meta.dirname, "..", "..", "..", "..")

/** A fixture of this edition as a command: tsx under this process's Node, from the repository's root. */
export const fixtureCommand = (file: string): { readonly command: string; readonly args: ReadonlyArray<string>; readonly cwd: string } => ({
  command: process.execPath,
  args: ["--import", "tsx", Path.join("packages", "cluster", "test", "fixtures", file)],
  cwd: root
})

/** Whether this edition has the fixtures the cross-process tests run (the runner and the client). */
export const crossProcess: boolean = true
