/**
 * Test your own application without a network: in-memory `AgentApi`, `EventStream` and
 * `Credentials` driven by a script of events, under the real `AgentSessions` façade. No sockets;
 * `sleep` steps follow the `TestClock`.
 *
 * @example
 * ```ts
 * import { AgentSessions, Answer } from "effect-agent-session-effect4"
 * import { AgentSessionsTest } from "effect-agent-session-effect4/testing"
 * import * as Effect from "effect/Effect"
 *
 * const program = AgentSessions.run(
 *   { start_url: "https://example.com", max_actions: 3, goal: "Find the price" },
 *   { onRequest: () => Effect.succeed(Answer.deny()) }
 * )
 *
 * const TestLayer = AgentSessionsTest.layer({ script: AgentSessionsTest.session({ actions: 2, ask: "permission" }) })
 * // Effect.runPromise(Effect.provide(program, TestLayer))
 * ```
 *
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import { Agent, AgentId, type OnboardInput, OnboardRequest } from "../Agent.js"
import { AgentApi } from "../AgentApi.js"
import * as AgentSessions from "../AgentSessions.js"
import * as Answer from "../Answer.js"
import * as Credentials from "../Credentials.js"
import {
  type CreateSessionError,
  type EventStreamError,
  NotFound,
  type OnboardError,
  RequestNotPending,
  type RespondError
} from "../Errors.js"
import * as EventStream from "../EventStream.js"
import { keyOf } from "../internal/channel/shell.js"
import { validate } from "../internal/schema.js"
import { ActionSessionId, CreateSessionRequest, SessionId, SessionInfo, type SessionStatus } from "../Session.js"
import * as SessionEvent from "../SessionEvent.js"

/**
 * One step of a script: emit an event, fail the stream with a typed error, wait (virtual time
 * under `TestClock`), wait for the answer to the latest request, or end the connection.
 *
 * @since 0.1.0
 * @category models
 */
export type Step =
  | { readonly _tag: "Emit"; readonly event: SessionEvent.SessionEvent }
  | { readonly _tag: "Fail"; readonly error: EventStreamError }
  | { readonly _tag: "Sleep"; readonly duration: Duration.Duration }
  | { readonly _tag: "AwaitAnswer"; readonly echo: boolean }
  | { readonly _tag: "End" }

/**
 * Step constructors.
 *
 * @since 0.1.0
 * @category constructors
 */
export const Step = {
  /** Emits an event. */
  emit: (event: SessionEvent.SessionEvent): Step => ({ _tag: "Emit", event }),
  /** Fails the event stream with a typed error (as the real channel would, e.g. `ConnectionLost`). */
  fail: (error: EventStreamError): Step => ({ _tag: "Fail", error }),
  /** Waits, on the `TestClock` in tests. */
  sleep: (duration: Duration.Input): Step => ({ _tag: "Sleep", duration: Duration.fromInputUnsafe(duration) }),
  /**
   * Waits until the application answers the latest `external_resource_requested`; with `echo`
   * (default) then emits `external_resource_granted` as the service does.
   */
  awaitAnswer: (options?: { readonly echo?: boolean }): Step => ({ _tag: "AwaitAnswer", echo: options?.echo ?? true }),
  /** Ends the connection here (before `complete`, the façade reports `SessionEndedWithoutComplete`). */
  end: { _tag: "End" } as Step
} as const

/**
 * A typical session: started, browser, `actions` actions with thoughts, optionally a request that
 * waits for the answer, and `complete` with `total_cost` of one cent per action.
 *
 * @since 0.1.0
 * @category constructors
 */
export const session = (options: {
  readonly sessionId?: string
  readonly startUrl?: string
  readonly actions?: number
  readonly ask?: "none" | "input" | "permission"
  readonly response?: string
  readonly type?: "STRING" | "JSON" | "MARKDOWN"
} = {}): ReadonlyArray<Step> => {
  const sessionId = SessionId.make(options.sessionId ?? "test-session")
  const actionSessionId = ActionSessionId.make("test-action-session")
  const startUrl = options.startUrl ?? "https://example.com"
  const actions = options.actions ?? 3
  const steps: Array<Step> = [
    Step.emit({ _tag: "Started", sessionId, start_url: startUrl }),
    Step.emit({ _tag: "BrowserStarted", url: startUrl, action_session_id: actionSessionId })
  ]
  for (let i = 1; i <= actions; i++) {
    steps.push(Step.emit({ _tag: "ThoughtsAndMemories", thought: `Step ${i}`, memory: `Did ${i - 1} steps` }))
    steps.push(Step.emit({ _tag: "ActionRun", name: `action-${i}`, action_session_id: actionSessionId, content: `Doing step ${i}` }))
    if (i === Math.ceil(actions / 2) && options.ask !== undefined && options.ask !== "none") {
      steps.push(Step.emit({
        _tag: "ExternalResourceRequested",
        resource_type: options.ask === "input" ? "request_user_input" : "admin_permission_request",
        reason: options.ask === "input" ? "Need an email address" : "May I submit the form?",
        action_session_id: actionSessionId,
        field_name: options.ask === "input" ? Option.some("email") : Option.none()
      }))
      steps.push(Step.awaitAnswer())
    }
  }
  steps.push(Step.emit({
    _tag: "Complete",
    response: options.response ?? "Done",
    type: options.type ?? "STRING",
    total_cost: Option.some(Math.round(actions) / 100),
    cost_summary: Option.none(),
    session_id: sessionId
  }))
  return steps
}

/**
 * An answer the application gave, with the request it answered.
 *
 * @since 0.1.0
 * @category models
 */
export interface RecordedAnswer {
  readonly sessionId: string
  readonly request: SessionEvent.ExternalResourceRequested
  readonly answer: Answer.Answer
}

/**
 * What the test can inspect and steer.
 *
 * @since 0.1.0
 * @category models
 */
export interface Control {
  /** Every answer the application gave, in order. */
  readonly answers: Effect.Effect<ReadonlyArray<RecordedAnswer>>
  /** The connections opened, by session id. */
  readonly connections: Effect.Effect<ReadonlyArray<string>>
  /** Every create-session request the application made (validated). */
  readonly sessionsCreated: Effect.Effect<ReadonlyArray<CreateSessionRequest>>
  /** Every onboard request the application made (validated). */
  readonly agentsOnboarded: Effect.Effect<ReadonlyArray<OnboardRequest>>
  /** Makes the next create-session call fail with this error (one `createSession` can fail with). */
  readonly failNextCreate: (error: CreateSessionError) => Effect.Effect<void>
  /** Makes the next onboard call fail with this error (one `onboard` can fail with). */
  readonly failNextOnboard: (error: OnboardError) => Effect.Effect<void>
  /** The script of the sessions created from now on. */
  readonly script: Effect.Effect<ReadonlyArray<Step>>
  /** Replaces the script of the sessions created from now on. */
  readonly setScript: (script: ReadonlyArray<Step>) => Effect.Effect<void>
}

/**
 * The control of the test layer.
 *
 * @since 0.1.0
 * @category tags
 */
export class AgentSessionsTestControl extends Context.Service<AgentSessionsTestControl, Control>()(
  "effect-agent-session/testing/AgentSessionsTestControl"
) {}

/**
 * Options of the test layer.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** The script every session follows (default {@link session}()). */
  readonly script?: ReadonlyArray<Step> | undefined
  /** The session id given to created sessions (default `"test-session"`, then `"test-session-2"`, ...). */
  readonly sessionId?: string | undefined
}

const validateCreate = validate(CreateSessionRequest, "CreateSessionRequest")
const validateOnboard = validate(OnboardRequest, "OnboardRequest")

const makeServices = (options: Options) =>
  Effect.gen(function*() {
    const script = yield* Ref.make<ReadonlyArray<Step>>(
      options.script ?? session(options.sessionId === undefined ? {} : { sessionId: options.sessionId })
    )
    const answers = yield* Ref.make<ReadonlyArray<RecordedAnswer>>([])
    const connections = yield* Ref.make<ReadonlyArray<string>>([])
    const created = yield* Ref.make<ReadonlyArray<CreateSessionRequest>>([])
    const onboarded = yield* Ref.make<ReadonlyArray<OnboardRequest>>([])
    const nextCreateError = yield* Ref.make(Option.none<CreateSessionError>())
    const nextOnboardError = yield* Ref.make(Option.none<OnboardError>())
    const sessionCounter = yield* Ref.make(0)

    const takeError = <E>(ref: Ref.Ref<Option.Option<E>>) =>
      Effect.flatMap(Ref.getAndSet(ref, Option.none()), Option.match({ onNone: () => Effect.void, onSome: Effect.fail }))

    const api = AgentApi.of({
      onboard: (input: OnboardInput) =>
        Effect.gen(function*() {
          const request = yield* Effect.fromResult(validateOnboard(input))
          yield* takeError(nextOnboardError)
          yield* Ref.update(onboarded, (all) => [...all, request])
          return new Agent({
            agentId: AgentId.make(`test-agent-${request.name}`),
            name: request.name,
            website: request.website,
            domain: request.domain,
            apiKey: Option.some(Redacted.make(`test-agent-key-${request.name}`))
          })
        }),
      createSession: (input) =>
        Effect.gen(function*() {
          const request = yield* Effect.fromResult(validateCreate(input))
          yield* takeError(nextCreateError)
          yield* Ref.update(created, (all) => [...all, request])
          const n = yield* Ref.updateAndGet(sessionCounter, (c) => c + 1)
          const id = options.sessionId ?? (n === 1 ? "test-session" : `test-session-${n}`)
          return new SessionInfo({
            session_id: SessionId.make(id),
            status: Option.some<SessionStatus>("started"),
            start_time: Option.some(new Date(0).toISOString()),
            end_time: Option.none(),
            error: Option.none()
          })
        }),
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


    const connect: EventStream.Service["connect"] = (sessionId, connectOptions = {}) =>
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

    const eventStream = EventStream.EventStream.of({
      connect,
      events: (sessionId, connectOptions) =>
        Stream.unwrap(Effect.map(connect(sessionId, connectOptions), (connection) => connection.events))
    })

    const control: Control = {
      answers: Ref.get(answers),
      connections: Ref.get(connections),
      sessionsCreated: Ref.get(created),
      agentsOnboarded: Ref.get(onboarded),
      failNextCreate: (error) => Ref.set(nextCreateError, Option.some(error)),
      failNextOnboard: (error) => Ref.set(nextOnboardError, Option.some(error)),
      script: Ref.get(script),
      setScript: (steps) => Ref.set(script, steps)
    }
    return { api, eventStream, control }
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

/**
 * The in-memory `AgentApi`, `EventStream` and `Credentials` (a test key), the real
 * `AgentSessions` over them, and {@link AgentSessionsTestControl} to inspect and steer.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  options: Options = {}
): Layer.Layer<
  AgentSessions.AgentSessions | AgentApi | EventStream.EventStream | Credentials.Credentials | AgentSessionsTestControl
> => {
  const services = Layer.effectContext(
    Effect.map(makeServices(options), ({ api, control, eventStream }) =>
      Context.make(AgentApi, api).pipe(
        Context.add(EventStream.EventStream, eventStream),
        Context.add(AgentSessionsTestControl, control)
      ))
  )
  const base = Layer.merge(services, Credentials.layer({ apiKey: "test-account-key" }))
  // Fresh: each test kit layer's façade over its own scripted services (as in NodeAgentSessions).
  return Layer.provideMerge(Layer.fresh(AgentSessions.layer), base)
}

/**
 * The answers the application gave so far.
 *
 * @since 0.1.0
 * @category accessors
 */
export const answers: Effect.Effect<ReadonlyArray<RecordedAnswer>, never, AgentSessionsTestControl> = Effect.flatMap(
  Effect.service(AgentSessionsTestControl),
  (control) => control.answers
)

/**
 * The session ids the application connected to so far, in order.
 *
 * @since 0.1.0
 * @category accessors
 */
export const connections: Effect.Effect<ReadonlyArray<string>, never, AgentSessionsTestControl> = Effect.flatMap(
  Effect.service(AgentSessionsTestControl),
  (control) => control.connections
)

/**
 * The create-session requests the application made so far.
 *
 * @since 0.1.0
 * @category accessors
 */
export const sessionsCreated: Effect.Effect<ReadonlyArray<CreateSessionRequest>, never, AgentSessionsTestControl> =
  Effect.flatMap(Effect.service(AgentSessionsTestControl), (control) => control.sessionsCreated)

/**
 * The onboard requests the application made so far.
 *
 * @since 0.1.0
 * @category accessors
 */
export const agentsOnboarded: Effect.Effect<ReadonlyArray<OnboardRequest>, never, AgentSessionsTestControl> =
  Effect.flatMap(Effect.service(AgentSessionsTestControl), (control) => control.agentsOnboarded)

/**
 * Makes the next create-session call fail with a typed error.
 *
 * @since 0.1.0
 * @category combinators
 */
export const failNextCreate = (error: CreateSessionError): Effect.Effect<void, never, AgentSessionsTestControl> =>
  Effect.flatMap(Effect.service(AgentSessionsTestControl), (control) => control.failNextCreate(error))

/**
 * Makes the next onboard call fail with a typed error.
 *
 * @since 0.1.0
 * @category combinators
 */
export const failNextOnboard = (error: OnboardError): Effect.Effect<void, never, AgentSessionsTestControl> =>
  Effect.flatMap(Effect.service(AgentSessionsTestControl), (control) => control.failNextOnboard(error))

/**
 * Replaces the script of the sessions created from now on.
 *
 * @since 0.1.0
 * @category combinators
 */
export const setScript = (script: ReadonlyArray<Step>): Effect.Effect<void, never, AgentSessionsTestControl> =>
  Effect.flatMap(Effect.service(AgentSessionsTestControl), (control) => control.setScript(script))
