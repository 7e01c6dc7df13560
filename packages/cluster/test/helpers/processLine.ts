/**
 * What the cross-process cluster tests (`test/shared/*.e2e.test.ts`, written once for both cluster
 * editions) and their client fixture (`test/shared/fixtures/client.ts`) take from this edition:
 * how its fixtures start (`fixtureCommand`), and the names the client process uses where the two
 * lines differ. The Effect 4 cluster's `cluster/test/helpers/processLine.ts` exports the same names,
 * bound to its line. Apart from `line.ts` because these are loaded outside Vitest (by the fixtures'
 * processes and by the benchmarks), and `line.ts` imports `@effect/vitest`, which loads only under it.
 */
import { RunnerAddress } from "@effect/cluster/RunnerAddress"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as RpcSerialization from "@effect/rpc/RpcSerialization"
import * as Effect from "effect/Effect"
import type * as Exit from "effect/Exit"
import type * as Fiber from "effect/Fiber"
import type * as Layer from "effect/Layer"
import * as Path from "node:path"

/** The repository's root. */
const root = Path.join(import.meta.dirname, "..", "..", "..", "..")

/**
 * Where a fixture lies: the runner is each edition's own (`test/fixtures/runner.ts`), the client and
 * the attacher are written once (`test/shared/fixtures/`).
 */
const sharedFixtures = new Set(["client.ts", "attacher.ts"])
const folderOf = (file: string): ReadonlyArray<string> => sharedFixtures.has(file) ? ["shared", "fixtures"] : ["fixtures"]

/** A fixture of this edition as a command: tsx under this process's Node, from the repository's root. */
export const fixtureCommand = (file: string): { readonly command: string; readonly args: ReadonlyArray<string>; readonly cwd: string } => ({
  command: process.execPath,
  args: ["--import", "tsx", Path.join("packages", "cluster", "test", ...folderOf(file), file)],
  cwd: root
})

/** The SDK's Node layer, for the client fixture. */
export { NodeAgentSessions } from "effect-agent-session"

/** `Effect.async`: an effect completed by a callback (`resume`), with an optional finalizer on interruption. */
export const callback = Effect.async

/** The fiber's exit when it is done, else `undefined` (it does not wait). */
export const pollNow = <A, E>(fiber: Fiber.RuntimeFiber<A, E>): Exit.Exit<A, E> | undefined => fiber.unsafePoll() ?? undefined

/** Runs a fixture's program as the process's main effect (its failure reported, the exit code set). */
export const runMain = <A, E>(program: Effect.Effect<A, E>): void => NodeRuntime.runMain(program, { disableErrorReporting: false })

/** A runner's address. */
export const runnerAddress = (host: string, port: number): RunnerAddress => RunnerAddress.make({ host, port })

/** The runners' serialization, as this line's `NodeClusterSessions` sets it (MessagePack). */
export const runnerSerialization: Layer.Layer<RpcSerialization.RpcSerialization> = RpcSerialization.layerMsgPack
