/**
 * The session entity's resumer: on every runner, it sends `Resume` to the unended sessions of the
 * shards the runner gained that do not run, or start, here already.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as EventLog from "../EventLog.js"
import type * as SessionEntity from "../SessionEntity.js"
import { catchAll, type DurationInput, ShardId, Sharding, ShardingConfig } from "../../src/internal/line.js"

/** How many sessions one query of the resumer reads. */
const resumePage = 1_000

/**
 * How long a gained shard is held before the resumer looks at its sessions: the engine
 * delivers again, on the shards it acquires, the `Start` (or `Attach`) its dead owner had not
 * finished (it reads unprocessed messages every `entityMessagePollInterval`, 250 ms in
 * `NodeClusterSessions.defaultShardingConfig`); a session that got it starts on its own and needs
 * no `Resume`. Only a session whose shard moved between live runners (its `Start` recorded done
 * when its activation was interrupted) or that was running from an earlier `Resume` needs one.
 */
export const resumeGrace: DurationInput = "1 second"

/**
 * The sessions whose run this runner holds or is starting, by id: kept by the entity's
 * activations, read by the resumer (a `Resume` to such a session would only cost a message, an
 * activation's work and a reply).
 */
export interface Local {
  /** Whether the session runs here, or a start of it is under way here. */
  readonly state: (sessionId: string) => "running" | "starting" | undefined
}

/** A registry of the runner's local activations (one per session id at most, the engine's rule). */
export interface Registry extends Local {
  readonly set: (sessionId: string, state: () => "running" | "starting" | undefined) => void
  readonly remove: (sessionId: string, state: () => "running" | "starting" | undefined) => void
  /** The sessions whose run is here (their log's writer claims are renewed: `writer.ts`). */
  readonly running: () => ReadonlyArray<string>
}

export const makeRegistry = (): Registry => {
  const byId = new Map<string, () => "running" | "starting" | undefined>()
  return {
    state: (sessionId) => byId.get(sessionId)?.(),
    running: () => [...byId.entries()].filter(([, state]) => state() !== undefined).map(([id]) => id),
    set: (sessionId, state) => void byId.set(sessionId, state),
    remove: (sessionId, state) => {
      if (byId.get(sessionId) === state) byId.delete(sessionId)
    }
  }
}

/**
 * The resumer, on every runner: every interval it looks at which shards this runner owns; the
 * shards it gained (all of them at the first look) are looked into once they have been held for
 * {@link resumeGrace}: it sends `Resume` to their sessions whose run has not ended and that
 * neither run nor start here, so that a session whose shard moved between live runners (the
 * engine then records its interrupted `Start` as done) runs again here. A session whose start is
 * under way is looked at again at the next look (a start that ends without a run is followed by
 * a `Resume`, as before). Its work grows with the shards taken over and their sessions, not with
 * the sessions of the cluster; a session that ended costs nothing. A look that fails is tried
 * again at the next one.
 */
export const resumer = (
  entity: typeof SessionEntity.SessionEntity,
  options: SessionEntity.Options,
  local: Local
) =>
  Effect.gen(function*() {
    const sharding = yield* Sharding.Sharding
    const config = yield* ShardingConfig.ShardingConfig
    const log = yield* EventLog.EventLog
    const makeClient = yield* entity.client
    const every = options.resumeInterval ?? "250 millis"
    const grace = Duration.toMillis(resumeGrace)
    const group = "default"
    let owned = new Set<number>()
    /** Shards gained and not yet looked into, with when they were first seen owned. */
    const gainedAt = new Map<number, number>()
    /** Sessions that were starting here at a look: looked at again at the next. */
    let starting = new Set<string>()
    let first = true

    const resume = (id: string) => Effect.ignore(makeClient(id).Resume(undefined, { discard: true }))

    /** Resumes each session of `ids` that neither runs nor starts here; keeps those starting for the next look. */
    const resumeUnheld = (ids: ReadonlyArray<string>, next: Set<string>) =>
      Effect.forEach(
        ids.filter((id) => {
          const state = local.state(id)
          if (state === "starting") next.add(id)
          return state === undefined
        }),
        resume,
        { concurrency: 50, discard: true }
      )

    const resumeAll = (shards: ReadonlyArray<number>, unsharded: boolean, next: Set<string>) =>
      Effect.gen(function*() {
        let after = ""
        while (true) {
          const ids = yield* log.unendedIn(shards, { unsharded, after, limit: resumePage })
          yield* resumeUnheld(ids, next)
          if (ids.length < resumePage) return
          after = ids[ids.length - 1]!
        }
      })

    const look = Effect.gen(function*() {
      const now = new Set<number>()
      for (let id = 1; id <= config.shardsPerGroup; id++) {
        if (sharding.hasShardId(ShardId.make(group, id))) now.add(id)
      }
      const at = Date.now()
      for (const id of now) if (!owned.has(id) && !gainedAt.has(id)) gainedAt.set(id, at)
      // A shard lost before it was looked into is no longer this runner's to resume.
      for (const id of gainedAt.keys()) if (!now.has(id)) gainedAt.delete(id)
      const due = [...gainedAt.entries()].filter(([, since]) => at - since >= grace).map(([id]) => id)
      const next = new Set<string>()
      // Those starting at the previous look: resumed now if their start ended without a run.
      yield* resumeUnheld([...starting], next)
      if (due.length > 0 || first) yield* resumeAll(due, first, next)
      for (const id of due) gainedAt.delete(id)
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
