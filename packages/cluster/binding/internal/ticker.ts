/**
 * The runner's clock for the session entity's `Events` streams, and the keep-alive they send.
 */
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import { ClusterTally } from "effect-agent-session-shell"
import type * as EventLog from "../EventLog.js"

/** How often `Events` sends a keep-alive, and the element it sends (`seq` 0: never a logged event). */
export const keepAliveEvery = "2 seconds"
export const keepAlive: EventLog.LoggedEvent = { seq: 0, event: { _tag: "Heartbeat" } }

/** Callbacks called once, at the next call of `wake` (the shared glue's, as the Effect 4 cluster's). */
export const Wakers = ClusterTally.Wakers
export type Wakers = ClusterTally.Wakers

/**
 * One clock for every `Events` stream of a runner: every 2 s it wakes the streams waiting for
 * the next event, which then send a keep-alive (or, where the session does not run on this
 * runner, read the log). One timer for the runner, not one (or two) per stream.
 */
export interface Ticker {
  readonly wakers: Wakers
}

/** The runner's {@link Ticker}, ticking for as long as the scope lasts. */
export const makeTicker: Effect.Effect<Ticker, never, Scope.Scope> = Effect.gen(function*() {
  const wakers = new Wakers()
  yield* Effect.sync(() => wakers.wake()).pipe(
    Effect.repeat(Schedule.spaced(keepAliveEvery)),
    Effect.forkScoped
  )
  return { wakers }
})
