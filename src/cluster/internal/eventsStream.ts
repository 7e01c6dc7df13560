/**
 * The session entity's `Events` stream: the log from a sequence number, then live, with the
 * runner's ticker for keep-alives.
 */
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import type * as EventLog from "../EventLog.js"
import { type Activation, page, type RunPayload } from "./activation.js"
import { keepAlive, type Ticker } from "./ticker.js"

/**
 * The log from `fromSeq`, then live (read from the log too): no gap, no duplicate. One pull at
 * a time, no fiber of its own: each pull returns what the log has after the last event
 * delivered, else waits for the next append (or the end of the run) or the runner's next
 * tick, whichever comes first; a tick with nothing new sends a keep-alive, so that a
 * subscriber whose runner died notices the silence within seconds and resumes on the next
 * owner. Where the session does not run on this runner, the log is written elsewhere (or not
 * yet): each tick reads it afresh.
 */
export const events = (
  activation: Activation,
  ticker: Ticker,
  ensureRunning: (payload: RunPayload, learn: boolean) => Effect.Effect<void, EventLog.EventLogError>
) =>
(fromSeq: number): Stream.Stream<EventLog.LoggedEvent, EventLog.EventLogError> => {
  const { load, log, readers, recent, sessionId, tally } = activation
  let next = fromSeq
  let finished = false
  /** From what this activation appended or loaded (the log's events, contiguous), else from the log. */
  const fromTally = (): Effect.Effect<ReadonlyArray<EventLog.LoggedEvent>, EventLog.EventLogError> => {
    if (next > tally.lastSeq) return Effect.succeed([])
    const first = recent[0]
    const last = recent[recent.length - 1]
    if (first !== undefined && last !== undefined && first.seq <= next && next <= last.seq) {
      return Effect.succeed(recent.slice(next - first.seq, next - first.seq + page))
    }
    return log.read(sessionId, next, page)
  }
  // Running here: this activation is the log's writer, its tally is current. Otherwise the
  // log is read afresh first (`load` folds what is new into the tally and `recent`).
  const readFrom = Effect.suspend(() =>
    activation.run !== undefined ? fromTally() : Effect.zipRight(load, Effect.suspend(fromTally))
  )
  /**
   * A subscriber reached this activation and the session's run has not ended but does not run
   * here: this runner owns the session's shard (an activation exists only where the shard is
   * held), so it takes the session over now, as the resumer would at its next look.
   */
  const takeOver = Effect.suspend(() => {
    if (activation.run !== undefined || activation.handingOver) return Effect.void
    return Option.match(activation.record, {
      onNone: () => Effect.void,
      onSome: (r) =>
        Option.isSome(r.ended)
          ? Effect.void
          : ensureRunning({ session: r.info, maxActions: r.maxActions, agent: r.agent }, true)
    })
  })
  /** Resumes at the next append or end (when `version` is still `seen`), or at the next tick. */
  const wait = (seen: number) =>
    Effect.async<"append" | "tick">((resume) => {
      if (activation.version !== seen) return resume(Effect.succeed("append"))
      const onAppend = () => {
        ticker.wakers.delete(onTick)
        resume(Effect.succeed("append"))
      }
      const onTick = () => {
        readers.delete(onAppend)
        resume(Effect.succeed("tick"))
      }
      readers.add(onAppend)
      ticker.wakers.add(onTick)
      return Effect.sync(() => {
        readers.delete(onAppend)
        ticker.wakers.delete(onTick)
      })
    })
  const ended = () => Option.isSome(Option.flatMap(activation.record, (r) => r.ended))
  const pull: Effect.Effect<Chunk.Chunk<EventLog.LoggedEvent>, Option.Option<EventLog.EventLogError>> = Effect.gen(
    function*() {
      if (finished) return yield* Effect.fail(Option.none())
      let woke: "first" | "append" | "tick" = "first"
      while (true) {
        // `ended` before the read: a run seen ended has appended everything, so an empty
        // read after that is the end.
        const seen = activation.version
        const wasEnded = ended()
        const events = yield* Effect.mapError(readFrom, Option.some)
        const last = events[events.length - 1]
        if (last !== undefined) {
          next = last.seq + 1
          return Chunk.unsafeFromArray(events)
        }
        if (wasEnded) {
          finished = true
          return yield* Effect.fail(Option.none())
        }
        if (woke === "tick") return Chunk.of(keepAlive)
        woke = yield* wait(seen)
      }
    }
  )
  return Stream.unwrap(Effect.as(Effect.zipRight(load, takeOver), Stream.repeatEffectChunkOption(pull)))
}
