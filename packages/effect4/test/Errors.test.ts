/**
 * The SDK's errors, the cases whose text is Effect 4's: U18 with Effect 4's logger, tracer, span
 * header filter and redacted header names, and the encoded form of a `Duration` (U19). The cases
 * that read the same on both lines are in `shared/Errors.test.ts`.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Equal from "effect/Equal"
import * as Headers from "effect/http/Headers"
import * as HttpClient from "effect/http/HttpClient"
import * as Logger from "effect/Logger"
import * as Option from "effect/Option"
import * as References from "effect/References"
import * as Schema from "effect/Schema"
import * as Dialect from "../src/Dialect.js"
import * as Errors from "../src/Errors.js"
import { type Span, spying } from "./helpers/spans.js"
import { assertErrorClean, assertNoKey, runScenario, scenarios } from "./shared/errors.js"
import { agentBody, json, makeApi, validAgent } from "./shared/StubHttpClient.js"

/** Every log line, with its annotations, as text. */
const capture = (lines: Array<string>) =>
  Logger.layer([Logger.make(({ message }) => void lines.push(JSON.stringify(message)))])

describe("Errors", () => {
  describe("no API key in any error, log line or span", () => {
    for (const dialect of [Dialect.documented, Dialect.observed]) {
      for (const [label, reply] of scenarios) {
        it.effect(`U18 ${label} (${dialect.name}): error, logs and spans are clean`, () =>
          Effect.gen(function*() {
            const lines: Array<string> = []
            const spans: Array<Span> = []
            const error = yield* runScenario(reply, dialect).pipe(
              Effect.withTracer(spying(spans)),
              // Every header captured in spans: the SDK still redacts their values.
              Effect.provideService(HttpClient.TracerHeaderFilter, () => true),
              Effect.provide(capture(lines)),
              Effect.provideService(References.MinimumLogLevel, "All")
            )
            assert.isTrue(Errors.isAgentSessionError(error))
            assertErrorClean(error)
            assert.isAbove(lines.length, 0, "something was logged")
            for (const line of lines) assertNoKey("log line", line)
            assert.isAbove(spans.length, 0, "spans were made")
            for (const span of spans) assertNoKey(`span ${span.name}`, JSON.stringify([...span.attributes.entries()]))
          }))
      }
    }

    it.effect("the auth headers stay redacted in captured spans even when the caller clears the redacted names", () =>
      Effect.gen(function*() {
        const spans: Array<Span> = []
        for (const dialect of [Dialect.documented, Dialect.observed]) {
          const { api } = yield* makeApi(() => json(200, agentBody()), { dialect })
          yield* api.onboard(validAgent).pipe(
            Effect.withTracer(spying(spans)),
            Effect.provideService(HttpClient.TracerHeaderFilter, () => true),
            Effect.provideService(Headers.CurrentRedactedNames, [])
          )
        }
        const names = spans.flatMap((span) => [...span.attributes.keys()])
        assert.include(names, "http.request.header.authorization")
        assert.include(names, "http.request.header.x-api-key")
        for (const span of spans) assertNoKey(`span ${span.name}`, JSON.stringify([...span.attributes.entries()]))
      }))
  })
})

describe("Errors encode to JSON and back", () => {
  const encode = Schema.encodeSync(Errors.AgentSessionError)
  const decode = Schema.decodeUnknownSync(Errors.AgentSessionError)

  it("Option and Duration fields round-trip, infinity included", () => {
    const fields = { status: 429, message: "m", body: "b", requestId: Option.some("r"), operation: "AgentApi.onboard" }
    const samples: ReadonlyArray<Errors.AgentSessionError> = [
      new Errors.RateLimited({ ...fields, retryAfter: Option.some(Duration.millis(1500.5)) }),
      new Errors.ServerError({ ...fields, status: 503, retryAfter: Option.none() }),
      new Errors.RequestTimeout({ operation: "AgentApi.onboard", timeout: Duration.seconds(30) }),
      new Errors.ConnectTimeout({ timeout: Duration.infinity }),
      new Errors.SessionEndedWithoutComplete({ sessionId: "s", lastError: Option.some("boom") }),
      new Errors.ResponseTooLarge({ operation: "AgentApi.onboard", status: 200, size: 5, limit: 4 })
    ]
    for (const error of samples) {
      const back = decode(JSON.parse(JSON.stringify(encode(error))))
      assert.strictEqual(JSON.stringify(encode(back)), JSON.stringify(encode(error)), error._tag)
      assert.strictEqual(back.message, error.message)
    }
    const rateLimited = decode(JSON.parse(JSON.stringify(encode(samples[0]!))))
    assert.isTrue(rateLimited._tag === "RateLimited" && Option.isSome(rateLimited.retryAfter))
    assert.deepStrictEqual(JSON.parse(JSON.stringify(encode(samples[3]!))), { _tag: "ConnectTimeout", timeout: "Infinity" })
    // Whole milliseconds stay milliseconds, anything else nanoseconds: each decodes as it was made.
    const timeouts = [Duration.seconds(30), Duration.millis(1500.5), Duration.nanos(BigInt(7))]
    for (const timeout of timeouts) {
      const error = new Errors.RequestTimeout({ operation: "AgentApi.getSession", timeout })
      const back = decode(JSON.parse(JSON.stringify(encode(error))))
      assert.isTrue(back._tag === "RequestTimeout" && Equal.equals(back.timeout, timeout), Duration.format(timeout))
    }
  })
})
