/**
 * One attempt of a connection, run in the connection's fiber: reads the key afresh, starts the
 * transport in a scope of the attempt's own, waits for it to open (then counts it open, arms the
 * idle time-out and the answer writer), waits for it to end, and closes its scope.
 *
 * No wrapper stays on the fiber's stack while it waits (issue 15): the scope is closed and the
 * `EventStream.attempt` span ended by hand (measured: `Effect.scoped` and `Effect.withSpan`
 * around the wait cost about 5 and 6 KiB per open connection).
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import type * as Credentials from "../../Credentials.js"
import { startWriter } from "./answers.js"
import { Attempt, type Core } from "./core.js"
import type { Attempted } from "./loop.js"
import * as Spans from "./spans.js"
import { Fatal, Retry, type Transport } from "./transport.js"

/** What every attempt of a connection shares. */
export interface AttemptOptions {
  readonly core: Core
  readonly printableUrl: string
  readonly credentials: Credentials.Credentials["Type"]
  readonly agent: Credentials.AgentKeyRef | string | undefined
  readonly transport: Transport
  /** The loop's bookkeeping of an attempt that opened. */
  readonly opened: Effect.Effect<void>
}

/** The idle time-out of an open attempt, as an entry of the shared timer. */
const idleCheck = (attempt: Attempt) => (now: number): number | undefined => {
  if (attempt.ended) return undefined
  const { flow, settings } = attempt.core
  const idle = Duration.toMillis(settings.idleTimeout)
  // A paused socket reads nothing: that is not the service's silence.
  if (flow.paused) return now + idle
  const left = attempt.lastFrameAt + idle - now
  if (left > 0) return now + left
  attempt.io?.abort()
  attempt.end(Retry(`no frame for ${Duration.format(settings.idleTimeout)} (idle time-out)`))
  return undefined
}

/** The end of the replay hold: what is still held is decided with what has arrived. */
const replayCheck = (attempt: Attempt) => (): undefined => {
  if (!attempt.ended && attempt.core.current === attempt) attempt.core.settleReplay(attempt)
  return undefined
}

/**
 * Starts attempt number `number` and runs it until it has opened (or ended): the part written as
 * a generator, which is over before the long wait.
 */
const startAttempt = (options: AttemptOptions, number: number): Effect.Effect<Attempt | Attempted> =>
  Effect.gen(function*() {
    const { core } = options
    const span = yield* Spans.make("EventStream.attempt", {
      sessionId: core.sessionId,
      attempt: number,
      url: options.printableUrl
    })
    const key = yield* Effect.either(options.credentials.keyFor("connect", options.agent))
    if (Either.isLeft(key)) {
      Spans.end(span, core.clock, Exit.fail(key.left))
      return { outcome: Fatal(key.left, "failed"), alive: false, opened: false }
    }
    const scope = yield* Scope.make()
    const attempt = new Attempt(core, key.right, scope)
    core.current = attempt
    core.runtime = yield* Effect.runtime<never>()
    core.flow.reset()
    core.replay.reopened()
    yield* Scope.addFinalizerExit(scope, (exit) =>
      Effect.sync(() => {
        // Frames held as a possible replay are decided (delivered or dropped), not lost.
        if (!attempt.ended && core.current === attempt) core.settleReplay(attempt)
        attempt.ended = true
        for (const entry of attempt.entries) entry.cancel()
        Spans.end(span, core.clock, exit)
      })
    )
    yield* Scope.extend(options.transport(attempt), scope)
    yield* attempt.wait(false)
    // An attempt that opened is open for the loop even if it has ended already (opened,
    // delivered and dropped before this fiber woke up): its state, count and schedule.
    if (attempt.opened) yield* options.opened
    if (attempt.opened && !attempt.ended) {
      attempt.pauseIfFull()
      const idle = Duration.toMillis(core.settings.idleTimeout)
      attempt.entries.push(yield* core.deadlines.schedule(attempt.lastFrameAt + idle, idleCheck(attempt)))
      // A service known to replay: frames that may be a replay are held at most `replayHold`.
      if (core.settings.dropReplays && core.replay.active) {
        const hold = Duration.toMillis(core.settings.replayHold)
        attempt.entries.push(yield* core.deadlines.schedule(attempt.lastFrameAt + hold, replayCheck(attempt)))
      }
      yield* startWriter(core, attempt)
    }
    return attempt
  })

/** After the attempt ended: its scope closed, what it did. */
const endAttempt = (attempt: Attempt): Effect.Effect<Attempted> =>
  Effect.flatMap(attempt.result(), (outcome) =>
    Effect.zipRight(
      // Uninterruptible: a close by the caller while the scope's finalizers run (waiting for the
      // writer or the SSE reader to stop) must not skip the rest of them (the socket's close).
      Effect.uninterruptible(Scope.close(attempt.scope, Exit.succeed(outcome))),
      Effect.suspend(() => {
        const result: Attempted = { outcome, alive: attempt.gotFrame, opened: attempt.opened }
        const dropped = attempt.core.replay.takeDropped()
        return dropped > 0
          ? Effect.as(Effect.logDebug(`${dropped} event(s) sent again after the reconnect were dropped (a replay)`), result)
          : Effect.succeed(result)
      })
    ))

/**
 * Runs attempt number `number` to its end. The long wait (the attempt open) holds one
 * continuation on the fiber's stack, not a generator.
 */
export const runAttempt = (options: AttemptOptions, number: number): Effect.Effect<Attempted> =>
  Effect.flatMap(
    startAttempt(options, number),
    (started) =>
      started instanceof Attempt
        ? Effect.flatMap(started.wait(true), () => endAttempt(started))
        : Effect.succeed(started)
  )
