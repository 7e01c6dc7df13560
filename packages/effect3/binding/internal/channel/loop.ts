/**
 * The connection loop: attempts one after the other until the core says the connection is over,
 * each retry after the schedule the core names (`firstConnect` for a channel never open,
 * `reconnect` for one that was), and the connection's state published as the core decides it
 * (`Connecting -> Open -> Reconnecting{attempt} -> Open ... `, `Connection.State`). The state says
 * `Reconnecting` only once the schedule has decided that a retry will happen, so the attempts
 * reported (state, metrics, logs) are exactly the tries made.
 *
 * No fiber runs the loop while an attempt is connecting or open. The loop is a few steps, each
 * run by a short-lived fiber with the connection's context: start an attempt (read its key, start
 * its transport), publish its open, end it (close its transport, the core's decision, the sleep
 * before a retry, the next attempt's start), end the connection. A step that must wait for the
 * attempt registers with the core's settle notification (`Attempt.whenSettled`) and its fiber
 * ends; the notification (from the transport's callback or the shared timer's check) forks the
 * next step. At most one step runs at a time, so `close` has at most one fiber to interrupt.
 *
 * The counts (reconnects, the bout of attempts since the last progress, the last error) and the
 * state's values are the core's. The schedules are stepped by hand (`scheduleStep`), each made
 * on the first failure: a connection that never drops never pays for them.
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type { Connection } from "effect-agent-session-core"
import { ConnectionShell } from "effect-agent-session-shell"
import type * as Credentials from "../../../src/Credentials.js"
import { BufferOverflow, ConnectionLost, type ConnectTimeout, type EventStreamError, NeverConnected } from "../../../src/Errors.js"
import type * as EventStream from "../../../src/EventStream.js"
import * as Metrics from "../../../src/Metrics.js"
import {
  catchCause,
  forkWith,
  isInterruptedOnly,
  type RunContext,
  type RunningFiber,
  scheduleStep,
  type ScheduleStep
} from "../../../src/internal/line.js"
import * as Attempt from "./attempt.js"
import type { AttemptHooks, Shell } from "./shell.js"
import { fromCore } from "./state.js"

/** How the connection ended. */
export interface Final {
  readonly reason: EventStream.CloseReason
  readonly exit: Exit.Exit<void, EventStreamError>
}

/** The connection closed by its caller. */
export const closedByCaller: Final = { reason: "closed-by-caller", exit: Exit.void }

/** What the loop needs of the engine. */
interface Host {
  /** Sets the connection's state. */
  readonly setState: (state: EventStream.ConnectionState) => Effect.Effect<void>
  /**
   * Ends the connection (uninterruptible; once): `exit` is what the loop's steps came to (a
   * defect's, a caller's interruption, or the loop's own end).
   */
  readonly end: (final: Final, exit: Exit.Exit<unknown, unknown>) => Effect.Effect<void>
}

/** A step of a schedule: the delay before the next try, or done. */
type Step = ScheduleStep<EventStream.AttemptError>

/** The end of a connection the core decided. */
const finalOf = (next: Extract<Connection.Next<EventStreamError, ConnectTimeout>, { _tag: "Finish" }>): Final => {
  if (next.error !== undefined) return { reason: next.reason, exit: Exit.fail(next.error) }
  // The consumer fell behind on a socket that cannot pause: the core ended the attempt.
  if (next.overflow !== undefined) return { reason: next.reason, exit: Exit.fail(new BufferOverflow({ limit: next.overflow })) }
  if (next.defect === undefined) return { reason: next.reason, exit: Exit.void }
  // A transport's failed exit: its cause (an interruption alone is the caller's close).
  const cause = Cause.isCause(next.defect) ? next.defect : Cause.die(next.defect)
  if (isInterruptedOnly(cause)) return closedByCaller
  return failed(cause)
}

/** A defect (a bug) ends the connection as `failed`. */
const failed = (cause: Cause.Cause<unknown>): Final => ({ reason: "failed", exit: Exit.die(Cause.squash(cause)) })

/** The loop of one connection: its steps, and the fiber running one, if any. */
export class Loop {
  /** The fiber running a step, while one runs. */
  running: RunningFiber<void> | undefined = undefined
  private reconnect: Step | undefined = undefined
  private firstConnect: Step | undefined = undefined
  /** The attempt whose settling is awaited, and whether until it ends (else until it opens or ends). */
  private awaited: AttemptHooks | undefined = undefined
  private untilEnded = false
  /** The core's settle notification: forks the step that follows. One function per connection. */
  private readonly settled = (): void => {
    const attempt = this.awaited
    this.awaited = undefined
    if (attempt !== undefined) this.spawn(this.afterSettled(attempt, this.untilEnded))
  }

  constructor(
    private readonly shell: Shell,
    private readonly options: Attempt.AttemptOptions,
    private readonly credentials: Credentials.Service,
    private readonly host: Host
  ) {}

  /**
   * The first step, run by the fiber the consumer's first pull forks, whose context (the
   * consumer's, with the connection's log annotation and span) every later step runs with
   * (`Shell.context`, gone once the connection is over).
   */
  first(context: RunContext): Effect.Effect<void> {
    this.shell.context = context
    return this.guarded(this.begin())
  }

  /** Runs a step in a fiber of its own with the connection's context, as the running one. */
  private spawn(step: Effect.Effect<void>): void {
    const context = this.shell.context
    if (context === undefined) return
    this.track(forkWith(context)(this.guarded(step)))
  }

  /** Keeps the fiber of a step as the running one until it ends. */
  track(fiber: RunningFiber<void>): void {
    this.running = fiber
    fiber.addObserver(() => {
      if (this.running === fiber) this.running = undefined
    })
  }

  /** A defect in a step (a bug) ends the connection; an interruption is the caller's close. */
  private guarded(step: Effect.Effect<void>): Effect.Effect<void> {
    return catchCause(step, (cause) =>
      isInterruptedOnly(cause)
        ? Effect.failCause(cause)
        : this.host.end(failed(cause), Exit.failCause(cause)))
  }

  /** Starts an attempt, then waits (without a fiber) for it to open or end. */
  private begin(): Effect.Effect<void> {
    return Effect.flatMap(
      Attempt.start(this.shell, this.options, this.credentials),
      (started) =>
        typeof started === "number"
          ? Effect.flatMap(Attempt.decided(this.shell, started), (next) => this.decide(next))
          : this.await(started, false)
    )
  }

  /**
   * Goes on with the step after the attempt has settled: at once when it has, else in a fiber the
   * core's notification forks (this one ends).
   */
  private await(attempt: AttemptHooks, untilEnded: boolean): Effect.Effect<void> {
    return Effect.suspend(() => {
      if (attempt.whenSettled(untilEnded, this.settled)) return this.afterSettled(attempt, untilEnded)
      this.awaited = attempt
      this.untilEnded = untilEnded
      return Effect.void
    })
  }

  /**
   * The attempt opened or ended: an attempt that opened is open for the loop even if it has
   * ended since (its state and count published), then awaited until it ends; one that ended is
   * ended.
   */
  private afterSettled(attempt: AttemptHooks, untilEnded: boolean): Effect.Effect<void> {
    if (untilEnded) return Effect.flatMap(Attempt.end(this.shell, attempt), (next) => this.decide(next))
    if (!attempt.opened) return this.await(attempt, true)
    return Effect.andThen(this.opened(this.shell.connection.lastOpen), this.await(attempt, true))
  }

  /**
   * Publishes an open: counts the reconnect, and the state says `Open`. A reopen's log says how
   * many reconnects; a first open's needs no annotation (a runner opens thousands at once).
   */
  private opened(report: Connection.OpenReport): Effect.Effect<void> {
    const log = Effect.logDebug(ConnectionShell.openedLog(report))
    return Effect.andThen(
      report.reopened ? Metrics.recordReconnect : Effect.void,
      this.publish(this.shell.connection.publishOpen())
    ).pipe(
      Effect.andThen(report.reconnects === 0 ? log : log.pipe(Effect.annotateLogs({ reconnects: report.reconnects })))
    )
  }

  /** Publishes the state the core decided (nothing when it decided none). */
  private publish(state: Connection.State | undefined): Effect.Effect<void> {
    return state === undefined ? Effect.void : this.host.setState(fromCore(state))
  }

  /** What follows an attempt's end: the connection's end, or the sleep before the next attempt. */
  private decide(next: Connection.Next<EventStreamError, ConnectTimeout>): Effect.Effect<void> {
    if (next._tag === "Finish") {
      const final = finalOf(next)
      return this.host.end(final, Exit.succeed(final))
    }
    const logged = Effect.andThen(
      next.resent > 0 ? Effect.logInfo(ConnectionShell.resentLog(next.resent)) : Effect.void,
      Effect.logInfo(ConnectionShell.retryLog(next)).pipe(Effect.annotateLogs({ attempts: next.attempts }))
    )
    return Effect.andThen(logged, Effect.suspend(() => this.retry(next)))
  }

  /** The retry the core decided, on the schedule it names. */
  private retry(next: Extract<Connection.Next<EventStreamError, ConnectTimeout>, { _tag: "Retry" }>): Effect.Effect<void> {
    const { settings } = this.shell
    if (next.schedule === "first-connect") {
      // Never open: retry quickly a few times, then say so; the state stays `Connecting`
      // (nothing was lost: nothing was ever open).
      return Effect.flatMap(
        this.firstConnect === undefined ? scheduleStep(settings.firstConnect) : Effect.succeed(this.firstConnect),
        (step) => {
          this.firstConnect = step
          return next.giveUp ? this.lost() : this.retryAfter(step, next.error, false)
        }
      )
    }
    // It delivered new events: a fresh bout, a fresh schedule.
    return Effect.flatMap(
      this.reconnect === undefined || next.reset ? scheduleStep(settings.reconnect) : Effect.succeed(this.reconnect),
      (step) => {
        this.reconnect = step
        return this.retryAfter(step, next.error, true)
      }
    )
  }

  /**
   * The next attempt after the delay the schedule asks, or the connection lost when it gives up. A
   * reconnect says `Reconnecting` and counts the try once the schedule has decided on it.
   */
  private retryAfter(step: Step, error: EventStream.AttemptError, reconnecting: boolean): Effect.Effect<void> {
    return Effect.flatMap(step(this.shell.now(), error), (delay) => {
      if (delay === undefined) return this.lost()
      const announced = reconnecting
        ? Effect.andThen(this.publish(this.shell.connection.publishReconnecting()), Metrics.recordReconnectAttempt)
        : Effect.void
      return Effect.andThen(announced, Effect.andThen(Effect.sleep(delay), Effect.suspend(() => this.begin())))
    })
  }

  /** The schedule gave up: `NeverConnected` for a connection never open, else `ConnectionLost`. */
  private lost(): Effect.Effect<void> {
    const { attempts, lastError, neverOpen } = this.shell.connection.gaveUp()
    const final: Final = {
      reason: "connection-lost",
      exit: Exit.fail(
        neverOpen
          ? new NeverConnected({ sessionId: this.shell.sessionId, attempts, lastError })
          : new ConnectionLost({ attempts, lastError })
      )
    }
    return this.host.end(final, Exit.succeed(final))
  }
}
