/**
 * The Effect 4 cluster's fixtures as commands, for the benchmarks that measure either line
 * (clusterTakeover.ts, attachCost.ts): each fixture started as the shared cross-process tests start
 * it (the `fixtureCommand` of `packages/effect4/cluster/test/helpers/processLine.ts`, under the
 * Node 22 of `packages/effect4/scripts/node22.mjs`), asked of that module once by that Node. The
 * copies the Effect 4 cluster compiles (`cluster/binding/`, `cluster/test/shared/`) are brought up
 * to date first. A step that fails ends this process (exit 1), with what failed on stderr.
 */
import { spawnSync } from "node:child_process"
import { join } from "node:path"

/** A fixture's command: the program, its arguments, and where it runs. */
export interface FixtureCommand {
  readonly command: string
  readonly args: ReadonlyArray<string>
  readonly cwd: string
}

/** The commands of the Effect 4 fixtures `files` (such as `runner.ts`), by file, run from the repository's `root`. */
export const effect4FixtureCommands = (root: string, files: ReadonlyArray<string>): Record<string, FixtureCommand> => {
  const run = (command: string, args: ReadonlyArray<string>): string => {
    const ran = spawnSync(command, [...args], { cwd: root, encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] })
    if (ran.status !== 0) {
      process.stderr.write(`${command} ${args.join(" ")}: exit ${ran.status}\n`)
      process.exit(1)
    }
    return ran.stdout.trim()
  }
  run(process.execPath, [join("packages", "effect4", "scripts", "binding.mjs")])
  const node22 = run(process.execPath, [join("packages", "effect4", "scripts", "node22.mjs"), "--print-node"]).split("\n").at(-1)!
  const printed = run(node22, [
    "--conditions=effect-agent-session-source",
    "--import",
    "tsx",
    "--input-type=module",
    "-e",
    `const m = await import(${JSON.stringify("./" + join("packages", "effect4", "cluster", "test", "helpers", "processLine.ts"))});
const files = ${JSON.stringify(files)};
process.stdout.write(JSON.stringify(Object.fromEntries(files.map((file) => [file, m.fixtureCommand(file)]))) + "\\n");
process.exit(0)`
  ])
  return JSON.parse(printed.split("\n").at(-1)!) as Record<string, FixtureCommand>
}
