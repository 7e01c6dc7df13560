/**
 * `AgentApi` over a stubbed `HttpClient` under the `TestClock` (retries, time-outs, the
 * idempotency key, metrics, spans, transport security), written once for both editions: no case
 * differs between the lines, so neither edition keeps an `AgentApi.test.ts` of its own.
 */
import { assert, describe, it } from "@effect/vitest"
import { readFileSync } from "node:fs"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as AgentApi from "../../src/AgentApi.js"
import * as Credentials from "../../src/Credentials.js"
import * as Dialect from "../../src/Dialect.js"
import * as Metrics from "../../src/Metrics.js"
import type { AgentApiError } from "../../src/Errors.js"
import { userAgent, version } from "../../src/internal/version.js"
import { checkAddress, printableUrl } from "../../binding/internal/eventStream.js"
import { Url } from "effect-agent-session-core"
import {
  ACCOUNT_KEY,
  agentBody,
  json,
  makeApi,
  makeStub,
  sessionBody,
  text,
  validAgent,
  validSession
} from "./StubHttpClient.js"
import {
  type DurationInput,
  forkChild,
  HttpClient,
  httpSpanName,
  noRetry,
  pollNow,
  type RecordedSpan,
  type Running,
  scoped,
  spacedRetries,
  spanAuthorization,
  TestClock,
  typedFailure,
  withEnv,
  withSpans
} from "../helpers/line.js"

const failureOf = <A>(exit: Exit.Exit<A, AgentApiError>): AgentApiError => typedFailure(exit)

/** Whether a forked fiber is still running. */
const running = (fiber: Running<unknown, unknown>): boolean => pollNow(fiber) === undefined

/** Advances virtual time in small steps, letting the forked request run between steps. */
const advance = (total: DurationInput, step: DurationInput = "100 millis") =>
  Effect.gen(function*() {
    const steps = Math.ceil(Duration.toMillis(total) / Duration.toMillis(step))
    for (let i = 0; i < steps; i++) yield* TestClock.adjust(step)
  })

describe("AgentApi", () => {
  describe("retry (U21)", () => {
    scoped("U21 503 twice then 200 succeeds after 3 attempts", () =>
      Effect.gen(function*() {
        const { api, stub } = yield* makeApi((_, attempt) =>
          attempt <= 2 ? json(503, { error: "busy" }) : json(200, sessionBody())
        )
        const fiber = yield* forkChild(api.createSession(validSession))
        yield* advance("5 seconds")
        const session = yield* Fiber.join(fiber)
        assert.strictEqual(session.session_id, "sess-1")
        assert.strictEqual(yield* stub.count, 3)
      }))
    scoped("U21 gives up after the default 2 retries with the last ServerError", () =>
      Effect.gen(function*() {
        const { api, stub } = yield* makeApi(() => json(503, { message: "unavailable" }))
        const fiber = yield* forkChild(Effect.exit(api.createSession(validSession)))
        yield* advance("5 seconds")
        const error = failureOf(yield* Fiber.join(fiber))
        assert.strictEqual(error._tag, "ServerError")
        assert.strictEqual(yield* stub.count, 3)
      }))
    for (const status of [400, 401, 403, 404, 409, 413, 422]) {
      scoped(`U07 ${status} is not retried (exactly 1 attempt)`, () =>
        Effect.gen(function*() {
          const { api, stub } = yield* makeApi(() => json(status, { error: "no" }))
          const fiber = yield* forkChild(Effect.flip(api.createSession(validSession)))
          yield* advance("30 seconds", "1 second")
          const error = yield* Fiber.join(fiber)
          assert.isTrue("status" in error && error.status === status)
          assert.strictEqual(yield* stub.count, 1)
        }))
    }
    scoped("U07 408 is retried", () =>
      Effect.gen(function*() {
        const { api, stub } = yield* makeApi((_, attempt) =>
          attempt === 1 ? json(408, {}) : json(200, sessionBody())
        )
        const fiber = yield* forkChild(api.createSession(validSession))
        yield* advance("2 seconds")
        yield* Fiber.join(fiber)
        assert.strictEqual(yield* stub.count, 2)
      }))
    scoped("U07 a transport failure is a TransportError (key scrubbed) and is retried", () =>
      Effect.gen(function*() {
        const { api, stub } = yield* makeApi(() => "refuse")
        const fiber = yield* forkChild(Effect.flip(api.createSession(validSession)))
        yield* advance("5 seconds")
        const error = yield* Fiber.join(fiber)
        assert.strictEqual(error._tag, "TransportError")
        assert.strictEqual(yield* stub.count, 3)
        assert.include(error.message, "ECONNREFUSED")
        assert.notInclude(error.message, ACCOUNT_KEY)
      }))

    it.effect("U21 honours Retry-After: 2 on 429 (waits at least 2 s of virtual time)", () =>
      Effect.gen(function*() {
        const { api, stub } = yield* makeApi((_, attempt) =>
          attempt === 1 ? json(429, { error: "slow down" }, { "retry-after": "2" }) : json(200, sessionBody())
        )
        const fiber = yield* forkChild(api.createSession(validSession))
        yield* advance("1900 millis")
        assert.isTrue(running(fiber), "not done at 1.9 s")
        assert.strictEqual(yield* stub.count, 1)
        yield* advance("200 millis")
        const session = yield* Fiber.join(fiber)
        assert.strictEqual(session.session_id, "sess-1")
        assert.strictEqual(yield* stub.count, 2)
      }))

    it.effect("U21 honours Retry-After given as an HTTP date", () =>
      Effect.gen(function*() {
        // The TestClock starts at the epoch: a date 3 s after it asks for a 3 s wait.
        const date = new Date(3000).toUTCString()
        const { api, stub } = yield* makeApi((_, attempt) =>
          attempt === 1 ? json(429, {}, { "retry-after": date }) : json(200, sessionBody())
        )
        const fiber = yield* forkChild(api.createSession(validSession))
        yield* advance("2900 millis")
        assert.isTrue(running(fiber), "not done at 2.9 s")
        yield* advance("200 millis")
        yield* Fiber.join(fiber)
        assert.strictEqual(yield* stub.count, 2)
      }))

    it.effect("U21 honours retry-after-ms before Retry-After", () =>
      Effect.gen(function*() {
        const { api, stub } = yield* makeApi((_, attempt) =>
          attempt === 1
            ? json(429, {}, { "retry-after-ms": "4000", "retry-after": "1" })
            : json(200, sessionBody())
        )
        const fiber = yield* forkChild(api.createSession(validSession))
        yield* advance("3900 millis")
        assert.isTrue(running(fiber), "not done at 3.9 s")
        yield* advance("200 millis")
        yield* Fiber.join(fiber)
        assert.strictEqual(yield* stub.count, 2)
      }))

    it.effect("U21 honours Retry-After on a 503 as well", () =>
      Effect.gen(function*() {
        const { api, stub } = yield* makeApi((_, attempt) =>
          attempt === 1 ? json(503, {}, { "retry-after": "3" }) : json(200, sessionBody())
        )
        const fiber = yield* forkChild(api.createSession(validSession))
        yield* advance("2900 millis")
        assert.isTrue(running(fiber))
        yield* advance("200 millis")
        yield* Fiber.join(fiber)
        assert.strictEqual(yield* stub.count, 2)
      }))

    it.effect("U21 caps Retry-After at maxRetryAfter (default 60 s)", () =>
      Effect.gen(function*() {
        const { api, stub } = yield* makeApi((_, attempt) =>
          attempt === 1 ? json(429, {}, { "retry-after": "3600" }) : json(200, sessionBody())
        )
        const fiber = yield* forkChild(api.createSession(validSession))
        yield* advance("59 seconds", "1 second")
        yield* advance("900 millis")
        assert.isTrue(running(fiber), "not done at 59.9 s")
        yield* advance("200 millis")
        yield* Fiber.join(fiber)
        assert.strictEqual(yield* stub.count, 2)
      }))

    it.effect("U21 caps Retry-After at a custom maxRetryAfter", () =>
      Effect.gen(function*() {
        const { api, stub } = yield* makeApi(
          (_, attempt) => attempt === 1 ? json(429, {}, { "retry-after": "30" }) : json(200, sessionBody()),
          { maxRetryAfter: "5 seconds" }
        )
        const fiber = yield* forkChild(api.createSession(validSession))
        yield* advance("4900 millis")
        assert.isTrue(running(fiber))
        yield* advance("200 millis")
        yield* Fiber.join(fiber)
        assert.strictEqual(yield* stub.count, 2)
      }))

    it.effect("U21 a custom retry schedule replaces the default (a schedule of no retry: one attempt)", () =>
      Effect.gen(function*() {
        const { api, stub } = yield* makeApi(() => json(503, {}), { retry: noRetry })
        const error = yield* Effect.flip(api.createSession(validSession))
        assert.strictEqual(error._tag, "ServerError")
        assert.strictEqual(yield* stub.count, 1)
      }))

    it.effect("U21 a custom schedule with more recurrences is used", () =>
      Effect.gen(function*() {
        const { api, stub } = yield* makeApi(
          (_, attempt) => attempt <= 4 ? json(503, {}) : json(200, sessionBody()),
          { retry: spacedRetries(1000, 5) }
        )
        const fiber = yield* forkChild(api.createSession(validSession))
        yield* advance("5 seconds")
        yield* Fiber.join(fiber)
        assert.strictEqual(yield* stub.count, 5)
      }))
  })

  describe("clients that filter statuses themselves", () => {
    it.effect("U07 a response reported as an error by the caller's client is mapped once, by its status", () =>
      Effect.gen(function*() {
        const stub = yield* makeStub((_, attempt) => attempt === 1 ? json(409, { error: "name taken" }) : json(201, agentBody()))
        // Every response, 2xx included, comes back as a ResponseError from this client.
        const filtering = Layer.effect(
          HttpClient.HttpClient,
          Effect.map(Effect.gen(function*() {
            return yield* HttpClient.HttpClient
          }), (client) => HttpClient.filterStatus(client, () => false))
        ).pipe(Layer.provide(stub.layer))
        const api = yield* AgentApi.make({ baseUrl: "https://agents.test" }).pipe(
          Effect.provide(Layer.merge(filtering, Credentials.layer({ apiKey: Redacted.make(ACCOUNT_KEY) }))),
          Effect.orDie
        )
        const attempts = (status: string) =>
          Metrics.counterValue("agent_session_http_attempts_total", { operation: "onboard", status })
        const before = yield* attempts("201")
        const conflict = yield* Effect.flip(api.onboard(validAgent))
        assert.strictEqual(conflict._tag, "Conflict")
        const agent = yield* api.onboard(validAgent)
        assert.strictEqual(agent.name, "scout")
        assert.strictEqual((yield* attempts("201")) - before, 1)
        assert.strictEqual(yield* stub.count, 2)
      }))
  })

  describe("Idempotency-Key (issue 20: retries reuse it)", () => {
    const keysOf = (requests: ReadonlyArray<{ readonly headers: Readonly<Record<string, string>> }>) =>
      requests.map((request) => request.headers["idempotency-key"])

    it.effect("createSession: every retry sends the same Idempotency-Key; the next call a new one", () =>
      Effect.gen(function*() {
        const { api, stub } = yield* makeApi((_, attempt) =>
          attempt === 2 || attempt === 3 ? json(503, { error: "busy" }) : json(200, sessionBody())
        )
        const fiber = yield* forkChild(Effect.zip(api.createSession(validSession), api.createSession(validSession)))
        yield* advance("5 seconds")
        yield* Fiber.join(fiber)
        const keys = keysOf(yield* stub.requests)
        assert.strictEqual(keys.length, 4, "one call, then a second one retried twice")
        const [first, ...retried] = keys
        assert.match(first ?? "", /^[0-9a-f-]{36}$/, "a random key")
        assert.deepStrictEqual(retried, [retried[0], retried[0], retried[0]], "the three attempts of one call: one key")
        assert.notStrictEqual(retried[0], first, "another call: another key")
      }))

    it.effect("createSession: the caller's key is sent on every attempt", () =>
      Effect.gen(function*() {
        const { api, stub } = yield* makeApi((_, attempt) =>
          attempt <= 2 ? json(503, { error: "busy" }) : json(200, sessionBody())
        )
        const fiber = yield* forkChild(api.createSession(validSession, { idempotencyKey: "caller-key-1" }))
        yield* advance("5 seconds")
        yield* Fiber.join(fiber)
        assert.deepStrictEqual(keysOf(yield* stub.requests), ["caller-key-1", "caller-key-1", "caller-key-1"])
      }))

    it.effect("onboard: every retry sends the same Idempotency-Key", () =>
      Effect.gen(function*() {
        const { api, stub } = yield* makeApi((_, attempt) =>
          attempt <= 2 ? json(503, { error: "busy" }) : json(200, agentBody())
        )
        const fiber = yield* forkChild(api.onboard(validAgent))
        yield* advance("5 seconds")
        yield* Fiber.join(fiber)
        const keys = keysOf(yield* stub.requests)
        assert.strictEqual(keys.length, 3)
        assert.isString(keys[0])
        assert.deepStrictEqual(keys, [keys[0], keys[0], keys[0]])
      }))
  })

  describe("metrics", () => {
    scoped("records HTTP attempts and retries by operation and status", () =>
      Effect.gen(function*() {
        const attempts = (status: string) =>
          Metrics.counterValue("agent_session_http_attempts_total", { operation: "onboard", status })
        const retries = (status: string) =>
          Metrics.counterValue("agent_session_http_retries_total", { operation: "onboard", status })
        const before = [yield* attempts("503"), yield* retries("503"), yield* attempts("201")]
        const { api } = yield* makeApi((_, attempt) => attempt === 1 ? json(503, {}) : json(201, agentBody()))
        const fiber = yield* forkChild(api.onboard(validAgent))
        yield* advance("2 seconds")
        yield* Fiber.join(fiber)
        const after = [yield* attempts("503"), yield* retries("503"), yield* attempts("201")]
        assert.deepStrictEqual(after.map((n, i) => n - (before[i] ?? 0)), [1, 1, 1])
      }))
  })

  describe("spans", () => {
    it.effect("createSession: one AgentApi.createSession span with the dialect, the address and the session id; the HTTP span under it", () =>
      Effect.gen(function*() {
        const spans: Array<RecordedSpan> = []
        const { api } = yield* makeApi(() => json(200, sessionBody()))
        yield* withSpans(spans, api.createSession(validSession))
        const created = spans.filter((span) => span.name === "AgentApi.createSession")
        assert.strictEqual(created.length, 1)
        const span = created[0]!
        assert.strictEqual(span.attributes.get("agent_session.session_id"), "sess-1")
        assert.strictEqual(span.attributes.get("agent_session.dialect"), "documented")
        assert.isDefined(span.attributes.get("server.address"))
        const http = spans.filter((s) => s.kind === "client")
        assert.deepStrictEqual(http.map((s) => s.name), [httpSpanName("POST")])
        assert.strictEqual(http.length, 1)
        assert.isTrue(
          Option.exists(http[0]!.parent, (parent) => parent.spanId === span.spanId),
          "the HTTP span is a child of the call's"
        )
        // Effect 4 captures no header by default; Effect 3 captures the auth header, its value redacted.
        assert.strictEqual(http[0]!.attributes.get("http.request.header.authorization"), spanAuthorization)
      }))
  })

  describe("status mapping (U07, U18)", () => {
    scoped("U07 any 2xx is success (201, 202)", () =>
      Effect.gen(function*() {
        for (const status of [201, 202]) {
          const { api } = yield* makeApi(() => json(status, sessionBody()))
          const session = yield* api.createSession(validSession)
          assert.strictEqual(session.session_id, "sess-1")
        }
      }))
    scoped("U18 message order: error, message, error_message, error_description, text body", () =>
      Effect.gen(function*() {
        const bodies: ReadonlyArray<readonly [Response, string]> = [
          [json(400, { error: "e", message: "m", error_message: "em", error_description: "ed" }), "e"],
          [json(400, { message: "m", error_message: "em", error_description: "ed" }), "m"],
          [json(400, { error_message: "em", error_description: "ed" }), "em"],
          [json(400, { error_description: "ed" }), "ed"],
          [json(400, { error: "", message: "m2" }), "m2"],
          [json(400, { error: { message: "nested" } }), "nested"],
          [text(400, "plain text body"), "plain text body"],
          [json(400, { other: 1 }), "{\"other\":1}"],
          [text(400, ""), "HTTP 400"]
        ]
        for (const [response, expected] of bodies) {
          const { api } = yield* makeApi(() => response)
          const error = yield* Effect.flip(api.onboard(validAgent))
          assert.strictEqual(error.message, expected)
        }
      }))
    scoped("U18 the request id is kept (x-request-id, then request-id)", () =>
      Effect.gen(function*() {
        const first = yield* makeApi(() => json(400, { error: "x" }, { "x-request-id": "req-123" }))
        const a = yield* Effect.flip(first.api.onboard(validAgent))
        assert.isTrue("requestId" in a && Option.getOrUndefined(a.requestId) === "req-123")
        const second = yield* makeApi(() => json(409, { error: "x" }, { "request-id": "req-456" }))
        const b = yield* Effect.flip(second.api.onboard(validAgent))
        assert.isTrue("requestId" in b && Option.getOrUndefined(b.requestId) === "req-456")
        const third = yield* makeApi(() => json(409, { error: "x" }))
        const c = yield* Effect.flip(third.api.onboard(validAgent))
        assert.isTrue("requestId" in c && Option.isNone(c.requestId))
      }))
    scoped("U18 the body is kept, cut to 4 KiB", () =>
      Effect.gen(function*() {
        const big = "x".repeat(10_000)
        const { api } = yield* makeApi(() => text(400, big))
        const error = yield* Effect.flip(api.onboard(validAgent))
        assert.isTrue("body" in error)
        if ("body" in error) {
          assert.strictEqual(error.body.length, 4096)
          assert.isTrue(big.startsWith(error.body))
        }
        assert.isAtMost(error.message.length, 4096)
      }))
    scoped("U07 a 2xx with a bad body is ResponseDecodeError, not retried", () =>
      Effect.gen(function*() {
        const { api, stub } = yield* makeApi(() => json(200, { unexpected: true }))
        const error = yield* Effect.flip(api.createSession(validSession))
        assert.strictEqual(error._tag, "ResponseDecodeError")
        if (error._tag === "ResponseDecodeError") {
          assert.strictEqual(error.status, 200)
          assert.strictEqual(error.body, "{\"unexpected\":true}")
          assert.include(error.message, "session_id")
        }
        assert.strictEqual(yield* stub.count, 1)
      }))
    scoped("U07 a 2xx that is not JSON is ResponseDecodeError", () =>
      Effect.gen(function*() {
        const { api } = yield* makeApi(() => text(200, "<html>oops</html>"))
        const error = yield* Effect.flip(api.onboard(validAgent))
        assert.strictEqual(error._tag, "ResponseDecodeError")
        assert.isTrue(error._tag === "ResponseDecodeError" && error.body === "<html>oops</html>")
      }))
    scoped("U07 a bad onboard body never shows the agent key it carried", () =>
      Effect.gen(function*() {
        const { api } = yield* makeApi(() => json(200, agentBody({ agentId: 42, apiKey: "sk-new-agent-LEAK" })))
        const error = yield* Effect.flip(api.onboard(validAgent))
        assert.strictEqual(error._tag, "ResponseDecodeError")
        assert.notInclude(JSON.stringify(error), "sk-new-agent-LEAK")
        assert.notInclude(String(error), "sk-new-agent-LEAK")
      }))

    const cases: ReadonlyArray<readonly [number, AgentApiError["_tag"]]> = [
      [400, "BadRequest"],
      [422, "BadRequest"],
      [401, "Unauthorized"],
      [403, "Forbidden"],
      [404, "NotFound"],
      [409, "Conflict"],
      [413, "PayloadTooLarge"],
      [429, "RateLimited"],
      [500, "ServerError"],
      [502, "ServerError"],
      [503, "ServerError"],
      [599, "ServerError"],
      [302, "UnexpectedStatus"],
      [418, "UnexpectedStatus"],
      [451, "UnexpectedStatus"]
    ]
    for (const [status, tag] of cases) {
      it.effect(`U07 ${status} is ${tag}`, () =>
        Effect.gen(function*() {
          const { api } = yield* makeApi(() => json(status, { error: `status ${status}` }), { retry: noRetry })
          const failed = yield* Effect.flip(api.onboard(validAgent))
          // A creating call's 5xx other than 503 may have acted: it is reported as such (issue 13).
          if (tag === "ServerError" && status !== 503) {
            assert.strictEqual(failed._tag, "OutcomeUnknown")
            assert.isTrue(failed._tag === "OutcomeUnknown" && failed.reason === "ServerError")
            assert.include(failed.message, `status ${status}`)
            return
          }
          const error = failed
          assert.strictEqual(error._tag, tag)
          assert.isTrue("status" in error && error.status === status)
          assert.isTrue("operation" in error && error.operation === "AgentApi.onboard")
          assert.strictEqual(error.message, `status ${status}`)
        }))
    }

    it.effect("U21 RateLimited carries retryAfter; absent when no header", () =>
      Effect.gen(function*() {
        const { api } = yield* makeApi(() => json(429, {}, { "retry-after": "7" }), { retry: noRetry })
        const error = yield* Effect.flip(api.onboard(validAgent))
        assert.strictEqual(error._tag, "RateLimited")
        if (error._tag === "RateLimited") {
          assert.deepStrictEqual(Option.map(error.retryAfter, Duration.toMillis), Option.some(7000))
        }
        const second = yield* makeApi(() => json(429, {}), { retry: noRetry })
        const bare = yield* Effect.flip(second.api.onboard(validAgent))
        assert.isTrue(bare._tag === "RateLimited" && Option.isNone(bare.retryAfter))
      }))
  })

  describe("time-out (U22)", () => {
    scoped("U22 the time-out is an option, and a time-out is retried", () =>
      Effect.gen(function*() {
        const { api, stub } = yield* makeApi(
          (_, attempt) => attempt === 1 ? Effect.never : json(200, sessionBody()),
          { timeout: "2 seconds", createPolicy: "idempotent" }
        )
        const fiber = yield* forkChild(api.createSession(validSession))
        yield* advance("4 seconds")
        const session = yield* Fiber.join(fiber)
        assert.strictEqual(session.session_id, "sess-1")
        assert.strictEqual(yield* stub.count, 2)
      }))

    it.effect("U22 RequestTimeout after 30 s of virtual time by default", () =>
      Effect.gen(function*() {
        const { api, stub } = yield* makeApi(() => Effect.never, { retry: noRetry })
        const fiber = yield* forkChild(Effect.flip(api.createSession(validSession)))
        yield* advance("29 seconds", "1 second")
        yield* advance("900 millis")
        assert.isTrue(running(fiber), "not timed out at 29.9 s")
        yield* advance("200 millis")
        const error = yield* Fiber.join(fiber)
        // A creating call that timed out may have acted (issue 13): the time-out is its reason.
        assert.strictEqual(error._tag, "OutcomeUnknown")
        if (error._tag === "OutcomeUnknown") {
          assert.strictEqual(error.reason, "RequestTimeout")
          assert.include(error.detail, "30s")
          assert.strictEqual(error.operation, "AgentApi.createSession")
        }
        assert.strictEqual(yield* stub.count, 1)
      }))

    it.effect("U22 getSession, which creates nothing, fails with RequestTimeout itself (issue 21)", () =>
      Effect.gen(function*() {
        const { api, stub } = yield* makeApi(() => Effect.never, { retry: noRetry, dialect: Dialect.observed })
        const fiber = yield* forkChild(Effect.flip(api.getSession("sess-1")))
        yield* advance("31 seconds")
        const error = yield* Fiber.join(fiber)
        assert.strictEqual(error._tag, "RequestTimeout")
        assert.isTrue(error._tag === "RequestTimeout" && error.operation === "AgentApi.getSession")
        assert.strictEqual(yield* stub.count, 1)
      }))
  })

  describe("requests", () => {
    scoped("documented dialect: Bearer auth, /api/v1sessions, flat body decoded", () =>
      Effect.gen(function*() {
        const { api, stub } = yield* makeApi(() => json(200, sessionBody({ extra: "ignored" })))
        const session = yield* api.createSession(validSession)
        const [request] = yield* stub.requests
        assert.strictEqual(request?.method, "POST")
        assert.strictEqual(request?.url, "https://agents.test/api/v1sessions")
        assert.strictEqual(request?.headers["authorization"], `Bearer ${ACCOUNT_KEY}`)
        assert.isUndefined(request?.headers["x-api-key"])
        assert.deepStrictEqual(JSON.parse(request?.body ?? "null"), validSession)
        assert.strictEqual(session.session_id, "sess-1")
        assert.deepStrictEqual(session.status, Option.some("started" as const))
      }))
    scoped("observed dialect: x-api-key, /api/v1/sessions, {data:{sessionId}} decoded", () =>
      Effect.gen(function*() {
        const { api, stub } = yield* makeApi(() => json(200, { data: { sessionId: "obs-1" } }), {
          dialect: Dialect.observed
        })
        const session = yield* api.createSession(validSession)
        const [request] = yield* stub.requests
        assert.strictEqual(request?.url, "https://agents.test/api/v1/sessions")
        assert.strictEqual(request?.headers["x-api-key"], ACCOUNT_KEY)
        assert.isUndefined(request?.headers["authorization"])
        const body = JSON.parse(request?.body ?? "null") as Record<string, unknown>
        assert.strictEqual(body.goal, validSession.goal)
        assert.strictEqual(body.url, validSession.start_url)
        assert.strictEqual(session.session_id, "obs-1")
        assert.isTrue(Option.isNone(session.status))
      }))
    scoped("onboard posts /agent/onboard and remembers the agent key", () =>
      Effect.gen(function*() {
        const { api, stub } = yield* makeApi((request) =>
          request.url.endsWith("/agent/onboard") ? json(200, agentBody()) : json(200, sessionBody())
        )
        const agent = yield* api.onboard(validAgent)
        assert.strictEqual(agent.agentId, "agent-1")
        assert.deepStrictEqual(Option.map(agent.apiKey, Redacted.value), Option.some("sk-agent-SECRET-77aa01"))
        // Named by id only: the key remembered by Credentials is used.
        yield* api.createSession(validSession, { agent: "agent-1" })
        const requests = yield* stub.requests
        assert.strictEqual(requests[0]?.url, "https://agents.test/agent/onboard")
        assert.strictEqual(requests[0]?.headers["authorization"], `Bearer ${ACCOUNT_KEY}`)
        assert.strictEqual(requests[1]?.headers["authorization"], "Bearer sk-agent-SECRET-77aa01")
      }))
    scoped("U10 getSession in the observed dialect: GET /api/v1/sessions/<id> (canRetrieve is true)", () =>
      Effect.gen(function*() {
        const { api, stub } = yield* makeApi(() => json(200, { data: { sessionId: "a/b", status: "in_progress" } }), {
          dialect: Dialect.observed
        })
        const session = yield* api.getSession("a/b")
        const [request] = yield* stub.requests
        assert.strictEqual(request?.method, "GET")
        assert.strictEqual(request?.url, "https://agents.test/api/v1/sessions/a%2Fb")
        assert.deepStrictEqual(session.status, Option.some("in_progress" as const))
        assert.isTrue(api.canRetrieve)
      }))
    scoped("U10 getSession in the documented dialect is NotFound and sends nothing (canRetrieve is false)", () =>
      Effect.gen(function*() {
        const { api, stub } = yield* makeApi(() => json(200, sessionBody()))
        const error = yield* Effect.flip(api.getSession("sess-1"))
        assert.strictEqual(error._tag, "NotFound")
        assert.isTrue(error._tag === "NotFound" && error.status === 404 && error.message.includes("no retrieve"))
        assert.strictEqual(yield* stub.count, 0)
        assert.isFalse(api.canRetrieve)
      }))
    scoped("a blank session id is InvalidRequest and sends nothing", () =>
      Effect.gen(function*() {
        const { api, stub } = yield* makeApi(() => json(200, sessionBody()), { dialect: Dialect.observed })
        const error = yield* Effect.flip(api.getSession("  "))
        assert.strictEqual(error._tag, "InvalidRequest")
        assert.strictEqual(yield* stub.count, 0)
      }))
    scoped("a base URL with a trailing slash is normalised", () =>
      Effect.gen(function*() {
        const { api, stub } = yield* makeApi(() => json(200, agentBody()), { baseUrl: "https://agents.test/" })
        yield* api.onboard(validAgent)
        const [request] = yield* stub.requests
        assert.strictEqual(request?.url, "https://agents.test/agent/onboard")
      }))

    it.effect("U23 sends User-Agent: <name of package.json>/<version of package.json>", () =>
      Effect.gen(function*() {
        const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as {
          name: string
          version: string
        }
        assert.strictEqual(version, pkg.version)
        const { api, stub } = yield* makeApi(() => json(200, agentBody()))
        yield* api.onboard(validAgent)
        const [request] = yield* stub.requests
        assert.strictEqual(request?.headers["user-agent"], `${pkg.name}/${pkg.version}`)
        assert.strictEqual(userAgent, `${pkg.name}/${pkg.version}`)
      }))
  })

  describe("layers and transport security", () => {
    const build = (options: AgentApi.Options) =>
      Effect.gen(function*() {
        const stub = yield* makeStub(() => json(200, agentBody()))
        return yield* Effect.exit(
          AgentApi.make(options).pipe(Effect.provide(Layer.merge(stub.layer, Credentials.layer({ apiKey: "k" }))))
        )
      })

    it.effect("plain http to a non-loopback host is InsecureTransport", () =>
      Effect.gen(function*() {
        const result = yield* build({ baseUrl: "http://agents.example.com" })
        assert.strictEqual(typedFailure(result)._tag, "InsecureTransport")
      }))

    it.effect("plain http is allowed with allowInsecure, and to loopback hosts", () =>
      Effect.gen(function*() {
        for (const baseUrl of ["http://127.0.0.1:8080", "http://localhost:1", "http://[::1]:9"]) {
          assert.isTrue(Exit.isSuccess(yield* build({ baseUrl })), baseUrl)
        }
        assert.isTrue(Exit.isSuccess(yield* build({ baseUrl: "http://agents.example.com", allowInsecure: true })))
      }))

    it.effect("a base URL that is not absolute http(s) is InvalidRequest", () =>
      Effect.gen(function*() {
        for (const baseUrl of ["not a url", "ftp://agents.example.com", "https://agents.example.com/?key=1"]) {
          const result = yield* build({ baseUrl })
          assert.strictEqual(typedFailure(result)._tag, "InvalidRequest", baseUrl)
        }
      }))

    it.effect("layerConfig reads AGENT_SESSION_BASE_URL and AGENT_SESSION_DIALECT", () =>
      Effect.gen(function*() {
        const stub = yield* makeStub(() => json(200, { data: { sessionId: "cfg-1" } }))
        const session = yield* Effect.flatMap(Effect.gen(function*() {
            return yield* AgentApi.AgentApi
          }), (api) => api.createSession(validSession)).pipe(
          Effect.provide(
            AgentApi.layerConfig().pipe(
              Layer.provide(Layer.merge(stub.layer, Credentials.layer({ apiKey: "k" })))
            )
          ),
          withEnv({ AGENT_SESSION_BASE_URL: "https://cfg.test", AGENT_SESSION_DIALECT: "observed" })
        )
        assert.strictEqual(session.session_id, "cfg-1")
        const [request] = yield* stub.requests
        assert.strictEqual(request?.url, "https://cfg.test/api/v1/sessions")
      }))

    it("printableUrl drops credentials, query and fragment (what spans and logs of the event channel show)", () => {
      assert.strictEqual(printableUrl("ws://user:pass@127.0.0.1:1/v1/connect?apiKey=k#f"), "ws://127.0.0.1:1/v1/connect")
      assert.strictEqual(printableUrl("https://agents.example/events/v1/connect"), "https://agents.example/events/v1/connect")
    })

    it.effect("isLoopbackHost and checkAddress (a key in clear only to loopback, unless allowed)", () =>
      Effect.gen(function*() {
        for (const host of ["localhost", "LOCALHOST.", "a.localhost", "127.0.0.1", "127.255.0.9", "[::1]", "::1"]) {
          assert.isTrue(Url.isLoopbackHost(host), host)
        }
        assert.isTrue(Url.isLoopbackHost(new URL("http://[::ffff:127.0.0.1]/").hostname))
        for (const host of ["example.com", "128.0.0.1", "localhost.example.com", "10.0.0.1", "::2"]) {
          assert.isFalse(Url.isLoopbackHost(host), host)
        }
        assert.isTrue(Exit.isSuccess(yield* Effect.exit(checkAddress("wss://x.example/v1/connect", false))))
        assert.isTrue(Exit.isSuccess(yield* Effect.exit(checkAddress("ws://127.0.0.1:1/v1/connect", undefined))))
        const refused = typedFailure(yield* Effect.exit(checkAddress("ws://x.example/v1/connect?apiKey=secret", false)))
        assert.strictEqual(refused._tag, "InsecureTransport")
        assert.strictEqual(refused.url, "ws://x.example/v1/connect")
        assert.notInclude(refused.message, "secret")
        assert.isTrue(Exit.isSuccess(yield* Effect.exit(checkAddress("ws://x.example/", true))))
        assert.isDefined(typedFailure(yield* Effect.exit(checkAddress("not a url?apiKey=secret", true))))
      }))
  })
})
