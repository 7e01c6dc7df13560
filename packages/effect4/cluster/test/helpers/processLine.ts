/**
 * What the cross-process cluster tests (`shared/*.e2e.test.ts`, copied from
 * `packages/cluster/test/shared/`) and their client fixture (`shared/fixtures/client.ts`) take from
 * this edition: how its fixtures start (`fixtureCommand`), and the names the client process uses
 * where the two lines differ. The Effect 3 cluster's `test/helpers/processLine.ts` exports the same
 * names, bound to its line. Apart from `line.ts` because these are loaded outside Vitest (by the
 * fixtures' processes).
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as RunnerAddress from "effect/cluster/RunnerAddress"
import * as Effect from "effect/Effect"
import type * as Exit from "effect/Exit"
import type * as Fiber from "effect/Fiber"
import type * as Layer from "effect/Layer"
import * as RpcSerialization from "effect/rpc/RpcSerialization"
import * as Path from "node:path"

/** The repository's root. */
const root = Path.resolve(import.meta.dirname, "..", "..", "..", "..", "..")

/**
 * Where a fixture lies: the runner is each edition's own (`cluster/test/fixtures/runner.ts`), the
 * client and the attacher are written once (`cluster/test/shared/fixtures/`, the copies of the
 * Effect 3 cluster's).
 */
const sharedFixtures = new Set(["client.ts", "attacher.ts"])
const folderOf = (file: string): ReadonlyArray<string> => sharedFixtures.has(file) ? ["shared", "fixtures"] : ["fixtures"]

/**
 * A fixture of this edition as a command: the root's tsx under this process's Node (22), from the
 * repository's root, resolving the workspace's packages to their sources (the condition the tests
 * resolve them by).
 */
export const fixtureCommand = (file: string): { readonly command: string; readonly args: ReadonlyArray<string>; readonly cwd: string } => ({
  command: process.execPath,
  args: [
    "--conditions=effect-agent-session-source",
    "--import",
    "tsx",
    Path.join("packages", "effect4", "cluster", "test", ...folderOf(file), file)
  ],
  cwd: root
})

/** The SDK's Node layer, for the client fixture. */
export * as NodeAgentSessions from "../../../src/NodeAgentSessions.js"

/** `Effect.callback`: an effect completed by a callback (`resume`), with an optional finalizer on interruption. */
export const callback = Effect.callback

/** The fiber's exit when it is done, else `undefined` (it does not wait). */
export const pollNow = <A, E>(fiber: Fiber.Fiber<A, E>): Exit.Exit<A, E> | undefined => fiber.pollUnsafe()

/** Runs a fixture's program as the process's main effect (its failure reported, the exit code set). */
export const runMain = <A, E>(program: Effect.Effect<A, E>): void => NodeRuntime.runMain(program, { disableErrorReporting: false })

/** A runner's address. */
export const runnerAddress = (host: string, port: number): RunnerAddress.RunnerAddress => RunnerAddress.make(host, port)

/**
 * The runners' serialization, as this line's `NodeClusterSessions` sets it (newline-delimited JSON:
 * the schema-driven binary layout refuses the session entity's unions).
 */
export const runnerSerialization: Layer.Layer<RpcSerialization.RpcSerialization> = RpcSerialization.layerNdjson
