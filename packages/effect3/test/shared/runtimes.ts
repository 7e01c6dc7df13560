/**
 * The runtime tier's runner, written once for both editions: each edition's
 * `runtimes/runtimes.test.ts` starts the simulators its own way and hands their addresses here;
 * this runs `scenarios.ts` (the copy beside this file, which reaches the edition's sources) on a
 * runtime as a child process, the acting server beside it, and asserts `runtimeVerdict` (the
 * conformance package's `runtimes.ts`: the runtimes, their commands, the scenarios and the verdict).
 */
import { assert } from "@effect/vitest"
import * as Path from "node:path"
import * as Url from "node:url"
import * as Effect from "effect/Effect"
import {
  pinnedVersion,
  type RuntimeFacts,
  type RuntimeName,
  runRuntimeScenarios,
  type RuntimeScenario,
  runtimeScenarios,
  type RuntimeSimulators,
  type RuntimeTarget,
  runtimeVerdict,
  startActingServer
} from "effect-agent-session-conformance"

const here = Path.dirname(Url.fileURLToPath(import.meta.url))

/** The scenario program the runtimes run: this edition's copy of `scenarios.ts`. */
export const scenariosScript = Path.join(here, "scenarios.ts")

/** The repository's script that installs and prints the pinned runtimes (the Effect 4 edition's). */
export const runtimesScript = Path.resolve(here, "../../../effect4/scripts/runtimes.mjs")

/** Runs the scenarios on a runtime in `cwd`: the facts of each, by name. */
const runScenarios = (command: ReadonlyArray<string>, scenarios: ReadonlyArray<RuntimeScenario>, cwd: string) =>
  Effect.flatMap(
    Effect.promise((signal) =>
      new Promise<Map<string, RuntimeFacts> | Error>((resolve) => {
        const stop = runRuntimeScenarios(command, scenarios, cwd, resolve)
        signal.addEventListener("abort", stop)
      })
    ),
    (result) => (result instanceof Error ? Effect.fail(result) : Effect.succeed(result))
  )

/**
 * Runs the tier on `runtime` with `command` (`runtimeCommand`'s answer: a string says why there is
 * nothing to run it with, and the runtime is skipped) against the simulators `sims` (addressed by
 * `target`), in `cwd`; what `runtimeVerdict` finds must be nothing.
 */
export const runTier = <Sim>(
  runtime: RuntimeName,
  command: ReadonlyArray<string> | string,
  sims: { readonly [K in keyof RuntimeSimulators]: Sim },
  target: (sim: Sim) => RuntimeTarget,
  cwd: string
) =>
  Effect.gen(function*() {
    if (typeof command === "string") {
      // No package pinned for this platform: nothing to run it with.
      console.warn(`skipped on ${runtime}: ${command}`)
      return
    }
    const acting = yield* Effect.acquireRelease(
      Effect.promise(() => startActingServer("reset")),
      ({ close }) => Effect.promise(close)
    )
    const targets: RuntimeSimulators = {
      documented: target(sims.documented),
      observed: target(sims.observed),
      fast: target(sims.fast),
      paid: target(sims.paid)
    }
    const all = yield* runScenarios(command, runtimeScenarios(targets, acting.acting.url), cwd)
    const problems = runtimeVerdict(runtime, all, acting.acting.created())
    assert.deepStrictEqual(problems, [], problems.join("\n"))
  })

/** The versions of Bun and Deno the tier runs are the pinned ones, where a package is pinned for this platform. */
export const assertPinned = () => {
  for (const [runtime, version] of [["bun", "1.4.5"], ["deno", "2.9.6"]] as const) {
    const pinned = pinnedVersion(runtimesScript, runtime)
    if (pinned !== undefined) assert.strictEqual(pinned, version)
  }
}
