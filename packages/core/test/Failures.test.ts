import fc from "fast-check"
import { describe, expect, expectTypeOf, it } from "vitest"
import { Failures, Http } from "../src/index.js"
import { shellQuoted } from "../src/internal/text.js"

describe("Failures: messages", () => {
  it("each message names what happened from the error's fields", () => {
    const m = Failures.messages
    expect(m.MissingCredentials({ operation: "AgentApi.onboard", variable: "AGENT_SESSION_API_KEY" })).toBe(
      "No API key for AgentApi.onboard: set AGENT_SESSION_API_KEY or provide Credentials.layer({ apiKey })"
    )
    expect(m.MissingAgentKey({ agentId: "a1" })).toBe("Agent a1 has no API key: the onboard response did not include one")
    expect(m.RequestTimeout({ operation: "AgentApi.getSession", timeout: "30s" })).toBe(
      "AgentApi.getSession got no response within 30s"
    )
    expect(m.ResponseTooLarge({ operation: "AgentApi.onboard", status: 200, limit: 10 })).toBe(
      "AgentApi.onboard: the 200 response is over the limit of 10 bytes"
    )
    expect(m.FrameTooLarge({ size: 9, limit: 8 })).toBe("Frame of 9 bytes is over the limit of 8")
    expect(m.UnknownEvent({ event: "x" })).toBe(`Unknown event "x" (strict mode)`)
    expect(m.ConnectTimeout({ timeout: "10s" })).toBe("The event channel did not open within 10s")
    expect(m.ConnectionLost({ attempts: 3, lastError: "reset" })).toBe("Connection lost after 3 attempts: reset")
    expect(m.NeverConnected({ sessionId: "s", attempts: 2, lastError: "refused" })).toBe(
      "The event channel of session s never connected (2 attempts): refused"
    )
    expect(m.InsecureTransport({ url: "ws://h/" })).toBe(
      "Refusing to send a key in clear to ws://h/: use wss/https, or set allowInsecure"
    )
    expect(m.AnswerBufferFull({ limit: 64 })).toBe("64 answers are already waiting for the connection to reopen")
    expect(m.ActionBudgetExceeded({ sessionId: "s", actions: 4, maxActions: 3 })).toBe(
      "Session s ran 4 actions, over its budget of 3"
    )
    expect(m.ReplayMismatch({ subject: "answer", path: "r.jsonl", line: 7, difference: "deny" })).toBe(
      "The answer differs from the recording: deny (r.jsonl:7)"
    )
  })

  it("a reason, a last error or a line is added only when there is one", () => {
    const m = Failures.messages
    expect(m.HandshakeRejected({ code: 4401, reason: "" })).toBe("Handshake rejected (4401)")
    expect(m.HandshakeRejected({ code: 401, reason: "bad key" })).toBe("Handshake rejected (401): bad key")
    expect(m.Superseded({ reason: "" })).toBe("Another connection to the session took over its event channel (close 4000)")
    expect(m.Superseded({ reason: "superseded" })).toMatch(/\(close 4000\): superseded$/)
    expect(m.SessionEndedWithoutComplete({ sessionId: "s", lastError: undefined })).toBe("Session s ended without complete")
    expect(m.SessionEndedWithoutComplete({ sessionId: "s", lastError: "boom" })).toBe("Session s ended without complete: boom")
    expect(m.InvalidRecording({ path: "r.jsonl", line: 0, reason: "unreadable" })).toBe("r.jsonl: unreadable")
    expect(m.InvalidRecording({ path: "r.jsonl", line: 3, reason: "not JSON" })).toBe("r.jsonl:3: not JSON")
  })

  it("an unknown outcome names what may exist and the key to send it again with", () => {
    const fields = { reason: "RequestTimeout", detail: "30s", idempotencyKey: "k-1" }
    expect(Failures.messages.OutcomeUnknown({ operation: "AgentApi.onboard", ...fields })).toBe(
      "AgentApi.onboard: the request may have reached the service, so the agent may exist (RequestTimeout: 30s); not sent again (Idempotency-Key k-1)"
    )
    expect(Failures.messages.OutcomeUnknown({ operation: "AgentApi.createSession", ...fields })).toContain(
      "so the session may exist"
    )
  })

  it("U16 a request that cannot be answered says why", () => {
    const request = { resourceType: "request_user_input", actionSessionId: "as-1" }
    expect(Failures.messages.RequestNotPending({ ...request, reason: "never-received" })).toBe(
      "No pending request_user_input request for action session as-1 (never-received)"
    )
    expect(Failures.messages.RequestNotPending({ ...request, reason: "channel-closed" })).toBe(
      "Cannot answer the request_user_input request of action session as-1: the event channel is closed"
    )
  })

  it("U07 an HTTP status error's defaults are the status of its kind", () => {
    for (const [kind, { status }] of Object.entries(Failures.statusDefaults)) {
      expect(Http.statusKind(status), kind).toBe(kind)
    }
    expect(Failures.statusDefaults["unauthorized"].message).toBe("the key is missing or invalid")
    expect(Failures.unexpectedStatusMessage).toBe("unexpected status")
  })
})

describe("Failures: the fields of each error", () => {
  const tags = Object.keys(Failures.errorFields) as Array<Failures.ErrorTag>

  it("every error has a message: a field of its own, or one derived from its fields, never both", () => {
    for (const tag of tags) {
      const fields: Failures.Fields = Failures.errorFields[tag]
      const derived = Failures.messageOf(tag, (value) => value) !== undefined
      expect(derived, tag).toBe(Object.hasOwn(Failures.messages, tag))
      expect("message" in fields, tag).toBe(!derived)
    }
    expect(Object.keys(Failures.messages).filter((tag) => !(tag in Failures.errorFields))).toEqual([])
  })

  it("a default is of the field's type, and a field that may be absent has none", () => {
    for (const tag of tags) {
      for (const [name, field] of Object.entries<Failures.Field>(Failures.errorFields[tag])) {
        if (field.default === undefined) continue
        expect(field.absent, `${tag}.${name}`).toBeUndefined()
        expect(typeof field.default, `${tag}.${name}`).toBe(field.type === "string" ? "string" : "number")
      }
    }
  })

  it("an HTTP status error has the status and message of its kind by default; a session error its context", () => {
    expect(Failures.errorFields.Forbidden.status.default).toBe(403)
    expect(Failures.errorFields.Forbidden.message.default).toBe(Failures.statusDefaults["forbidden"].message)
    expect(Failures.errorFields.RateLimited.retryAfter).toEqual({ type: "duration", absent: "option-null" })
    expect(Failures.errorFields.UnexpectedStatus.status).toEqual({ type: "number" })
    expect(Failures.errorFields.RequestTimeout.timeout.default).toBe(30_000)
    expect(Failures.errorFields.MissingCredentials.variable.default).toBe("AGENT_SESSION_API_KEY")
    expect(Failures.errorFields.RequestNotPending.reason.type).toEqual(Failures.notPendingReasons)
    for (const tag of ["MissingCredentials", "MalformedFrame", "ConnectionLost"] as const) {
      expect(Object.keys(Failures.errorFields[tag]).slice(0, 2), tag).toEqual(["sessionId", "mayStillBeRunning"])
    }
  })

  it("a derived message reads the error's fields through the edition's plain values", () => {
    const message = Failures.messageOf("RequestTimeout", (value) => typeof value === "number" ? `${value / 1000}s` : value)
    expect(message?.({ _tag: "RequestTimeout", operation: "AgentApi.getSession", timeout: 30_000 })).toBe(
      "AgentApi.getSession got no response within 30s"
    )
    expect(Failures.messageOf("InvalidRequest", (value) => value)).toBeUndefined()
    expect(Failures.messageOf("NoSuchError", (value) => value)).toBeUndefined()
    expectTypeOf<Failures.View<"RequestTimeout">>().toEqualTypeOf<{ readonly operation: string; readonly timeout: string }>()
    expectTypeOf<Failures.View<"SessionEndedWithoutComplete">["lastError"]>().toEqualTypeOf<string | undefined>()
    expectTypeOf<Failures.View<"RequestNotPending">["reason"]>().toEqualTypeOf<(typeof Failures.notPendingReasons)[number]>()
  })
})

describe("Failures: a session that may still be running", () => {
  it("the notice names the session and how to reattach, only when it may still be running", () => {
    expect(Failures.orphanNotice({ sessionId: "ses_1", mayStillBeRunning: true })).toBe(
      "session ses_1 may still be running at the service; reattach with: effect-agent-session attach ses_1"
    )
    expect(Failures.orphanNotice({ sessionId: "ses_1", mayStillBeRunning: false })).toBeUndefined()
    expect(Failures.orphanNotice({ sessionId: undefined, mayStillBeRunning: true })).toBeUndefined()
    expect(Failures.orphanNotice({ mayStillBeRunning: true })).toBeUndefined()
    for (const value of [null, undefined, "ses_1", 1, new Error("x")]) expect(Failures.orphanNotice(value)).toBeUndefined()
  })

  it("an id from the service is printable and one shell word, whatever it holds", () => {
    const notice = Failures.orphanNotice({ sessionId: "a b'\u001b[2J\u202e", mayStillBeRunning: true }) ?? ""
    expect(notice).toContain(String.raw`attach 'a b'\''\u{1b}[2J\u{202e}'`)
    fc.assert(fc.property(fc.string(), (id) => {
      const printed = Failures.orphanNotice({ sessionId: id, mayStillBeRunning: true }) ?? ""
      expect(printed).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/)
      const word = shellQuoted(id)
      expect(word === id || (word.startsWith("'") && word.endsWith("'"))).toBe(true)
    }))
  })
})

const tags = [
  "TransportError",
  "RequestTimeout",
  "RateLimited",
  "ServerError",
  "UnexpectedStatus",
  "BadRequest",
  "ResponseDecodeError",
  "ResponseTooLarge",
  "InvalidRequest",
  "MissingCredentials",
  "OutcomeUnknown"
] as const

const failure = fc.record({
  _tag: fc.constantFrom(...tags),
  status: fc.integer({ min: 100, max: 599 })
})

describe("Failures: failed HTTP attempts (U07, U21, U22) and the create policy", () => {
  it("U07 retried: transport failures, time-outs, and 408, 429 and 5xx of the status errors", () => {
    expect(Failures.isRetryable({ _tag: "TransportError" })).toBe(true)
    expect(Failures.isRetryable({ _tag: "RequestTimeout" })).toBe(true)
    expect(Failures.isRetryable({ _tag: "UnexpectedStatus", status: 408 } as Failures.Failure)).toBe(true)
    expect(Failures.isRetryable({ _tag: "UnexpectedStatus", status: 418 } as Failures.Failure)).toBe(false)
    expect(Failures.isRetryable({ _tag: "BadRequest", status: 400 } as Failures.Failure)).toBe(false)
    expect(Failures.isRetryable({ _tag: "OutcomeUnknown" })).toBe(false)
  })

  it("what did not act is retryable; a creating call is sent again only when nothing can have been created (safe)", () => {
    fc.assert(fc.property(failure, fc.boolean(), (error, notSent) => {
      if (Failures.didNotAct(error, notSent)) expect(Failures.isRetryable(error)).toBe(true)
      expect(Failures.mayHaveActed(error, notSent)).toBe(Failures.isRetryable(error) && !Failures.didNotAct(error, notSent))
      expect(Failures.mayResend("safe", error, notSent)).toBe(Failures.didNotAct(error, notSent))
      expect(Failures.mayResend("idempotent", error, notSent)).toBe(Failures.isRetryable(error))
      // "safe" never sends again what may have acted.
      if (Failures.mayResend("safe", error, notSent)) expect(Failures.mayHaveActed(error, notSent)).toBe(false)
    }))
    expect(Failures.didNotAct({ _tag: "TransportError" }, true)).toBe(true)
    expect(Failures.didNotAct({ _tag: "TransportError" }, false)).toBe(false)
    expect(Failures.didNotAct({ _tag: "RequestTimeout" }, true)).toBe(false)
    expect([503, 429, 500, 502].map((status) => Failures.didNotAct({ _tag: "ServerError", status } as Failures.Failure, false)))
      .toEqual([true, true, false, false])
  })

  it("a transport error marked as never sent did not act, unless told otherwise; the mark is not a field", () => {
    const refused = Failures.withNotSent({ _tag: "TransportError", message: "refused" }, true)
    const reset = Failures.withNotSent({ _tag: "TransportError", message: "reset" }, false)
    expect([Failures.didNotAct(refused), Failures.mayHaveActed(refused), Failures.mayResend("safe", refused)])
      .toEqual([true, false, true])
    expect([Failures.didNotAct(reset), Failures.mayHaveActed(reset), Failures.mayResend("safe", reset)])
      .toEqual([false, true, false])
    expect(Failures.didNotAct(refused, false)).toBe(false)
    expect(Object.keys(refused)).toEqual(["_tag", "message"])
    expect(JSON.stringify(refused)).toBe(JSON.stringify(reset).replace("reset", "refused"))
  })

  it("the metrics outcome of a failed attempt", () => {
    expect(Failures.httpOutcome({ _tag: "TransportError" })).toBe("transport")
    expect(Failures.httpOutcome({ _tag: "RequestTimeout" })).toBe("timeout")
    expect(Failures.httpOutcome({ _tag: "ResponseDecodeError", status: 200 } as Failures.Failure)).toBe("decode")
    expect(Failures.httpOutcome({ _tag: "ResponseTooLarge", status: 200 } as Failures.Failure)).toBe("decode")
    expect(Failures.httpOutcome({ _tag: "RateLimited", status: 429 } as Failures.Failure)).toBe(429)
    for (const tag of ["InvalidRequest", "MissingCredentials", "MissingAgentKey", "OutcomeUnknown"]) {
      expect(Failures.httpOutcome({ _tag: tag }), tag).toBeUndefined()
    }
  })
})

describe("Failures: an unknown outcome", () => {
  it("names the operation, the key to send again with, the attempts and the last error", () => {
    expect(
      Failures.outcomeUnknown({
        operation: "createSession",
        idempotencyKey: "k-1",
        attempts: 3,
        error: { _tag: "ServerError", message: "boom" }
      })
    ).toStrictEqual({
      operation: "AgentApi.createSession",
      idempotencyKey: "k-1",
      attempts: 3,
      reason: "ServerError",
      detail: "boom"
    })
  })

  it("a session may still run after any channel error but a refusal that says there is no such session", () => {
    for (const code of [400, 404, 410]) expect(Failures.mayStillBeRunning({ _tag: "HandshakeRejected", code })).toBe(false)
    expect(Failures.mayStillBeRunning({ _tag: "HandshakeRejected", code: 401 })).toBe(true)
    expect(Failures.mayStillBeRunning({ _tag: "ConnectionLost" })).toBe(true)
  })

  it("a refused answer is logged as pending again", () => {
    expect(Failures.answerRefusedLog("HTTP 409")).toBe("The service refused an answer (HTTP 409): the request is pending again")
  })
})
