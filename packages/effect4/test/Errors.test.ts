import { assert, describe, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Equal from "effect/Equal"
import * as Fiber from "effect/Fiber"
import * as Headers from "effect/http/Headers"
import * as HttpClient from "effect/http/HttpClient"
import * as Logger from "effect/Logger"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as References from "effect/References"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import { TestClock } from "effect/testing"
import { expectTypeOf } from "vitest"
import * as Dialect from "../src/Dialect.js"
import * as Errors from "../src/Errors.js"
import { type Span, spying } from "./helpers/spans.js"
import {
  ACCOUNT_KEY,
  agentBody,
  json,
  makeApi,
  type Reply,
  text,
  validAgent,
  validSession
} from "./shared/StubHttpClient.js"

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
  ["418 echoing the key", () => json(418, { error_description: ACCOUNT_KEY }, { "x-request-id": ACCOUNT_KEY })],
  ["a transport failure naming the key", () => "refuse"],
  ["a 2xx with a bad body carrying a key", () => json(200, { agentId: 1, apiKey: ACCOUNT_KEY })],
  ["a 2xx that is not JSON, carrying the key", () => text(200, `<html>${ACCOUNT_KEY}</html>`)]
]

/** Every log line, with its annotations, as text. */
const capture = (lines: Array<string>) =>
  Logger.layer([Logger.make(({ message }) => void lines.push(JSON.stringify(message)))])

const runScenario = (reply: Reply, dialect: Dialect.Dialect) =>
  Effect.gen(function*() {
    const { api } = yield* makeApi(reply, {
      dialect,
      credentials: {
        apiKey: Redacted.make(ACCOUNT_KEY),
        agents: [{ agentId: "other", apiKey: Option.some(Redacted.make(OTHER_AGENT_KEY)) }]
      }
    })
    const fiber = yield* Effect.forkChild(
      Effect.flip(api.onboard(validAgent)).pipe(
        Effect.tap((error) => Effect.logError("onboard failed", error)),
        Effect.tapCause((cause) => Effect.logError(cause))
      )
    )
    yield* TestClock.adjust(Duration.minutes(5))
    return yield* Fiber.join(fiber)
  })

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

    it.effect("validation, credential and time-out errors are clean too", () =>
      Effect.gen(function*() {
        const { api } = yield* makeApi(() => Effect.never, { retry: Schedule.recurs(0) })
        assertErrorClean(yield* Effect.flip(api.createSession({ ...validSession, max_actions: 0 })))
        const timeout = yield* Effect.forkChild(Effect.flip(api.createSession(validSession)))
        yield* TestClock.adjust("31 seconds")
        assertErrorClean(yield* Fiber.join(timeout))
        const missing = yield* makeApi(() => json(200, agentBody()), { credentials: {} })
        assertErrorClean(yield* Effect.flip(missing.api.onboard(validAgent)))
        assertErrorClean(
          yield* Effect.flip(api.createSession(validSession, { agent: { agentId: "a", apiKey: Option.none() } }))
        )
      }))

    it("redactSecrets and truncateRaw (the protocol core's, re-exported)", () => {
      assert.strictEqual(Errors.redactSecrets("a KEY b KEY", ["KEY"]), "a <redacted> b <redacted>")
      assert.strictEqual(Errors.truncateRaw("y".repeat(5000)).length, 4096)
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
          const { api } = yield* makeApi(reply, { retry: Schedule.recurs(0) })
          const error = yield* Effect.flip(api.onboard(validAgent))
          assert.isTrue(Errors.isAgentSessionError(error), String(error))
        }
      }))
  })

  describe("guards", () => {
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
  })

  describe("as Effect 4 errors", () => {
    it.effect("each is yieldable in Effect.gen and caught by its tag", () =>
      Effect.gen(function*() {
        const caught = yield* Effect.gen(function*() {
          return yield* new Errors.MissingAgentKey({ agentId: "a-1" })
        }).pipe(Effect.catchTag("MissingAgentKey", (error) => Effect.succeed(error.agentId)))
        assert.strictEqual(caught, "a-1")
      }))

    it("the messages of the errors without a message field are computed from their fields", () => {
      assert.strictEqual(
        new Errors.ConnectTimeout({ timeout: Duration.seconds(10) }).message,
        "The event channel did not open within 10s"
      )
      assert.include(new Errors.MissingCredentials({ operation: "onboard", variable: "V" }).message, "set V")
      assert.include(
        new Errors.OutcomeUnknown({
          operation: "AgentApi.createSession",
          idempotencyKey: "k-1",
          attempts: 2,
          reason: "RequestTimeout",
          detail: "no response"
        }).message,
        "Idempotency-Key k-1"
      )
      assert.include(
        new Errors.SessionEndedWithoutComplete({ sessionId: "s", lastError: Option.some("boom") }).message,
        "without complete: boom"
      )
      assert.include(Cause.pretty(Cause.fail(new Errors.FrameTooLarge({ size: 9, limit: 4 }))), "over the limit of 4")
    })

    it("orphanNotice names the session only when it may still be running", () => {
      const running = new Errors.ConnectionLost({ sessionId: "s-9", mayStillBeRunning: true, attempts: 3, lastError: "x" })
      assert.include(Errors.orphanNotice(running) ?? "", "attach s-9")
      assert.isUndefined(Errors.orphanNotice(new Errors.ConnectionLost({ attempts: 3, lastError: "x" })))
      assert.isUndefined(Errors.orphanNotice(new Error("x")))
    })
  })
})

describe("Errors encode to JSON and back", () => {
  const encode = Schema.encodeSync(Errors.AgentSessionError)
  const decode = Schema.decodeUnknownSync(Errors.AgentSessionError)

  it.prop(
    "U19 every error of the union survives JSON.stringify of its encoded form and decodes back",
    [Schema.toType(Errors.AgentSessionError)],
    ([error]) => {
      const encoded = encode(error)
      const back = decode(JSON.parse(JSON.stringify(encoded)))
      assert.strictEqual(back._tag, error._tag)
      assert.isTrue(Errors.isAgentSessionError(back))
      assert.strictEqual(JSON.stringify(encode(back)), JSON.stringify(encoded))
    },
    { arbitrary: { runs: 1000, seed: 12 } }
  )

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

describe("Errors come back equal from JSON, member by member", () => {
  const encode = Schema.encodeSync(Errors.AgentSessionError)
  const decode = Schema.decodeUnknownSync(Errors.AgentSessionError)
  const roundTrip = (error: Errors.AgentSessionError) => decode(JSON.parse(JSON.stringify(encode(error))))

  // Each class on its own, so that every class is generated (optional fields absent, present or
  // given as `undefined`; every kind of `Duration`).
  for (const member of Errors.AgentSessionError.members) {
    it.prop(
      `U19 ${member.identifier}: JSON of its encoded form decodes to an error Equal.equals the original`,
      [Schema.toType(member as unknown as Schema.Codec<Errors.AgentSessionError, unknown>)],
      ([error]) => {
        const back = roundTrip(error)
        assert.isTrue(Equal.equals(back, error), `${JSON.stringify(encode(error))} came back different`)
        assert.isTrue(Errors.isAgentSessionError(back))
        assert.strictEqual(back.message, error.message)
      },
      { arbitrary: { runs: 100, seed: 21 } }
    )
  }

  it("an optional field given as undefined is the same as one not given, and survives JSON", () => {
    const given = new Errors.MalformedFrame({ raw: "x", message: "m", sessionId: undefined, mayStillBeRunning: undefined })
    const absent = new Errors.MalformedFrame({ raw: "x", message: "m" })
    assert.isTrue(Equal.equals(given, absent))
    assert.isTrue(Equal.equals(roundTrip(given), given))
    const inSession = new Errors.MalformedFrame({ raw: "x", message: "m", sessionId: "s", mayStillBeRunning: true })
    assert.isFalse(Equal.equals(inSession, absent))
    assert.isTrue(Equal.equals(roundTrip(inSession), inSession))
  })
})

describe("Errors are built from the fields that matter", () => {
  it("the HTTP status errors default their status, message, body and request id", () => {
    const error = new Errors.Unauthorized({ operation: "AgentApi.createSession" })
    assert.strictEqual(error.status, 401)
    assert.strictEqual(error.body, "")
    assert.isTrue(Option.isNone(error.requestId))
    assert.strictEqual(error.message, "the key is missing or invalid")
    const statuses: ReadonlyArray<readonly [Errors.AgentSessionError, number]> = [
      [new Errors.BadRequest({ operation: "x" }), 400],
      [new Errors.Forbidden({ operation: "x" }), 403],
      [new Errors.NotFound({ operation: "x" }), 404],
      [new Errors.Conflict({ operation: "x" }), 409],
      [new Errors.PayloadTooLarge({ operation: "x" }), 413],
      [new Errors.RateLimited({ operation: "x" }), 429],
      [new Errors.ServerError({ operation: "x" }), 500]
    ]
    for (const [built, status] of statuses) assert.isTrue("status" in built && built.status === status, built._tag)
    const limited = new Errors.RateLimited({ operation: "x" })
    assert.isTrue(Option.isNone(limited.retryAfter))
  })

  it("the other errors default what a test rarely cares about", () => {
    assert.strictEqual(new Errors.MissingCredentials({ operation: "onboard" }).variable, "AGENT_SESSION_API_KEY")
    assert.isTrue(Duration.equals(new Errors.RequestTimeout({ operation: "x" }).timeout, Duration.seconds(30)))
    assert.strictEqual(new Errors.ResponseDecodeError({ operation: "x", message: "m" }).status, 200)
    const unknown = new Errors.OutcomeUnknown({ operation: "AgentApi.createSession", idempotencyKey: "k", reason: "RequestTimeout" })
    assert.deepStrictEqual([unknown.attempts, unknown.detail], [1, ""])
    assert.isTrue(Option.isNone(new Errors.SessionEndedWithoutComplete({ sessionId: "s" }).lastError))
  })
})

describe("Errors: the types each class gives (built from the core's table)", () => {
  it("fields, constructor inputs, a derived message read-only, the mark", () => {
    const forbidden = new Errors.Forbidden({ operation: "AgentApi.onboard" })
    expectTypeOf(forbidden._tag).toEqualTypeOf<"Forbidden">()
    expectTypeOf(forbidden.status).toEqualTypeOf<number>()
    expectTypeOf(forbidden.requestId).toEqualTypeOf<Option.Option<string>>()
    expectTypeOf(forbidden[Errors.TypeId]).toEqualTypeOf<Errors.TypeId>()
    const timeout = new Errors.RequestTimeout({ operation: "AgentApi.getSession" })
    expectTypeOf(timeout.timeout).toEqualTypeOf<Duration.Duration>()
    const rateLimited = new Errors.RateLimited({ operation: "AgentApi.onboard" })
    expectTypeOf(rateLimited.retryAfter).toEqualTypeOf<Option.Option<Duration.Duration>>()
    const lost = new Errors.ConnectionLost({ attempts: 3, lastError: "reset" })
    expectTypeOf(lost.sessionId).toEqualTypeOf<string | undefined>()
    expectTypeOf(lost.mayStillBeRunning).toEqualTypeOf<boolean | undefined>()
    const notPending = new Errors.RequestNotPending({ resourceType: "r", actionSessionId: "a", reason: "channel-closed" })
    expectTypeOf(notPending.reason).toEqualTypeOf<"never-received" | "already-answered" | "channel-closed">()
    const ended = new Errors.SessionEndedWithoutComplete({ sessionId: "s" })
    expectTypeOf(ended.lastError).toEqualTypeOf<Option.Option<string>>()
    // @ts-expect-error the operation has no default
    assert.throws(() => new Errors.Forbidden({}))
    // @ts-expect-error not a reason
    assert.throws(() => new Errors.RequestNotPending({ resourceType: "r", actionSessionId: "a", reason: "gone" }))
    // @ts-expect-error a message derived from the fields is read-only
    assert.throws(() => (timeout.message = "x"))
    assert.strictEqual(forbidden.status, 403)
    assert.isTrue(Option.isNone(ended.lastError))
    assert.strictEqual(timeout.message, "AgentApi.getSession got no response within 30s")
  })
})
