/**
 * The domain schemas of `Agent` and `Session` on their own (the HTTP client's use of them is in
 * AgentApi.test.ts): validation of the caller's input, and what the SDK makes of the service's
 * answers (U01, U02, U05, U06, U20).
 */
import { assert, describe, it } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as Agent from "../src/Agent.js"
import { validate } from "../src/internal/schema.js"
import * as Session from "../src/Session.js"

const validAgent: Agent.OnboardInput = { name: "scout", website: "https://example.com", domain: "research" }
const validSession: Session.CreateSessionInput = { start_url: "https://example.com", max_actions: 5, goal: "Find the pricing page" }

const agentBody = (overrides: Record<string, unknown> = {}) => ({
  agentId: "agent-1",
  ...validAgent,
  apiKey: "sk-agent-SECRET-77aa01",
  ...overrides
})

const sessionBody = (overrides: Record<string, unknown> = {}) => ({
  session_id: "sess-1",
  status: "started",
  start_time: "2025-01-02T03:04:05Z",
  ...overrides
})

const decodeAgent = Schema.decodeUnknownResult(Agent.Agent)
const decodeInfo = Schema.decodeUnknownResult(Session.SessionInfo)

const info = (overrides: Record<string, unknown>): Session.SessionInfo => {
  const result = decodeInfo(sessionBody(overrides))
  if (Result.isFailure(result)) return assert.fail(result.failure.message)
  return result.success
}

const iso = (dt: Option.Option<DateTime.Utc>): string | undefined => Option.getOrUndefined(Option.map(dt, DateTime.formatIso))

describe("Agent", () => {
  const check = validate(Agent.OnboardRequest, "OnboardRequest")
  const invalid: ReadonlyArray<readonly [string, unknown]> = [
    ["empty name", { ...validAgent, name: "" }],
    ["blank name", { ...validAgent, name: "   " }],
    ["tab and newline name", { ...validAgent, name: "\t\n" }],
    ["blank website", { ...validAgent, website: "  " }],
    ["domain not one of the five", { ...validAgent, domain: "finance" }],
    ["domain in another case", { ...validAgent, domain: "Sales" }],
    ["missing name", { website: validAgent.website, domain: validAgent.domain }],
    ["name not a string", { ...validAgent, name: 42 }],
    ["not an object", "scout"]
  ]
  for (const [label, input] of invalid) {
    it(`OnboardRequest rejects ${label} with InvalidRequest`, () => {
      const result = check(input)
      assert.isTrue(Result.isFailure(result) && result.failure.subject === "OnboardRequest")
    })
  }

  it("the message names every problem at once", () => {
    const result = check({ name: " ", website: "", domain: "nope" })
    if (Result.isSuccess(result)) return assert.fail("accepted")
    for (const field of ["name", "website", "domain"]) assert.include(result.failure.message, field)
  })

  it("each of the five domains is accepted", () => {
    for (const domain of Agent.AgentDomain.literals) assert.isTrue(Result.isSuccess(check({ ...validAgent, domain })))
  })

  it("U01 extra fields of the agent are ignored", () => {
    const result = decodeAgent(agentBody({ createdAt: "2025-01-01", plan: { tier: "pro" } }))
    if (Result.isFailure(result)) return assert.fail(result.failure.message)
    assert.strictEqual(result.success.agentId, "agent-1")
    assert.isFalse("createdAt" in result.success)
  })

  it("U06 apiKey present is Some(Redacted), and never prints", () => {
    const result = decodeAgent(agentBody())
    if (Result.isFailure(result)) return assert.fail(result.failure.message)
    const agent = result.success
    assert.deepStrictEqual(Option.map(agent.apiKey, Redacted.value), Option.some("sk-agent-SECRET-77aa01"))
    assert.notInclude(String(agent), "sk-agent-SECRET-77aa01")
    assert.notInclude(JSON.stringify(agent), "sk-agent-SECRET-77aa01")
  })

  it("U06 a missing apiKey is Option.none, not a failure", () => {
    const { apiKey: _, ...withoutKey } = agentBody()
    const result = decodeAgent(withoutKey)
    assert.isTrue(Result.isSuccess(result) && Option.isNone(result.success.apiKey))
  })

  it("a domain outside the five in the response is refused", () => {
    assert.isTrue(Result.isFailure(decodeAgent(agentBody({ domain: "finance" }))))
  })
})

describe("Session", () => {
  const check = validate(Session.CreateSessionRequest, "CreateSessionRequest")
  const invalid: ReadonlyArray<readonly [string, unknown]> = [
    ["a relative start_url", { ...validSession, start_url: "/pricing" }],
    ["an ftp: start_url", { ...validSession, start_url: "ftp://example.com/file" }],
    ["a start_url that is not a url", { ...validSession, start_url: "not a url" }],
    ["a javascript: start_url", { ...validSession, start_url: "javascript:alert(1)" }],
    ["max_actions 0", { ...validSession, max_actions: 0 }],
    ["max_actions -1", { ...validSession, max_actions: -1 }],
    ["max_actions 1.5", { ...validSession, max_actions: 1.5 }],
    ["max_actions NaN", { ...validSession, max_actions: Number.NaN }],
    ["max_actions Infinity", { ...validSession, max_actions: Number.POSITIVE_INFINITY }],
    ["max_actions as a string", { ...validSession, max_actions: "5" }],
    ["a blank goal", { ...validSession, goal: "   " }],
    ["a missing goal", { start_url: validSession.start_url, max_actions: 5 }],
    ["null", null]
  ]
  for (const [label, input] of invalid) {
    it(`U20 CreateSessionRequest rejects ${label} with InvalidRequest`, () => {
      const result = check(input)
      assert.isTrue(Result.isFailure(result) && result.failure.subject === "CreateSessionRequest")
    })
  }

  it("U20 the message names the field; the boundary values are accepted", () => {
    const zero = check({ ...validSession, max_actions: 0 })
    assert.isTrue(Result.isFailure(zero) && zero.failure.message.includes("max_actions"))
    for (const ok of [{ max_actions: 1 }, { start_url: "http://example.com" }, { start_url: "https://e.com:8443/a?b=c#d" }]) {
      assert.isTrue(Result.isSuccess(check({ ...validSession, ...ok })), JSON.stringify(ok))
    }
  })

  it("U01 extra fields are ignored", () => {
    const session = info({ agent: { id: 1 }, cost: 3 })
    assert.strictEqual(session.session_id, "sess-1")
    assert.isFalse("cost" in session)
  })

  it("U02 timestamps: ISO 8601 (with an offset), epoch seconds or milliseconds, as strings or numbers", () => {
    assert.strictEqual(iso(info({ start_time: "2025-01-02T03:04:05Z" }).startedAt), "2025-01-02T03:04:05.000Z")
    assert.strictEqual(iso(info({ start_time: "2025-01-02T05:04:05+02:00" }).startedAt), "2025-01-02T03:04:05.000Z")
    assert.strictEqual(iso(info({ start_time: "1735787045" }).startedAt), "2025-01-02T03:04:05.000Z")
    const seconds = info({ start_time: 1735787045 })
    assert.deepStrictEqual(seconds.start_time, Option.some("1735787045"))
    assert.strictEqual(iso(seconds.startedAt), "2025-01-02T03:04:05.000Z")
    assert.strictEqual(iso(info({ end_time: 1735787045123 }).endedAt), "2025-01-02T03:04:05.123Z")
    assert.strictEqual(iso(info({ start_time: " 1735787045.5 " }).startedAt), "2025-01-02T03:04:05.500Z")
  })

  it("U02 garbage is None, not a failure (raw kept)", () => {
    for (const raw of ["yesterday", "", "  ", "2025-13-45T99:99:99Z", "12:30", "Jan 2 2025"]) {
      const session = info({ start_time: raw })
      assert.isTrue(Option.isNone(session.startedAt), raw)
      assert.deepStrictEqual(session.start_time, Option.some(raw))
    }
  })

  it("U05 the named statuses decode as themselves; another is Unrecognized { raw } and encodes back", () => {
    for (const status of ["started", "in_progress", "complete"] as const) {
      assert.deepStrictEqual(info({ status }).status, Option.some(status))
    }
    const session = info({ status: "paused" })
    assert.deepStrictEqual(session.status, Option.some({ _tag: "Unrecognized" as const, raw: "paused" }))
    assert.strictEqual(Schema.encodeSync(Session.SessionInfo)(session).status, "paused")
  })

  it("error and end_time are optional; a missing session_id is refused", () => {
    const session = info({ error: "agent crashed", end_time: "2025-01-02T03:05:00Z", status: "complete" })
    assert.deepStrictEqual(session.error, Option.some("agent crashed"))
    assert.isTrue(Option.isSome(session.endedAt))
    assert.isTrue(Option.isNone(info({}).error))
    const { session_id: _, ...rest } = sessionBody()
    assert.isTrue(Result.isFailure(decodeInfo(rest)))
  })
})
