/**
 * `AgentApi` over a stubbed `HttpClient` under the `TestClock` (retries, time-outs, the
 * idempotency key, metrics), the cases whose text is the same on both Effect lines; each
 * edition's `test/AgentApi.test.ts` holds the cases that differ.
 */
import { assert, describe } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Dialect from "../../src/Dialect.js"
import * as Metrics from "../../src/Metrics.js"
import type { AgentApiError } from "../../src/Errors.js"
import {
  ACCOUNT_KEY,
  agentBody,
  json,
  makeApi,
  sessionBody,
  text,
  validAgent,
  validSession
} from "./StubHttpClient.js"
import { type DurationInput, forkChild, scoped, TestClock, typedFailure } from "../helpers/line.js"

const failureOf = <A>(exit: Exit.Exit<A, AgentApiError>): AgentApiError => typedFailure(exit)

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
  })
})
