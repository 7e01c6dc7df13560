/**
 * Test your own application without a network: an in-memory `AgentApi` and `Credentials` that
 * record what the application asked for and fail on demand, and the scripts of events a session
 * follows (`Step`, `session`).
 *
 * @example
 * ```ts
 * import { AgentApi } from "effect-agent-session-effect4"
 * import { AgentSessionsTest } from "effect-agent-session-effect4/testing"
 * import * as Effect from "effect/Effect"
 *
 * const program = Effect.gen(function*() {
 *   const api = yield* AgentApi.AgentApi
 *   return yield* api.createSession({ start_url: "https://example.com", max_actions: 3, goal: "Find the price" })
 * })
 *
 * // Effect.runPromise(Effect.provide(program, AgentSessionsTest.layer()))
 * ```
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Ref from "effect/Ref"
import { Agent, AgentId, type OnboardInput, OnboardRequest } from "../Agent.js"
import { AgentApi } from "../AgentApi.js"
import * as Credentials from "../Credentials.js"
import { type CreateSessionError, type EventStreamError, NotFound, type OnboardError } from "../Errors.js"
import { validate } from "../internal/schema.js"
import { ActionSessionId, CreateSessionRequest, SessionId, SessionInfo, type SessionStatus } from "../Session.js"
import type * as SessionEvent from "../SessionEvent.js"

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
 * What the test can inspect and steer.
 *
 * @since 0.1.0
 * @category models
 */
export interface Control {
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

    const control: Control = {
      sessionsCreated: Ref.get(created),
      agentsOnboarded: Ref.get(onboarded),
      failNextCreate: (error) => Ref.set(nextCreateError, Option.some(error)),
      failNextOnboard: (error) => Ref.set(nextOnboardError, Option.some(error)),
      script: Ref.get(script),
      setScript: (steps) => Ref.set(script, steps)
    }
    return { api, control }
  })

/**
 * The in-memory `AgentApi` and `Credentials` (a test key), with {@link AgentSessionsTestControl}
 * to inspect and steer them.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  options: Options = {}
): Layer.Layer<AgentApi | Credentials.Credentials | AgentSessionsTestControl> =>
  Layer.merge(
    Layer.effectContext(
      Effect.map(makeServices(options), ({ api, control }) =>
        Context.make(AgentApi, api).pipe(Context.add(AgentSessionsTestControl, control)))
    ),
    Credentials.layer({ apiKey: "test-account-key" })
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
