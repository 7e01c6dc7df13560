/**
 * The test kit's in-memory services: an `AgentApi` that validates and records the application's
 * requests (and fails the next one on demand), an `EventStream` over the scripted channel, the
 * control a test inspects and steers them with, and, for a replay, the observer that reports what
 * the application does against the recording.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Ref from "effect/Ref"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { Agent, type OnboardInput, OnboardRequest } from "../../Agent.js"
import { AgentApi, type Service as AgentApiService } from "../../AgentApi.js"
import type * as Credentials from "../../Credentials.js"
import { type CreateSessionError, type InvalidRecording, NotFound, type OnboardError } from "../../Errors.js"
import * as EventStream from "../../EventStream.js"
import { CreateSessionRequest, SessionInfo, type SessionStatus } from "../../Session.js"
import type {
  Control,
  Options,
  RecordedAnswer,
  ReplayOptions,
  Step
} from "./kitTypes.js"
import * as ReplayInternal from "../recording/replay.js"
import { validate } from "../schema.js"
import { makeConnect } from "./scriptedChannel.js"

/** The services of a test layer, before they are put in its context. */
export interface Services {
  readonly api: AgentApiService
  readonly eventStream: EventStream.Service
  readonly control: Control
}

/** Makes the default script of a session (`AgentSessionsTest.session`, passed in by the public module). */
export type DefaultScript = (options: { readonly sessionId?: string }) => ReadonlyArray<Step>

const validateCreate = validate(CreateSessionRequest, "CreateSessionRequest")
const validateOnboard = validate(OnboardRequest, "OnboardRequest")

/** The services of a scripted test layer; `session` makes the default script. */
export const makeServices = (options: Options, session: DefaultScript) =>
  Effect.gen(function*() {
    const script = yield* Ref.make<ReadonlyArray<Step>>(options.script ?? session(options.sessionId === undefined ? {} : { sessionId: options.sessionId }))
    const answers = yield* Ref.make<ReadonlyArray<RecordedAnswer>>([])
    const created = yield* Ref.make<ReadonlyArray<CreateSessionRequest>>([])
    const onboarded = yield* Ref.make<ReadonlyArray<OnboardRequest>>([])
    const connections = yield* Ref.make<ReadonlyArray<string>>([])
    const nextCreateError = yield* Ref.make(Option.none<CreateSessionError>())
    const nextOnboardError = yield* Ref.make(Option.none<OnboardError>())
    const sessionCounter = yield* Ref.make(0)

    const takeError = <E>(ref: Ref.Ref<Option.Option<E>>) =>
      Effect.flatMap(Ref.getAndSet(ref, Option.none()), Option.match({ onNone: () => Effect.void, onSome: Effect.fail }))

    const api = AgentApi.of({
      onboard: (input: OnboardInput) =>
        Effect.gen(function*() {
          const request = yield* validateOnboard(input)
          yield* takeError(nextOnboardError)
          yield* Ref.update(onboarded, (all) => [...all, request])
          return Agent.make({
            agentId: Agent.fields.agentId.make(`test-agent-${request.name}`),
            name: request.name,
            website: request.website,
            domain: request.domain,
            apiKey: Option.some(Redacted.make(`test-agent-key-${request.name}`))
          })
        }),
      createSession: (input) =>
        Effect.gen(function*() {
          const request = yield* validateCreate(input)
          yield* takeError(nextCreateError)
          yield* Ref.update(created, (all) => [...all, request])
          const n = yield* Ref.updateAndGet(sessionCounter, (c) => c + 1)
          const id = options.sessionId ?? (n === 1 ? "test-session" : `test-session-${n}`)
          return SessionInfo.make({
            session_id: SessionInfo.fields.session_id.make(id),
            status: Option.some<SessionStatus>("started"),
            start_time: Option.some(new Date(0).toISOString()),
            end_time: Option.none(),
            error: Option.none()
          })
        }),
      // Keeps no sessions: `getSession` answers `NotFound` and sends nothing.
      canRetrieve: false,
      getSession: (sessionId) =>
        Effect.fail(
          new NotFound({
            status: 404,
            message: `The test layer keeps no sessions to retrieve (${sessionId})`,
            body: "",
            requestId: Option.none(),
            operation: "AgentApi.getSession"
          })
        )
    })

    const connect = makeConnect({ script, answers, connections })

    const eventStream = EventStream.EventStream.of({
      connect,
      events: (sessionId, connectOptions) =>
        Stream.unwrapScoped(Effect.map(connect(sessionId, connectOptions), (connection) => connection.events))
    })

    // What a replay reports as the application goes (`replay`).
    const observer: ReplayInternal.Observer = {
      beforeCreate: takeError(nextCreateError),
      created: (request) => Ref.update(created, (all) => [...all, request]),
      connected: (sessionId) => Ref.update(connections, (all) => [...all, sessionId]),
      answered: (sessionId, request, answer) => Ref.update(answers, (all) => [...all, { sessionId, request, answer }])
    }

    const control: Control = {
      answers: Ref.get(answers),
      sessionsCreated: Ref.get(created),
      agentsOnboarded: Ref.get(onboarded),
      connections: Ref.get(connections),
      failNextCreate: (error) => Ref.set(nextCreateError, Option.some(error)),
      failNextOnboard: (error) => Ref.set(nextOnboardError, Option.some(error)),
      setScript: (steps) => Ref.set(script, steps)
    }
    return { api, eventStream, control, observer }
  })

/** The services of a replay: `createSession` and the event channel answer what was recorded. */
export const makeReplay = (
  path: string,
  options: ReplayOptions,
  session: DefaultScript
): Effect.Effect<Services, InvalidRecording, Scope.Scope | Credentials.Credentials> =>
  Effect.gen(function*() {
    const { api, control, observer } = yield* makeServices({}, session)
    const replayed = yield* ReplayInternal.make({ ...options, path }, observer)
    const replayApi = AgentApi.of({
      ...api,
      createSession: (input) => Effect.flatMap(validateCreate(input), replayed.createSession),
      canRetrieve: true,
      getSession: (sessionId) => replayed.getSession(sessionId)
    })
    return { api: replayApi, eventStream: replayed.eventStream, control }
  })
