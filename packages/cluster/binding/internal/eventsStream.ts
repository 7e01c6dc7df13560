/**
 * The session entity's `Events` stream: the log from a sequence number, then live, with the
 * runner's ticker for keep-alives.
 *
 * Served as a mailbox, not a `Stream`: a subscriber held for the whole run costs one mailbox and
 * two callbacks on this activation, not a pipeline of running streams and fibers (measured in
 * bench/RESULTS.md, "What a held session costs on a runner": a subscriber cost about 60 KiB of
 * heap on the runner as a `Stream`). The RPC server takes from the mailbox and waits for the
 * subscriber's acknowledgement of each chunk before it takes again.
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberSet from "effect/FiberSet"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import { makeReplyMailbox, type ReplyMailbox } from "../../src/internal/line.js"
import type * as EventLog from "../EventLog.js"
import { type Activation, page, type RunPayload } from "./activation.js"
import { keepAlive, type Ticker } from "./ticker.js"

/**
 * How many events may wait in a subscriber's mailbox: past it, the events stay in the log (and in
 * `recent`) until the subscriber has taken what waits; a slow subscriber costs no more memory.
 */
const backlog = page

/**
 * The log from `fromSeq`, then live (read from the log too): no gap, no duplicate. Each append
 * (and the end of the run) wakes the subscriber, which offers what the log has after the last
 * event offered; each tick of the runner's ticker wakes it too, and a tick with nothing new
 * offers a keep-alive, so that a subscriber whose runner died notices the silence within seconds
 * and resumes on the next owner. Where the session runs here, what is new is in memory and is
 * offered at once, with no fiber; otherwise (the log is written elsewhere, or the subscriber is
 * far behind) a short-lived fiber reads the log, one at a time.
 */
export const events = (
  activation: Activation,
  ticker: Ticker,
  ensureRunning: (payload: RunPayload | undefined, learn: boolean) => Effect.Effect<unknown, EventLog.EventLogError>
) =>
(fromSeq: number): Effect.Effect<
  ReplyMailbox<EventLog.LoggedEvent, EventLog.EventLogError>,
  EventLog.EventLogError,
  Scope.Scope
> => {
  const { load, log, readers, recent, sessionId, tally } = activation
  const ended = () => Option.isSome(Option.flatMap(activation.record, (r) => r.ended))
  /**
   * A subscriber reached this activation and the session's run has not ended but does not run
   * here: this runner owns the session's shard (an activation exists only where the shard is
   * held), so it takes the session over now, as the resumer would at its next look.
   */
  const takeOver = Effect.suspend(() =>
    activation.run !== undefined || activation.handingOver || Option.isNone(activation.record) || ended()
      ? Effect.void
      : ensureRunning(undefined, true)
  )

  return Effect.gen(function*() {
    // Counted from before the log is read: what the read folds in is kept for this subscriber.
    yield* Effect.acquireRelease(Effect.sync(() => activation.subscribe()), () => Effect.sync(() => activation.unsubscribe()))
    yield* load
    yield* takeOver
    const { mailbox, writer } = yield* makeReplyMailbox<EventLog.LoggedEvent, EventLog.EventLogError>()
    const runFork = yield* FiberSet.makeRuntime<never, void, never>()
    let next = fromSeq
    let finished = false
    /** A read of the log in flight, and whether a wake came during it. */
    let reading = false
    let wokenWhileReading: "append" | "tick" | undefined = undefined

    /**
     * What this activation holds from `next` (contiguous: what it appended or loaded), or
     * `undefined` when the log must be read. Only current while the session runs here.
     */
    const inMemory = (): ReadonlyArray<EventLog.LoggedEvent> | undefined => {
      if (next > tally.lastSeq) return []
      const first = recent[0]
      const last = recent[recent.length - 1]
      if (first !== undefined && last !== undefined && first.seq <= next && next <= last.seq) {
        return recent.slice(next - first.seq, next - first.seq + page)
      }
      return undefined
    }
    // Where the session does not run here, the log is read afresh first (`load` folds what is
    // new into the tally and `recent`).
    const fromLog = Effect.andThen(
      Effect.suspend(() => activation.run !== undefined ? Effect.void : load),
      Effect.suspend(() => {
        const held = inMemory()
        return held === undefined ? log.read(sessionId, next, page) : Effect.succeed(held)
      })
    )

    /** No more wakes: the subscriber is gone, or its stream ended. */
    const forget = () => {
      finished = true
      readers.delete(onAppend)
      ticker.wakers.delete(onTick)
    }
    const stop = (exit: Exit.Exit<void, EventLog.EventLogError>) => {
      forget()
      writer.done(exit)
    }

    /** Offers what was read; `wasEnded`: the run had ended before the read (an empty read is the end). */
    const settle = (events: ReadonlyArray<EventLog.LoggedEvent>, wasEnded: boolean, woke: "append" | "tick") => {
      const last = events[events.length - 1]
      if (last !== undefined) {
        next = last.seq + 1
        writer.offerAll(events)
        // A full page: there may be more; read on (the backlog bounds how far).
        if (events.length === page) wake("append")
        return
      }
      if (wasEnded) return stop(Exit.void)
      if (woke === "tick" && waiting() === 0) writer.offer(keepAlive)
    }

    const waiting = () => writer.size()

    const wake = (woke: "append" | "tick"): void => {
      if (finished) return
      // Called again at the next append and tick (each call of the wakers forgets them).
      readers.add(onAppend)
      ticker.wakers.add(onTick)
      if (reading) {
        if (wokenWhileReading !== "append") wokenWhileReading = woke
        return
      }
      // The subscriber has not taken what waits: leave the rest in the log for now.
      if (waiting() >= backlog) return
      const wasEnded = ended()
      const held = activation.run !== undefined ? inMemory() : undefined
      if (held !== undefined) return settle(held, wasEnded, woke)
      reading = true
      runFork(
        Effect.matchEffect(fromLog, {
          onFailure: (error) => Effect.sync(() => stop(Exit.fail(error))),
          onSuccess: (events) =>
            Effect.sync(() => {
              reading = false
              settle(events, wasEnded, woke)
              const again = wokenWhileReading
              wokenWhileReading = undefined
              if (again !== undefined) wake(again)
            })
        })
      )
    }
    const onAppend = () => wake("append")
    const onTick = () => wake("tick")

    yield* Effect.addFinalizer(() => Effect.sync(forget))
    wake("append")
    return mailbox
  })
}
