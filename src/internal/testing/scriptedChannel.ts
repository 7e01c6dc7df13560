/**
 * The test kit's scripted event channel: each connection plays the script of the sessions
 * created from now on, step by step, records the answers the application gives, and closes with
 * the reason the real channel gives for each way of ending. The core decides (`KitScript.Connection`
 * over `Script.Play`: which requests are pending, what an answer is and what the kit's world is
 * told, when the events end and why); this module binds it to streams and deferreds. No sockets; `sleep` steps follow the `Clock` (the `TestClock` in tests).
 */
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import { KitScript } from "effect-agent-session-core/shell"
import * as Answer from "../../Answer.js"
import { type EventStreamError, RequestNotPending, type RespondError } from "../../Errors.js"
import * as EventStream from "../../EventStream.js"
import type * as SessionEvent from "../../SessionEvent.js"
import type { Step, World } from "./kitTypes.js"

/** `EventStream.connect` over the world's script: one connection plays the script once. */
export const makeConnect = (world: World): EventStream.Service["connect"] => (sessionId, connectOptions = {}) =>
  Effect.gen(function*() {
    const scripted = new KitScript.Connection(world, sessionId, connectOptions)
    const play = scripted.play
    const state = yield* SubscriptionRef.make<EventStream.ConnectionState>(EventStream.ConnectionState.Connecting())
    // The `AwaitAnswer` step waiting, woken by the answer it waits for.
    let waiting: Deferred.Deferred<Answer.Answer> | undefined
    const closed = yield* Deferred.make<void>()

    const respond = (
      request: SessionEvent.ExternalResourceRequested,
      answer: Answer.Answer
    ): Effect.Effect<void, RespondError> =>
      Effect.suspend(() => {
        const answered = scripted.respond(request, answer)
        if (answered._tag === "NotPending") return Effect.fail(new RequestNotPending(answered.error))
        return answered.wakes && waiting !== undefined ? Deferred.succeed(waiting, answer) : Effect.void
      })

    const echo = (answer: Answer.Answer): Stream.Stream<SessionEvent.SessionEvent> =>
      Stream.succeed({
        _tag: "ExternalResourceGranted",
        granted: Answer.isGrant(answer),
        input: answer._tag === "Grant" ? answer.input : Option.none()
      })

    const run = (step: Step): Stream.Stream<SessionEvent.SessionEvent, EventStreamError> => {
      switch (step._tag) {
        case "Emit":
          return Stream.suspend(() => {
            play.emit(step.event)
            return Stream.succeed(step.event)
          })
        case "Fail":
          return Stream.fail(step.error)
        case "Sleep":
          return Stream.drain(Stream.fromEffect(Effect.sleep(step.duration)))
        case "AwaitAnswer":
          return Stream.unwrap(Effect.suspend(() => {
            const next = play.awaitAnswer()
            switch (next._tag) {
              case "NoRequest":
                return Effect.succeed(Stream.empty)
              case "Answered":
                return Effect.succeed(step.echo ? echo(next.answer) : Stream.empty)
              case "Waiting": {
                const wake = waiting = Deferred.unsafeMake<Answer.Answer>(FiberId.none)
                return Effect.map(Deferred.await(wake), (answer) => step.echo ? echo(answer) : Stream.empty)
              }
            }
          }))
        case "End":
          return Stream.empty
      }
    }

    const events = Stream.fromIterable(play.steps).pipe(
      Stream.flatMap(run),
      Stream.concat(Stream.execute(Effect.sync(() => play.ranOut()))),
      Stream.takeUntil((event) => play.delivered(event)),
      Stream.interruptWhen(Deferred.await(closed)),
      Stream.onStart(Effect.zipRight(
        Effect.sync(() => scripted.opened()),
        SubscriptionRef.set(state, EventStream.ConnectionState.Open({ reconnects: 0, downtime: Option.none() }))
      )),
      // The reason the real channel gives for each way of ending.
      Stream.ensuringWith((exit) =>
        SubscriptionRef.update(state, (current) =>
          current._tag === "Closed" ? current : EventStream.ConnectionState.Closed({
            reason: play.closed(
              Exit.isSuccess(exit) ? undefined : { error: Option.getOrUndefined(Cause.failureOption(exit.cause)) }
            )
          })))
    )
    const close = Effect.zipRight(
      Deferred.succeed(closed, undefined),
      SubscriptionRef.set(state, EventStream.ConnectionState.Closed({ reason: "closed-by-caller" }))
    )
    // A scripted channel has nothing in flight: everything it sent is read.
    return { sessionId, events, state, respond, close, drain: close } satisfies EventStream.Connection
  })
