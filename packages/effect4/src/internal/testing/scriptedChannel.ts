/**
 * The test kit's scripted event channel: each connection plays the script of the sessions
 * created from now on, step by step, records the answers the application gives, and closes with
 * the reason the real channel gives for each way of ending. No sockets; `sleep` steps follow the
 * `Clock` (the `TestClock` in tests).
 */
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as Answer from "../../Answer.js"
import { type EventStreamError, RequestNotPending, type RespondError } from "../../Errors.js"
import * as EventStream from "../../EventStream.js"
import * as SessionEvent from "../../SessionEvent.js"
import type { RecordedAnswer, Step } from "./kitTypes.js"
import { keyOf } from "../channel/shell.js"

/** The state of the test kit a connection reads and reports to. */
export interface ScriptState {
  /** The script of the sessions created from now on. */
  readonly script: Ref.Ref<ReadonlyArray<Step>>
  /** Every answer the application gave, in order. */
  readonly answers: Ref.Ref<ReadonlyArray<RecordedAnswer>>
  /** The connections opened, by session id. */
  readonly connections: Ref.Ref<ReadonlyArray<string>>
}

/** `EventStream.connect` over the script: one connection plays the script once. */
export const makeConnect = ({ answers, connections, script }: ScriptState): EventStream.Service["connect"] =>
  (sessionId, connectOptions = {}) =>
    Effect.gen(function*() {
      const steps = yield* Ref.get(script)
      const state = yield* SubscriptionRef.make<EventStream.ConnectionState>(EventStream.ConnectionState.Connecting())
      // The requests not answered yet, each with the answer it waits for.
      const pending = new Map<string, Deferred.Deferred<Answer.Answer>>()
      const answered = new Set<string>()
      let latest: Deferred.Deferred<Answer.Answer> | undefined
      // How the script ended, when it ended by itself.
      let ending: EventStream.CloseReason | undefined
      const closed = yield* Deferred.make<void>()

      const respond = (
        request: SessionEvent.ExternalResourceRequested,
        answer: Answer.Answer
      ): Effect.Effect<void, RespondError> =>
        Effect.suspend(() => {
          const key = keyOf(request)
          const waiting = pending.get(key)
          if (waiting === undefined) {
            return Effect.fail(
              new RequestNotPending({
                resourceType: SessionEvent.resourceTypeRaw(request.resource_type),
                actionSessionId: request.action_session_id,
                reason: answered.has(key) ? "already-answered" : "never-received"
              })
            )
          }
          pending.delete(key)
          answered.add(key)
          return Effect.andThen(
            Ref.update(answers, (all) => [...all, { sessionId, request, answer }]),
            Deferred.succeed(waiting, answer)
          )
        })

      const run = (step: Step): Stream.Stream<SessionEvent.SessionEvent, EventStreamError> => {
        switch (step._tag) {
          case "Emit":
            return Stream.suspend(() => {
              if (step.event._tag === "ExternalResourceRequested") {
                latest = Deferred.makeUnsafe()
                pending.set(keyOf(step.event), latest)
              }
              return Stream.succeed(step.event)
            })
          case "Fail":
            return Stream.fail(step.error)
          case "Sleep":
            return Stream.fromEffectDrain(Effect.sleep(step.duration))
          case "AwaitAnswer":
            return Stream.unwrap(Effect.suspend(() => {
              const waiting = latest
              if (waiting === undefined) return Effect.succeed(Stream.empty)
              return Effect.map(Deferred.await(waiting), (answer) =>
                step.echo
                  ? Stream.succeed<SessionEvent.SessionEvent>({
                    _tag: "ExternalResourceGranted",
                    granted: Answer.isGrant(answer),
                    input: answer._tag === "Grant" ? answer.input : Option.none()
                  })
                  : Stream.empty)
            }))
          case "End":
            return Stream.empty
        }
      }

      const endIndex = steps.findIndex((step) => step._tag === "End")
      const played = endIndex === -1 ? steps : steps.slice(0, endIndex)
      const events = Stream.fromIterable(played).pipe(
        Stream.flatMap(run),
        // The script ran out before `complete`: the service closed the channel (as with 1000).
        Stream.concat(Stream.fromEffectDrain(Effect.sync(() => {
          ending = "closed-by-service"
        }))),
        Stream.takeUntil((event) => {
          if (event._tag === "Complete") ending = "complete"
          else if (connectOptions.endOnError === true && event._tag === "AgentError") ending = "error-event"
          else return false
          return true
        }),
        Stream.interruptWhen(Deferred.await(closed)),
        Stream.onStart(Effect.andThen(
          Ref.update(connections, (all) => [...all, sessionId]),
          SubscriptionRef.set(state, EventStream.ConnectionState.Open({ reconnects: 0, downtime: Option.none() }))
        )),
        // The reason the real channel gives for each way of ending.
        Stream.onExit((exit) =>
          SubscriptionRef.update(state, (current) =>
            current._tag === "Closed" ? current : EventStream.ConnectionState.Closed({
              reason: Exit.isSuccess(exit) ? ending ?? "closed-by-caller" : reasonOf(exit.cause)
            })))
      )
      const close = Effect.andThen(
        Deferred.succeed(closed, undefined),
        SubscriptionRef.set(state, EventStream.ConnectionState.Closed({ reason: "closed-by-caller" }))
      )
      return { sessionId, events, state, respond, close } satisfies EventStream.Connection
    })

/** The close reason the real channel gives for a failure of the events. */
const reasonOf = (cause: Cause.Cause<EventStreamError>): EventStream.CloseReason => {
  const error = Option.getOrUndefined(Cause.findErrorOption(cause))
  switch (error?._tag) {
    case undefined:
      return "closed-by-caller"
    case "ConnectionLost":
    case "NeverConnected":
      return "connection-lost"
    case "HandshakeRejected":
      return "handshake-rejected"
    case "Superseded":
      return "superseded"
    default:
      return "failed"
  }
}
