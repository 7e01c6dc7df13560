/**
 * The create policy at unit level (the core's `Failures.mayResend`, applied by
 * `binding/internal/agentApi.ts` over `binding/internal/agentApiCall.ts`), with the stub HTTP client and the
 * `TestClock`: what `test/shared/paid/createPolicy.test.ts` checks over real sockets. Under the default
 * policy (`"safe"`) a creating call (`createSession`, `onboard`) is sent again only when the
 * service cannot have acted (the connection was refused, 429, 503, 408), with the same
 * `Idempotency-Key`; an attempt that may have acted (a reset after the request was written, a
 * 500, 502, 504, a time-out) ends the call at once with `OutcomeUnknown`, which carries the key.
 * `"idempotent"` sends those again too, with the same key. Written once for both editions: no case
 * differs, so neither keeps a file of its own.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import type * as AgentApi from "../../src/AgentApi.js"
import * as Dialect from "../../src/Dialect.js"
import { RequestTimeout, ServerError } from "../../src/Errors.js"
import { Failures } from "effect-agent-session-core"
import { fromRequestError } from "../../binding/internal/httpErrors.js"
import { agentBody, json, makeApi, type Recorded, type Reply, sessionBody, validAgent, validSession } from "./StubHttpClient.js"
import { type DurationInput, forkChild, postRequest, TestClock, transportFailure } from "../helpers/line.js"

/** Advances virtual time in small steps, letting the forked request run between steps. */
const advance = (total: DurationInput, step: DurationInput = "100 millis") =>
  Effect.gen(function*() {
    const steps = Math.ceil(Duration.toMillis(total) / Duration.toMillis(step))
    for (let i = 0; i < steps; i++) yield* TestClock.adjust(step)
  })

const keysOf = (requests: ReadonlyArray<Recorded>) => requests.map((request) => request.headers["idempotency-key"])

/** Each creating operation, and what its success looks like. */
const operations = [
  {
    name: "createSession",
    ok: () => json(200, sessionBody()),
    call: (api: AgentApi.Service) => Effect.map(api.createSession(validSession), (session) => session.session_id)
  },
  {
    name: "onboard",
    ok: () => json(201, agentBody()),
    call: (api: AgentApi.Service) => Effect.map(api.onboard(validAgent), (agent) => agent.name)
  }
] as const

/** Failures after which the service may have acted: the reply, and the `reason` of `OutcomeUnknown`. */
const mayHaveActedReplies: ReadonlyArray<readonly [string, Reply, string]> = [
  ["a connection reset after the request was written", () => "reset", "TransportError"],
  ["500", () => json(500, { error: "oops" }), "ServerError"],
  ["502", () => json(502, { error: "bad gateway" }), "ServerError"],
  ["504", () => json(504, { error: "gateway time-out" }), "ServerError"],
  ["no answer within the time-out", () => Effect.never, "RequestTimeout"]
]

/** Failures the service says (or the transport proves) it did not act on, then success. */
const didNotActReplies: ReadonlyArray<readonly [string, (ok: Response) => Reply]> = [
  ["503", (ok) => (_, attempt) => attempt === 1 ? json(503, { error: "busy" }) : ok],
  ["429", (ok) => (_, attempt) => attempt === 1 ? json(429, { error: "slow down" }) : ok],
  ["408", (ok) => (_, attempt) => attempt === 1 ? json(408, {}) : ok],
  ["a refused connection (nothing sent)", (ok) => (_, attempt) => attempt === 1 ? "refuse" : ok]
]

describe("AgentApi create policy (unit, stub HTTP client)", () => {
  for (const operation of operations) {
    // Guards: a creating call sent again after it may have acted (a second session, a second agent).
    for (const [what, reply, reason] of mayHaveActedReplies) {
      it.effect(`${operation.name}, default policy: ${what} is not sent again; OutcomeUnknown with the key sent`, () =>
        Effect.gen(function*() {
          const { api, stub } = yield* makeApi(reply, { timeout: "2 seconds" })
          const fiber = yield* forkChild(Effect.flip(operation.call(api)))
          // Long enough for the default schedule's two retries, had they been allowed.
          yield* advance("30 seconds", "500 millis")
          const error = yield* Fiber.join(fiber)
          assert.strictEqual(yield* stub.count, 1, "one attempt")
          assert.strictEqual(error._tag, "OutcomeUnknown")
          if (error._tag === "OutcomeUnknown") {
            const [key] = keysOf(yield* stub.requests)
            assert.match(key ?? "", /^[0-9a-f-]{36}$/)
            assert.strictEqual(error.idempotencyKey, key)
            assert.strictEqual(error.attempts, 1)
            assert.strictEqual(error.reason, reason)
            assert.strictEqual(error.operation, `AgentApi.${operation.name}`)
          }
        }))
    }

    for (const [what, replies] of didNotActReplies) {
      it.effect(`${operation.name}, default policy: ${what} is sent again with the same Idempotency-Key`, () =>
        Effect.gen(function*() {
          const { api, stub } = yield* makeApi(replies(operation.ok()))
          const fiber = yield* forkChild(operation.call(api))
          yield* advance("5 seconds")
          const result = yield* Fiber.join(fiber)
          assert.include(["sess-1", "scout"], result)
          const keys = keysOf(yield* stub.requests)
          assert.strictEqual(keys.length, 2)
          assert.match(keys[0] ?? "", /^[0-9a-f-]{36}$/)
          assert.strictEqual(keys[1], keys[0])
        }))
    }

    it.effect(`${operation.name}, "idempotent" policy: a reset and a 502 are sent again, with the same Idempotency-Key`, () =>
      Effect.gen(function*() {
        const ok = operation.ok()
        const { api, stub } = yield* makeApi(
          (_, attempt) => attempt === 1 ? "reset" : attempt === 2 ? json(502, {}) : ok,
          { createPolicy: "idempotent" }
        )
        const fiber = yield* forkChild(operation.call(api))
        yield* advance("5 seconds")
        assert.include(["sess-1", "scout"], yield* Fiber.join(fiber))
        const keys = keysOf(yield* stub.requests)
        assert.strictEqual(keys.length, 3)
        assert.deepStrictEqual(keys, [keys[0], keys[0], keys[0]])
      }))
  }

  it.effect("a retried create that ends on an attempt that may have acted is OutcomeUnknown, counting every attempt", () =>
    Effect.gen(function*() {
      const { api, stub } = yield* makeApi((_, attempt) => attempt === 1 ? json(503, {}) : "reset")
      const fiber = yield* forkChild(Effect.flip(api.createSession(validSession)))
      yield* advance("10 seconds")
      const error = yield* Fiber.join(fiber)
      assert.strictEqual(yield* stub.count, 2)
      assert.isTrue(error._tag === "OutcomeUnknown" && error.attempts === 2 && error.reason === "TransportError")
    }))

  it.effect("getSession creates nothing: a reset is retried and ends a TransportError", () =>
    Effect.gen(function*() {
      const { api, stub } = yield* makeApi(() => "reset", { dialect: Dialect.observed })
      const fiber = yield* forkChild(Effect.flip(api.getSession("sess-1")))
      yield* advance("10 seconds")
      const error = yield* Fiber.join(fiber)
      assert.strictEqual(error._tag, "TransportError")
      assert.strictEqual(yield* stub.count, 3)
    }))
})

describe("the create policy over the edition's errors: whether an attempt may have acted", () => {
  const request = postRequest("https://agents.test/api/v1sessions")
  const call = { operation: "AgentApi.createSession", secrets: [] }
  const failed = (cause: Error) =>
    fromRequestError(transportFailure(request, cause), call)
  const reset = failed(Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" }))
  const refused = failed(Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" }))
  const timedOut = new RequestTimeout({ operation: call.operation, timeout: Duration.seconds(30) })
  const status = (code: number) => new ServerError({ operation: call.operation, status: code, message: `status ${code}` })

  it("a reset may have acted; a refused connection did not (it is marked, not as data)", () => {
    assert.deepStrictEqual([Failures.mayHaveActed(reset), Failures.didNotAct(reset)], [true, false])
    assert.deepStrictEqual([Failures.mayHaveActed(refused), Failures.didNotAct(refused)], [false, true])
    assert.strictEqual(reset._tag, "TransportError")
    assert.deepStrictEqual(Object.keys(refused).sort(), Object.keys(reset).sort(), "the mark is not a field")
  })

  it("safe resends only what did not act; idempotent resends every retryable failure", () => {
    const cases = [
      [reset, false, true],
      [refused, true, true],
      [timedOut, false, true],
      [status(500), false, true],
      [status(502), false, true],
      [status(503), true, true]
    ] as const
    for (const [error, safe, idempotent] of cases) {
      assert.strictEqual(Failures.mayResend("safe", error), safe, `${error._tag} ${error.message}`)
      assert.strictEqual(Failures.mayResend("idempotent", error), idempotent, `${error._tag} ${error.message}`)
    }
  })
})
