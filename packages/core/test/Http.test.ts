import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { Http, Secrets } from "../src/index.js"
import { causeMessages } from "../src/internal/httpFailures.js"

describe("Http status rules (U07)", () => {
  it("each status has one kind; 2xx is success", () => {
    const table: ReadonlyArray<readonly [number, Http.StatusKind]> = [
      [400, "bad-request"],
      [422, "bad-request"],
      [401, "unauthorized"],
      [403, "forbidden"],
      [404, "not-found"],
      [409, "conflict"],
      [413, "payload-too-large"],
      [429, "rate-limited"],
      [500, "server-error"],
      [599, "server-error"],
      [300, "unexpected-status"],
      [408, "unexpected-status"],
      [600, "unexpected-status"]
    ]
    for (const [status, kind] of table) expect(Http.statusKind(status), String(status)).toBe(kind)
    expect([199, 200, 204, 299, 300].map(Http.isSuccess)).toEqual([false, true, true, true, false])
  })

  it("retryable: 408, 429, 5xx; did not act: 408, 429, 503; an answer POST follows the same table", () => {
    fc.assert(fc.property(fc.integer({ min: 100, max: 999 }), (status) => {
      const retryable = status === 408 || status === 429 || (status >= 500 && status <= 599)
      expect(Http.isRetryableStatus(status)).toBe(retryable)
      // Whatever did not act is retryable: sending it again cannot act twice.
      if (Http.didNotActStatus(status)) expect(retryable).toBe(true)
      expect(Http.answerPostOutcome(status)).toBe(
        status >= 200 && status < 300 ? "confirmed" : retryable ? "retry" : "refused"
      )
    }))
    expect([408, 429, 503, 500, 502].map(Http.didNotActStatus)).toEqual([true, true, true, false, false])
  })
})

describe("Http error bodies (U18) and Retry-After (U21)", () => {
  it("the message is the first non-blank known member, else the body, else the status line", () => {
    expect(Http.errorMessage(400, "", `{"message":"m","error":" "}`)).toBe("m")
    expect(Http.errorMessage(400, "", `{"error":{"description":"d"}}`)).toBe("d")
    expect(Http.errorMessage(400, "", `{"error_description":" e "}`)).toBe("e")
    expect(Http.errorMessage(502, "", "  bad gateway  ")).toBe("bad gateway")
    expect(Http.errorMessage(503, "Service Unavailable", " ")).toBe("HTTP 503 Service Unavailable")
    expect(Http.errorMessage(500, "", "x".repeat(5000))).toHaveLength(Secrets.RAW_LIMIT)
  })

  it("Retry-After as milliseconds, seconds or a date; nonsense is none", () => {
    const now = Date.parse("2026-01-01T00:00:00Z")
    expect(Http.retryAfterMillis({ "retry-after-ms": "250", "retry-after": "9" }, now)).toBe(250)
    expect(Http.retryAfterMillis({ "retry-after": "1.5" }, now)).toBe(1500)
    expect(Http.retryAfterMillis({ "retry-after": "Thu, 01 Jan 2026 00:00:03 GMT" }, now)).toBe(3000)
    expect(Http.retryAfterMillis({ "retry-after": "Wed, 31 Dec 2025 00:00:00 GMT" }, now)).toBe(0)
    expect(Http.retryAfterMillis({ "retry-after": "soon" }, now)).toBeUndefined()
    expect(Http.retryAfterMillis({}, now)).toBeUndefined()
    expect(Http.requestId({ "x-request-id": " ", "request-id": "r1" })).toBe("r1")
  })

  it("the wait before a retry: at least the schedule's, the asked wait capped, whole milliseconds", () => {
    expect(Http.retryWaitMillis(500.2, undefined, 60_000)).toBe(501)
    expect(Http.retryWaitMillis(500, 3_000, 60_000)).toBe(3_000)
    expect(Http.retryWaitMillis(500, 600_000, 60_000)).toBe(60_000)
    expect(Http.retryWaitMillis(5_000, 10, 60_000)).toBe(5_000)
  })
})

describe("Http requests that never left, Idempotency-Key, bodies", () => {
  it("provably not sent: every code along the causes says no connection (at least one), or the address is invalid; never after a response", () => {
    const refused = Object.assign(new Error("connect"), { code: "ECONNREFUSED" })
    const notSent = (cause: unknown, reason = "Transport", readingStatus?: number) =>
      Http.transportFailure({ reason, cause, method: "GET", url: "https://h.test/", readingStatus }, []).notSent
    expect(notSent(new Error("fetch failed", { cause: refused }))).toBe(true)
    expect(notSent({ errors: [refused, { code: "ENETUNREACH" }] })).toBe(true)
    expect(notSent({ cause: { code: "ECONNRESET" } })).toBe(false)
    expect(notSent({ errors: [refused, { code: "UND_ERR_SOCKET" }] })).toBe(false)
    expect(notSent(new Error("no code"))).toBe(false)
    expect(notSent(new Error("no code"), "InvalidUrl")).toBe(true)
    expect(notSent(new Error("fetch failed", { cause: refused }), "Transport", 200)).toBe(false)
    expect(causeMessages(new Error("fetch failed", { cause: refused }))).toEqual(["fetch failed", "connect", "ECONNREFUSED"])
  })

  it("a caller's key is 1 to 255 printable ASCII characters; a server takes the header trimmed, up to 255", () => {
    expect(["k", "x".repeat(255), "a-b_c.1~"].every(Http.isIdempotencyKey)).toBe(true)
    expect(["", "x".repeat(256), "a b", "é"].some(Http.isIdempotencyKey)).toBe(false)
    expect(Http.idempotencyKeyOf({ "idempotency-key": " k 1 " })).toBe("k 1")
    expect(Http.idempotencyKeyOf({ "idempotency-key": "x".repeat(256) })).toBeUndefined()
    expect(Http.idempotencyKeyOf({ "idempotency-key": "  " })).toBeUndefined()
  })
})

describe("Http failures kept on errors, without a key", () => {
  const key = "sk-SECRET-1234567890"

  it("U07 U18 U21 a failed response: its kind, its message, its body cut, its request id, every key out (scrubbed before the cut), the wait of a 429 or 5xx", () => {
    const body = `${"x".repeat(Secrets.RAW_LIMIT - 5)}${key}`
    const options = { secrets: [key], nowMillis: 0 }
    const kept = Http.statusFailure(
      {
        status: 429,
        statusText: "",
        headers: { "x-request-id": `r-${key}`, "retry-after": "2" },
        body: JSON.stringify({ error: `slow down ${key}` })
      },
      options
    )
    expect(kept).toStrictEqual({
      kind: "rate-limited",
      status: 429,
      message: "slow down <redacted>",
      body: `{"error":"slow down <redacted>"}`,
      requestId: "r-<redacted>",
      retryAfterMillis: 2_000
    })
    const cut = Http.statusFailure({ status: 500, statusText: "", headers: {}, body }, options)
    expect(cut.kind).toBe("server-error")
    expect(cut.body).not.toContain("sk-")
    expect(cut.body.length).toBeLessThanOrEqual(Secrets.RAW_LIMIT)
    expect(cut.requestId).toBeUndefined()
    expect(cut.retryAfterMillis).toBeUndefined()
    const unavailable = Http.statusFailure(
      { status: 503, statusText: "Service Unavailable", headers: { "retry-after-ms": "150" }, body: "" },
      options
    )
    expect([unavailable.message, unavailable.retryAfterMillis]).toEqual(["HTTP 503 Service Unavailable", 150])
    // Only a 429 or a 5xx carries a wait: others ignore the header.
    for (const status of [400, 404, 408, 409]) {
      expect(Http.statusFailure({ status, statusText: "", headers: { "retry-after": "2" }, body: "" }, options).retryAfterMillis)
        .toBeUndefined()
    }
  })

  it("a failure of the contract: the payload before any response, else the response (its status, the problem, its body), scrubbed and cut", () => {
    expect(Http.contractFailure(`session_id is missing (${key})`, { status: 200, body: `{"k":"${key}"}` }, [key])).toStrictEqual({
      kind: "undecoded-response",
      status: 200,
      message: "The 200 response does not match the contract: session_id is missing (<redacted>)",
      body: `{"k":"<redacted>"}`
    })
    expect(Http.contractFailure("bad", { status: 201 }, [])).toMatchObject({ status: 201, body: "" })
    expect(Http.contractFailure(`name: expected a string (${key})`, undefined, [key])).toStrictEqual({
      kind: "invalid-request",
      message: "name: expected a string (<redacted>)"
    })
    const long = Http.contractFailure("x".repeat(Secrets.RAW_LIMIT * 2), { status: 200, body: "y".repeat(Secrets.RAW_LIMIT * 2) }, [])
    expect(long.message.length).toBeLessThanOrEqual(Secrets.RAW_LIMIT)
    expect(long.kind === "undecoded-response" && long.body.length).toBeLessThanOrEqual(Secrets.RAW_LIMIT)
  })

  it("a failure without a response: the client's words, each cause once, the method and the address without its query", () => {
    const refused = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:9"), { code: "ECONNREFUSED" })
    const message = (failure: Omit<Parameters<typeof Http.transportFailure>[0], "method" | "url">, url = "https://h.test/x") =>
      Http.transportFailure({ ...failure, method: "POST", url }, [key]).message
    expect(message(
      { reason: "Transport", description: "Transport error", cause: new Error("fetch failed", { cause: refused }) },
      `https://h.test/agent/onboard?apiKey=${key}#x`
    )).toBe("Transport error: fetch failed: connect ECONNREFUSED 127.0.0.1:9 (POST https://h.test/agent/onboard)")
    expect(message({ reason: "Transport", description: "e", cause: new Error("e") }, `https://h/${key}`))
      .toBe("e (POST https://h/<redacted>)")
    // Without the client's words: `<reason> error`; reading a response's body: what was read.
    expect(message({ reason: "Encode", cause: undefined })).toBe("Encode error (POST https://h.test/x)")
    expect(message({ reason: "Transport", description: "x", cause: new Error("reset"), readingStatus: 502 }))
      .toBe("reading the 502 response body failed: reset (POST https://h.test/x)")
  })
})

describe("Http: what the client sends and traces", () => {
  it("the key headers and every value are redacted in traces; the caller's names are kept", () => {
    const names = Http.redactedHeaders(["authorization", "cookie"])
    expect(names.slice(0, 4)).toEqual(["authorization", "cookie", "x-api-key", "idempotency-key"])
    const every = names[4]
    expect(every instanceof RegExp && every.test("x-request-id")).toBe(true)
    expect(Http.noRetrieve("documented")).toStrictEqual({
      status: 404,
      message: "The documented dialect has no retrieve operation: nothing was sent",
      body: ""
    })
    expect(Http.idempotencyKeyMessage).toContain("255")
    expect(Http.environment).toEqual({ baseUrl: "AGENT_SESSION_BASE_URL", dialect: "AGENT_SESSION_DIALECT" })
  })
})

describe("Http: the client's requests", () => {
  it("a creating call's Idempotency-Key: the caller's when it may be sent, else a fresh one; a bad one is refused", () => {
    const fresh = () => "fresh-1"
    expect(Http.idempotencyKeyFor(undefined, fresh)).toBe("fresh-1")
    expect(Http.idempotencyKeyFor("mine-2", fresh)).toBe("mine-2")
    expect(Http.idempotencyKeyFor("has space", fresh)).toBeUndefined()
    expect(Http.idempotencyKeyFor("", fresh)).toBeUndefined()
    expect(Http.idempotencyKeyFor("x".repeat(256), fresh)).toBeUndefined()
  })

  it("U23 every request carries the auth header, the User-Agent and accept; a creating call its Idempotency-Key", () => {
    expect(Http.requestHeaders({ authHeader: ["x-api-key", "k"], userAgent: "ua/1" })).toStrictEqual({
      "x-api-key": "k",
      "user-agent": "ua/1",
      accept: "application/json"
    })
    expect(
      Http.requestHeaders({ authHeader: ["authorization", "Bearer k"], userAgent: "ua/1", idempotencyKey: "i-1" })
    ).toStrictEqual({ authorization: "Bearer k", "user-agent": "ua/1", accept: "application/json", "idempotency-key": "i-1" })
  })
})
