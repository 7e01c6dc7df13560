/**
 * The session entity's resumer: on every runner, it sends `Resume` to the unended sessions of the
 * shards the runner gained.
 */
import * as Sharding from "@effect/cluster/Sharding"
import * as ShardingConfig from "@effect/cluster/ShardingConfig"
import * as ShardId from "@effect/cluster/ShardId"
import * as Effect from "effect/Effect"
import * as EventLog from "../EventLog.js"
import type * as SessionEntity from "../SessionEntity.js"

/** How many sessions one query of the resumer reads. */
const resumePage = 1_000

/**
 * The resumer, on every runner: every interval it looks at which shards this runner owns; for
 * the shards it gained since the last look (all of them at the first look), it sends `Resume` to
 * their sessions whose run has not ended, so that a session whose shard moved between live
 * runners (the engine then records its interrupted `Start` as done) runs again here. Its work
 * grows with the shards taken over and their sessions, not with the sessions of the cluster; a
 * session that ended costs nothing. A look that fails is tried again at the next one.
 */
export const resumer = (
  entity: typeof SessionEntity.SessionEntity,
  options: SessionEntity.Options
) =>
  Effect.gen(function*() {
    const sharding = yield* Sharding.Sharding
    const config = yield* ShardingConfig.ShardingConfig
    const log = yield* EventLog.EventLog
    const makeClient = yield* entity.client
    const every = options.resumeInterval ?? "250 millis"
    const group = "default"
    let owned = new Set<number>()
    let first = true

    const resumeAll = (shards: ReadonlyArray<number>, unsharded: boolean) =>
      Effect.gen(function*() {
        let after = ""
        while (true) {
          const ids = yield* log.unendedIn(shards, { unsharded, after, limit: resumePage })
          yield* Effect.forEach(
            ids,
            (id) => Effect.ignore(makeClient(id).Resume(undefined, { discard: true })),
            { concurrency: 50, discard: true }
          )
          if (ids.length < resumePage) return
          after = ids[ids.length - 1]!
        }
      })

    const look = Effect.gen(function*() {
      const now = new Set<number>()
      for (let id = 1; id <= config.shardsPerGroup; id++) {
        if (sharding.hasShardId(ShardId.make(group, id))) now.add(id)
      }
      const gained = [...now].filter((id) => !owned.has(id))
      if (gained.length > 0 || first) yield* resumeAll(gained, first)
      owned = now
      first = false
    })

    yield* look.pipe(
      Effect.catchAll((error) => Effect.logWarning(`Resumer: ${error.message}`)),
      Effect.delay(every),
      Effect.forever
    )
  })
