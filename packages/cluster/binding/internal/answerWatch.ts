/**
 * The runner's watch over answers recorded behind its sessions' backs.
 *
 * A session's log has one writer of events at a time, but an answer can be recorded by any
 * runner that activates the session: a runner that still believes it holds the session's shard
 * (it was frozen past failure detection, and the shard moved here meanwhile) records the answer
 * of a `Respond` it receives after this runner read the log, and replies success. Nothing tells
 * this runner; the caller does not retry; the agent would wait for an answer the log holds.
 *
 * So every interval the watch reads, in one read of the log, the answers of the sessions held
 * here that have waited at least one interval for an answer they do not know, and each of them
 * hands the answers it did not know to its channel. A session waiting for nothing unknown is not
 * watched and costs no read; a runner with none reads nothing (its timer only looks at a set).
 * One timer a runner and one read per interval for up to `readMax` sessions, not one of each a
 * session: at a take-over of 10,000 sessions waiting for their answers, 10 reads an interval,
 * not 10,000.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import * as EventLog from "../EventLog.js"
import { type Activation, awaitingAnswer } from "./activation.js"
import { requestKey, toAnswer } from "./eventLogMemory.js"
import { catchAll, disconnect, type DurationInput, durationOf } from "../../src/internal/line.js"

/** How often, by default, a session waiting for an answer it does not know reads the log's answers. */
export const defaultInterval: DurationInput = "2 seconds"

/** How many sessions one read asks about. */
export const readMax = 1_000

/** The bound of one read: a store that does not answer in time is asked again at the next interval. */
export const readTimeout: DurationInput = "10 seconds"

/** A session the watch can read answers for. */
export interface Waiter {
  readonly sessionId: string
  /** Whether the session waits for an answer to a request it knows no answer to. */
  readonly waiting: () => boolean
  /** Given its session's recorded answers: keeps those it did not know and hands them to its channel. */
  readonly learn: (answers: ReadonlyArray<EventLog.RecordedAnswer>) => Effect.Effect<void>
}

/** The runner's watch (see the module's overview). */
export interface AnswerWatch {
  /** Watches a session while it waits for an answer it does not know (nothing when it does not, or is watched). */
  readonly watch: (waiter: Waiter) => Effect.Effect<void>
  /** Stops watching a session (its run ended here). */
  readonly unwatch: (waiter: Waiter) => Effect.Effect<void>
  /** How many sessions are watched (for tests). */
  readonly watched: () => number
}

/**
 * The runner's watch, reading the log every `every` for as long as the scope lasts.
 *
 * A session is read for once it has waited a whole interval (counted in the watch's ticks): a
 * request that its caller answers on this runner within the interval costs no read. So an
 * answer recorded elsewhere reaches the channel at most two intervals after the request was
 * logged here, or one interval after it was recorded, whichever is later.
 */
export const makeAnswerWatch = (
  every: DurationInput
): Effect.Effect<AnswerWatch, never, Scope.Scope | EventLog.EventLog> =>
  Effect.gen(function*() {
    const log = yield* EventLog.EventLog
    const interval = durationOf(every)
    /** Each watched session, with the tick at which it began to be watched. */
    const watched = new Map<Waiter, number>()
    let tick = 0

    const read = (batch: ReadonlyArray<Waiter>) =>
      disconnect(log.answersOf(batch.map((w) => w.sessionId))).pipe(
        Effect.timeout(readTimeout),
        Effect.flatMap((found) =>
          Effect.forEach(batch, (waiter) => {
            const answers = found.get(waiter.sessionId)
            return answers === undefined ? Effect.void : waiter.learn(answers)
          }, { discard: true })
        ),
        catchAll((error) =>
          Effect.logWarning(`Answers of ${batch.length} waiting sessions not read (read again in ${Duration.format(interval)}): ${error.message}`)
        )
      )

    const check = Effect.suspend(() => {
      tick += 1
      const due: Array<Waiter> = []
      for (const [waiter, since] of watched) {
        if (!waiter.waiting()) watched.delete(waiter)
        // Watched since before the previous tick: it has waited at least one interval.
        else if (tick - since >= 2) due.push(waiter)
      }
      if (due.length === 0) return Effect.void
      const batches: Array<ReadonlyArray<Waiter>> = []
      for (let i = 0; i < due.length; i += readMax) batches.push(due.slice(i, i + readMax))
      return Effect.forEach(batches, read, { discard: true })
    })

    yield* check.pipe(Effect.repeat(Schedule.spaced(interval)), Effect.forkScoped)

    return {
      watch: (waiter) =>
        Effect.sync(() => {
          if (!watched.has(waiter) && waiter.waiting()) watched.set(waiter, tick)
        }),
      unwatch: (waiter) => Effect.sync(() => void watched.delete(waiter)),
      watched: () => watched.size
    }
  })

/**
 * The {@link Waiter} of an activation: it waits while a request it holds open has no answer it
 * knows of. An answer it learns is kept in the tally and handed to the channel in one step with
 * the check that it was not known (no other fiber runs between them), as `Respond` does: an
 * answer reaches the channel once, whichever of the two learns it first.
 */
export const waiterOf = (activation: Activation): Waiter => new ActivationWaiter(activation)

/** One object with its methods on the prototype: a runner holds one for every session it holds. */
class ActivationWaiter implements Waiter {
  constructor(private readonly activation: Activation) {}

  get sessionId(): string {
    return this.activation.sessionId
  }

  waiting(): boolean {
    return awaitingAnswer(this.activation.tally)
  }

  learn(answers: ReadonlyArray<EventLog.RecordedAnswer>): Effect.Effect<void> {
    const activation = this.activation
    return Effect.forEach(answers, ({ answer, request }) =>
      Effect.suspend(() => {
        const { tally } = activation
        const key = requestKey(request)
        if (tally.answered.has(key)) return Effect.void
        const open = tally.session.pending.find((w) => requestKey(w.request) === key)
        if (open === undefined) return Effect.void
        tally.answered.set(key, answer)
        const running = activation.running
        const note = Effect.logInfo(
          `Session ${activation.sessionId}: an answer recorded by another runner, read from the log, handed to the channel`
        ).pipe(Effect.annotateLogs({ sessionId: activation.sessionId }))
        // Without a channel here the answer is in the tally: the next run here sends it on its start.
        return running === undefined
          ? Effect.void
          : Effect.andThen(note, Effect.ignore(running.respond(open.request, toAnswer(answer))))
      }), { discard: true })
  }
}
