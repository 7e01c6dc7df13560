/**
 * What the end-to-end suites (each edition's `e2e/` tests and `e2e.*.test.ts` here, against the
 * simulator over real sockets) do alike: create a session, drain a connection answering every
 * request, and read what it received; an `AgentApi` over undici pointed at a simulator, and the
 * attempts it sent as its own metrics count them. Written once for both editions;
 * `../helpers/line.ts` binds it to the edition's Effect line (and starts its simulator, `simLayer`).
 * What each edition asks of its own simulator stays in its own suite.
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"
import * as AgentApi from "../../src/AgentApi.js"
import * as Answer from "../../src/Answer.js"
import * as Credentials from "../../src/Credentials.js"
import * as Dialect from "../../src/Dialect.js"
import type { EventStreamError } from "../../src/Errors.js"
import type * as EventStream from "../../src/EventStream.js"
import * as Metrics from "../../src/Metrics.js"
import type * as Session from "../../src/Session.js"
import type * as SessionEvent from "../../src/SessionEvent.js"
import { failureIn, type Outcome, outcomeOf, outcomes, type SimInfo, successOf } from "../helpers/line.js"

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

let names = 0

/** A name no other test of this process uses: `prefix`, the process id and a counter. */
export const uniqueName = (prefix: string): string => `${prefix}-${process.pid}-${++names}`

/** An `AgentApi` pointed at the simulator over undici, its dispatcher open for the test's scope. */
export const apiFor = (
  sim: SimInfo,
  options: Partial<AgentApi.Options> & { readonly credentials?: Credentials.Options } = {}
) =>
  Effect.gen(function*() {
    const { credentials, ...rest } = options
    const context = yield* Layer.build(
      Layer.merge(NodeHttpClient.layerUndici, Credentials.layer(credentials ?? { apiKey: Redacted.make(sim.accountKey) }))
    )
    return yield* AgentApi.make({ baseUrl: sim.baseUrl, dialect: Dialect.fromName(sim.dialect), ...rest }).pipe(
      Effect.provide(context),
      Effect.orDie
    )
  })

/** The attempts the SDK sent for an operation, by status, while `effect` ran (its own metrics). */
export const attemptsDuring = <A, E>(operation: string, statuses: ReadonlyArray<string>, effect: Effect.Effect<A, E>) =>
  Effect.gen(function*() {
    const count = (status: string) => Metrics.counterValue("agent_session_http_attempts_total", { operation, status })
    const before = yield* Effect.forEach(statuses, count)
    const result = yield* outcomeOf(effect)
    const after = yield* Effect.forEach(statuses, count)
    return { result, sent: Object.fromEntries(statuses.map((status, i) => [status, (after[i] ?? 0) - (before[i] ?? 0)])) }
  })
