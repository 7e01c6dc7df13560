import * as Headers from "@effect/platform/Headers"
import { assert, describe, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import * as TestClock from "effect/TestClock"
import type * as Tracer from "effect/Tracer"
import * as Errors from "../src/Errors.js"
import * as Dialect from "../src/Dialect.js"
import { capture, spying } from "./helpers/sdk.js"
import { ACCOUNT_KEY, agentBody, json, makeApi, type Reply, text, validAgent, validSession } from "./helpers/StubHttpClient.js"

const AGENT_KEY = "sk-agent-SECRET-77aa01"
const OTHER_AGENT_KEY = "sk-other-agent-SECRET-5e5e"
const KEYS = [ACCOUNT_KEY, AGENT_KEY, OTHER_AGENT_KEY]

const assertNoKey = (label: string, text: string): void => {
  for (const key of KEYS) assert.notInclude(text, key, `${label} leaks a key`)
}

const assertErrorClean = (error: Errors.AgentSessionError): void => {
  assertNoKey(`${error._tag}.message`, error.message)
  assertNoKey(`String(${error._tag})`, String(error))
  assertNoKey(`JSON.stringify(${error._tag})`, JSON.stringify(error))
  assertNoKey(`Cause.pretty(${error._tag})`, Cause.pretty(Cause.fail(error)))
}

/** The scenarios in which the service (or the network) might echo a key back. */
const scenarios: ReadonlyArray<readonly [string, Reply]> = [
  ["401 echoing the key in JSON", (r) => json(401, { error: `invalid key ${r.headers["authorization"]}` })],
  ["403 echoing the key in text", () => text(403, `key ${ACCOUNT_KEY} may not do this`)],
  ["400 echoing the request headers", (r) => json(400, { message: "bad", headers: r.headers })],
  ["409 echoing another agent's key", () => json(409, { error: `taken by ${OTHER_AGENT_KEY}` })],
  ["422 with an apiKey member", () => json(422, { error: "bad", apiKey: "sk-unknown-to-us" })],
  ["429 echoing the key", () => json(429, { error: `slow down ${ACCOUNT_KEY}` }, { "retry-after": "1" })],
  ["503 echoing the key", () => text(503, `down; your key was ${ACCOUNT_KEY}`)],
  ["418 echoing the key", () => json(418, { error_description: ACCOUNT_KEY })],
  ["a transport failure naming the key", () => "refuse"],
  ["a 2xx with a bad body carrying a key", () => json(200, { agentId: 1, apiKey: ACCOUNT_KEY })],
  ["a 2xx that is not JSON, carrying the key", () => text(200, `<html>${ACCOUNT_KEY}</html>`)]
]

const runScenario = (reply: Reply, dialect: Dialect.Dialect) =>
  Effect.gen(function*() {
    const { api } = yield* makeApi(reply, {
      dialect,
      credentials: {
        apiKey: Redacted.make(ACCOUNT_KEY),
        agents: [{ agentId: "other", apiKey: Option.some(Redacted.make(OTHER_AGENT_KEY)) }]
      }
    })
    const fiber = yield* Effect.fork(
      Effect.flip(api.onboard(validAgent)).pipe(
        Effect.tap((error) => Effect.logError("onboard failed", error)),
        Effect.tapErrorCause((cause) => Effect.logError(cause))
      )
    )
    yield* TestClock.adjust(Duration.minutes(5))
    return yield* Fiber.join(fiber)
  })

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

    it.effect("validation, credential and time-out errors are clean too", () =>
      Effect.gen(function*() {
        const { api } = yield* makeApi(() => Effect.never, { retry: Schedule.stop })
        const invalid = yield* Effect.flip(api.createSession({ ...validSession, max_actions: 0 }))
        assertErrorClean(invalid)
        const timeout = yield* Effect.fork(Effect.flip(api.createSession(validSession)))
        yield* TestClock.adjust("31 seconds")
        assertErrorClean(yield* Fiber.join(timeout))
        const missing = yield* makeApi(() => json(200, agentBody()), { credentials: {} })
        assertErrorClean(yield* Effect.flip(missing.api.onboard(validAgent)))
        const noAgentKey = yield* Effect.flip(
          api.createSession(validSession, { agent: { agentId: "a", apiKey: Option.none() } })
        )
        assertErrorClean(noAgentKey)
      }))

    it("redactSecrets and truncateRaw", () => {
      assert.strictEqual(Errors.redactSecrets("a KEY b KEY", ["KEY"]), "a <redacted> b <redacted>")
      assert.strictEqual(Errors.redactSecrets("nothing", ["", "x"]), "nothing")
      assert.strictEqual(Errors.truncateRaw("y".repeat(5000)).length, 4096)
      assert.strictEqual(Errors.truncateRaw("short"), "short")
    })
  })

  describe("guards", () => {
    const http = {
      message: "m",
      body: "",
      requestId: Option.none(),
      operation: "AgentApi.createSession"
    }
    const retryable: ReadonlyArray<Errors.AgentSessionError> = [
      new Errors.TransportError({ operation: "x", message: "reset" }),
      new Errors.RequestTimeout({ operation: "x", timeout: Duration.seconds(30) }),
      new Errors.RateLimited({ ...http, status: 429, retryAfter: Option.none() }),
      new Errors.ServerError({ ...http, status: 500, retryAfter: Option.none() }),
      new Errors.ServerError({ ...http, status: 503, retryAfter: Option.some(Duration.seconds(1)) }),
      new Errors.UnexpectedStatus({ ...http, status: 408 })
    ]
    const notRetryable: ReadonlyArray<Errors.AgentSessionError> = [
      new Errors.BadRequest({ ...http, status: 400 }),
      new Errors.BadRequest({ ...http, status: 422 }),
      new Errors.Unauthorized({ ...http, status: 401 }),
      new Errors.Forbidden({ ...http, status: 403 }),
      new Errors.NotFound({ ...http, status: 404 }),
      new Errors.Conflict({ ...http, status: 409 }),
      new Errors.PayloadTooLarge({ ...http, status: 413 }),
      new Errors.UnexpectedStatus({ ...http, status: 418 }),
      new Errors.InvalidRequest({ subject: "s", message: "m" }),
      new Errors.MissingCredentials({ operation: "onboard", variable: "AGENT_SESSION_API_KEY" }),
      new Errors.MissingAgentKey({ agentId: "a" }),
      new Errors.ResponseDecodeError({ operation: "x", status: 200, message: "m", body: "" }),
      new Errors.InsecureTransport({ url: "http://x" })
    ]

    it("U07 isRetryable: transport, time-out, 408, 429, 5xx only", () => {
      for (const error of retryable) assert.isTrue(Errors.isRetryable(error), `${error._tag} ${String(error)}`)
      for (const error of notRetryable) assert.isFalse(Errors.isRetryable(error), `${error._tag} ${String(error)}`)
    })

    it("isAgentSessionError: every error of the SDK, nothing else", () => {
      for (const error of [...retryable, ...notRetryable]) assert.isTrue(Errors.isAgentSessionError(error))
      for (const value of [new Error("x"), { _tag: "Unauthorized" }, null, undefined, "Unauthorized", 1]) {
        assert.isFalse(Errors.isAgentSessionError(value))
      }
    })

    it.effect("every failure of AgentApi is an AgentSessionError (no platform error leaks)", () =>
      Effect.gen(function*() {
        const replies: ReadonlyArray<Reply> = [
          () => json(500, {}),
          () => "refuse",
          () => text(200, "not json"),
          () => json(200, { wrong: true }),
          () => json(301, {}),
          () => new Response(null, { status: 204 })
        ]
        for (const reply of replies) {
          const { api } = yield* makeApi(reply, { retry: Schedule.stop })
          const error = yield* Effect.flip(api.onboard(validAgent))
          assert.isTrue(Errors.isAgentSessionError(error), String(error))
        }
      }))
  })
})

describe("Errors encode to JSON and back (issue 12, defect 13)", () => {
  const encode = Schema.encodeSync(Errors.AgentSessionError)
  const decode = Schema.decodeUnknownSync(Errors.AgentSessionError)

  it.prop(
    "U19 every error of the union survives JSON.stringify of its encoded form and decodes back",
    [Schema.typeSchema(Errors.AgentSessionError)],
    ([error]) => {
      const encoded = encode(error)
      const back = decode(JSON.parse(JSON.stringify(encoded)))
      assert.strictEqual(back._tag, error._tag)
      assert.isTrue(Errors.isAgentSessionError(back))
      assert.strictEqual(JSON.stringify(encode(back)), JSON.stringify(encoded))
    },
    { fastCheck: { numRuns: 1000, seed: 12 } }
  )

  it("the five errors the review found round-trip, Option and Duration fields included", () => {
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
      assert.deepStrictEqual(encode(back), encode(error), error._tag)
      assert.strictEqual(back.message, error.message)
    }
    const rateLimited = decode(JSON.parse(JSON.stringify(encode(samples[0]!))))
    assert.isTrue(rateLimited._tag === "RateLimited" && Option.isSome(rateLimited.retryAfter))
  })
})
