/**
 * The façade's implementation (`AgentSessions.make`): `start` creates the session and attaches;
 * `attach` connects and guards the events (`sessionGuard.ts`); `run` consumes them, answering each
 * request with `onRequest`, and returns the outcome.
 */
import * as Effect from "effect/Effect"
import { Facade } from "effect-agent-session-shell"
import { AgentApi } from "../../src/AgentApi.js"
import type { RunningSession, RunOptions, Service } from "../../src/AgentSessions.js"
import * as Answer from "../../src/Answer.js"
import * as Credentials from "../../src/Credentials.js"
import type { RespondError } from "../../src/Errors.js"
import * as EventStream from "../../src/EventStream.js"
import { fromResult, runForEachWanted } from "../../src/internal/line.js"
import { validate } from "../../src/internal/schema.js"
import * as Deadlines from "./channel/deadlines.js"
import { guard, type Guarded } from "./sessionGuard.js"
import * as Session from "../../src/Session.js"
import * as SessionEvent from "../../src/SessionEvent.js"

const validateCreate = validate(Session.CreateSessionRequest, "CreateSessionRequest")

const isRequest = (event: SessionEvent.SessionEvent): boolean => event._tag === "ExternalResourceRequested"

const always = (): boolean => true

/**
 * A running session: its connection and its guard, read through getters on the prototype (what
 * the guard makes on demand, the pending list among it, is made when first read; `respond` once,
 * bound). The
 * connection and the guard are private fields (`#`), not own properties: a session logged or
 * inspected shows its `session` only, never the connection's socket (whose address or upgrade
 * request may hold the key).
 */
class Running implements RunningSession {
  #respond: RunningSession["respond"] | undefined = undefined
  readonly #connection: EventStream.Connection
  readonly #guarded: Guarded

  constructor(readonly session: Session.SessionInfo, connection: EventStream.Connection, guarded: Guarded) {
    this.#connection = connection
    this.#guarded = guarded
  }

  get events(): RunningSession["events"] {
    return this.#guarded.events
  }
  get forEachBatch(): RunningSession["forEachBatch"] {
    const guarded = this.#guarded
    return (f) => guarded.forEachBatch(f)
  }
  get respond(): RunningSession["respond"] {
    return this.#respond ??= (request, answer) =>
      Effect.tap(this.#connection.respond(request, answer), () => this.#guarded.pendingRequests.answered(request))
  }
  get state(): RunningSession["state"] {
    return this.#connection.state
  }
  get opened(): RunningSession["opened"] {
    return this.#connection.opened
  }
  get pending(): RunningSession["pending"] {
    return this.#guarded.pendingRequests.pending
  }
  get outcome(): RunningSession["outcome"] {
    return this.#guarded.outcomeEffect
  }
  get close(): RunningSession["close"] {
    return this.#connection.close
  }
  get drain(): RunningSession["drain"] {
    return this.#connection.drain
  }
}

/** Builds the façade over `AgentApi`, `EventStream` and `Credentials`. */
export const make: Effect.Effect<Service, never, AgentApi | EventStream.EventStream | Credentials.Credentials> = Effect
  .gen(function*() {
    const api = yield* AgentApi
    const eventStream = yield* EventStream.EventStream
    // Required so that one layer wires the façade with the keys its services use.
    yield* Credentials.Credentials
    // The timer the warnings of every session's pending requests are due on (one for the façade).
    const warnings = Deadlines.make()

    // The connect and the guard log nothing (the connection's own fiber annotates its logs with the
    // session's id), and a runner taking sessions over attaches thousands at once: no generator,
    // no annotation.
    const attach: Service["attach"] = (session, maxActions, options = {}) =>
      Effect.flatMap(eventStream.connect(session.session_id, options), (connection) =>
        Effect.map(
          guard(connection, session.session_id, maxActions, options, warnings),
          (guarded) => new Running(session, connection, guarded)
        ))

    const start: Service["start"] = (request, options = {}) =>
      Effect.gen(function*() {
        const valid = yield* fromResult(validateCreate(request))
        const session = yield* api.createSession(request, Facade.createOptions(options))
        return yield* attach(session, valid.max_actions, options)
      }).pipe(Effect.withSpan("AgentSessions.start"))

    const run: Service["run"] = <E, R>(request: Session.CreateSessionInput, options: RunOptions<E, R> = {}) =>
      Effect.scoped(
        Effect.gen(function*() {
          const running = yield* start(request, options)
          const onRequest = options.onRequest
          const onEvent = options.onEvent
          const answer = (asked: SessionEvent.ExternalResourceRequested) =>
            Effect.flatMap(
              onRequest === undefined
                ? Effect.as(
                  Effect.logWarning(Facade.noRequestHandler).pipe(
                    Effect.annotateLogs({ resourceType: SessionEvent.resourceTypeRaw(asked.resource_type) })
                  ),
                  Answer.deny()
                )
                : onRequest(asked),
              (given) => running.respond(asked, given)
            )
          const handle = (event: SessionEvent.SessionEvent): Effect.Effect<void, RespondError | E, R> => {
            const observe = onEvent === undefined ? Effect.void : onEvent(event)
            return event._tag === "ExternalResourceRequested" ? Effect.andThen(observe, answer(event)) : observe
          }
          // Without `onEvent`, a chunk with no request costs no Effect at all.
          yield* runForEachWanted(running.events, onEvent === undefined ? isRequest : always, handle)
          return yield* running.outcome
        })
      ).pipe(Effect.withSpan("AgentSessions.run"))

    return {
      // AgentApi.onboard remembers the agent's key in Credentials.
      onboard: api.onboard,
      start,
      attach,
      run
    }
  })
