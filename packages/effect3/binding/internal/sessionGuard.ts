/**
 * The guard between a session's connection and its consumer (`RunningSession.events`): the
 * protocol core's `Session.Watched` decides (the action budget; the requests pending; the
 * outcome, on `complete` or when the events end); here its decisions are acted on (the chunk
 * cut, the connection closed, the outcome settled, the requests registered before they are
 * delivered), and the `AgentSessions.events` span is made.
 */
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Tracer from "effect/Tracer"
import { Session as CoreSession } from "effect-agent-session-core"
import { Facade } from "effect-agent-session-shell"
import type { Outcome, RunningSession, StartOptions } from "../../src/AgentSessions.js"
import {
  ActionBudgetExceeded,
  type EventStreamError,
  type RunningSessionError,
  SessionEndedWithoutComplete
} from "../../src/Errors.js"
import type * as EventStream from "../../src/EventStream.js"
import {
  builtInTracer,
  doneDeferredUnsafe,
  durationOf,
  failureOption,
  hasDefect,
  inScope,
  isNonEmptyArray,
  optionFromNullable,
  type Pull,
  pullDone,
  pullEach,
  pullError,
  pullFailCause,
  runPull,
  streamFromScopedPull
} from "../../src/internal/line.js"
import type * as Session from "../../src/Session.js"
import type * as SessionEvent from "../../src/SessionEvent.js"
import { type Chunk, type Consumer, EngineConnection } from "./channel/engine.js"
import type * as Deadlines from "./channel/deadlines.js"
import * as PendingRequests from "./pendingRequests.js"

/** The default of `pendingWarningAfter`: 30 s. */
export const defaultPendingWarningAfter: Duration.Duration = Duration.millis(CoreSession.defaultWarnAfterMillis)

/** A session's guarded events and what goes with them (the guard itself). */
export interface Guarded {
  readonly events: Stream.Stream<SessionEvent.SessionEvent, RunningSessionError>
  /** The events run batch by batch in the calling fiber (`RunningSession.forEachBatch`). */
  readonly forEachBatch: RunningSession["forEachBatch"]
  /** The outcome (made when first read). */
  readonly outcomeEffect: Effect.Effect<Outcome, RunningSessionError>
  /** The pending list (its `pending` made when first read); `answered` when a request is answered. */
  readonly pendingRequests: PendingRequests.PendingRequests
}


/** The guard's state over this edition's events, outcome and errors. */
type State = Facade.Guard<
  SessionEvent.SessionEvent,
  SessionEvent.ExternalResourceRequested,
  SessionEvent.Complete,
  Outcome,
  RunningSessionError
>

/**
 * One session's guard: the core's state, the outcome, the pending list, and the guarded events;
 * one object with its methods on the prototype (it builds the outcome and the errors the core asks
 * for, `Facade.Build`).
 */
class SessionGuard
  implements
    Facade.Build<SessionEvent.SessionEvent, SessionEvent.Complete, Outcome, RunningSessionError>,
    Consumer<RunningSessionError>,
    Guarded
{
  readonly state: State
  readonly pendingRequests: PendingRequests.PendingRequests
  readonly events: Stream.Stream<SessionEvent.SessionEvent, RunningSessionError>
  private outcomeMade: Effect.Effect<Outcome, RunningSessionError> | undefined = undefined

  constructor(
    readonly connection: EventStream.Connection,
    readonly sessionId: Session.SessionId,
    readonly maxActions: number,
    options: StartOptions,
    readonly done: Deferred.Deferred<Outcome, RunningSessionError>,
    warnings: Deadlines.Deadlines
  ) {
    this.state = new Facade.Guard({
      maxActions,
      keepEvents: options.keepEvents,
      onBudgetExceeded: options.onBudgetExceeded,
      warnAfterMillis: options.pendingWarningAfter === undefined
        ? CoreSession.defaultWarnAfterMillis
        : Duration.toMillis(durationOf(options.pendingWarningAfter))
    }, PendingRequests.classifier, this)
    this.pendingRequests = new PendingRequests.PendingRequests(sessionId, this.state.watched, warnings)
    // One layer over the connection's pull (the engine's own, when the connection is one); the
    // events are consumed once, which is checked as the stream opens.
    this.events = streamFromScopedPull((scope) => this.openOnce(scope))
  }

  /**
   * The events' pull opened in a scope of the run's own and run in the calling fiber: what
   * `events` gives, without the stream between. The scope closes with the run's exit, as the
   * stream's does.
   */
  forEachBatch<X, E, R>(
    f: (batch: ReadonlyArray<SessionEvent.SessionEvent>) => Effect.Effect<X, E, R>
  ): Effect.Effect<void, RunningSessionError | E, R> {
    // A scope of its own, closed when the run ends, not `Effect.scoped`: that would give the run a
    // copy of its fiber's services and wrappers that stay on its stack for the whole session.
    return Effect.flatMap(Scope.make(), (scope) =>
      Effect.onExit(
        Effect.flatMap(this.openOnce(scope), (pull) => runPull(pull, f)),
        (exit) => Scope.close(scope, exit)
      ))
  }

  /** The guarded pull (`open`), once: the events are consumed by `events` or `forEachBatch`, not both. */
  private openOnce(scope: Scope.Scope): Effect.Effect<Pull<Chunk, RunningSessionError>> {
    return this.state.consume() ? this.open(scope) : Effect.die(new Error(Facade.consumedTwice))
  }

  /** The outcome (made when first read): the events drained first when nobody consumed them. */
  get outcomeEffect(): Effect.Effect<Outcome, RunningSessionError> {
    return this.outcomeMade ??= Effect.suspend(() =>
      this.state.consume()
        ? Effect.andThen(Effect.ignore(Stream.runDrain(this.guarded())), Deferred.await(this.done))
        : Deferred.await(this.done)
    )
  }

  /** The guarded events, without the check (the outcome drains them when nobody consumed them). */
  private guarded(): Stream.Stream<SessionEvent.SessionEvent, RunningSessionError> {
    return streamFromScopedPull((scope) => this.open(scope))
  }

  // --- Facade.Build ---
  outcome(completed: CoreSession.Completed<SessionEvent.Complete, SessionEvent.SessionEvent>): Outcome {
    const { actions, complete, cost, events, overrunAt } = completed
    return {
      sessionId: this.sessionId,
      response: complete.response,
      type: complete.type,
      totalCost: optionFromNullable(cost),
      actions,
      maxActions: this.maxActions,
      events,
      complete,
      budgetExceeded: overrunAt === undefined ? Option.none() : Option.some(this.exceeded(overrunAt))
    }
  }
  overrun(actions: number): RunningSessionError {
    return this.exceeded(actions)
  }
  private exceeded(actions: number): ActionBudgetExceeded {
    return new ActionBudgetExceeded({
      sessionId: this.sessionId,
      maxActions: this.maxActions,
      actions,
      mayStillBeRunning: this.state.watched.stopsOnOverrun
    })
  }
  withoutComplete(lastError: string | undefined): RunningSessionError {
    return new SessionEndedWithoutComplete({
      sessionId: this.sessionId,
      lastError: optionFromNullable(lastError),
      mayStillBeRunning: true
    })
  }

  /**
   * The outcome completes as soon as `complete` is seen (so awaiting it never depends on when
   * the consumer's scope closes); otherwise when the events end (`Facade.Guard.settle`: a
   * failure of their own, else SessionEndedWithoutComplete). Defects stay defects.
   */
  private finish(exit: Exit.Exit<unknown, unknown>): Effect.Effect<boolean> {
    return Deferred.completeWith(
      this.done,
      Exit.isFailure(exit) && hasDefect(exit.cause)
        ? Effect.die(Cause.squash(exit.cause))
        : Effect.suspend((): Effect.Effect<Outcome, RunningSessionError> => {
          const settled = this.state.settle(Exit.isFailure(exit))
          return settled._tag === "Success" ? Effect.succeed(settled.value) : Effect.fail(settled.error)
        })
    )
  }

  // --- Consumer: what each pull of the connection's events does with what it finds ---
  /** The budget stopped the session: the connection is closed and the events fail. */
  stopped(): Pull<never, RunningSessionError> | undefined {
    const stoppedAt = this.state.watched.stoppedAt
    return stoppedAt === undefined ? undefined : this.afterOverrun(stoppedAt)
  }
  /**
   * The core reads each chunk in one synchronous pass, and the chunk is passed on as it came
   * (no copy, no Effect), unless it carries a request (registered in `pending` before the
   * chunk is delivered) or the overrun (the chunk is cut after it; the next pull closes the
   * connection and fails).
   */
  chunk(chunk: Chunk): Effect.Effect<Chunk> {
    const { completed, delivered, requests } = this.state.watched.received(chunk)
    if (completed) doneDeferredUnsafe(this.done, Exit.succeed(this.state.completed()!))
    const cut = delivered === chunk.length ? chunk : chunk.slice(0, delivered)
    const out = isNonEmptyArray(cut) ? cut : chunk
    return requests === 0 ? Effect.succeed(out) : Effect.as(this.pendingRequests.arrived, out)
  }
  failed(cause: Cause.Cause<EventStreamError>): Pull<never, EventStreamError> {
    this.state.failed(Option.getOrUndefined(failureOption(cause)))
    return pullFailCause(cause)
  }
  /** The end of the connection's events is judged here: an end before `complete` is SessionEndedWithoutComplete. */
  ended(): Pull<never, RunningSessionError> {
    const error = this.state.ended()
    return error === undefined ? pullDone() : pullError(error)
  }
  /** In "fail" mode the connection is closed (the session may go on at the service). */
  private afterOverrun(actions: number): Pull<never, RunningSessionError> {
    return Effect.andThen(this.connection.close, pullError(this.state.overran(actions)))
  }

  /**
   * The guarded pull, in the stream's scope: over this edition's engine, the engine's own pull with
   * the guard in it (`Consumer`: one pull, no layer of its own); over any other connection (the
   * test kit's), a layer over its events' pull. The span "AgentSessions.events", made once per
   * stream (none under the built-in tracer, whose spans reach no exporter), is the parent of
   * what the connection starts when its events are first pulled (its own span): provided to the
   * first pull only, not to every pull as `Stream.withSpan` would. No operator here forks a fiber
   * or adds a queue: an idle session costs the consumer's fibers and nothing more.
   */
  private open(scope: Scope.Scope): Effect.Effect<Pull<Chunk, RunningSessionError>> {
    const connection = this.connection
    const pull: Effect.Effect<Pull<Chunk, RunningSessionError>> = connection instanceof EngineConnection
      ? Effect.succeed(connection.pull(this))
      : Effect.map(
        pullEach(connection.events, scope, {
          onSuccess: (chunk: Chunk) => this.chunk(chunk),
          onFailure: (cause: Cause.Cause<EventStreamError>) => this.failed(cause),
          onDone: () => this.ended()
        }),
        (matched) => Effect.suspend(() => this.stopped() ?? matched)
      )
    return Effect.flatMap(pull, (next) =>
      Effect.andThen(
        Scope.addFinalizerExit(scope, (exit) => Effect.andThen(this.pendingRequests.cleared, this.finish(exit))),
        Effect.flatMap(Effect.tracer, (tracer) => {
          if (tracer === builtInTracer) return Effect.succeed(next)
          return Effect.map(
            inScope(Effect.makeSpanScoped("AgentSessions.events", { attributes: { sessionId: this.sessionId } }), scope),
            (span) => {
              let first = true
              return Effect.suspend(() => {
                if (!first) return next
                first = false
                return Effect.provideService(next, Tracer.ParentSpan, span)
              })
            }
          )
        })
      ))
  }
}

/** A session's guard; `warnings` is the timer its pending requests' warnings are due on (the façade's). */
export const guard = (
  connection: EventStream.Connection,
  sessionId: Session.SessionId,
  maxActions: number,
  options: StartOptions,
  warnings: Deadlines.Deadlines
): Effect.Effect<Guarded> =>
  Effect.map(Deferred.make<Outcome, RunningSessionError>(), (outcome) =>
    new SessionGuard(connection, sessionId, maxActions, options, outcome, warnings))
