/**
 * One writer per session's log, across runners: the activation that runs a session claims the
 * writing of its log (`EventLog.Service.claim`) before it reads the log and attaches, renews the
 * claim while the run lasts, appends only while it holds the claim, and releases it once the run
 * has ended (after a hand-over, once the events its channel had received are persisted).
 *
 * Why: the engine's shard locks alone do not keep two runners from writing one log. A runner
 * whose lock storage misses a deadline (`@effect/cluster` gives up every shard lock it holds when
 * a lock operation takes longer than the lock refresh interval: a stall of a few seconds on a
 * loaded machine) loses its shards before its activations have stopped; a next owner that took
 * the session over at once would read the log while the first still persists what its channel
 * received, and the two would write the same sequence numbers. With the claim, the next owner
 * waits until the first has released it (at most the hand-over's bounds).
 *
 * A claim holds for as long as its runner lives, not only for its lease: each runner shows
 * itself alive (`EventLog.Service.live`: on PostgreSQL a lock of its name, held on a connection
 * of its own), and a claim that lapsed (no renewal for {@link lease}) is taken only once its
 * runner is gone. A runner stalled longer than the lease (the stall that costs it its shard
 * locks) keeps its claims, and persists what its channels received when it wakes; a runner
 * killed loses them as soon as they lapse. A runner cut off from the database (the lock's
 * connection gone) can lose them too, once they lapse: from then on the log refuses its appends
 * (an `EventLogError` of operation `claim`), and its run stops without writing.
 */
import * as Effect from "effect/Effect"
import * as EventLog from "../EventLog.js"
import { claimRetryHints } from "./eventLogMemory.js"
import type { Local } from "./resumer.js"
import { catchAll } from "../../src/internal/line.js"

/**
 * How long a claim holds without renewal. Past it, a claim whose runner died lapses: a runner
 * killed is declared dead by the others in about 4 s (`NodeClusterSessions.defaultDetection`),
 * so its sessions' claims have mostly lapsed by the time their shards move.
 */
export const lease = 6_000

/** How often a runner renews the claims of the sessions that run on it. */
export const renewEvery = "1500 millis"

/** How often a runner that waits for another writer's claim tries again (unless the store says when). */
export const claimRetryMillis = 100

/**
 * The longest a runner waits before asking again for a claim the store said to ask for later:
 * the store's time is the lapse of the holder's lease, and a holder whose lock is free for a
 * moment while it lives (its lock's connection being opened again) may still release the claim
 * before then.
 */
export const claimHintMaxMillis = 1_000

/** This runner's name as a writer: the runner and a nonce of this process. */
export const writerName = (runner: string): string => `${runner}/${Math.random().toString(36).slice(2, 10)}`

let activations = 0

/**
 * The writer name of one activation: its runner's, `#`, a number of its own. Per activation, not
 * per runner: a runner that lost a shard and gained it back at once (its lock storage recovered)
 * starts a second activation of a session while the first still persists what it received.
 */
export const activationWriter = (runner: string): string => `${runner}#${++activations}`

/**
 * Claims the session's log for `writer`, waiting while another writer's claim holds; logs once
 * when it had to wait (a notice when a hand-over overlapped, a debug line when it waited only for
 * the lease of a runner gone to lapse).
 */
export const claimLog = (log: EventLog.Service, sessionId: string, writer: string) =>
  Effect.gen(function*() {
    if (yield* log.claim(sessionId, writer, lease)) return
    const since = Date.now()
    const hint = claimRetryHints.get(log)
    // Tried again every `claimRetryMillis`, or, when the store knows that the claim cannot be
    // taken before its holder's lease lapses (its runner's lock is free), once it has lapsed or
    // after `claimHintMaxMillis`, whichever comes first: a runner taking a killed runner's
    // sessions over asks about each once a second instead of ten times, and a claim its holder
    // releases meanwhile (alive, its lock only briefly free) is taken within about a second.
    let overlapped = false
    do {
      const wait = hint?.(sessionId, writer)
      if (wait === undefined) overlapped = true
      yield* Effect.sleep(wait === undefined ? claimRetryMillis : Math.min(wait, claimHintMaxMillis))
    } while (!(yield* log.claim(sessionId, writer, lease)))
    // A notice when a hand-over overlapped (the other runner lived and still wrote); waiting for
    // the leases of a runner gone is every session's lot in a take-over: a debug line.
    const waited = `Waited ${Date.now() - since} ms for another runner to stop writing session ${sessionId}`
    yield* overlapped ? Effect.logInfo(waited) : Effect.logDebug(waited)
  })

/**
 * Claims whose release failed (the store unreachable for longer than the release was retried),
 * released again at each renewal: a claim of a live runner is not taken by another runner, so one
 * left behind would keep its session from running anywhere for as long as this runner lives.
 */
export interface Unreleased {
  readonly add: (sessionId: string, writer: string) => void
  /** Releases each (once its release succeeds it is forgotten). */
  readonly release: (log: EventLog.Service) => Effect.Effect<void>
}

export const makeUnreleased = (): Unreleased => {
  const left = new Map<string, string>()
  return {
    add: (sessionId, writer) => {
      left.set(`${sessionId}\u0000${writer}`, sessionId)
    },
    release: (log) =>
      Effect.forEach([...left], ([key, sessionId]) =>
        log.release(sessionId, key.slice(sessionId.length + 1)).pipe(
          Effect.andThen(Effect.sync(() => left.delete(key))),
          Effect.ignore
        ), { discard: true })
  }
}

/**
 * The runner's renewal of its sessions' claims, every {@link renewEvery} (a failed renewal is
 * tried at the next), and the releases left to retry.
 */
export const renewer = (writer: string, registry: Pick<Local, "running">, unreleased: Unreleased) =>
  Effect.gen(function*() {
    const log = yield* EventLog.EventLog
    yield* Effect.suspend(() => {
      const running = registry.running()
      return Effect.andThen(unreleased.release(log), running.length === 0 ? Effect.void : log.renew(writer, running, lease))
    }).pipe(
      catchAll((error) => Effect.logWarning(`Renewing the log claims: ${error.message}`)),
      Effect.delay(renewEvery),
      Effect.forever
    )
  })
