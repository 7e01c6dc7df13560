/**
 * The runner's watch of its shards: it hands over the runs of the shards the runner lost, and runs
 * the unended sessions of the shards it gained that do not run, or start, here already.
 */
import * as Effect from "effect/Effect"
import * as EventLog from "../EventLog.js"
import type * as SessionEntity from "../SessionEntity.js"
import { catchAll, ShardId, Sharding, ShardingConfig } from "../../src/internal/line.js"

/** How many sessions one query of the resumer reads. */
const resumePage = 1_000

/**
 * The sessions of this runner, as the resumer sees them: which run or start here, and what to do
 * with those of a shard gained or lost (`entity.ts`'s `Runs`).
 */
export interface Local {
  /** Whether the session runs here, or a start of it is under way here. */
  readonly state: (sessionId: string) => "running" | "starting" | undefined
  /** The sessions whose run is here (their log's writer claims are renewed: `writer.ts`). */
  readonly running: () => ReadonlyArray<string>
  /** Runs the session here unless it runs or starts here already, or its run has ended. */
  readonly ensure: (sessionId: string) => Effect.Effect<void, EventLog.EventLogError>
  /** Hands over (in the background) the runs here whose shard `owns` says this runner no longer owns. */
  readonly handOverLost: (owns: (shard: number) => boolean) => Effect.Effect<void>
}

/**
 * The resumer, on every runner: every interval it looks at which shards this runner owns. The
 * runs of the shards it lost are handed over (their channels drained, their events persisted,
 * their logs released for the next owner). The unended sessions of the shards it gained (all of
 * them at the first look) that neither run nor start here are run here, from the log: a session
 * whose runner died, or whose shard moved between live runners, runs again on its new owner with
 * no message of the engine's and no entity (`Runs` in `entity.ts`). A session whose start is under
 * way is looked at again at the next look (a start that ends without a run is tried again). Its
 * work grows with the shards moved and their sessions, not with the sessions of the cluster; a
 * session that ended costs nothing. A look that fails is tried again at the next one.
 */
export const resumer = (options: SessionEntity.Options, local: Local) =>
  Effect.gen(function*() {
    const sharding = yield* Sharding.Sharding
    const config = yield* ShardingConfig.ShardingConfig
    const log = yield* EventLog.EventLog
    const every = options.resumeInterval ?? "250 millis"
    const group = "default"
    let owned = new Set<number>()
    /** Sessions that were starting here at a look: looked at again at the next. */
    let starting = new Set<string>()
    let first = true

    // Each in a fiber of its own, in the resumer's scope (stopped with it): a start waits for a
    // place in the runner's line of starts, and for the log's claim while another runner holds it.
    const run = (id: string) =>
      Effect.forkScoped(local.ensure(id).pipe(
        catchAll((error: EventLog.EventLogError) => Effect.logWarning(`Resuming session ${id}: ${error.message}`))
      ))

    /** Runs each session of `ids` that neither runs nor starts here; keeps those starting for the next look. */
    const runUnheld = (ids: ReadonlyArray<string>, next: Set<string>) =>
      Effect.forEach(
        ids.filter((id) => {
          const state = local.state(id)
          if (state === "starting") next.add(id)
          return state === undefined
        }),
        run,
        { discard: true }
      )

    const runAll = (shards: ReadonlyArray<number>, unsharded: boolean, next: Set<string>) =>
      Effect.gen(function*() {
        let after = ""
        while (true) {
          const ids = yield* log.unendedIn(shards, { unsharded, after, limit: resumePage })
          yield* runUnheld(ids, next)
          if (ids.length < resumePage) return
          after = ids[ids.length - 1]!
        }
      })

    const look = Effect.gen(function*() {
      const now = new Set<number>()
      for (let id = 1; id <= config.shardsPerGroup; id++) {
        if (sharding.hasShardId(ShardId.make(group, id))) now.add(id)
      }
      yield* local.handOverLost((shard) => now.has(shard))
      const gained = [...now].filter((id) => !owned.has(id))
      const next = new Set<string>()
      // Those starting at the previous look: run now if their start ended without a run.
      yield* runUnheld([...starting], next)
      if (gained.length > 0 || first) yield* runAll(gained, first, next)
      starting = next
      owned = now
      first = false
    })

    yield* look.pipe(
      catchAll((error) => Effect.logWarning(`Resumer: ${error.message}`)),
      Effect.delay(every),
      Effect.forever
    )
  })
