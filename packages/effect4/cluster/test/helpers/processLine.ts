/**
 * How the cross-process cluster tests (`shared/*.e2e.test.ts`, copied from
 * `packages/cluster/test/shared/`) start this edition's fixtures (`cluster/test/fixtures/runner.ts`,
 * `client.ts`): the Effect 3 cluster's `test/helpers/processLine.ts` exports the same names, bound
 * to its fixtures. Apart from `line.ts` because the fixtures' helpers may be loaded outside Vitest.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"

/** This package's directory (`packages/effect4`). */
const packageDir = Path.resolve(import.meta.dirname, "..", "..", "..")

/** The repository's root. */
const root = Path.resolve(packageDir, "..", "..")

/**
 * A fixture of this edition as a command: the root's tsx under this process's Node (22), from the
 * repository's root, resolving the workspace's packages to their sources (the condition the tests
 * resolve them by).
 */
export const fixtureCommand = (file: string): { readonly command: string; readonly args: ReadonlyArray<string>; readonly cwd: string } => ({
  command: process.execPath,
  args: ["--conditions=effect-agent-session-source", "--import", "tsx", Path.join("packages", "effect4", "cluster", "test", "fixtures", file)],
  cwd: root
})

/**
 * Whether this edition has the fixtures the cross-process tests run (its runner and its client,
 * in `cluster/test/fixtures/`): until it has, those tests are skipped here.
 */
export const crossProcess: boolean = ["runner.ts", "client.ts"].every((file) =>
  Fs.existsSync(Path.join(packageDir, "cluster", "test", "fixtures", file))
)
