/**
 * The test kit's scripted event channel: each connection plays the script of the sessions
 * created from now on, step by step, records the answers the application gives, and closes with
 * the reason the real channel gives for each way of ending. The core decides (`KitScript.Connection`
 * over `Script.Play`: what to emit, fail, sleep or wait for next, which requests are pending, what
 * an answer is and what the kit's world is told, when the events end and why); this module binds
 * it to a stream pulled step by step, a latch and the clock. No sockets; `sleep` steps follow the
 * `Clock` (the `TestClock` in tests).
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { KitScript } from "effect-agent-session-shell"
import * as Answer from "../../../src/Answer.js"
import { type EventStreamError, RequestNotPending, type RespondError } from "../../../src/Errors.js"
import * as EventStream from "../../../src/EventStream.js"
import {
  closeLatchUnsafe,
  failureOption,
  fromPull,
  makeLatch,
  pullDone,
  pullError,
  type PullFailure,
  streamOnExit,
  unwrapScoped
} from "../../../src/internal/line.js"
import type * as SessionEvent from "../../../src/SessionEvent.js"
import { StateCell } from "../channel/state.js"
import type { World } from "./kitTypes.js"

/** The event the service sends for an answer: `external_resource_granted`, granted or not. */
const granted = (answer: Answer.Answer): SessionEvent.SessionEvent => ({
  _tag: "ExternalResourceGranted",
  granted: Answer.isGrant(answer),
  input: answer._tag === "Grant" ? answer.input : Option.none()
})

/** `EventStream.connect` over the world's script: one connection plays the script once. */
export const makeConnect = (world: World): EventStream.Service["connect"] => (sessionId, connectOptions = {}) =>
  Effect.gen(function*() {
    const scripted = new KitScript.Connection(world, sessionId, { endOnError: connectOptions.endOnError, echo: granted })
    // The state as the real channel holds it: a `SubscriptionRef` only once watched, and `opened`.
    const state = new StateCell()
    // Open while no step waits for an answer: a `Wait` closes it, the answer it waits for opens it.
    const woken = yield* makeLatch(false)
    const closed = yield* Deferred.make<void>()

    const respond = (
      request: SessionEvent.ExternalResourceRequested,
      answer: Answer.Answer
    ): Effect.Effect<void, RespondError> =>
      Effect.suspend(() => {
        const answered = scripted.respond(request, answer)
        if (answered._tag === "NotPending") return Effect.fail(new RequestNotPending(answered.error))
        return answered.wakes ? Effect.asVoid(woken.open) : Effect.void
      })

    /** The pull of the script's events: the next one after the waits before it, the end once it ran out. */
    const next: Effect.Effect<SessionEvent.SessionEvent, PullFailure<EventStreamError>> = Effect.suspend(() => {
      const step = scripted.next()
      switch (step._tag) {
        case "Emit":
          return Effect.succeed(step.event)
        case "Fail":
          return pullError(step.error)
        case "Sleep":
          return Effect.andThen(Effect.sleep(step.duration), next)
        case "Wait":
          closeLatchUnsafe(woken)
          return Effect.andThen(woken.await, next)
        case "Done":
          return pullDone()
      }
    })

    const events = fromPull(next).pipe(
      Stream.takeUntil((event) => scripted.play.delivered(event)),
      Stream.interruptWhen(Deferred.await(closed)),
      Stream.onStart(Effect.andThen(
        Effect.sync(() => scripted.opened()),
        state.set(EventStream.ConnectionState.Open({ reconnects: 0, downtime: Option.none() }))
      )),
      // The reason the real channel gives for each way of ending.
      streamOnExit((exit) =>
        Effect.suspend(() =>
          state.current._tag === "Closed" ? Effect.void : state.set(EventStream.ConnectionState.Closed({
            reason: scripted.play.closed(
              Exit.isSuccess(exit) ? undefined : { error: Option.getOrUndefined(failureOption(exit.cause)) }
            )
          }))
        ))
    )
    const close = Effect.andThen(
      Deferred.succeed(closed, undefined),
      state.set(EventStream.ConnectionState.Closed({ reason: "closed-by-caller" }))
    )
    // A scripted channel has nothing in flight: everything it sent is read.
    return {
      sessionId,
      events,
      get state() {
        return state.subscriptionRef
      },
      opened: state.opened(),
      respond,
      close,
      drain: close
    } satisfies EventStream.Connection
  })

/**
 * The kit's `EventStream` over its `connect` (scripted or replayed): `events` are the events of a
 * connection held for as long as the stream runs.
 */
export const eventStreamOf = (connect: EventStream.Service["connect"]): EventStream.Service => ({
  connect,
  events: (sessionId, connectOptions) =>
    unwrapScoped(Effect.map(connect(sessionId, connectOptions), (connection) => connection.events))
})
