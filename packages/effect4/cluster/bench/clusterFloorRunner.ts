/**
 * A runner of the take-over's floor on Effect 4: `effect/cluster` (4.1) alone, with the settings of
 * the Effect 4 `NodeClusterSessions` (`defaultShardingConfig`, `defaultDetection`, the peers'
 * watch, PostgreSQL storage, `NodeClusterSocket`, newline-delimited JSON). Its entities hold one
 * persisted request each, as a session holds its `Start` for its run, and do nothing else. The
 * floor's driver, written once for both lines, starts three of these and kills one:
 *
 *   npx tsx packages/cluster/bench/clusterFloor.ts --line effect4 [--entities 10000] [--work-ms 0] [--retain-kib 0]
 *
 * Environment: CLUSTER_DATABASE_URL, RUNNER_PORT, WORK_MS, RETAIN_KIB. Prints `ready`, then answers
 * `count <tag>`, `heap <tag>` and `since <tag> <ms>` on stdin, as the Effect 3 runner does.
 */
import * as ClusterSchema from "effect/cluster/ClusterSchema"
import * as Entity from "effect/cluster/Entity"
import * as RunnerAddress from "effect/cluster/RunnerAddress"
import * as Sharding from "effect/cluster/Sharding"
import * as ShardingConfig from "effect/cluster/ShardingConfig"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Rpc from "effect/rpc/Rpc"
import * as RpcSerialization from "effect/rpc/RpcSerialization"
import * as PgClient from "@effect/sql-pg/PgClient"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import { createInterface } from "node:readline"
import { defaultDetection, defaultShardingConfig } from "../src/NodeClusterSessions.js"
import { sqlMessageStorage, sqlRunnerStorage } from "../src/internal/line.js"
import { socketSharding } from "../binding/internal/socketSharding.js"

const Hold = Rpc.make("Hold", {
  payload: { id: Schema.String },
  primaryKey: (payload) => `hold/${payload.id}`
}).annotate(ClusterSchema.Persisted, true)

const Floor = Entity.make("Floor", [Hold])

const storage = (url: string) =>
  Layer.merge(sqlMessageStorage, sqlRunnerStorage).pipe(
    Layer.provide(PgClient.layer({ url: Redacted.make(url), maxConnections: 8 }))
  )

/**
 * A runner: the engine, the storage, the detection and the serialization (newline-delimited JSON)
 * of the Effect 4 `NodeClusterSessions.layerRunner`, and the `Floor` entity.
 */
const runner = Effect.gen(function*() {
  const port = Number(process.env["RUNNER_PORT"])
  const workMs = Number(process.env["WORK_MS"] ?? "0")
  const retainKib = Number(process.env["RETAIN_KIB"] ?? "0")
  /** What the entities keep (`--retain-kib`): small objects, as a session's state is. */
  const kept: Array<unknown> = []
  /** When each request arrived here (ms since the epoch). */
  const arrivals: Array<number> = []
  const busy = (ms: number) => {
    const until = performance.now() + ms
    while (performance.now() < until) {
      // CPU the session would spend
    }
  }
  const FloorLive = Floor.toLayer({
    Hold: () =>
      Effect.andThen(
        Effect.sync(() => {
          if (workMs > 0) busy(workMs)
          if (retainKib > 0) {
            // About 64 bytes an object (a small object with a closure and an array of two).
            const objects: Array<unknown> = []
            for (let i = 0; i < retainKib * 16; i++) objects.push({ i, f: () => i, a: [i, i] })
            kept.push(objects)
          }
          arrivals.push(Date.now())
        }),
        Effect.never
      )
  })
  const live = FloorLive.pipe(
    Layer.provideMerge(socketSharding(defaultDetection)),
    Layer.provide(storage(process.env["CLUSTER_DATABASE_URL"] ?? "")),
    Layer.provide(ShardingConfig.layerFromEnv({
      ...defaultShardingConfig,
      runnerAddress: Option.some(RunnerAddress.make("127.0.0.1", port))
    })),
    Layer.provide(RpcSerialization.layerNdjson)
  )
  const context = yield* Layer.build(live)
  const engine = Context.get(context, Sharding.Sharding)
  const makeClient = yield* Effect.provide(Floor.client, context)
  process.stdout.write("ready\n")
  // `count <tag>`: the entities active here; `since <tag> <ms>`: the arrivals at or after <ms>;
  // `heap <tag>`: the heap in use; `send <tag> <n>`: the entities' requests.
  createInterface({ input: process.stdin }).on("line", (line) => {
    const [word, tag, at] = line.trim().split(" ")
    if (word === "count") {
      void Effect.runPromise(engine.activeEntityCount).then((n) => process.stdout.write(`count ${tag} ${n}\n`))
    } else if (word === "heap") {
      // After a full collection (the runner runs with --expose-gc): the heap in use, in bytes.
      globalThis.gc?.()
      process.stdout.write(`heap ${tag} ${process.memoryUsage().heapUsed}\n`)
    } else if (word === "send") {
      // `send <tag> <n>`: the requests of entities floor-0 .. floor-<n-1>, sent from here (a member of the cluster).
      const ids = Array.from({ length: Number(at) }, (_, i) => `floor-${i}`)
      void Effect.runPromise(
        Effect.forEach(ids, (id) => makeClient(id).Hold({ id }, { discard: true }), { concurrency: 50, discard: true })
      ).then(() => process.stdout.write(`send ${tag} ${ids.length}\n`))
    } else if (word === "since") {
      const from = Number(at)
      process.stdout.write(`since ${tag} ${JSON.stringify(arrivals.filter((t) => t >= from))}\n`)
    }
  })
  return yield* Effect.never
})

NodeRuntime.runMain(Effect.scoped(runner))
