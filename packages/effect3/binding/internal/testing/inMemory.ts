/**
 * The test kit's in-memory services: an `AgentApi` that validates and records the application's
 * requests (and fails the next one on demand), an `EventStream` over the scripted channel, the
 * control a test inspects and steers them with, and, for a replay, the scripted world told what
 * the application does against the recording; and the kit's layer of them, under the real
 * `AgentSessions`.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import { Script } from "effect-agent-session-shell"
import { Agent, type OnboardInput, OnboardRequest } from "../../../src/Agent.js"
import { AgentApi, type Service as AgentApiService } from "../../../src/AgentApi.js"
import * as AgentSessions from "../../../src/AgentSessions.js"
import * as Credentials from "../../../src/Credentials.js"
import { type InvalidRecording, NotFound } from "../../../src/Errors.js"
import * as EventStream from "../../../src/EventStream.js"
import { CreateSessionRequest, SessionInfo } from "../../../src/Session.js"
import {
  AgentSessionsTestControl,
  type Control,
  type Options,
  type ReplayOptions,
  type Step,
  type World
} from "./kitTypes.js"
import * as ReplayInternal from "../recording/replay.js"
import { decodeUnknownEffect, fromResult, scopedContextLayer, unshared } from "../../../src/internal/line.js"
import { validate } from "../../../src/internal/schema.js"
import { eventStreamOf, makeConnect } from "./scriptedChannel.js"

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
// The kit answers as the service does (wire fields), decoded as the service's answers are.
const decodeAgent = decodeUnknownEffect(Agent)
const decodeSession = decodeUnknownEffect(SessionInfo)

/** The services of a scripted test layer; `session` makes the default script. */
export const makeServices = (options: Options, session: DefaultScript) =>
  Effect.sync(() => {
    const world: World = new Script.World({
      script: options.script ?? session(options.sessionId === undefined ? {} : { sessionId: options.sessionId }),
      sessionId: options.sessionId
    })
    const api = AgentApi.of({
      onboard: (input: OnboardInput) =>
        Effect.flatMap(fromResult(validateOnboard(input)), (request) => {
          const onboarded = world.onboard(request)
          return onboarded._tag === "Failed"
            ? Effect.fail(onboarded.error)
            : Effect.orDie(decodeAgent({ ...request, ...onboarded.value }))
        }),
      createSession: (input) =>
        Effect.flatMap(fromResult(validateCreate(input)), (request) => {
          const created = world.create(request)
          return created._tag === "Failed" ? Effect.fail(created.error) : Effect.orDie(decodeSession(created.value))
        }),
      // Keeps no sessions: `getSession` answers `NotFound` and sends nothing.
      canRetrieve: false,
      getSession: (sessionId) => Effect.fail(new NotFound(world.getSession(sessionId)))
    })

    const eventStream = eventStreamOf(makeConnect(world))

    const control: Control = {
      answers: Effect.sync(() => world.answers),
      sessionsCreated: Effect.sync(() => world.sessionsCreated),
      agentsOnboarded: Effect.sync(() => world.agentsOnboarded),
      connections: Effect.sync(() => world.connections),
      failNextCreate: (error) => Effect.sync(() => world.failNextCreate(error)),
      failNextOnboard: (error) => Effect.sync(() => world.failNextOnboard(error)),
      script: Effect.sync(() => world.script),
      setScript: (steps) => Effect.sync(() => world.setScript(steps))
    }
    return { api, eventStream, control, world }
  })

/** The services of a replay: `createSession` and the event channel answer what was recorded. */
export const makeReplay = (
  path: string,
  options: ReplayOptions,
  session: DefaultScript
): Effect.Effect<Services, InvalidRecording, Scope.Scope | Credentials.Credentials> =>
  Effect.gen(function*() {
    const { api, control, world } = yield* makeServices({}, session)
    // The world is told what the application does against the recording.
    const replayed = yield* ReplayInternal.make({ ...options, path }, world)
    const replayApi = AgentApi.of({
      ...api,
      createSession: (input) => Effect.flatMap(fromResult(validateCreate(input)), replayed.createSession),
      canRetrieve: true,
      getSession: (sessionId) => replayed.getSession(sessionId)
    })
    return { api: replayApi, eventStream: replayed.eventStream, control }
  })

/**
 * The kit's services (scripted or replayed) in a layer, with `Credentials` holding a test key, and
 * the real `AgentSessions` over them (unshared: each kit layer's façade over its own services, as
 * in `NodeAgentSessions`).
 */
export const kitLayer = <E>(make: Effect.Effect<Services, E, Scope.Scope | Credentials.Credentials>) => {
  const services = scopedContextLayer(
    Effect.map(make, ({ api, control, eventStream }) =>
      Context.make(AgentApi, api).pipe(
        Context.add(EventStream.EventStream, eventStream),
        Context.add(AgentSessionsTestControl, control)
      ))
  )
  return Layer.provideMerge(
    unshared(AgentSessions.layer),
    Layer.provideMerge(services, Credentials.layer({ apiKey: "test-account-key" }))
  )
}
