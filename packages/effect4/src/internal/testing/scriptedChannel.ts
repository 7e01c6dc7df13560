/**
 * The test kit's scripted event channel: each connection plays the script of the sessions
 * created from now on, step by step, records the answers the application gives, and closes with
 * the reason the real channel gives for each way of ending. The core decides (`KitScript.Connection`
 * over `Script.Play`: what to emit, fail, sleep or wait for next, which requests are pending, what
 * an answer is and what the kit's world is told, when the events end and why); this module binds
 * it to a stream over Effect 4's pull (`Cause.Done` ends it), a latch and the clock. No sockets;
 * `sleep` steps follow the `Clock` (the `TestClock` in tests).
 */
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Latch from "effect/Latch"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import { KitScript } from "effect-agent-session-core/shell"
import * as Answer from "../../Answer.js"
import { type EventStreamError, RequestNotPending, type RespondError } from "../../Errors.js"
import * as EventStream from "../../EventStream.js"
import type * as SessionEvent from "../../SessionEvent.js"
import type { World } from "../../../binding/internal/testing/kitTypes.js"

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
    const state = yield* SubscriptionRef.make<EventStream.ConnectionState>(EventStream.ConnectionState.Connecting())
    // Open while no step waits for an answer: a `Wait` closes it, the answer it waits for opens it.
    const woken = yield* Latch.make(false)
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

    /** The pull of the script's events: the next one after the waits before it, `Cause.Done` once it ran out. */
    const pull: Effect.Effect<SessionEvent.SessionEvent, EventStreamError | Cause.Done> = Effect.suspend(() => {
      const next = scripted.next()
      switch (next._tag) {
        case "Emit":
          return Effect.succeed(next.event)
        case "Fail":
          return Effect.fail(next.error)
        case "Sleep":
          return Effect.andThen(Effect.sleep(next.duration), pull)
        case "Wait":
          woken.closeUnsafe()
          return Effect.andThen(woken.await, pull)
        case "Done":
          return Cause.done()
      }
    })

    const events = Stream.fromEffectRepeat(pull).pipe(
      Stream.takeUntil((event) => scripted.play.delivered(event)),
      Stream.interruptWhen(Deferred.await(closed)),
      Stream.onStart(Effect.andThen(
        Effect.sync(() => scripted.opened()),
        SubscriptionRef.set(state, EventStream.ConnectionState.Open({ reconnects: 0, downtime: Option.none() }))
      )),
      // The reason the real channel gives for each way of ending.
      Stream.onExit((exit) =>
        SubscriptionRef.update(state, (current) =>
          current._tag === "Closed" ? current : EventStream.ConnectionState.Closed({
            reason: scripted.play.closed(
              Exit.isSuccess(exit) ? undefined : { error: Option.getOrUndefined(Cause.findErrorOption(exit.cause)) }
            )
          })))
    )
    const close = Effect.andThen(
      Deferred.succeed(closed, undefined),
      SubscriptionRef.set(state, EventStream.ConnectionState.Closed({ reason: "closed-by-caller" }))
    )
    // A scripted channel has nothing in flight: everything it sent is read.
    return { sessionId, events, state, respond, close, drain: close } satisfies EventStream.Connection
  })

/**
 * The kit's `EventStream` over its `connect` (scripted or replayed): `events` are the events of a
 * connection held for as long as the stream runs.
 */
export const eventStreamOf = (connect: EventStream.Service["connect"]): EventStream.Service => ({
  connect,
  events: (sessionId, connectOptions) =>
    Stream.unwrap(Effect.map(connect(sessionId, connectOptions), (connection) => connection.events))
})
