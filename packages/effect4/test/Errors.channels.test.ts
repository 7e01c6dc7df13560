/**
 * Every public operation's error channel is the exact union of what it can fail with, as in the
 * Effect 3 edition: the type pins below (`expectTypeOf(...).toEqualTypeOf(...)`, an exact
 * equality) fail to COMPILE (`npm run typecheck`, the first step of `npm test`) when a member is
 * added to or dropped from a channel.
 */
import { assert, describe, it } from "@effect/vitest"
import type * as Config from "effect/Config"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import type * as HttpClient from "effect/http/HttpClient"
import type * as Layer from "effect/Layer"
import type * as Result from "effect/Result"
import type * as Scope from "effect/Scope"
import type * as Stream from "effect/Stream"
import { expectTypeOf } from "vitest"
import type * as AgentApi from "../src/AgentApi.js"
import * as AgentSessions from "../src/AgentSessions.js"
import type * as Credentials from "../src/Credentials.js"
import * as Errors from "../src/Errors.js"
import type * as EventStream from "../src/EventStream.js"
import type * as NodeAgentSessions from "../src/NodeAgentSessions.js"
import type * as SessionEvent from "../src/SessionEvent.js"
import type * as AgentSessionsTest from "../src/testing/AgentSessionsTest.js"
import type * as Wire from "../src/Wire.js"

/** The error channel of an Effect, a Stream or a Layer. */
type ErrorOf<T> = T extends Effect.Effect<infer _A, infer E, infer _R> ? E
  : T extends Stream.Stream<infer _A, infer E, infer _R> ? E
  : T extends Layer.Layer<infer _A, infer E, infer _R> ? E
  : never

/** The error channel of what a function returns. */
type Fails<F extends (...args: ReadonlyArray<never>) => unknown> = ErrorOf<ReturnType<F>>

class HandlerError extends Data.TaggedError("HandlerError")<{ readonly reason: string }> {}

const request = { start_url: "https://example.com", goal: "g", max_actions: 1 }
// Never called: their return types are what the pins read.
const _keyForOnboard = (credentials: Credentials.Service) => credentials.keyFor("onboard")
const _keyForSession = (credentials: Credentials.Service) => credentials.keyFor("createSession", "agent")
const _run = (sessions: AgentSessions.Service) => sessions.run(request)
const _runWithHandlers = (sessions: AgentSessions.Service) =>
  sessions.run(request, {
    onRequest: () => Effect.fail(new HandlerError({ reason: "no answer" })),
    onEvent: () => Effect.void
  })
const _runAccessor = () => AgentSessions.run(request)

describe("the error channels (type pins)", () => {
  it("Credentials and AgentApi fail with exactly their unions", () => {
    expectTypeOf<ErrorOf<ReturnType<typeof _keyForOnboard>>>().toEqualTypeOf<Errors.MissingCredentials>()
    expectTypeOf<ErrorOf<ReturnType<typeof _keyForSession>>>().toEqualTypeOf<Errors.CredentialsError>()
    expectTypeOf<ErrorOf<ReturnType<typeof Credentials.layer>>>().toEqualTypeOf<never>()
    expectTypeOf<Fails<AgentApi.Service["onboard"]>>().toEqualTypeOf<Errors.OnboardError>()
    expectTypeOf<Fails<AgentApi.Service["createSession"]>>().toEqualTypeOf<Errors.CreateSessionError>()
    expectTypeOf<Fails<AgentApi.Service["getSession"]>>().toEqualTypeOf<Errors.GetSessionError>()
    expectTypeOf<ErrorOf<ReturnType<typeof AgentApi.layer>>>().toEqualTypeOf<Errors.InsecureTransport | Errors.InvalidRequest>()
    expectTypeOf<ErrorOf<ReturnType<typeof AgentApi.layerConfig>>>().toEqualTypeOf<
      Errors.InsecureTransport | Errors.InvalidRequest | Config.ConfigError
    >()
    expectTypeOf<Result.Result.Failure<ReturnType<typeof SessionEvent.parseJsonResponse>>>().toEqualTypeOf<
      Errors.ResponseParseError
    >()
    expectTypeOf<ErrorOf<ReturnType<typeof AgentSessionsTest.layer>>>().toEqualTypeOf<never>()
  })

  it("a creating call never fails with RequestTimeout (an attempt that timed out may have created)", () => {
    expectTypeOf<Extract<Errors.OnboardError, Errors.RequestTimeout>>().toEqualTypeOf<never>()
    expectTypeOf<Extract<Errors.CreateSessionError, Errors.RequestTimeout>>().toEqualTypeOf<never>()
    expectTypeOf<Extract<Errors.GetSessionError, Errors.OutcomeUnknown>>().toEqualTypeOf<never>()
    expectTypeOf<Extract<Errors.OnboardError, Errors.MissingAgentKey>>().toEqualTypeOf<never>()
    // The runtime union has a class for every tag of the type.
    const tags = Errors.AgentSessionError.members.map((member) => member.identifier.replace("effect-agent-session/", ""))
    assert.strictEqual(new Set(tags).size, tags.length)
    assert.includeMembers(tags, ["OutcomeUnknown", "RequestTimeout", "MissingAgentKey", "ResponseParseError"])
  })

  it("the event channel and the façade fail with exactly their unions (as the Effect 3 edition's)", () => {
    expectTypeOf<ErrorOf<EventStream.LayerType>>().toEqualTypeOf<never>()
    expectTypeOf<ErrorOf<ReturnType<typeof EventStream.layerConfig>>>().toEqualTypeOf<Config.ConfigError>()
    expectTypeOf<Fails<EventStream.Service["connect"]>>().toEqualTypeOf<Errors.InsecureTransport>()
    expectTypeOf<Fails<EventStream.Service["events"]>>().toEqualTypeOf<Errors.EventStreamError | Errors.InsecureTransport>()
    expectTypeOf<ErrorOf<EventStream.Connection["events"]>>().toEqualTypeOf<Errors.EventStreamError>()
    expectTypeOf<Fails<EventStream.Connection["respond"]>>().toEqualTypeOf<Errors.RespondError>()
    expectTypeOf<ErrorOf<EventStream.Connection["close"]>>().toEqualTypeOf<never>()
    expectTypeOf<ErrorOf<typeof AgentSessions.layer>>().toEqualTypeOf<never>()
    expectTypeOf<Fails<AgentSessions.Service["onboard"]>>().toEqualTypeOf<Errors.OnboardError>()
    expectTypeOf<Fails<AgentSessions.Service["start"]>>().toEqualTypeOf<Errors.StartError>()
    expectTypeOf<Fails<AgentSessions.Service["attach"]>>().toEqualTypeOf<Errors.InsecureTransport>()
    expectTypeOf<ErrorOf<ReturnType<typeof _run>>>().toEqualTypeOf<Errors.RunError>()
    expectTypeOf<ErrorOf<AgentSessions.RunningSession["events"]>>().toEqualTypeOf<Errors.RunningSessionError>()
    expectTypeOf<ErrorOf<AgentSessions.RunningSession["outcome"]>>().toEqualTypeOf<Errors.RunningSessionError>()
    expectTypeOf<Fails<AgentSessions.RunningSession["respond"]>>().toEqualTypeOf<Errors.RespondError>()
    expectTypeOf<ErrorOf<AgentSessions.RunningSession["close"]>>().toEqualTypeOf<never>()
    expectTypeOf<ErrorOf<ReturnType<typeof NodeAgentSessions.layer>>>().toEqualTypeOf<
      Errors.InvalidRequest | Errors.InsecureTransport
    >()
    expectTypeOf<ErrorOf<ReturnType<typeof NodeAgentSessions.layerConfig>>>().toEqualTypeOf<
      Errors.InvalidRequest | Errors.InsecureTransport | Config.ConfigError
    >()
    expectTypeOf<Result.Result.Failure<ReturnType<typeof Wire.decodeFrame>>>().toEqualTypeOf<Errors.FrameError>()
    // A user's handler errors pass through `run` unchanged, beside the run's own.
    expectTypeOf<ErrorOf<ReturnType<typeof _runWithHandlers>>>().toEqualTypeOf<Errors.RunError | HandlerError>()
    expectTypeOf<ErrorOf<ReturnType<typeof _runAccessor>>>().toEqualTypeOf<Errors.RunError>()
    // The test kit takes exactly the errors the real operations can fail with.
    expectTypeOf<Parameters<typeof AgentSessionsTest.failNextCreate>[0]>().toEqualTypeOf<Errors.CreateSessionError>()
    expectTypeOf<Parameters<typeof AgentSessionsTest.failNextOnboard>[0]>().toEqualTypeOf<Errors.OnboardError>()
    expectTypeOf<Parameters<typeof AgentSessionsTest.Step.fail>[0]>().toEqualTypeOf<Errors.EventStreamError>()
    // Requirements are not errors: the accessors still need their services.
    expectTypeOf<ReturnType<typeof _runAccessor>>().toEqualTypeOf<
      Effect.Effect<AgentSessions.Outcome, Errors.RunError, AgentSessions.AgentSessions>
    >()
    expectTypeOf<ReturnType<AgentSessions.Service["attach"]>>().toEqualTypeOf<
      Effect.Effect<AgentSessions.RunningSession, Errors.InsecureTransport, Scope.Scope>
    >()
    expectTypeOf<ReturnType<typeof EventStream.layerSse>>().toEqualTypeOf<
      Layer.Layer<EventStream.EventStream, never, Credentials.Credentials | HttpClient.HttpClient>
    >()
    // The unions the Effect 3 edition names, with the same members (`BufferOverflow` among them: a
    // standard WebSocket of `FetchAgentSessions` in both editions).
    const eventStreamTags: ReadonlyArray<Errors.EventStreamError["_tag"]> = [
      "MalformedFrame",
      "EventDecodeError",
      "FrameTooLarge",
      "UnknownEvent",
      "MissingCredentials",
      "MissingAgentKey",
      "HandshakeRejected",
      "Superseded",
      "ConnectionLost",
      "NeverConnected",
      "BufferOverflow"
    ]
    expectTypeOf<(typeof eventStreamTags)[number]>().toEqualTypeOf<Errors.EventStreamError["_tag"]>()
    const tags = Errors.AgentSessionError.members.map((member) => member.identifier.replace("effect-agent-session/", ""))
    assert.includeMembers(tags, [...eventStreamTags, "ActionBudgetExceeded", "SessionEndedWithoutComplete"])
  })
})
