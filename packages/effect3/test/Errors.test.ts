/**
 * The SDK's errors, the cases whose text is Effect 3's: U18 with Effect 3's logger, tracer and
 * redacted header names, the cluster errors' JSON round trip, and the encoded form of a `Duration`
 * (U19). The cases that read the same on both lines are in `shared/Errors.test.ts`.
 */
import * as Headers from "@effect/platform/Headers"
import { assert, describe, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Equal from "effect/Equal"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type * as Tracer from "effect/Tracer"
import * as ClusterErrors from "effect-agent-session-cluster/ClusterErrors"
import * as Errors from "../src/Errors.js"
import * as Dialect from "../src/Dialect.js"
import { capture, spying } from "./helpers/sdk.js"
import { assertErrorClean, assertNoKey, runScenario, scenarios } from "./shared/errors.js"
import { agentBody, json, makeApi, validAgent } from "./shared/StubHttpClient.js"

describe("Errors", () => {
  describe("no API key in any error, log line or span", () => {
    for (const dialect of [Dialect.documented, Dialect.observed]) {
      for (const [label, reply] of scenarios) {
        it.effect(`U18 ${label} (${dialect.name}): error and logs are clean`, () =>
          Effect.gen(function*() {
            const lines: Array<string> = []
            const spans: Array<Tracer.Span> = []
            const tracer = yield* spying(spans)
            const error = yield* runScenario(reply, dialect).pipe(
              Effect.withTracer(tracer),
              Effect.provide(Logger.replace(Logger.defaultLogger, capture(lines))),
              Logger.withMinimumLogLevel(LogLevel.All)
            )
            assert.isTrue(Errors.isAgentSessionError(error))
            assertErrorClean(error)
            assert.isAbove(lines.length, 0, "something was logged")
            for (const line of lines) assertNoKey("log line", line)
            assert.isAbove(spans.length, 0, "spans were made")
            for (const span of spans) {
              assertNoKey(`span ${span.name}`, JSON.stringify([...span.attributes.entries()]))
            }
          }))
      }
    }

    it.effect("the auth headers stay redacted in spans even when the caller clears the redacted names", () =>
      Effect.gen(function*() {
        const spans: Array<Tracer.Span> = []
        const tracer = yield* spying(spans)
        for (const dialect of [Dialect.documented, Dialect.observed]) {
          const { api } = yield* makeApi(() => json(200, agentBody()), { dialect })
          yield* api.onboard(validAgent).pipe(
            Effect.withTracer(tracer),
            Effect.locally(Headers.currentRedactedNames, [])
          )
        }
        const attributes = spans.flatMap((span) => [...span.attributes.entries()])
        const headerNames = attributes.map(([name]) => name)
        assert.include(headerNames, "http.request.header.authorization")
        assert.include(headerNames, "http.request.header.x-api-key")
        for (const span of spans) assertNoKey(`span ${span.name}`, JSON.stringify([...span.attributes.entries()]))
        assert.includeMembers(spans.map((s) => s.name), ["AgentApi.onboard"])
      }))
  })
})

describe("Errors encode to JSON and back", () => {
  const encode = Schema.encodeSync(Errors.AgentSessionError)
  const decode = Schema.decodeUnknownSync(Errors.AgentSessionError)
  const roundTrip = (error: Errors.AgentSessionError) => decode(JSON.parse(JSON.stringify(encode(error))))

  for (const member of ClusterErrors.ClusterError.members) {
    it.prop(
      `${member._tag} (cluster): JSON of its encoded form decodes to an equal error`,
      [Schema.typeSchema(member as unknown as Schema.Schema<ClusterErrors.ClusterError, unknown>)],
      ([error]) => {
        const back = Schema.decodeUnknownSync(ClusterErrors.ClusterError)(
          JSON.parse(JSON.stringify(Schema.encodeSync(ClusterErrors.ClusterError)(error)))
        )
        assert.isTrue(Equal.equals(back, error))
        assert.isTrue(ClusterErrors.isClusterError(back))
        assert.isFalse(Errors.isAgentSessionError(back))
      },
      { fastCheck: { numRuns: 100, seed: 21 } }
    )
  }

  it("U19 the five errors with a Duration come back equal (they came back in nanoseconds, and unequal)", () => {
    const fields = { message: "m", body: "b", requestId: Option.some("r"), operation: "AgentApi.onboard" }
    const samples: ReadonlyArray<Errors.AgentSessionError> = [
      new Errors.RateLimited({ ...fields, retryAfter: Option.some(Duration.millis(1500)) }),
      new Errors.RateLimited({ ...fields, retryAfter: Option.some(Duration.millis(1500.5)) }),
      new Errors.ServerError({ ...fields, status: 503, retryAfter: Option.some(Duration.seconds(2)) }),
      new Errors.RequestTimeout({ operation: "AgentApi.getSession", timeout: Duration.seconds(30) }),
      new Errors.ConnectTimeout({ timeout: Duration.infinity }),
      new Errors.ConnectTimeout({ timeout: Duration.zero }),
      new Errors.ConnectTimeout({ timeout: Duration.nanos(BigInt(1)) }),
      new Errors.NeverConnected({ sessionId: "s", attempts: 3, lastError: "refused" })
    ]
    for (const error of samples) {
      const back = roundTrip(error)
      assert.isTrue(Equal.equals(back, error), `${error._tag} ${JSON.stringify(encode(error))}`)
      assert.deepStrictEqual(back, error)
      assert.strictEqual(back.message, error.message)
    }
    // A Duration keeps how it was made: whole milliseconds as such.
    assert.deepStrictEqual(encode(samples[3]!), { _tag: "RequestTimeout", operation: "AgentApi.getSession", timeout: { millis: 30000 } })
    // Durations encoded by earlier versions (always nanoseconds) still decode.
    const earlier = decode({ _tag: "ConnectTimeout", timeout: { nanos: "10000000000" } })
    assert.isTrue(earlier._tag === "ConnectTimeout" && Duration.equals(earlier.timeout, Duration.seconds(10)))
  })
})
