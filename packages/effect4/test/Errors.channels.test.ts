/**
 * Every public operation's error channel is the exact union of what it can fail with, as in the
 * Effect 3 edition: the type pins below (`expectTypeOf(...).toEqualTypeOf(...)`, an exact
 * equality) fail to COMPILE (`npm run typecheck`, the first step of `npm test`) when a member is
 * added to or dropped from a channel.
 */
import { assert, describe, it } from "@effect/vitest"
import type * as Config from "effect/Config"
import type * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import type * as Result from "effect/Result"
import { expectTypeOf } from "vitest"
import type * as AgentApi from "../src/AgentApi.js"
import type * as Credentials from "../src/Credentials.js"
import * as Errors from "../src/Errors.js"
import type * as SessionEvent from "../src/SessionEvent.js"
import type * as AgentSessionsTest from "../src/testing/AgentSessionsTest.js"

/** The error channel of an Effect or a Layer. */
type ErrorOf<T> = T extends Effect.Effect<infer _A, infer E, infer _R> ? E
  : T extends Layer.Layer<infer _A, infer E, infer _R> ? E
  : never

/** The error channel of what a function returns. */
type Fails<F extends (...args: ReadonlyArray<never>) => unknown> = ErrorOf<ReturnType<F>>

// Never called: their return types are what the pins read.
const _keyForOnboard = (credentials: Credentials.Service) => credentials.keyFor("onboard")
const _keyForSession = (credentials: Credentials.Service) => credentials.keyFor("createSession", "agent")

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
})
