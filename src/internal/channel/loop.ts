/**
 * The connection loop: attempts one after the other until the core says the connection is over,
 * each retry after the schedule the core names (`firstConnect` for a channel never open,
 * `reconnect` for one that was), and the connection's state published as the core decides it
 * (`Connecting -> Open -> Reconnecting{attempt} -> Open ... `, `Connection.State`). The state says
 * `Reconnecting` only once the schedule has decided that a retry will happen, so the attempts
 * reported (state, metrics, logs) are exactly the tries made.
 *
 * It runs in the connection's one fiber; the counts (reconnects, the bout of attempts since the
 * last progress, the last error) and the state's values are the core's.
 */
import * as Cause from "effect/Cause"
import type * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import type { Connection } from "effect-agent-session-core"
import { ConnectionShell } from "effect-agent-session-core/shell"
import { BufferOverflow, ConnectionLost, type ConnectTimeout, type EventStreamError, NeverConnected } from "../../Errors.js"
import type * as EventStream from "../../EventStream.js"
import * as Metrics from "../../Metrics.js"
import type * as SessionEvent from "../../SessionEvent.js"
import type { Settings } from "../../../binding/internal/channel/settings.js"
import { fromCore } from "../../../binding/internal/channel/state.js"

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

/** The end of a connection the core decided. */
const finalOf = (next: Extract<Connection.Next<EventStreamError, ConnectTimeout>, { _tag: "Finish" }>): Final => {
  if (next.error !== undefined) return { reason: next.reason, exit: Exit.fail(next.error) }
  // The consumer fell behind on a socket that cannot pause: the core ended the attempt.
  if (next.overflow !== undefined) return { reason: next.reason, exit: Exit.fail(new BufferOverflow({ limit: next.overflow })) }
  if (next.defect === undefined) return { reason: next.reason, exit: Exit.void }
  // A transport's failed exit: its cause (an interruption alone is the caller's close).
  const cause = Cause.isCause(next.defect) ? next.defect : Cause.die(next.defect)
  if (Cause.isInterruptedOnly(cause)) return { reason: "closed-by-caller", exit: Exit.void }
  const defect = Cause.dieOption(cause)
  return { reason: "failed", exit: Exit.die(Option.isSome(defect) ? defect.value : Cause.squash(cause)) }
}

export const makeLoop = (options: LoopOptions): Loop => {
  const { connection, setState, settings } = options

  /** Publishes the state the core decided (nothing when it decided none). */
  const publish = (state: Connection.State | undefined): Effect.Effect<void> =>
    state === undefined ? Effect.void : setState(fromCore(state))

  const opened = (report: Connection.OpenReport): Effect.Effect<void> =>
    Effect.zipRight(
      report.reopened ? Metrics.recordReconnect : Effect.void,
      publish(connection.publishOpen())
    ).pipe(
      Effect.zipRight(
        Effect.logDebug(ConnectionShell.openedLog(report)).pipe(
          Effect.annotateLogs({ reconnects: report.reconnects })
        )
      )
    )

  const announce = (decision: { readonly _tag: string }) =>
    Effect.suspend(() => {
      if (decision._tag !== "Continue") return Effect.void
      return Effect.zipRight(publish(connection.publishReconnecting()), Metrics.recordReconnectAttempt)
    })

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
    // The drivers are made on the first failure: a connection that never drops never pays for them.
    let driver: Schedule.ScheduleDriver<unknown, EventStream.AttemptError, never> | undefined
    let firstDriver: Schedule.ScheduleDriver<unknown, EventStream.AttemptError, never> | undefined
    while (true) {
      const next = yield* options.attempt
      if (next._tag === "Finish") return finalOf(next)
      if (next.resent > 0) yield* Effect.logInfo(ConnectionShell.resentLog(next.resent))
      yield* Effect.logInfo(ConnectionShell.retryLog(next)).pipe(Effect.annotateLogs({ attempts: next.attempts }))
      if (next.schedule === "first-connect") {
        // Never open: retry quickly a few times, then say so; the state stays `Connecting`
        // (nothing was lost: nothing was ever open).
        firstDriver ??= yield* Schedule.driver(settings.firstConnect)
        const retry = next.giveUp ? Either.left(undefined) : yield* Effect.either(firstDriver.next(next.error))
        if (Either.isLeft(retry)) return lost()
        continue
      }
      driver ??= yield* Schedule.driver(Schedule.onDecision(settings.reconnect, (_, decision) => announce(decision)))
      // It delivered new events: a fresh bout, a fresh schedule.
      if (next.reset) yield* driver.reset
      const retry = yield* Effect.either(driver.next(next.error))
      if (Either.isLeft(retry)) return lost()
    }
  })

  return { run, opened }
}
