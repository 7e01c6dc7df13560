/**
 * What the end-to-end suites of the event channel (each edition's `e2e/events.test.ts`, against
 * the simulator over real sockets) do alike: create a session, drain a connection answering every
 * request, and read what it received. Written once for both editions; `../helpers/line.ts` binds it
 * to the edition's Effect line. How each edition starts its simulator, and what it asks of it,
 * stays in its own suite.
 */
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as AgentApi from "../../src/AgentApi.js"
import * as Answer from "../../src/Answer.js"
import type { EventStreamError } from "../../src/Errors.js"
import type * as EventStream from "../../src/EventStream.js"
import type * as Session from "../../src/Session.js"
import type * as SessionEvent from "../../src/SessionEvent.js"
import { failureIn, type Outcome, outcomes, successOf } from "../helpers/line.js"

/** What a connection's stream gave, one by one: an event, or the failure it ended with. */
export type Received = Outcome<SessionEvent.SessionEvent, EventStreamError>

/** The events received, in order. */
export const eventsOf = (results: ReadonlyArray<Received>): ReadonlyArray<SessionEvent.SessionEvent> =>
  results.flatMap((result) => {
    const event = successOf(result)
    return event === undefined ? [] : [event]
  })

/** The failure the stream ended with, if it failed. */
export const lastFailure = (results: ReadonlyArray<Received>): EventStreamError | undefined => {
  const last = results.at(-1)
  return last === undefined ? undefined : failureIn(last)
}

/** Creates a session (a failure is a defect): its id. */
export const createSession = (input: Session.CreateSessionInput) =>
  Effect.gen(function*() {
    const api = yield* AgentApi.AgentApi
    const session = yield* api.createSession(input)
    return session.session_id
  }).pipe(Effect.orDie)

/** Consumes a connection's events, answering every request with `answer`, until the stream ends. */
export const drain = (connection: EventStream.Connection, answer: Answer.Answer = Answer.grant("jane@example.com")) =>
  outcomes(connection.events).pipe(
    Stream.tap((result) => {
      const event = successOf(result)
      return event?._tag === "ExternalResourceRequested" ? Effect.orDie(connection.respond(event, answer)) : Effect.void
    }),
    Stream.runCollect,
    Effect.map((all): ReadonlyArray<Received> => Array.from(all))
  )
