/**
 * The guard between a session's connection and its consumer (`RunningSession.events`): the
 * protocol core's `Session.Watched` decides (the action budget; the requests pending; the
 * outcome, on `complete` or when the events end); here its decisions are acted on (the chunk
 * cut, the connection closed, the outcome settled, the requests registered before they are
 * delivered), and the `AgentSessions.events` span is made.
 */
import * as Arr from "effect/Array"
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Pull from "effect/Pull"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as SubscriptionRef from "effect/SubscriptionRef"
import * as Tracer from "effect/Tracer"
import { Session as CoreSession } from "effect-agent-session-core"
import { Facade } from "effect-agent-session-core/shell"
import type { Outcome, PendingRequest, StartOptions } from "../AgentSessions.js"
import {
  ActionBudgetExceeded,
  type EventStreamError,
  type RunningSessionError,
  SessionEndedWithoutComplete
} from "../Errors.js"
import type * as EventStream from "../EventStream.js"
import type * as Session from "../Session.js"
import type * as SessionEvent from "../SessionEvent.js"
import * as PendingRequests from "./pendingRequests.js"

/** The default of `pendingWarningAfter`: 30 s. */
export const defaultPendingWarningAfter: Duration.Duration = Duration.millis(CoreSession.defaultWarnAfterMillis)

/** A session's guarded events and what goes with them. */
interface Guarded {
  readonly events: Stream.Stream<SessionEvent.SessionEvent, RunningSessionError>
  readonly outcome: Effect.Effect<Outcome, RunningSessionError>
  readonly pending: SubscriptionRef.SubscriptionRef<ReadonlyArray<PendingRequest>>
  /** A request answered: no longer pending. */
  readonly answered: (request: SessionEvent.ExternalResourceRequested) => Effect.Effect<void>
}

type Chunk = Arr.NonEmptyReadonlyArray<SessionEvent.SessionEvent>

/** The guard's state over this edition's events, outcome and errors. */
type State = Facade.Guard<
  SessionEvent.SessionEvent,
  SessionEvent.ExternalResourceRequested,
  SessionEvent.Complete,
  Outcome,
  RunningSessionError
>

export const guard = (
  connection: EventStream.Connection,
  sessionId: Session.SessionId,
  maxActions: number,
  options: StartOptions
): Effect.Effect<Guarded, never, Scope.Scope> =>
  Effect.gen(function*() {
    const exceeded = (actions: number) =>
      new ActionBudgetExceeded({ sessionId, maxActions, actions, mayStillBeRunning: state.watched.stopsOnOverrun })
    const state: State = new Facade.Guard({
      maxActions,
      keepEvents: options.keepEvents,
      onBudgetExceeded: options.onBudgetExceeded,
      warnAfterMillis: Duration.toMillis(
        options.pendingWarningAfter === undefined
          ? defaultPendingWarningAfter
          : Duration.fromInputUnsafe(options.pendingWarningAfter)
      )
    }, PendingRequests.classifier, {
      outcome: ({ actions, complete, cost, events, overrunAt }) => ({
        sessionId,
        response: complete.response,
        type: complete.type,
        totalCost: Option.fromUndefinedOr(cost),
        actions,
        maxActions,
        events,
        complete,
        budgetExceeded: overrunAt === undefined ? Option.none() : Option.some(exceeded(overrunAt))
      }),
      overrun: exceeded,
      withoutComplete: (lastError): RunningSessionError =>
        new SessionEndedWithoutComplete({ sessionId, lastError: Option.fromUndefinedOr(lastError), mayStillBeRunning: true })
    })
    const outcome = yield* Deferred.make<Outcome, RunningSessionError>()
    const { answered, arrived, cleared, pending } = yield* PendingRequests.make(sessionId, state.watched)

    // The outcome completes as soon as `complete` is seen (so awaiting it never depends on when
    // the consumer's scope closes); otherwise when the events end (`Facade.Guard.settle`: a
    // failure of their own, else SessionEndedWithoutComplete). Defects stay defects.
    const finish = (exit: Exit.Exit<unknown, unknown>) =>
      Deferred.completeWith(
        outcome,
        Exit.isFailure(exit) && Cause.hasDies(exit.cause)
          ? Effect.die(Cause.squash(exit.cause))
          : Effect.suspend((): Effect.Effect<Outcome, RunningSessionError> => {
            const settled = state.settle(Exit.isFailure(exit))
            return settled._tag === "Success" ? Effect.succeed(settled.value) : Effect.fail(settled.error)
          })
      )

    // The core reads each chunk in one synchronous pass, and the chunk is passed on as it came
    // (no copy, no Effect), unless it carries a request (registered in `pending` before the
    // chunk is delivered) or the overrun (the chunk is cut after it; the next pull closes the
    // connection and fails). The end of the connection's events is judged here: an end before
    // `complete` is SessionEndedWithoutComplete.
    const onChunk = (chunk: Chunk): Effect.Effect<Chunk> => {
      const { completed, delivered, requests } = state.watched.received(chunk)
      if (completed) Deferred.doneUnsafe(outcome, Exit.succeed(state.completed()!))
      const cut = delivered === chunk.length ? chunk : chunk.slice(0, delivered)
      const out = Arr.isReadonlyArrayNonEmpty(cut) ? cut : chunk
      return requests === 0 ? Effect.succeed(out) : Effect.as(arrived, out)
    }
    const onFailure = (cause: Cause.Cause<EventStreamError>): Effect.Effect<never, EventStreamError> => {
      state.failed(Option.getOrUndefined(Cause.findErrorOption(cause)))
      return Effect.failCause(cause)
    }
    const onDone = (): Effect.Effect<never, RunningSessionError | Cause.Done> => {
      const error = state.ended()
      return error === undefined ? Cause.done() : Effect.fail(error)
    }
    // In "fail" mode the connection is closed (the session may go on at the service).
    const afterOverrun = (actions: number): Effect.Effect<never, RunningSessionError> =>
      Effect.andThen(connection.close, Effect.fail(state.overran(actions)))

    // The span "AgentSessions.events", made once per stream (none under Effect's native tracer,
    // whose spans reach no exporter). It is the parent of what the connection starts when its
    // events are first pulled (its own span): provided to the first pull only, not to every
    // pull as `Stream.withSpan` would. No operator here forks a fiber or adds a queue: an idle
    // session costs the consumer's fibers and nothing more.
    const guarded: Stream.Stream<SessionEvent.SessionEvent, RunningSessionError> = Stream.transformPull(
      connection.events,
      (upstream, scope) =>
        Effect.gen(function*() {
          yield* Scope.addFinalizerExit(scope, (exit) => Effect.andThen(cleared, finish(exit)))
          const tracer = yield* Effect.tracer
          const span = tracer === Tracer.nativeTracer
            ? undefined
            : yield* Scope.provide(Effect.makeSpanScoped("AgentSessions.events", { attributes: { sessionId } }), scope)
          const next: Pull.Pull<Chunk, RunningSessionError> = Effect.suspend(() =>
            state.watched.stoppedAt !== undefined
              ? afterOverrun(state.watched.stoppedAt)
              : Pull.matchEffect(upstream, { onSuccess: onChunk, onFailure, onDone })
          )
          let first = span !== undefined
          return Effect.suspend(() => {
            if (!first || span === undefined) return next
            first = false
            return Effect.provideService(next, Tracer.ParentSpan, span)
          })
        })
    )

    const events: Stream.Stream<SessionEvent.SessionEvent, RunningSessionError> = Stream.suspend(() =>
      state.consume() ? guarded : Stream.die(new Error(Facade.consumedTwice))
    )

    const awaitOutcome: Effect.Effect<Outcome, RunningSessionError> = Effect.suspend(() =>
      state.consume()
        ? Effect.andThen(Effect.ignore(Stream.runDrain(guarded)), Deferred.await(outcome))
        : Deferred.await(outcome)
    )

    return { events, outcome: awaitOutcome, pending, answered }
  })
