/**
 * The connection loop: attempts one after the other until the core says the connection is over,
 * each retry after the schedule the core names (`firstConnect` for a channel never open,
 * `reconnect` for one that was), and the connection's state published as the core decides it
 * (`Connecting -> Open -> Reconnecting{attempt} -> Open ... `, `Connection.State`). The state says
 * `Reconnecting` only once the schedule has decided that a retry will happen, so the attempts
 * reported (state, metrics, logs) are exactly the tries made.
 *
 * It runs in the connection's one fiber; the counts (reconnects, the bout of attempts since the
 * last progress, the last error) and the state's values are the core's. The schedules are stepped by hand
 * (`Schedule.toStep`), each made on the first failure: a connection that never drops never pays
 * for them.
 */
import * as Cause from "effect/Cause"
import type * as Clock from "effect/Clock"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Pull from "effect/Pull"
import * as Result from "effect/Result"
import * as Schedule from "effect/Schedule"
import type { Connection } from "effect-agent-session-core"
import { ConnectionShell } from "effect-agent-session-core/shell"
import { BufferOverflow, ConnectionLost, type ConnectTimeout, type EventStreamError, NeverConnected } from "../../Errors.js"
import type * as EventStream from "../../EventStream.js"
import * as Metrics from "../../Metrics.js"
import type * as SessionEvent from "../../SessionEvent.js"
import type { Settings } from "./settings.js"
import { fromCore } from "./state.js"

/** How the connection ended. */
export interface Final {
  readonly reason: EventStream.CloseReason
  readonly exit: Exit.Exit<void, EventStreamError>
}

/** What the loop needs of the engine. */
interface LoopOptions {
  readonly sessionId: string
  readonly settings: Settings
  readonly connection: Connection.Connection<SessionEvent.SessionEvent, EventStreamError, ConnectTimeout>
  /** Sets the connection's state. */
  readonly setState: (state: EventStream.ConnectionState) => Effect.Effect<void>
  readonly clock: Clock.Clock
  /** One attempt, run to its end: the core's decision. */
  readonly attempt: Effect.Effect<Connection.Next<EventStreamError, ConnectTimeout>>
}

/** The loop of one connection. */
export interface Loop {
  readonly run: Effect.Effect<Final>
  /** To run as an attempt opens: counts the reconnect, and the state says `Open`. */
  readonly opened: (report: Connection.OpenReport) => Effect.Effect<void>
}

/** A step of a schedule: the delay before the next try, or done. */
type Step = (now: number, input: EventStream.AttemptError) => Pull.Pull<[unknown, Duration.Duration], never, unknown>

/** The end of a connection the core decided. */
const finalOf = (next: Extract<Connection.Next<EventStreamError, ConnectTimeout>, { _tag: "Finish" }>): Final => {
  if (next.error !== undefined) return { reason: next.reason, exit: Exit.fail(next.error) }
  // The consumer fell behind on a socket that cannot pause: the core ended the attempt.
  if (next.overflow !== undefined) return { reason: next.reason, exit: Exit.fail(new BufferOverflow({ limit: next.overflow })) }
  if (next.defect === undefined) return { reason: next.reason, exit: Exit.void }
  // A transport's failed exit: its cause (an interruption alone is the caller's close).
  const cause = Cause.isCause(next.defect) ? next.defect : Cause.die(next.defect)
  if (Cause.hasInterruptsOnly(cause)) return { reason: "closed-by-caller", exit: Exit.void }
  return { reason: "failed", exit: Exit.die(Cause.squash(cause)) }
}

export const makeLoop = (options: LoopOptions): Loop => {
  const { clock, connection, setState, settings } = options

  /** Publishes the state the core decided (nothing when it decided none). */
  const publish = (state: Connection.State | undefined): Effect.Effect<void> =>
    state === undefined ? Effect.void : setState(fromCore(state))

  const opened = (report: Connection.OpenReport): Effect.Effect<void> =>
    Effect.andThen(
      report.reopened ? Metrics.recordReconnect : Effect.void,
      publish(connection.publishOpen())
    ).pipe(
      Effect.andThen(
        Effect.logDebug(ConnectionShell.openedLog(report)).pipe(
          Effect.annotateLogs({ reconnects: report.reconnects })
        )
      )
    )

  /** The delay the schedule asks before the next try, or `undefined` when it gives up. */
  const delayOf = (step: Step, error: EventStream.AttemptError): Effect.Effect<Duration.Duration | undefined> =>
    Effect.map(
      Effect.result(step(clock.currentTimeMillisUnsafe(), error)),
      (decided) => (Result.isSuccess(decided) ? decided.success[1] : undefined)
    )

  /** The schedule gave up: `NeverConnected` for a connection never open, else `ConnectionLost`. */
  const lost = (): Final => {
    const { attempts, lastError, neverOpen } = connection.gaveUp()
    return {
      reason: "connection-lost",
      exit: Exit.fail(
        neverOpen
          ? new NeverConnected({ sessionId: options.sessionId, attempts, lastError })
          : new ConnectionLost({ attempts, lastError })
      )
    }
  }

  const run: Effect.Effect<Final> = Effect.gen(function*() {
    let reconnect: Step | undefined
    let firstConnect: Step | undefined
    while (true) {
      const next = yield* options.attempt
      if (next._tag === "Finish") return finalOf(next)
      if (next.resent > 0) yield* Effect.logInfo(ConnectionShell.resentLog(next.resent))
      yield* Effect.logInfo(ConnectionShell.retryLog(next)).pipe(Effect.annotateLogs({ attempts: next.attempts }))
      if (next.schedule === "first-connect") {
        // Never open: retry quickly a few times, then say so; the state stays `Connecting`
        // (nothing was lost: nothing was ever open).
        firstConnect ??= yield* Schedule.toStep(settings.firstConnect)
        const delay = next.giveUp ? undefined : yield* delayOf(firstConnect, next.error)
        if (delay === undefined) return lost()
        yield* Effect.sleep(delay)
        continue
      }
      // It delivered new events: a fresh bout, a fresh schedule.
      if (reconnect === undefined || next.reset) reconnect = yield* Schedule.toStep(settings.reconnect)
      const delay = yield* delayOf(reconnect, next.error)
      if (delay === undefined) return lost()
      yield* publish(connection.publishReconnecting())
      yield* Metrics.recordReconnectAttempt
      yield* Effect.sleep(delay)
    }
  })

  return { run, opened }
}
