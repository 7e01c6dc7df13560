import { assert, describe, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Errors from "../src/Errors.js"

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
      assert.deepStrictEqual(encode(back), encode(error), error._tag)
      assert.strictEqual(back.message, error.message)
    }
    const rateLimited = decode(JSON.parse(JSON.stringify(encode(samples[0]!))))
    assert.isTrue(rateLimited._tag === "RateLimited" && Option.isSome(rateLimited.retryAfter))
    assert.deepStrictEqual(encode(samples[3]!), { _tag: "ConnectTimeout", timeout: "Infinity" } as never)
  })
})
