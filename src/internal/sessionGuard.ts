/**
 * The guard between a session's connection and its consumer (`RunningSession.events`): the
 * protocol core's `Session.Watched` decides (the action budget; the requests pending; the
 * outcome, on `complete` or when the events end); here its decisions are acted on (the chunk
 * cut, the connection closed, the outcome settled, the requests registered before they are
 * delivered), and the `AgentSessions.events` span is made.
 */
import * as Cause from "effect/Cause"
import * as Channel from "effect/Channel"
import * as Chunk from "effect/Chunk"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberRef from "effect/FiberRef"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Tracer from "effect/Tracer"
import { Session as CoreSession } from "effect-agent-session-core"
import { Facade } from "effect-agent-session-core/shell"
import type { Outcome, StartOptions } from "../AgentSessions.js"
import {
  ActionBudgetExceeded,
  type EventStreamError,
  type RunningSessionError,
  SessionEndedWithoutComplete
} from "../Errors.js"
import type * as EventStream from "../EventStream.js"
import type * as Session from "../Session.js"
import type * as SessionEvent from "../SessionEvent.js"
import * as PendingRequests from "../../binding/internal/pendingRequests.js"

/** The default of `pendingWarningAfter`: 30 s. */
export const defaultPendingWarningAfter: Duration.Duration = Duration.millis(CoreSession.defaultWarnAfterMillis)

/** A session's guarded events and what goes with them. */
export interface Guarded {
  readonly events: Stream.Stream<SessionEvent.SessionEvent, RunningSessionError>
  /** The outcome. */
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
      warnAfterMillis: Duration.toMillis(Duration.decode(options.pendingWarningAfter ?? defaultPendingWarningAfter))
    }, PendingRequests.classifier, {
      outcome: ({ actions, complete, cost, events, overrunAt }) => ({
        sessionId,
        response: complete.response,
        type: complete.type,
        totalCost: Option.fromNullable(cost),
        actions,
        maxActions,
        events,
        complete,
        budgetExceeded: overrunAt === undefined ? Option.none() : Option.some(exceeded(overrunAt))
      }),
      overrun: exceeded,
      withoutComplete: (lastError): RunningSessionError =>
        new SessionEndedWithoutComplete({ sessionId, lastError: Option.fromNullable(lastError), mayStillBeRunning: true })
    })
    const outcome = yield* Deferred.make<Outcome, RunningSessionError>()
    const pendingRequests = yield* PendingRequests.make(sessionId, state.watched)

    // The outcome completes as soon as `complete` is seen (so awaiting it never depends on when
    // the consumer's scope closes); otherwise when the events end (`Facade.Guard.settle`: a
    // failure of their own, else SessionEndedWithoutComplete). Defects stay defects.
    const settle = (failed: boolean) =>
      Effect.suspend((): Effect.Effect<Outcome, RunningSessionError> => {
        const settled = state.settle(failed)
        return settled._tag === "Success" ? Effect.succeed(settled.value) : Effect.fail(settled.error)
      })
    const finish = (exit: Exit.Exit<unknown, unknown>) =>
      Deferred.complete(
        outcome,
        Exit.matchEffect(exit, {
          onFailure: (cause) =>
            Option.match(Cause.dieOption(cause), { onSome: Effect.die, onNone: () => settle(true) }),
          onSuccess: () => settle(false)
        })
      )

    // The guard is one channel stage between the connection's events and the consumer: the core
    // reads each chunk in one synchronous pass, and the chunk is passed on as it came (no copy,
    // no Effect), unless it carries a request (registered in `pending` before the chunk is
    // delivered) or the overrun (the chunk is cut after it, and nothing after it is pulled). The
    // events' own end is judged once they are closed (so the connection sees its own exit, not
    // the guard's): the overrun closes the connection and fails; an end before `complete` is
    // SessionEndedWithoutComplete.
    type Guard = Channel.Channel<
      Chunk.Chunk<SessionEvent.SessionEvent>,
      Chunk.Chunk<SessionEvent.SessionEvent>,
      EventStreamError,
      EventStreamError,
      void,
      unknown
    >
    const onChunk = (chunk: Chunk.Chunk<SessionEvent.SessionEvent>): Guard => {
      const { completed, delivered, overrun, requests } = state.watched.received(chunk)
      if (delivered === 0) return guard
      if (completed) Deferred.unsafeDone(outcome, Exit.succeed(state.completed()!))
      const written: Guard = overrun === undefined
        ? Channel.flatMap(Channel.write(chunk), again)
        : Channel.write(delivered === chunk.length ? chunk : Chunk.take(chunk, delivered))
      return requests === 0 ? written : Channel.zipRight(Channel.fromEffect(pendingRequests.arrived), written)
    }
    const onFailure = (cause: Cause.Cause<EventStreamError>): Guard => {
      state.failed(Option.getOrUndefined(Cause.failureOption(cause)))
      return Channel.failCause(cause)
    }
    const onDone = (): Guard => Channel.void
    const guard: Guard = Channel.readWithCause({ onInput: onChunk, onFailure, onDone })
    const again = (): Guard => guard
    const ending = Channel.suspend((): Channel.Channel<never, unknown, RunningSessionError, unknown, void, unknown> => {
      const error = state.ended()
      if (error === undefined) return Channel.void
      // In "fail" mode the connection is closed (the session may go on at the service).
      return state.watched.stoppedAt === undefined
        ? Channel.fail(error)
        : Channel.fromEffect(Effect.zipRight(connection.close, Effect.fail(error)))
    })

    // The span "AgentSessions.events", made once per stream. It is the parent of what the
    // connection starts when its events are first pulled (its own span), as with
    // `Stream.withSpan`. But `Stream.withSpan` provides the span to every effect the events run:
    // an `Effect.provide` per pulled chunk, most of what the façade would add per chunk
    // (src/internal/README.md, "The façade"). So the span is made the pulling fiber's parent span for the
    // first pull only (in `FiberRef.currentContext`, where `Effect.provide` itself puts it), and
    // that change alone is undone before the first chunk is handled (or when the stream closes
    // first). When the consumer wraps the events in a provide of its own (`Stream.withSpan`,
    // `Stream.provideService`), the first pull runs in that context and the connection's span
    // nests under the consumer's span instead.
    const underSpanOnFirstPull = (span: Tracer.Span): Channel.Channel<
      Chunk.Chunk<SessionEvent.SessionEvent>,
      unknown,
      EventStreamError,
      unknown,
      void,
      unknown
    > =>
      Channel.flatMap(
        Channel.fromEffect(
          FiberRef.modify(
            FiberRef.currentContext,
            (context) => [Context.getOption(context, Tracer.ParentSpan), Context.add(context, Tracer.ParentSpan, span)]
          )
        ),
        (parent) => {
          let restored = false
          // Only its own change: the parent span back, if the span is still the fiber's parent.
          const restore = Effect.suspend(() => {
            if (restored) return Effect.void
            restored = true
            return FiberRef.update(FiberRef.currentContext, (context) =>
              Option.getOrUndefined(Context.getOption(context, Tracer.ParentSpan)) !== span
                ? context
                : Option.match(parent, {
                  onNone: () => Context.omit(Tracer.ParentSpan)(context),
                  onSome: (previous) => Context.add(context, Tracer.ParentSpan, previous)
                }))
          })
          const first: Guard = Channel.readWithCause({
            onInput: (chunk: Chunk.Chunk<SessionEvent.SessionEvent>): Guard =>
              Channel.zipRight(Channel.fromEffect(restore), onChunk(chunk)),
            onFailure: (cause: Cause.Cause<EventStreamError>): Guard =>
              Channel.zipRight(Channel.fromEffect(restore), onFailure(cause)),
            onDone: (): Guard => Channel.fromEffect(restore)
          })
          return Channel.ensuring(Channel.pipeTo(Stream.toChannel(connection.events), first), restore)
        }
      )

    // The span lives as long as the stream and ends with its exit; the outcome is settled (and
    // `pending` emptied) after the connection's events are closed. No operator here forks a
    // fiber or adds a queue: an idle session costs the consumer's fibers and nothing more.
    const guarded: Stream.Stream<SessionEvent.SessionEvent, RunningSessionError> = Stream.fromChannel(
      Channel.acquireUseRelease(
        Effect.flatMap(Scope.make(), (scope) =>
          Effect.map(
            Scope.extend(Effect.makeSpanScoped("AgentSessions.events", { attributes: { sessionId } }), scope),
            (span) => ({ scope, span })
          )),
        ({ span }) =>
          Channel.zipRight(underSpanOnFirstPull(span), ending).pipe(
            Channel.ensuringWith((exit) => Effect.zipRight(pendingRequests.cleared, finish(exit)))
          ),
        ({ scope }, exit) => Scope.close(scope, exit)
      )
    )

    const events: Stream.Stream<SessionEvent.SessionEvent, RunningSessionError> = Stream.suspend(() =>
      state.consume() ? guarded : Stream.dieMessage(Facade.consumedTwice)
    )

    const awaitOutcome: Effect.Effect<Outcome, RunningSessionError> = Effect.suspend(() =>
      state.consume()
        ? Effect.zipRight(Effect.ignore(Stream.runDrain(guarded)), Deferred.await(outcome))
        : Deferred.await(outcome)
    )

    return { events, outcomeEffect: awaitOutcome, pendingRequests }
  })

