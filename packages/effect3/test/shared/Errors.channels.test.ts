/**
 * Every public operation's error channel is the exact union of what it can fail with, pinned once
 * for both editions: the type pins below (`expectTypeOf(...).toEqualTypeOf(...)`, an exact
 * equality) fail to COMPILE (the typecheck, the first step of each edition's tests) when a member
 * is added to or dropped from a channel. The Effect 3 edition's `Errors.channels.test.ts` pins the
 * operations of the packages beside it too, and checks docs/errors.md's tables against them.
 */
import { assert, describe, it } from "@effect/vitest"
import type * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import { expectTypeOf } from "vitest"
import type * as AgentApi from "../../src/AgentApi.js"
import type * as AgentSessions from "../../src/AgentSessions.js"
import type * as Credentials from "../../src/Credentials.js"
import * as Errors from "../../src/Errors.js"
import type * as EventStream from "../../src/EventStream.js"
import type * as NodeAgentSessions from "../../src/NodeAgentSessions.js"
import type * as SessionEvent from "../../src/SessionEvent.js"
import type * as AgentSessionsTest from "../../src/testing/AgentSessionsTest.js"
import type * as Wire from "../../src/Wire.js"
import {
  type ErrorOf,
  type Fails,
  type HandlerError,
  type keyForOnboard,
  type keyForSession,
  type run,
  type runAccessor,
  type runWithHandlers
} from "./channels.js"
import type { ConfigError, HttpClient, Outcome } from "../helpers/line.js"

/** The failure an outcome (`Either`, `Result`) may hold. */
type FailureOf<T> = T extends Outcome<infer _A, infer E> ? E : never

describe("the error channels (type pins)", () => {
  it("Credentials and AgentApi fail with exactly their unions", () => {
    expectTypeOf<ErrorOf<ReturnType<typeof keyForOnboard>>>().toEqualTypeOf<Errors.MissingCredentials>()
    expectTypeOf<ErrorOf<ReturnType<typeof keyForSession>>>().toEqualTypeOf<Errors.CredentialsError>()
    expectTypeOf<ErrorOf<ReturnType<typeof Credentials.layer>>>().toEqualTypeOf<never>()
    expectTypeOf<Fails<AgentApi.Service["onboard"]>>().toEqualTypeOf<Errors.OnboardError>()
    expectTypeOf<Fails<AgentApi.Service["createSession"]>>().toEqualTypeOf<Errors.CreateSessionError>()
    expectTypeOf<Fails<AgentApi.Service["getSession"]>>().toEqualTypeOf<Errors.GetSessionError>()
    expectTypeOf<ErrorOf<ReturnType<typeof AgentApi.layer>>>().toEqualTypeOf<Errors.InsecureTransport | Errors.InvalidRequest>()
    expectTypeOf<ErrorOf<ReturnType<typeof AgentApi.layerConfig>>>().toEqualTypeOf<
      Errors.InsecureTransport | Errors.InvalidRequest | ConfigError
    >()
    expectTypeOf<FailureOf<ReturnType<typeof SessionEvent.parseJsonResponse>>>().toEqualTypeOf<
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

  it("the event channel and the façade fail with exactly their unions", () => {
    expectTypeOf<ErrorOf<EventStream.LayerType>>().toEqualTypeOf<never>()
    expectTypeOf<ErrorOf<ReturnType<typeof EventStream.layerConfig>>>().toEqualTypeOf<ConfigError>()
    expectTypeOf<Fails<EventStream.Service["connect"]>>().toEqualTypeOf<Errors.InsecureTransport>()
    expectTypeOf<Fails<EventStream.Service["events"]>>().toEqualTypeOf<Errors.EventStreamError | Errors.InsecureTransport>()
    expectTypeOf<ErrorOf<EventStream.Connection["events"]>>().toEqualTypeOf<Errors.EventStreamError>()
    expectTypeOf<Fails<EventStream.Connection["respond"]>>().toEqualTypeOf<Errors.RespondError>()
    expectTypeOf<ErrorOf<EventStream.Connection["close"]>>().toEqualTypeOf<never>()
    expectTypeOf<ErrorOf<typeof AgentSessions.layer>>().toEqualTypeOf<never>()
    expectTypeOf<Fails<AgentSessions.Service["onboard"]>>().toEqualTypeOf<Errors.OnboardError>()
    expectTypeOf<Fails<AgentSessions.Service["start"]>>().toEqualTypeOf<Errors.StartError>()
    expectTypeOf<Fails<AgentSessions.Service["attach"]>>().toEqualTypeOf<Errors.InsecureTransport>()
    expectTypeOf<ErrorOf<ReturnType<typeof run>>>().toEqualTypeOf<Errors.RunError>()
    expectTypeOf<ErrorOf<AgentSessions.RunningSession["events"]>>().toEqualTypeOf<Errors.RunningSessionError>()
    expectTypeOf<ErrorOf<AgentSessions.RunningSession["outcome"]>>().toEqualTypeOf<Errors.RunningSessionError>()
    expectTypeOf<Fails<AgentSessions.RunningSession["respond"]>>().toEqualTypeOf<Errors.RespondError>()
    expectTypeOf<ErrorOf<AgentSessions.RunningSession["close"]>>().toEqualTypeOf<never>()
    expectTypeOf<ErrorOf<ReturnType<typeof NodeAgentSessions.layer>>>().toEqualTypeOf<
      Errors.InvalidRequest | Errors.InsecureTransport
    >()
    expectTypeOf<ErrorOf<ReturnType<typeof NodeAgentSessions.layerConfig>>>().toEqualTypeOf<
      Errors.InvalidRequest | Errors.InsecureTransport | ConfigError
    >()
    expectTypeOf<FailureOf<ReturnType<typeof Wire.decodeFrame>>>().toEqualTypeOf<Errors.FrameError>()
    // A user's handler errors pass through `run` unchanged, beside the run's own.
    expectTypeOf<ErrorOf<ReturnType<typeof runWithHandlers>>>().toEqualTypeOf<Errors.RunError | HandlerError>()
    expectTypeOf<ErrorOf<ReturnType<typeof runAccessor>>>().toEqualTypeOf<Errors.RunError>()
    // The test kit takes exactly the errors the real operations can fail with.
    expectTypeOf<Parameters<typeof AgentSessionsTest.failNextCreate>[0]>().toEqualTypeOf<Errors.CreateSessionError>()
    expectTypeOf<Parameters<typeof AgentSessionsTest.failNextOnboard>[0]>().toEqualTypeOf<Errors.OnboardError>()
    expectTypeOf<Parameters<typeof AgentSessionsTest.Step.fail>[0]>().toEqualTypeOf<Errors.EventStreamError>()
    // Requirements are not errors: the accessors still need their services.
    expectTypeOf<ReturnType<typeof runAccessor>>().toEqualTypeOf<
      Effect.Effect<AgentSessions.Outcome, Errors.RunError, AgentSessions.AgentSessions>
    >()
    expectTypeOf<ReturnType<AgentSessions.Service["attach"]>>().toEqualTypeOf<
      Effect.Effect<AgentSessions.RunningSession, Errors.InsecureTransport, Scope.Scope>
    >()
    expectTypeOf<ReturnType<typeof EventStream.layerSse>>().toEqualTypeOf<
      Layer.Layer<EventStream.EventStream, never, Credentials.Credentials | HttpClient.HttpClient>
    >()
    // The union's members (`BufferOverflow` among them: a standard WebSocket of `FetchAgentSessions`
    // in both editions).
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
