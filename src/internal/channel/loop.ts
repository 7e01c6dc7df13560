/**
 * The connection loop: attempts one after the other until the connection ends for good, with
 * the two schedules (`firstConnect` for a channel never open, `reconnect` for one that was),
 * the connection's state (`Connecting -> Open -> Reconnecting{attempt} -> Open ... `), and the
 * bout: the attempts since the connection last delivered a new event (issue 12 defect 10), so a
 * service that drops every connection without progress exhausts the schedule.
 *
 * It runs in the connection's one fiber; an attempt is an Effect that returns when the attempt
 * is over (the engine's `attempt`).
 */
import type * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import { ConnectionLost, type EventStreamError, NeverConnected } from "../../Errors.js"
import type * as EventStream from "../../EventStream.js"
import * as Metrics from "../../Metrics.js"
import type { Settings } from "./settings.js"
import { ConnectionState } from "./state.js"
import type { AttemptOutcome } from "./transport.js"

/** How an attempt went. */
export interface Attempted {
  readonly outcome: AttemptOutcome
  /** It delivered a new event (progress). */
  readonly alive: boolean
  /** It opened. */
  readonly opened: boolean
}

/** How the connection ended. */
export interface Final {
  readonly reason: EventStream.CloseReason
  readonly exit: Exit.Exit<void, EventStreamError>
}

/** What the loop needs of the engine. */
export interface LoopOptions {
  readonly sessionId: string
  readonly printableUrl: string
  readonly settings: Settings
  /** Sets the connection's state. */
  readonly setState: (state: EventStream.ConnectionState) => Effect.Effect<void>
  readonly clock: Clock.Clock
  /** One attempt, run to its end. */
  readonly attempt: (number: number) => Effect.Effect<Attempted>
  /** The connection ended normally: what was written got through. */
  readonly ended: () => void
  /** The attempt dropped: answers it may have lost are written again first; how many. */
  readonly dropped: () => number
}

/** The loop of one connection. */
export interface Loop {
  readonly run: Effect.Effect<Final>
  /** To run as an attempt opens: counts the reconnect, and the state says `Open`. */
  readonly opened: Effect.Effect<void>
}

const describeError = (error: EventStream.AttemptError): string => typeof error === "string" ? error : error.message

export const makeLoop = (options: LoopOptions): Loop => {
  const { clock, setState, settings } = options
  let reconnects = 0
  let everOpen = false
  let downSince: number | undefined
  // What the schedules' decisions report (issue 13 item 5): the state says `Reconnecting` only
  // once the schedule has decided that a retry will happen, so the attempts reported (state,
  // metrics, logs) are exactly the tries made.
  let retries = 0
  let lastError = ""

  const opened: Effect.Effect<void> = Effect.suspend(() => {
    const downtime = downSince === undefined
      ? Option.none<Duration.Duration>()
      : Option.some(Duration.millis(clock.unsafeCurrentTimeMillis() - downSince))
    const reopened = everOpen
    if (reopened) reconnects += 1
    everOpen = true
    downSince = undefined
    return Effect.zipRight(
      reopened ? Metrics.recordReconnect : Effect.void,
      setState(ConnectionState.Open({ reconnects, downtime }))
    ).pipe(
      Effect.zipRight(
        Effect.logDebug(reconnects === 0 ? "Event channel open" : "Event channel reopened").pipe(
          Effect.annotateLogs({ reconnects })
        )
      )
    )
  })

  const announce = (decision: { readonly _tag: string }) =>
    Effect.suspend(() => {
      if (decision._tag !== "Continue") return Effect.void
      retries += 1
      return Effect.zipRight(
        setState(ConnectionState.Reconnecting({ attempt: retries, lastError })),
        Metrics.recordReconnectAttempt
      )
    })

  const run: Effect.Effect<Final> = Effect.gen(function*() {
    // The drivers are made on the first failure: a connection that never drops never pays for them.
    let driver: Schedule.ScheduleDriver<unknown, EventStream.AttemptError, never> | undefined
    let firstDriver: Schedule.ScheduleDriver<unknown, EventStream.AttemptError, never> | undefined
    // Attempts in this bout: since the connection last delivered a new event.
    let attempts = 0
    while (true) {
      attempts += 1
      const { alive, opened, outcome } = yield* options.attempt(attempts)
      if (outcome._tag === "End") {
        options.ended()
        return { reason: outcome.reason, exit: Exit.void }
      }
      if (outcome._tag === "Fatal") return { reason: outcome.reason, exit: Exit.fail(outcome.error) }
      const resend = options.dropped()
      if (resend > 0) {
        yield* Effect.logInfo(`${resend} answer(s) written just before the drop will be sent again`)
      }
      if (opened) downSince = clock.unsafeCurrentTimeMillis()
      lastError = describeError(outcome.error)
      if (!everOpen) {
        // Never open (issue 13 item 3): retry quickly a few times, then say so; the state stays
        // `Connecting` (nothing was lost: nothing was ever open). An attempt that used a whole
        // connect time-out is not tried again: the bound is one connect time-out plus the short
        // retry, whatever the address does.
        const timedOut = typeof outcome.error !== "string" && outcome.error._tag === "ConnectTimeout"
        yield* Effect.logInfo(`Event channel not open yet: ${lastError}`).pipe(Effect.annotateLogs({ attempts }))
        firstDriver ??= yield* Schedule.driver(settings.firstConnect)
        const next = timedOut ? Either.left(undefined) : yield* Effect.either(firstDriver.next(outcome.error))
        if (Either.isLeft(next)) {
          return {
            reason: "connection-lost",
            exit: Exit.fail(new NeverConnected({ sessionId: options.sessionId, attempts, lastError }))
          }
        }
        continue
      }
      driver ??= yield* Schedule.driver(Schedule.onDecision(settings.reconnect, (_, decision) => announce(decision)))
      if (alive) {
        // It delivered new events: a fresh bout, a fresh schedule.
        attempts = 1
        retries = 0
        yield* driver.reset
      }
      yield* Effect.logInfo(`Event channel attempt ended: ${lastError}`).pipe(Effect.annotateLogs({ attempts }))
      const next = yield* Effect.either(driver.next(outcome.error))
      if (Either.isLeft(next)) {
        return { reason: "connection-lost", exit: Exit.fail(new ConnectionLost({ attempts, lastError })) }
      }
    }
  })

  return { run, opened }
}
