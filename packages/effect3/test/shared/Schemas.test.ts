/**
 * The domain schemas of `Agent` and `Session`, tested once for both editions: validation of the
 * caller's input, on its own and through the HTTP client (nothing sent), and what the SDK makes of
 * the service's answers (U01, U02, U05, U06, U20).
 */
import { assert, describe, it } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as Agent from "../../src/Agent.js"
import * as Credentials from "../../src/Credentials.js"
import * as Dialect from "../../src/Dialect.js"
import { validate } from "../../src/internal/schema.js"
import * as Session from "../../src/Session.js"
import { agentBody, json, makeApi, sessionBody, validAgent, validSession } from "./StubHttpClient.js"
import { decodeOutcome, failureIn, type Outcome, successOf } from "../helpers/line.js"

const decodeAgent = decodeOutcome(Agent.Agent)
const decodeInfo = decodeOutcome(Session.SessionInfo)

/** The value a decoding gave; the test fails when it failed. */
const decoded = <A, E>(result: Outcome<A, E>): A => {
  const value = successOf(result)
  return value ?? assert.fail(`expected a value, got ${String(failureIn(result))}`)
}

const info = (overrides: Record<string, unknown>): Session.SessionInfo => decoded(decodeInfo(sessionBody(overrides)))

const iso = (dt: Option.Option<DateTime.Utc>): string | undefined => Option.getOrUndefined(Option.map(dt, DateTime.formatIso))

const invalidAgents: ReadonlyArray<readonly [string, unknown]> = [
  ["empty name", { ...validAgent, name: "" }],
  ["blank name", { ...validAgent, name: "   " }],
  ["tab and newline name", { ...validAgent, name: "\t\n" }],
  ["empty website", { ...validAgent, website: "" }],
  ["blank website", { ...validAgent, website: "  " }],
  ["domain not one of the five", { ...validAgent, domain: "finance" }],
  ["domain in another case", { ...validAgent, domain: "Sales" }],
  ["empty domain", { ...validAgent, domain: "" }],
  ["missing name", { website: validAgent.website, domain: validAgent.domain }],
  ["name not a string", { ...validAgent, name: 42 }],
  ["not an object", "scout"]
]

const invalidSessions: ReadonlyArray<readonly [string, unknown]> = [
  ["a relative start_url", { ...validSession, start_url: "/pricing" }],
  ["an ftp: start_url", { ...validSession, start_url: "ftp://example.com/file" }],
  ["a start_url that is not a url", { ...validSession, start_url: "not a url" }],
  ["an empty start_url", { ...validSession, start_url: "" }],
  ["a javascript: start_url", { ...validSession, start_url: "javascript:alert(1)" }],
  ["max_actions 0", { ...validSession, max_actions: 0 }],
  ["max_actions -1", { ...validSession, max_actions: -1 }],
  ["max_actions 1.5", { ...validSession, max_actions: 1.5 }],
  ["max_actions NaN", { ...validSession, max_actions: Number.NaN }],
  ["max_actions Infinity", { ...validSession, max_actions: Number.POSITIVE_INFINITY }],
  ["max_actions as a string", { ...validSession, max_actions: "5" }],
  ["an empty goal", { ...validSession, goal: "" }],
  ["a blank goal", { ...validSession, goal: "   " }],
  ["a missing goal", { start_url: validSession.start_url, max_actions: 5 }],
  ["null", null]
]

describe("Agent", () => {
  describe("OnboardRequest validation: InvalidRequest, nothing sent", () => {
    for (const [label, input] of invalidAgents) {
      it.effect(`rejects ${label}`, () =>
        Effect.gen(function*() {
          const { api, stub } = yield* makeApi(() => json(200, agentBody()))
          // The input is deliberately wrong: the type system would refuse it, callers in JS may not.
          const error = yield* Effect.flip(api.onboard(input as Agent.OnboardInput))
          assert.strictEqual(error._tag, "InvalidRequest")
          assert.isTrue(error._tag === "InvalidRequest" && error.subject === "OnboardRequest")
          assert.strictEqual(yield* stub.count, 0)
        }))
    }

    it.effect("the message names every problem at once", () =>
      Effect.gen(function*() {
        const { api } = yield* makeApi(() => json(200, agentBody()))
        const error = yield* Effect.flip(api.onboard({ name: " ", website: "", domain: "nope" as "sales" }))
        assert.include(error.message, "name")
        assert.include(error.message, "website")
        assert.include(error.message, "domain")
      }))

    it.effect("each of the five domains is accepted and sent", () =>
      Effect.gen(function*() {
        for (const domain of Agent.AgentDomain.literals) {
          const { api, stub } = yield* makeApi(() => json(200, agentBody({ domain })))
          const agent = yield* api.onboard({ ...validAgent, domain })
          assert.strictEqual(agent.domain, domain)
          const [request] = yield* stub.requests
          assert.deepStrictEqual(JSON.parse(request?.body ?? "null"), { ...validAgent, domain })
        }
      }))
  })

  describe("the onboard response", () => {
    it("U01 extra fields of the agent are ignored", () => {
      const agent = decoded(decodeAgent(agentBody({ createdAt: "2025-01-01", plan: { tier: "pro" }, tags: [1, 2] })))
      assert.strictEqual(agent.agentId, "agent-1")
      assert.isFalse("createdAt" in agent)
    })

    it.effect("U01 extra fields are ignored over HTTP as well", () =>
      Effect.gen(function*() {
        const { api } = yield* makeApi(() => json(200, agentBody({ owner: "someone", quota: 3 })))
        const agent = yield* api.onboard(validAgent)
        assert.strictEqual(agent.name, "scout")
      }))

    it("U06 apiKey present is Some(Redacted), and never prints", () => {
      const agent = decoded(decodeAgent(agentBody()))
      assert.deepStrictEqual(Option.map(agent.apiKey, Redacted.value), Option.some("sk-agent-SECRET-77aa01"))
      assert.notInclude(String(agent), "sk-agent-SECRET-77aa01")
      assert.notInclude(JSON.stringify(agent), "sk-agent-SECRET-77aa01")
    })

    it("U06 a missing apiKey is Option.none, not a failure", () => {
      const { apiKey: _, ...withoutKey } = agentBody()
      assert.isTrue(Option.isNone(decoded(decodeAgent(withoutKey)).apiKey))
    })

    it.effect("U06 createSession for an agent without a key is MissingAgentKey, nothing sent", () =>
      Effect.gen(function*() {
        const { apiKey: _, ...withoutKey } = agentBody()
        const { api, stub } = yield* makeApi((request) =>
          request.url.endsWith("/agent/onboard") ? json(200, withoutKey) : json(200, sessionBody())
        )
        const agent = yield* api.onboard(validAgent)
        assert.isTrue(Option.isNone(agent.apiKey))
        const error = yield* Effect.flip(api.createSession(validSession, { agent }))
        assert.strictEqual(error._tag, "MissingAgentKey")
        assert.isTrue(error._tag === "MissingAgentKey" && error.agentId === "agent-1")
        // By id as well: the remembered agent has no key.
        const byId = yield* Effect.flip(api.createSession(validSession, { agent: "agent-1" }))
        assert.strictEqual(byId._tag, "MissingAgentKey")
        assert.strictEqual(yield* stub.count, 1)
      }))

    it.effect("U06 an empty apiKey counts as missing", () =>
      Effect.gen(function*() {
        const { api, stub } = yield* makeApi(() => json(200, agentBody({ apiKey: "" })))
        const agent = yield* api.onboard(validAgent)
        const error = yield* Effect.flip(api.createSession(validSession, { agent: Credentials.fromAgent(agent) }))
        assert.strictEqual(error._tag, "MissingAgentKey")
        assert.strictEqual(yield* stub.count, 1)
      }))

    it.effect("a domain outside the five in the response is ResponseDecodeError", () =>
      Effect.gen(function*() {
        const { api } = yield* makeApi(() => json(200, agentBody({ domain: "finance" })))
        const error = yield* Effect.flip(api.onboard(validAgent))
        assert.strictEqual(error._tag, "ResponseDecodeError")
      }))
  })

  describe("OnboardRequest on its own", () => {
    const check = validate(Agent.OnboardRequest, "OnboardRequest")

    for (const [label, input] of invalidAgents) {
      it(`OnboardRequest rejects ${label} with InvalidRequest`, () => {
        assert.strictEqual(failureIn(check(input))?.subject, "OnboardRequest")
      })
    }

    it("the message names every problem at once", () => {
      const error = failureIn(check({ name: " ", website: "", domain: "nope" }))
      if (error === undefined) return assert.fail("accepted")
      for (const field of ["name", "website", "domain"]) assert.include(error.message, field)
    })

    it("each of the five domains is accepted", () => {
      for (const domain of Agent.AgentDomain.literals) assert.isDefined(successOf(check({ ...validAgent, domain })))
    })

    it("a domain outside the five in the response is refused", () => {
      assert.isDefined(failureIn(decodeAgent(agentBody({ domain: "finance" }))))
    })
  })
})

describe("Session", () => {
  describe("U20 CreateSessionRequest validation: InvalidRequest, nothing sent", () => {
    for (const dialect of [Dialect.documented, Dialect.observed]) {
      for (const [label, input] of invalidSessions) {
        it.effect(`U20 rejects ${label} (${dialect.name})`, () =>
          Effect.gen(function*() {
            const { api, stub } = yield* makeApi(() => json(200, sessionBody()), { dialect })
            // Deliberately wrong input: the type system would refuse it, callers in JS may not.
            const error = yield* Effect.flip(api.createSession(input as Session.CreateSessionInput))
            assert.strictEqual(error._tag, "InvalidRequest")
            assert.isTrue(error._tag === "InvalidRequest" && error.subject === "CreateSessionRequest")
            assert.strictEqual(yield* stub.count, 0)
          }))
      }
    }

    it.effect("U20 the message names the field", () =>
      Effect.gen(function*() {
        const { api } = yield* makeApi(() => json(200, sessionBody()))
        const error = yield* Effect.flip(api.createSession({ ...validSession, max_actions: 0 }))
        assert.include(error.message, "max_actions")
        const url = yield* Effect.flip(api.createSession({ ...validSession, start_url: "ftp://x" }))
        assert.include(url.message, "start_url")
      }))

    it.effect("U20 the boundary values are accepted: max_actions 1, http and https URLs", () =>
      Effect.gen(function*() {
        const { api, stub } = yield* makeApi(() => json(200, sessionBody()))
        yield* api.createSession({ ...validSession, max_actions: 1 })
        yield* api.createSession({ ...validSession, start_url: "http://example.com" })
        yield* api.createSession({ ...validSession, start_url: "https://example.com:8443/a?b=c#d" })
        assert.strictEqual(yield* stub.count, 3)
      }))

    it.effect("U01 extra input fields are not sent", () =>
      Effect.gen(function*() {
        const { api, stub } = yield* makeApi(() => json(200, sessionBody()))
        yield* api.createSession({ ...validSession, extra: "x" } as Session.CreateSessionInput)
        const [request] = yield* stub.requests
        assert.deepStrictEqual(Object.keys(JSON.parse(request?.body ?? "{}")).sort(), [
          "goal",
          "max_actions",
          "start_url"
        ])
      }))
  })

  describe("SessionInfo", () => {
    it("U01 extra fields are ignored", () => {
      const session = info({ agent: { id: 1 }, cost: 3, links: [] })
      assert.strictEqual(session.session_id, "sess-1")
      assert.isFalse("cost" in session)
    })

    it("U02 ISO 8601 start_time: raw kept, parsed", () => {
      const session = info({ start_time: "2025-01-02T03:04:05Z" })
      assert.deepStrictEqual(session.start_time, Option.some("2025-01-02T03:04:05Z"))
      assert.strictEqual(iso(session.startedAt), "2025-01-02T03:04:05.000Z")
    })

    it("U02 ISO 8601 with an offset", () => {
      assert.strictEqual(iso(info({ start_time: "2025-01-02T05:04:05+02:00" }).startedAt), "2025-01-02T03:04:05.000Z")
    })

    it("U02 epoch seconds as a numeric string", () => {
      assert.strictEqual(iso(info({ start_time: "1735787045" }).startedAt), "2025-01-02T03:04:05.000Z")
    })

    it("U02 epoch seconds and milliseconds as JSON numbers", () => {
      const seconds = info({ start_time: 1735787045 })
      assert.deepStrictEqual(seconds.start_time, Option.some("1735787045"))
      assert.strictEqual(iso(seconds.startedAt), "2025-01-02T03:04:05.000Z")
      assert.strictEqual(iso(info({ end_time: 1735787045123 }).endedAt), "2025-01-02T03:04:05.123Z")
    })

    it("U02 epoch milliseconds as a numeric string", () => {
      assert.strictEqual(iso(info({ start_time: "1735787045123" }).startedAt), "2025-01-02T03:04:05.123Z")
    })

    it("U02 epoch seconds with a fraction", () => {
      assert.strictEqual(iso(info({ start_time: " 1735787045.5 " }).startedAt), "2025-01-02T03:04:05.500Z")
    })

    it("U02 garbage is None, not a failure (raw kept)", () => {
      for (const raw of ["yesterday", "", "  ", "2025-13-45T99:99:99Z", "12:30", "Jan 2 2025"]) {
        const session = info({ start_time: raw })
        assert.isTrue(Option.isNone(session.startedAt), raw)
        assert.deepStrictEqual(session.start_time, Option.some(raw))
      }
    })

    it("U02 a missing start_time is None; end_time parsed the same way", () => {
      const { start_time: _, ...rest } = sessionBody()
      const session = decoded(decodeInfo({ ...rest, end_time: "1735787045" }))
      assert.isTrue(Option.isNone(session.startedAt))
      assert.strictEqual(iso(session.endedAt), "2025-01-02T03:04:05.000Z")
    })

    it.effect("U02 epoch seconds over HTTP", () =>
      Effect.gen(function*() {
        const { api } = yield* makeApi(() => json(200, sessionBody({ start_time: "1735787045" })))
        const session = yield* api.createSession(validSession)
        assert.strictEqual(iso(session.startedAt), "2025-01-02T03:04:05.000Z")
      }))

    it("U05 the named statuses decode as themselves", () => {
      for (const status of ["started", "in_progress", "complete"] as const) {
        assert.deepStrictEqual(info({ status }).status, Option.some(status))
      }
    })

    it("U05 an unknown status is kept as Unrecognized { raw }", () => {
      const session = info({ status: "paused" })
      assert.deepStrictEqual(session.status, Option.some({ _tag: "Unrecognized" as const, raw: "paused" }))
      const encoded = Schema.encodeSync(Session.SessionInfo)(session)
      assert.strictEqual(encoded.status, "paused")
    })

    it.effect("U05 an unknown status over HTTP, in both dialects", () =>
      Effect.gen(function*() {
        const documented = yield* makeApi(() => json(200, sessionBody({ status: "queued" })))
        const a = yield* documented.api.createSession(validSession)
        assert.deepStrictEqual(a.status, Option.some({ _tag: "Unrecognized" as const, raw: "queued" }))
        const observed = yield* makeApi(() => json(200, { data: { sessionId: "s", status: "queued" } }), {
          dialect: Dialect.observed
        })
        const b = yield* observed.api.createSession(validSession)
        assert.deepStrictEqual(b.status, Option.some({ _tag: "Unrecognized" as const, raw: "queued" }))
      }))

    it("error and end_time are optional", () => {
      const session = info({ error: "agent crashed", end_time: "2025-01-02T03:05:00Z", status: "complete" })
      assert.deepStrictEqual(session.error, Option.some("agent crashed"))
      assert.isTrue(Option.isSome(session.endedAt))
      assert.isTrue(Option.isNone(info({}).error))
    })

    it("a missing session_id is a decode failure", () => {
      const { session_id: _, ...rest } = sessionBody()
      assert.isDefined(failureIn(decodeInfo(rest)))
    })
  })

  describe("U20 CreateSessionRequest on its own", () => {
    const check = validate(Session.CreateSessionRequest, "CreateSessionRequest")

    for (const [label, input] of invalidSessions) {
      it(`U20 CreateSessionRequest rejects ${label} with InvalidRequest`, () => {
        assert.strictEqual(failureIn(check(input))?.subject, "CreateSessionRequest")
      })
    }

    it("U20 the message names the field; the boundary values are accepted", () => {
      assert.include(failureIn(check({ ...validSession, max_actions: 0 }))?.message ?? "", "max_actions")
      for (const ok of [{ max_actions: 1 }, { start_url: "http://example.com" }, { start_url: "https://e.com:8443/a?b=c#d" }]) {
        assert.isDefined(successOf(check({ ...validSession, ...ok })), JSON.stringify(ok))
      }
    })
  })
})
