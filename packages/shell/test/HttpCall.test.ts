/**
 * `HttpCall`: one call of the HTTP API as both editions run it (the attempts counted, each one's
 * headers, what a response becomes, the 2xx body kept for a decode failure, the span attributes,
 * the redacted header names), without either edition.
 */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { Failures, Http } from "effect-agent-session-core"
import { HttpCall } from "../src/index.js"

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text)

/** A key in a secret type of its own, as an edition holds it (`Redacted`): revealed only by `reveal`. */
interface Secret {
  readonly hidden: string
}
const secret = (value: string): Secret => ({ hidden: value })
const reveal = (key: Secret): string => key.hidden

describe("HttpCall.Call", () => {
  it("counts the attempts it builds; each carries the call's name and Idempotency-Key", () => {
    const call = new HttpCall.Call("createSession", "key-1")
    expect(call.name).toBe("AgentApi.createSession")
    expect(call.attempts).toBe(0)
    const first = call.attempt(secret("secret-a"), reveal, ["secret-a"])
    const second = call.attempt(secret("secret-b"), reveal, ["other"])
    expect(call.attempts).toBe(2)
    expect([first.operation, first.key, first.idempotencyKey]).toEqual(["AgentApi.createSession", secret("secret-a"), "key-1"])
    expect([second.key, second.idempotencyKey]).toEqual([secret("secret-b"), "key-1"])
    // The attempt's own key is scrubbed first, whether or not the credentials know it.
    expect(second.secrets).toEqual(["secret-b", "other"])
    // Each attempt holds its own received body.
    second.receive(201, {}, bytes("{}"))
    expect(first.received).toBeUndefined()
  })
})

describe("HttpCall.Attempt.outcome: what the metrics count an attempt under", () => {
  it("a success by the 2xx received (200 when none was read); a failure as Failures.httpOutcome says", () => {
    const attempt = new HttpCall.Call("getSession", undefined).attempt(secret("k"), reveal, [])
    expect(attempt.outcome()).toBe(200)
    attempt.receive(201, {}, bytes("{}"))
    expect(attempt.outcome()).toBe(201)
    const failures: Array<{ readonly _tag: string; readonly status?: number; readonly message: string }> = [
      { _tag: "RateLimited", status: 429, message: "slow down" },
      { _tag: "TransportError", message: "reset" },
      { _tag: "RequestTimeout", message: "timed out" },
      { _tag: "ResponseDecodeError", message: "bad body" },
      { _tag: "InvalidRequest", message: "refused before sending" }
    ]
    for (const failure of failures) expect(attempt.outcome(failure), failure._tag).toBe(Failures.httpOutcome(failure))
    const rateLimited = { _tag: "RateLimited", status: 429, message: "" }
    expect(attempt.outcome(rateLimited)).toBe(429)
  })
})

describe("HttpCall.perOperation", () => {
  it("one value per operation, each built from its name", () => {
    expect(HttpCall.perOperation((operation) => operation.length)).toEqual({ onboard: 7, createSession: 13, getSession: 10 })
    expect(Object.keys(HttpCall.perOperation(() => 0))).toEqual([...HttpCall.operations])
  })
})

describe("HttpCall.Call: the outcome of a failed creating call", () => {
  const transport = { _tag: "TransportError", message: "socket hang up" }
  const notSent = Failures.withNotSent({ _tag: "TransportError", message: "connect ECONNREFUSED" }, true)
  const status = (code: number) => ({ _tag: code === 429 ? "RateLimited" : "ServerError", status: code, message: `HTTP ${code}` })

  it("known when the last attempt cannot have acted; unknown after a time-out, a reset, 500, 502, 504", () => {
    const call = new HttpCall.Call("createSession", "idem")
    expect(call.outcomeKnown({ _tag: "RequestTimeout", message: "timed out" })).toBe(false)
    expect(call.outcomeKnown(transport)).toBe(false)
    for (const code of [500, 502, 504]) expect(call.outcomeKnown(status(code)), String(code)).toBe(false)
    expect(call.outcomeKnown(notSent)).toBe(true)
    for (const code of [429, 503]) expect(call.outcomeKnown(status(code)), String(code)).toBe(true)
    // Not retryable: it failed for a reason of its own, and created nothing.
    expect(call.outcomeKnown({ _tag: "Conflict", status: 409, message: "taken" })).toBe(true)
    expect(call.outcomeKnown({ _tag: "InvalidRequest", message: "bad" })).toBe(true)
  })

  it("OutcomeUnknown holds the call's Idempotency-Key, the attempts sent and the last error", () => {
    const call = new HttpCall.Call("onboard", "idem-7")
    call.attempt(secret("k"), reveal, [])
    call.attempt(secret("k"), reveal, [])
    expect(call.outcomeUnknown(transport)).toEqual({
      operation: "AgentApi.onboard",
      idempotencyKey: "idem-7",
      attempts: 2,
      reason: "TransportError",
      detail: "socket hang up"
    })
  })
})

describe("HttpCall.resendable: the create policy", () => {
  const cases = [
    { error: { _tag: "RequestTimeout" }, safe: false, idempotent: true },
    { error: { _tag: "TransportError" }, safe: false, idempotent: true },
    { error: Failures.withNotSent({ _tag: "TransportError" }, true), safe: true, idempotent: true },
    { error: { _tag: "ServerError", status: 500 }, safe: false, idempotent: true },
    { error: { _tag: "ServerError", status: 503 }, safe: true, idempotent: true },
    { error: { _tag: "RateLimited", status: 429 }, safe: true, idempotent: true },
    { error: { _tag: "BadRequest", status: 400 }, safe: false, idempotent: false }
  ]

  it("by default (safe) only what the service cannot have acted on; idempotent: every retryable failure", () => {
    const byDefault = HttpCall.resendable(undefined)
    const safe = HttpCall.resendable("safe")
    const idempotent = HttpCall.resendable("idempotent")
    for (const { error, idempotent: again, safe: safely } of cases) {
      const label = JSON.stringify(error)
      expect(byDefault(error), label).toBe(safely)
      expect(safe(error), label).toBe(safely)
      expect(idempotent(error), label).toBe(again)
    }
  })
})

describe("HttpCall.Attempt.requestHeaders", () => {
  it("the key in the dialect's auth header, the User-Agent, and the same Idempotency-Key on every attempt", () => {
    const call = new HttpCall.Call("onboard", "idem-42")
    const attempts = [call.attempt(secret("sk-1"), reveal, []), call.attempt(secret("sk-1"), reveal, [])]
    for (const attempt of attempts) {
      expect(attempt.requestHeaders("bearer", "sdk/1")).toEqual({
        authorization: "Bearer sk-1",
        "user-agent": "sdk/1",
        accept: "application/json",
        "idempotency-key": "idem-42"
      })
      expect(attempt.requestHeaders("x-api-key", "sdk/1")["x-api-key"]).toBe("sk-1")
    }
  })

  it("no Idempotency-Key on a call that creates nothing", () => {
    const headers = new HttpCall.Call("getSession", undefined).attempt(secret("k"), reveal, []).requestHeaders("bearer", "ua")
    expect(Object.keys(headers)).not.toContain("idempotency-key")
  })
})

describe("HttpCall.Attempt.receive", () => {
  it("a 2xx is a success, its body kept for a decode failure; the attempt counts its status", () => {
    const attempt = new HttpCall.Call("getSession", undefined).attempt(secret("k"), reveal, [])
    expect(attempt.status).toBe(200)
    expect(attempt.receive(201, { "content-type": "application/json" }, bytes("{\"a\":1}"))).toEqual({ _tag: "Success" })
    expect(attempt.received?.status).toBe(201)
    expect(attempt.received?.body).toBe("{\"a\":1}")
    expect(attempt.status).toBe(201)
  })

  it("any other status is a failure with the whole body as text, and nothing is kept", () => {
    fc.assert(fc.property(
      fc.integer({ min: 100, max: 999 }).filter((status) => !Http.isSuccess(status)),
      fc.string(),
      (status, body) => {
        const attempt = new HttpCall.Call("getSession", undefined).attempt(secret("k"), reveal, [])
        const headers = { "retry-after": "1" }
        expect(attempt.receive(status, headers, bytes(body))).toEqual({
          _tag: "Failure",
          response: { status, statusText: "", headers, body: new TextDecoder().decode(bytes(body)) }
        })
        expect(attempt.received).toBeUndefined()
        expect(attempt.status).toBe(200)
      }
    ))
  })
})

describe("HttpCall.Attempt.statusFailure", () => {
  const response = (status: number, body: string, headers: Http.Headers = {}): HttpCall.FailedResponse => ({
    status,
    statusText: "",
    headers,
    body
  })

  it("what Http.statusFailure says of the response, scrubbed of the attempt's secrets, and the operation", () => {
    fc.assert(fc.property(
      fc.integer({ min: 300, max: 599 }),
      fc.string(),
      fc.integer({ min: 0, max: 2_000_000_000_000 }),
      (status, text, nowMillis) => {
        const attempt = new HttpCall.Call("createSession", "i").attempt(secret("sk-attempt"), reveal, ["sk-known"])
        const failed = response(status, text, { "retry-after": "2", "x-request-id": "r-1" })
        expect(attempt.statusFailure(failed, nowMillis)).toEqual({
          ...Http.statusFailure(failed, { secrets: ["sk-attempt", "sk-known"], nowMillis }),
          operation: "AgentApi.createSession"
        })
      }
    ))
  })

  it("the attempt's own key is scrubbed from the body, the message and the request id, though no credentials know it", () => {
    const attempt = new HttpCall.Call("getSession", undefined).attempt(secret("sk-given-with-agent"), reveal, [])
    const failure = attempt.statusFailure(
      response(401, "{\"error\":\"bad key sk-given-with-agent\"}", { "x-request-id": "id sk-given-with-agent" }),
      0
    )
    expect(failure.kind).toBe("unauthorized")
    expect(JSON.stringify(failure)).not.toContain("sk-given-with-agent")
    expect(failure.message).toBe("bad key <redacted>")
  })

  it("a 429's Retry-After is read at the time given; a 400 asks no wait", () => {
    const attempt = new HttpCall.Call("onboard", "i").attempt(secret("k"), reveal, [])
    const date = new Date(10_000).toUTCString()
    expect(attempt.statusFailure(response(429, "", { "retry-after": date }), 4_000).retryAfterMillis).toBe(6_000)
    expect(attempt.statusFailure(response(400, "", { "retry-after": "5" }), 0).retryAfterMillis).toBeUndefined()
  })
})

describe("HttpCall.Attempt.contractFailure", () => {
  it("before any response: the payload refused, the attempt's keys scrubbed", () => {
    const attempt = new HttpCall.Call("createSession", "i").attempt(secret("sk-secret"), reveal, [])
    expect(attempt.contractFailure("goal: sk-secret is not allowed")).toEqual({
      kind: "invalid-request",
      message: "goal: <redacted> is not allowed",
      operation: "AgentApi.createSession"
    })
  })

  it("after a 2xx: that response and its body, scrubbed", () => {
    const attempt = new HttpCall.Call("createSession", "i").attempt(secret("sk-secret"), reveal, [])
    attempt.receive(200, {}, bytes("{\"token\":\"sk-secret\"}"))
    const failure = attempt.contractFailure("session_id is missing", 500)
    expect([failure.kind, failure.operation]).toEqual(["undecoded-response", "AgentApi.createSession"])
    if (failure.kind !== "undecoded-response") return
    expect(failure.status).toBe(200)
    expect(failure.body).toBe("{\"token\":\"<redacted>\"}")
    expect(failure.message).toContain("The 200 response does not match the contract: session_id is missing")
  })

  it("a response whose body was not kept: its status, no body", () => {
    const attempt = new HttpCall.Call("getSession", undefined).attempt(secret("k"), reveal, [])
    expect(attempt.contractFailure("bad json", 200)).toMatchObject({ kind: "undecoded-response", status: 200, body: "" })
  })
})

describe("HttpCall.retryable: what each operation sends again", () => {
  const reset = { _tag: "TransportError" }
  const refused = Failures.withNotSent({ _tag: "TransportError" }, true)
  const timeout = { _tag: "RequestTimeout" }
  const status = (code: number) => ({
    _tag: code === 429 ? "RateLimited" : code >= 500 ? "ServerError" : code === 400 ? "BadRequest" : "UnexpectedStatus",
    status: code
  })
  const errors = [reset, refused, timeout, ...[400, 408, 429, 500, 502, 503, 504].map(status), { _tag: "Conflict", status: 409 }]

  it("getSession creates nothing: every retryable failure, whatever the policy", () => {
    for (const policy of [undefined, "safe", "idempotent"] as const) {
      for (const error of errors) {
        expect(HttpCall.retryable(policy).getSession(error), JSON.stringify(error)).toBe(Failures.isRetryable(error))
      }
    }
  })

  it("onboard and createSession: by default (safe) only a retryable failure the service cannot have acted on", () => {
    for (const policy of [undefined, "safe"] as const) {
      const rules = HttpCall.retryable(policy)
      for (const operation of ["onboard", "createSession"] as const) {
        const sent = errors.filter((error) => rules[operation](error))
        expect(sent, `${operation} ${policy}`).toEqual([refused, status(408), status(429), status(503)])
      }
    }
  })

  it("onboard and createSession, idempotent: every retryable failure, and nothing else", () => {
    const rules = HttpCall.retryable("idempotent")
    for (const operation of ["onboard", "createSession"] as const) {
      for (const error of errors) {
        expect(rules[operation](error), `${operation} ${JSON.stringify(error)}`).toBe(Failures.isRetryable(error))
      }
    }
    expect(rules.createSession(status(400))).toBe(false)
    expect(rules.createSession(reset)).toBe(true)
  })
})

describe("HttpCall.idempotencyKey", () => {
  it("the caller's key when it may be sent, refused when not, else a fresh one per call", () => {
    expect(HttpCall.idempotencyKey("my-key")).toBe("my-key")
    expect(HttpCall.idempotencyKey("")).toBeUndefined()
    expect(HttpCall.idempotencyKey("x".repeat(256))).toBeUndefined()
    const a = HttpCall.idempotencyKey(undefined)
    const b = HttpCall.idempotencyKey(undefined)
    expect(a).toMatch(/^[0-9a-f-]{36}$/)
    expect(a).not.toBe(b)
  })
})

describe("HttpCall.spanAttributes", () => {
  it("the dialect, the server's host, and the agent's id when one is named", () => {
    const of = HttpCall.spanAttributes("observed", "https://agents.example.com:8443/base/")
    expect(of(undefined)).toEqual({ "agent_session.dialect": "observed", "server.address": "agents.example.com:8443" })
    expect(of("agent-1")["agent_session.agent_id"]).toBe("agent-1")
    expect(of({ agentId: "agent-2" })["agent_session.agent_id"]).toBe("agent-2")
  })
})

describe("HttpCall.redactedHeaders", () => {
  it("extends the caller's list as Http.redactedHeaders does, and builds it once per list", () => {
    const names = ["cookie"]
    const first = HttpCall.redactedHeaders(names)
    expect(first).toEqual(Http.redactedHeaders(names))
    expect(HttpCall.redactedHeaders(names)).toBe(first)
    const other = ["authorization"]
    expect(HttpCall.redactedHeaders(other)).toEqual(Http.redactedHeaders(other))
    expect(HttpCall.redactedHeaders(names)).toEqual(first)
  })
})
