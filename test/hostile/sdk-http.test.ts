/**
 * The SDK's HTTP client (`AgentApi`) against a hostile server: never-ending, huge, slow and
 * deep bodies, invalid UTF-8, keys echoed in every field the peer controls, redirects, absurd
 * `Retry-After`, interruption at random points. Each case: a typed outcome, a time bound (hang
 * guard), a memory bound where memory is the risk, the key absent.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import type * as Http from "node:http"
import * as AgentApi from "../../src/AgentApi.js"
import * as Dialect from "../../src/Dialect.js"
import * as Errors from "../../src/Errors.js"
import { endless, hostileServer, type HostileServer, trickle } from "./server.js"
import {
  assertHeapWithin,
  assertKeyAbsent,
  expectError,
  failureOf,
  handles,
  handlesBackTo,
  KEY,
  liveHeap,
  observe,
  sdk,
  sessionRequest
} from "./sdk.js"

const MiB = 1024 * 1024

const createSession = (server: HostileServer, http: NonNullable<Parameters<typeof sdk>[1]>["http"] = {}) =>
  Effect.flatMap(AgentApi.AgentApi, (api) => api.createSession(sessionRequest)).pipe(
    Effect.provide(sdk(server, { http }))
  )

/** `getSession` (retried on any 5xx, whatever the create policy): the observed dialect has it. */
const getSession = (server: HostileServer, http: NonNullable<Parameters<typeof sdk>[1]>["http"] = {}) =>
  Effect.flatMap(AgentApi.AgentApi, (api) => api.getSession("s-1")).pipe(
    Effect.provide(sdk(server, { dialect: Dialect.observed, http }))
  )

/** The `Idempotency-Key` each POST carried. */
const idempotencyKeys = (server: HostileServer) =>
  server.requests.filter((r) => r.method === "POST").map((r) => r.headers["idempotency-key"])

const json = (response: Http.ServerResponse, status: number, body: unknown, headers: Http.OutgoingHttpHeaders = {}) => {
  const text = JSON.stringify(body)
  response.writeHead(status, { "content-type": "application/json", ...headers }).end(text)
}

const sessionsCreated = (server: HostileServer) => server.requests.filter((r) => r.method === "POST").length

describe("hostile server: HTTP (AgentApi)", () => {
  describe("defect 7: response bodies are read within a limit", () => {
    it.scopedLive("a 200 whose body never ends: ResponseTooLarge at the limit, not retried, memory bounded", () =>
      Effect.gen(function*() {
        const server = yield* hostileServer({
          http: (_request, response) => endless(response, Buffer.alloc(64 * 1024, 0x61), 200, { "content-type": "application/json" })
        })
        const before = liveHeap()
        const seen = yield* observe(createSession(server, { retry: Schedule.recurs(3) }))
        const error = expectError(seen.exit, "ResponseTooLarge")
        assert.strictEqual(error.limit, AgentApi.defaultMaxResponseSize)
        assert.isAbove(error.size, error.limit)
        assert.strictEqual(error.status, 200)
        assert.strictEqual(sessionsCreated(server), 1, "not retried")
        assertHeapWithin(before, 48, "never-ending 200")
        assertKeyAbsent(seen)
        assert.strictEqual(yield* server.drained(), 0, "the connection was released")
      }))

    it.scopedLive("a content-length over the limit is refused before reading", () =>
      Effect.gen(function*() {
        const server = yield* hostileServer({
          http: (_request, response) => {
            response.writeHead(200, { "content-type": "application/json", "content-length": String(1024 * MiB) })
            response.write("{")
          }
        })
        const seen = yield* observe(createSession(server, { maxResponseSize: 1024 }))
        const error = expectError(seen.exit, "ResponseTooLarge")
        assert.strictEqual(error.size, 1024 * MiB)
        assert.strictEqual(error.limit, 1024)
        assert.include(error.message, "1024 bytes")
        assertKeyAbsent(seen)
        assert.strictEqual(yield* server.drained(), 0, "the request was aborted, not left to the collector")
      }))

    it.scopedLive("a 500 with a 200 MB body: 4 KiB kept, each retry reads at most the limit (create: OutcomeUnknown)", () =>
      Effect.gen(function*() {
        const chunk = Buffer.alloc(256 * 1024, 0x62)
        const server = yield* hostileServer({
          http: (_request, response) => {
            response.writeHead(500, { "content-type": "text/plain", "content-length": String(200 * MiB) })
            let sent = 0
            const pump = (): void => {
              while (sent < 200 * MiB && !response.destroyed) {
                sent += chunk.length
                if (!response.write(chunk)) return void response.once("drain", pump)
              }
              response.end()
            }
            pump()
          }
        })
        const retry = Schedule.spaced("10 millis").pipe(Schedule.intersect(Schedule.recurs(2)))
        const before = liveHeap()
        // A 500 may have created the session: only the idempotent policy sends the POST again.
        const created = yield* observe(createSession(server, { createPolicy: "idempotent", retry }))
        const outcome = expectError(created.exit, "OutcomeUnknown")
        assert.strictEqual(outcome.reason, "ServerError")
        assert.strictEqual(outcome.attempts, 3)
        assert.isAtMost(outcome.detail.length, 4096)
        assert.notInclude(outcome.detail, KEY)
        assert.strictEqual(sessionsCreated(server), 3, "a 5xx is retried under the idempotent policy")
        assert.deepStrictEqual(idempotencyKeys(server), Array(3).fill(outcome.idempotencyKey), "the same key on every attempt")
        assertKeyAbsent(created)
        // The ServerError itself, with its body cut to 4 KiB: getSession retries any 5xx.
        const fetched = yield* observe(getSession(server, { retry }))
        const error = expectError(fetched.exit, "ServerError")
        assert.strictEqual(error.status, 500)
        assert.isAtMost(error.body.length, 4096)
        assert.strictEqual(server.requests.filter((r) => r.method === "GET").length, 3, "a 5xx is retried")
        assertHeapWithin(before, 48, "200 MB error bodies")
        assertKeyAbsent(fetched)
      }))

    it.scopedLive("a 200 that trickles forever times out (idempotent policy: retried, then OutcomeUnknown); its retries do not grow memory", () =>
      Effect.gen(function*() {
        const server = yield* hostileServer({
          http: (_request, response) => trickle(response, " ", 20, 200, { "content-type": "application/json" })
        })
        const before = liveHeap()
        const seen = yield* observe(
          createSession(server, {
            createPolicy: "idempotent",
            timeout: "300 millis",
            retry: Schedule.spaced("10 millis").pipe(Schedule.intersect(Schedule.recurs(2)))
          })
        )
        const error = expectError(seen.exit, "OutcomeUnknown")
        assert.strictEqual(error.reason, "RequestTimeout")
        assert.include(error.detail, "300ms")
        assert.notInclude(error.detail, KEY)
        assert.strictEqual(error.attempts, 3)
        assert.strictEqual(sessionsCreated(server), 3)
        assertHeapWithin(before, 16, "trickling 200")
        assertKeyAbsent(seen)
        assert.strictEqual(yield* server.drained(), 0, "every timed-out request was aborted")
      }))

    it.scopedLive("headers that never come: OutcomeUnknown (RequestTimeout) within the time-out, not sent again", () =>
      Effect.gen(function*() {
        const server = yield* hostileServer({ http: () => {} })
        const seen = yield* observe(
          createSession(server, { timeout: "200 millis", retry: Schedule.spaced("10 millis").pipe(Schedule.intersect(Schedule.recurs(2))) })
        )
        // The default "safe" policy: the POST was written, so the session may exist.
        const error = expectError(seen.exit, "OutcomeUnknown")
        assert.strictEqual(error.reason, "RequestTimeout")
        assert.strictEqual(error.operation, "AgentApi.createSession")
        assert.strictEqual(error.attempts, 1)
        assert.include(error.detail, "200ms")
        assert.notInclude(error.detail, KEY)
        assert.strictEqual(sessionsCreated(server), 1, "not sent again under the safe policy")
        assert.deepStrictEqual(idempotencyKeys(server), [error.idempotencyKey])
        assert.isBelow(seen.millis, 10_000)
        assertKeyAbsent(seen)
        assert.strictEqual(yield* server.drained(), 0)
      }))
  })

  describe("defect 12: a key echoed anywhere the peer controls is scrubbed", () => {
    const echoes: ReadonlyArray<readonly [string, (request: Http.IncomingMessage, response: Http.ServerResponse) => void]> = [
      ["x-request-id header on a 401", (_q, r) => json(r, 401, { error: "no" }, { "x-request-id": KEY })],
      ["request-id header on a 403, key inside a longer id", (_q, r) => json(r, 403, { error: "no" }, { "request-id": `req-${KEY}-1` })],
      ["every header of a 429", (_q, r) => json(r, 429, { error: "slow" }, { "x-request-id": KEY, "x-echo": KEY, "retry-after": "0", "www-authenticate": `Bearer ${KEY}` })],
      ["the status text of a 500", (_q, r) => {
        r.statusMessage = `broken ${KEY}`
        r.writeHead(500, { "content-type": "text/plain" }).end("")
      }],
      ["the body of a 400, as a JSON member and as text", (_q, r) => json(r, 400, { error: `bad ${KEY}`, apiKey: KEY, nested: { token: KEY } })],
      ["the request headers echoed back in a 422", (q, r) => json(r, 422, { message: "bad", headers: q.headers })],
      ["a key across the 4 KiB cut of the body", (_q, r) => {
        r.writeHead(418, { "content-type": "text/plain" }).end("x".repeat(4090) + KEY + "y".repeat(100))
      }],
      ["a 2xx that does not decode, echoing the key", (_q, r) => json(r, 200, { session_id: 7, key: KEY }, { "x-request-id": KEY })],
      ["a 2xx with the key in its headers only", (_q, r) => json(r, 200, { session_id: "s-1" }, { "x-request-id": KEY, "set-cookie": `k=${KEY}` })]
    ]
    for (const [label, reply] of echoes) {
      it.scopedLive(`U18 ${label}`, () =>
        Effect.gen(function*() {
          const server = yield* hostileServer({ http: reply })
          const seen = yield* observe(createSession(server))
          if (Exit.isFailure(seen.exit)) {
            const error = failureOf(seen.exit)
            assert.isTrue(Errors.isAgentSessionError(error), "a typed SDK error")
            if ("requestId" in error && Option.isSome(error.requestId)) {
              assert.notInclude(error.requestId.value, KEY)
            }
          }
          assert.isAbove(seen.spans.length, 0, "spans were recorded")
          const attributes = seen.spans.flatMap((span) => [...span.attributes.keys()])
          assert.isTrue(attributes.some((name) => name.startsWith("http.response.header.")), "header names stay visible")
          assertKeyAbsent(seen)
        }))
    }

    it.scopedLive("U18 a key across the 4 KiB cut leaves no prefix of itself in the message or body", () =>
      Effect.gen(function*() {
        const server = yield* hostileServer({
          http: (_q, r) => r.writeHead(401, { "content-type": "text/plain" }).end("x".repeat(4084) + KEY)
        })
        const seen = yield* observe(createSession(server))
        const error = expectError(seen.exit, "Unauthorized")
        const prefix = KEY.slice(0, 12)
        assert.notInclude(error.message, prefix)
        assert.notInclude(error.body, prefix)
        assertKeyAbsent(seen)
      }))

    it.scopedLive("U18 Unauthorized.requestId keeps a request id that is not a key", () =>
      Effect.gen(function*() {
        const server = yield* hostileServer({ http: (_q, r) => json(r, 401, { error: "no" }, { "x-request-id": `req-${KEY}` }) })
        const seen = yield* observe(createSession(server))
        const error = expectError(seen.exit, "Unauthorized")
        assert.deepStrictEqual(error.requestId, Option.some("req-<redacted>"))
        assertKeyAbsent(seen)
      }))
  })

  describe("deep, invalid and absurd responses", () => {
    it.scopedLive("a 200 nested 100,000 deep: ResponseDecodeError, no stack overflow", () =>
      Effect.gen(function*() {
        const deep = "[".repeat(100_000) + "]".repeat(100_000)
        const server = yield* hostileServer({
          http: (_q, r) => r.writeHead(200, { "content-type": "application/json" }).end(`{"session_id":${deep}}`)
        })
        const seen = yield* observe(createSession(server))
        const error = expectError(seen.exit, "ResponseDecodeError")
        assert.isAtMost(error.body.length, 4096)
        assertKeyAbsent(seen)
      }))

    it.scopedLive("an error body nested 100,000 deep: its status error, message bounded", () =>
      Effect.gen(function*() {
        const deep = "[".repeat(100_000) + "]".repeat(100_000)
        const server = yield* hostileServer({
          http: (_q, r) => r.writeHead(400, { "content-type": "application/json" }).end(`{"error":${deep}}`)
        })
        const seen = yield* observe(createSession(server))
        const error = expectError(seen.exit, "BadRequest")
        assert.isAtMost(error.message.length, 4096)
        assertKeyAbsent(seen)
      }))

    it.scopedLive("invalid UTF-8 in a 200 and in an error body: typed errors", () =>
      Effect.gen(function*() {
        const invalid = Buffer.from([0x7b, 0x22, 0x73, 0xff, 0xfe, 0xc3, 0x28, 0x22, 0x3a, 0x31, 0x7d])
        const ok = yield* hostileServer({
          http: (_q, r) => r.writeHead(200, { "content-type": "application/json" }).end(invalid)
        })
        expectError((yield* observe(createSession(ok))).exit, "ResponseDecodeError")
        const bad = yield* hostileServer({
          http: (_q, r) => r.writeHead(401, { "content-type": "application/json" }).end(Buffer.concat([invalid, Buffer.from(KEY)]))
        })
        const seen = yield* observe(createSession(bad))
        const error = expectError(seen.exit, "Unauthorized")
        assert.include(error.body, "\uFFFD")
        assertKeyAbsent(seen)
      }))

    it.scopedLive("a redirect is not followed: the key never reaches the other host", () =>
      Effect.gen(function*() {
        const elsewhere = yield* hostileServer({ http: (_q, r) => json(r, 200, { session_id: "stolen" }) })
        for (const status of [301, 302, 303, 307, 308]) {
          const server = yield* hostileServer({
            http: (_q, r) => r.writeHead(status, { location: `${elsewhere.baseUrl}/api/v1sessions` }).end()
          })
          const seen = yield* observe(createSession(server))
          const error = expectError(seen.exit, "UnexpectedStatus")
          assert.strictEqual(error.status, status)
          assertKeyAbsent(seen)
        }
        assert.strictEqual(elsewhere.requests.length, 0, "nothing reached the redirect target")
      }))

    it.scopedLive("U21 absurd Retry-After values: each wait capped by maxRetryAfter, nonsense ignored", () =>
      Effect.gen(function*() {
        const values = [
          { "retry-after": "99999999999999999999" },
          { "retry-after": "1e400" },
          { "retry-after": "-5" },
          { "retry-after": "NaN" },
          { "retry-after": "Fri, 31 Dec 9999 23:59:59 GMT" },
          { "retry-after-ms": "18446744073709551616" },
          { "retry-after": "x".repeat(10_000) }
        ]
        for (const headers of values) {
          const server = yield* hostileServer({ http: (_q, r) => json(r, 429, { error: "slow down" }, headers) })
          const seen = yield* observe(
            createSession(server, {
              maxRetryAfter: "100 millis",
              retry: Schedule.spaced("1 millis").pipe(Schedule.intersect(Schedule.recurs(2)))
            }),
            "20 seconds"
          )
          const error = expectError(seen.exit, "RateLimited")
          assert.strictEqual(sessionsCreated(server), 3, JSON.stringify(headers))
          if (Option.isSome(error.retryAfter)) assert.isTrue(Duration.isDuration(error.retryAfter.value))
          assertKeyAbsent(seen)
        }
      }))

    it.scopedLive("a response header block over the client's limit: OutcomeUnknown (TransportError), not sent again", () =>
      Effect.gen(function*() {
        const server = yield* hostileServer({
          http: (_q, r) => json(r, 200, { session_id: "s" }, { "x-huge": "h".repeat(200_000) })
        })
        const seen = yield* observe(createSession(server, { retry: Schedule.recurs(2) }))
        // The service answered (it acted): the SDK could not read the answer.
        const error = expectError(seen.exit, "OutcomeUnknown")
        assert.strictEqual(error.reason, "TransportError")
        assert.strictEqual(error.attempts, 1)
        assert.notInclude(error.detail, KEY)
        assert.strictEqual(sessionsCreated(server), 1)
        assertKeyAbsent(seen)
      }))
  })

  describe("interruption at random points leaves nothing behind", () => {
    it.scopedLive("createSession interrupted at 30 points: no socket, no timer, no fiber left", () =>
      Effect.gen(function*() {
        const server = yield* hostileServer({
          http: (_q, r, index) => {
            // Every shape of slowness: headers late, body trickling, body endless, a slow success.
            switch (index % 4) {
              case 0:
                return void setTimeout(() => json(r, 200, { session_id: "s" }), 30)
              case 1:
                return trickle(r, " ", 5, 200, { "content-type": "application/json" })
              case 2:
                return endless(r, Buffer.alloc(16 * 1024, 0x20), 200, { "content-type": "application/json" })
              default:
                return
            }
          }
        })
        const layer = sdk(server, { http: { retry: Schedule.stop, timeout: "2 seconds" } })
        const api = yield* Effect.provide(AgentApi.AgentApi, layer)
        const before = handles()
        let seed = 12
        const random = () => {
          seed = (seed * 1103515245 + 12345) % 2147483648
          return seed / 2147483648
        }
        const seen = yield* observe(Effect.gen(function*() {
          for (let i = 0; i < 30; i++) {
            const fiber = yield* Effect.fork(api.createSession(sessionRequest))
            yield* Effect.sleep(Duration.millis(Math.floor(random() * 40)))
            yield* Fiber.interrupt(fiber)
          }
        }))
        assert.isTrue(Exit.isSuccess(seen.exit))
        assertKeyAbsent(seen)
        assert.strictEqual(yield* server.drained(), 0, "every connection closed")
        assert.deepStrictEqual(yield* handlesBackTo(before), {}, "no socket or timer left")
      }))
  })
})
