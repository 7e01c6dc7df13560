/**
 * The service's contract, tested once for both editions: its endpoints per dialect (U07, U10,
 * U23), the onboard response (U01, U06), the create-session body (U20) and the session response
 * (U01, U02, U04, U05) of each dialect. Each edition's `ServiceApi.test.ts` holds the cases whose
 * text differs between the lines (the security schemes' names, the error bodies' statuses).
 */
import { assert, describe, it } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { Agent, OnboardRequest } from "../../src/Agent.js"
import * as Dialect from "../../src/Dialect.js"
import * as ServiceApi from "../../src/ServiceApi.js"
import { CreateSessionRequest, SessionInfo } from "../../src/Session.js"
import { endpoints, spec, statuses } from "./contract.js"
import { decodeOutcome, encodeOutcome, failureIn, type Outcome, successOf } from "../helpers/line.js"

const decodeBody = (dialect: Dialect.Dialect) => decodeOutcome(ServiceApi.createSessionBody(dialect))
const encodeBody = (dialect: Dialect.Dialect) => encodeOutcome(ServiceApi.createSessionBody(dialect))
const decodeSession = (dialect: Dialect.Dialect) => decodeOutcome(ServiceApi.sessionResponse(dialect))
const encodeSession = (dialect: Dialect.Dialect) => encodeOutcome(ServiceApi.sessionResponse(dialect))

const right = <A, E>(result: Outcome<A, E>): A => {
  const value = successOf(result)
  return value ?? assert.fail(`expected success, got ${String(failureIn(result))}`)
}

const session = (fields: Record<string, unknown>): SessionInfo =>
  right(decodeSession(Dialect.documented)({ session_id: "s-1", ...fields }))

describe("ServiceApi", () => {
  describe("the contract per dialect", () => {
    it("documented: /agent/onboard and /api/v1sessions, exactly as written", () => {
      assert.deepStrictEqual(endpoints(Dialect.documented).map((e) => e.route), [
        "POST /agent/onboard",
        "POST /api/v1sessions",
        "GET /api/v1sessions/:sessionId"
      ])
      assert.deepStrictEqual(Object.keys(spec(Dialect.documented).paths), [
        "/agent/onboard",
        "/api/v1sessions",
        "/api/v1sessions/{sessionId}"
      ])
    })

    it("observed: /api/v1/sessions with a slash, and retrieval", () => {
      assert.deepStrictEqual(endpoints(Dialect.observed).map((e) => e.route), [
        "POST /agent/onboard",
        "POST /api/v1/sessions",
        "GET /api/v1/sessions/:sessionId"
      ])
    })

    it("U07 onboard and create declare their error statuses", () => {
      assert.deepStrictEqual(statuses("/agent/onboard", "post"), ["200", "400", "401", "409", "413", "429", "503"])
      assert.deepStrictEqual(statuses("/api/v1sessions", "post"), ["200", "400", "401", "403", "413", "429", "503"])
    })

    it("U23 make builds the contract of a custom dialect, once per dialect value", () => {
      const custom = Dialect.make({ name: "custom", sessionsPath: "/v2/sessions", auth: "x-api-key" })
      assert.strictEqual(ServiceApi.make(custom), ServiceApi.make(custom))
      assert.strictEqual(ServiceApi.make(Dialect.documented), ServiceApi.documented)
      assert.strictEqual(ServiceApi.make(custom).dialect, custom)
      assert.include(endpoints(custom).map((e) => e.route), "POST /v2/sessions")
      assert.strictEqual(endpoints(custom).map((e) => e.route)[1], "POST /v2/sessions")
      assert.deepStrictEqual(endpoints(custom)[0]?.security, ["ApiKey"])
    })
  })

  describe("onboard", () => {
    const decodeAgent = decodeOutcome(Agent)
    const body = { agentId: "ag-1", name: "scout", website: "https://example.com", domain: "research" }

    it("U06 an onboard response without apiKey decodes, with apiKey None", () => {
      const agent = right(decodeAgent(body))
      assert.isTrue(Option.isNone(agent.apiKey))
    })

    it("U06 an apiKey in the response is Redacted: it never prints", () => {
      const agent = right(decodeAgent({ ...body, apiKey: "sk-agent-secret" }))
      const key = Option.getOrUndefined(agent.apiKey)
      if (key === undefined) return assert.fail("expected a key")
      assert.strictEqual(Redacted.value(key), "sk-agent-secret")
      assert.notInclude(String(agent), "sk-agent-secret")
      assert.notInclude(JSON.stringify(agent), "sk-agent-secret")
      assert.notInclude(String(key), "sk-agent-secret")
    })

    it("U01 other fields of the agent are ignored, never an error", () => {
      const agent = right(decodeAgent({ ...body, created_at: "2024-01-01", plan: { tier: 2 } }))
      assert.notProperty(agent, "created_at")
      assert.notProperty(agent, "plan")
      assert.strictEqual(agent.agentId, "ag-1")
    })

    it("the onboard request names one of the five domains", () => {
      const decode = decodeOutcome(OnboardRequest)
      for (const domain of ["sales", "marketing", "research", "automation", "podcasting"]) {
        assert.isDefined(successOf(decode({ name: "n", website: "w", domain })), domain)
      }
      assert.isDefined(failureIn(decode({ name: "n", website: "w", domain: "gaming" })))
      assert.isDefined(failureIn(decode({ name: " ", website: "w", domain: "sales" })))
    })
  })

  describe("U10 operations", () => {
    it("U10 the contract declares onboard, create and retrieve, and invents nothing else", () => {
      for (const dialect of [Dialect.documented, Dialect.observed]) {
        assert.strictEqual(endpoints(dialect).length, 3, dialect.name)
        const methods = Object.values(spec(dialect).paths).flatMap((item) => Object.keys(item ?? {}))
        assert.deepStrictEqual(methods.filter((m) => ["get", "post", "put", "patch", "delete"].includes(m)).sort(), [
          "get",
          "post",
          "post"
        ])
      }
    })
  })

  describe("create-session body", () => {
    it("U20 documented: start_url, max_actions, goal, decoded and encoded as is", () => {
      const body = { start_url: "https://example.com/start", max_actions: 5, goal: "find the price" }
      const request = right(decodeBody(Dialect.documented)(body))
      assert.instanceOf(request, CreateSessionRequest)
      assert.strictEqual(request.start_url, body.start_url)
      assert.deepStrictEqual(right(encodeBody(Dialect.documented)(request)), body)
      for (const bad of [
        { ...body, start_url: "ftp://x" },
        { ...body, start_url: "not a url" },
        { ...body, max_actions: 0 },
        { ...body, max_actions: 1.5 },
        { ...body, goal: "  " },
        { goal: "g", max_actions: 1 }
      ]) {
        assert.isDefined(failureIn(decodeBody(Dialect.documented)(bad)), JSON.stringify(bad))
      }
    })

    it("observed: url is read as start_url", () => {
      const request = right(
        decodeBody(Dialect.observed)({ goal: "g", url: "https://shop.example/", max_actions: 3 })
      )
      assert.strictEqual(request.start_url, "https://shop.example/")
      assert.strictEqual(request.max_actions, 3)
      assert.strictEqual(request.goal, "g")
    })

    it("observed: without url or max_actions the server's defaults apply", () => {
      const request = right(decodeBody(Dialect.observed)({ goal: "g" }))
      assert.strictEqual(request.start_url, ServiceApi.observedDefaults.startUrl)
      assert.strictEqual(request.max_actions, ServiceApi.observedDefaults.maxActions)
      const nullUrl = right(decodeBody(Dialect.observed)({ goal: "g", url: null }))
      assert.strictEqual(nullUrl.start_url, ServiceApi.observedDefaults.startUrl)
      assert.strictEqual(nullUrl.max_actions, ServiceApi.observedDefaults.maxActions)
      assert.deepStrictEqual(ServiceApi.observedDefaults, { startUrl: "https://example.com/", maxActions: 20 })
    })

    it("observed: auto_trigger passes through both ways", () => {
      const auto_trigger = { interval: 30, end_at: "2030-01-01T00:00:00Z", start_now: true }
      const request = right(decodeBody(Dialect.observed)({ goal: "g", auto_trigger }))
      assert.deepStrictEqual(request.auto_trigger, auto_trigger)
      assert.deepStrictEqual(right(encodeBody(Dialect.observed)(request)), {
        goal: "g",
        url: ServiceApi.observedDefaults.startUrl,
        max_actions: ServiceApi.observedDefaults.maxActions,
        auto_trigger
      })
    })

    it("observed: the SDK's request is sent as goal, url and max_actions", () => {
      const request = new CreateSessionRequest({ start_url: "https://a.example/x", max_actions: 7, goal: "do it" })
      assert.deepStrictEqual(right(encodeBody(Dialect.observed)(request)), {
        goal: "do it",
        url: "https://a.example/x",
        max_actions: 7
      })
    })

    it("U20 observed: a bad url, max_actions or goal is refused", () => {
      for (const bad of [{ goal: "" }, { goal: "g", url: "nope" }, { goal: "g", max_actions: 0 }, { url: "https://a/" }]) {
        assert.isDefined(failureIn(decodeBody(Dialect.observed)(bad)), JSON.stringify(bad))
      }
    })
  })

  describe("session response", () => {
    it("documented: a flat SessionInfo", () => {
      const info = right(
        decodeSession(Dialect.documented)({
          session_id: "s-1",
          status: "in_progress",
          start_time: "2024-05-01T10:00:00Z",
          error: "none"
        })
      )
      assert.instanceOf(info, SessionInfo)
      assert.strictEqual(info.session_id, "s-1")
      assert.deepStrictEqual(info.status, Option.some("in_progress"))
      assert.deepStrictEqual(info.start_time, Option.some("2024-05-01T10:00:00Z"))
      assert.isTrue(Option.isNone(info.end_time))
      assert.deepStrictEqual(info.error, Option.some("none"))
      assert.deepStrictEqual(right(encodeSession(Dialect.documented)(info)), {
        session_id: "s-1",
        status: "in_progress",
        start_time: "2024-05-01T10:00:00Z",
        error: "none"
      })
    })

    it("U01 unknown response fields are ignored", () => {
      const info = right(decodeSession(Dialect.documented)({ session_id: "s-1", status: "started", extra: { a: 1 } }))
      assert.notProperty(info, "extra")
      assert.strictEqual(info.session_id, "s-1")
    })

    it("documented: a response without session_id is refused", () => {
      assert.isDefined(failureIn(decodeSession(Dialect.documented)({ status: "started" })))
      assert.isDefined(failureIn(decodeSession(Dialect.documented)({ session_id: 1 })))
    })

    it("observed: the { data: { sessionId } } envelope decodes into SessionInfo", () => {
      const info = right(decodeSession(Dialect.observed)({ data: { sessionId: "s-9" } }))
      assert.instanceOf(info, SessionInfo)
      assert.strictEqual(info.session_id, "s-9")
      assert.isTrue(Option.isNone(info.status))
      assert.isTrue(Option.isNone(info.start_time))
      assert.deepStrictEqual(right(encodeSession(Dialect.observed)(info)), { data: { sessionId: "s-9" } })
    })

    it("observed: optional envelope fields are kept, and encode back", () => {
      const envelope = {
        data: { sessionId: "s-9", status: "complete", start_time: "1714557600", end_time: "1714557700", error: "x" }
      }
      const info = right(decodeSession(Dialect.observed)(envelope))
      assert.deepStrictEqual(info.status, Option.some("complete"))
      assert.deepStrictEqual(info.end_time, Option.some("1714557700"))
      assert.deepStrictEqual(info.error, Option.some("x"))
      assert.deepStrictEqual(right(encodeSession(Dialect.observed)(info)), envelope)
    })

    it("observed: a flat body, or session_id instead of sessionId, is refused", () => {
      assert.isDefined(failureIn(decodeSession(Dialect.observed)({ session_id: "s-1" })))
      assert.isDefined(failureIn(decodeSession(Dialect.observed)({ data: { session_id: "s-1" } })))
      assert.isDefined(failureIn(decodeSession(Dialect.observed)({ data: null })))
    })
  })

  describe("U02 start_time", () => {
    /** A time's epoch milliseconds, if there is one. */
    const millis = (time: Option.Option<DateTime.Utc>) => Option.map(time, DateTime.toEpochMillis)
    const at = (iso: string) => Option.some(Date.parse(iso))

    it("U02 keeps the raw string and parses ISO 8601", () => {
      const info = session({ start_time: "2024-05-01T10:00:00Z", end_time: "2024-05-01T10:05:00.500+02:00" })
      assert.deepStrictEqual(info.start_time, Option.some("2024-05-01T10:00:00Z"))
      assert.deepStrictEqual(millis(info.startedAt), at("2024-05-01T10:00:00Z"))
      assert.deepStrictEqual(millis(info.endedAt), at("2024-05-01T08:05:00.500Z"))
    })

    it("U02 parses epoch seconds and milliseconds, as numeric strings", () => {
      assert.deepStrictEqual(millis(session({ start_time: "1714557600" }).startedAt), at("2024-05-01T10:00:00Z"))
      assert.deepStrictEqual(millis(session({ start_time: "1714557600000" }).startedAt), at("2024-05-01T10:00:00Z"))
      assert.deepStrictEqual(millis(session({ start_time: " 1714557600.5 " }).startedAt), at("2024-05-01T10:00:00.500Z"))
    })

    it("U02 an unparseable or absent time is None, never a failure", () => {
      for (const raw of ["", "yesterday", "05/01/2024", "2024-13-45T99:00:00Z", "12abc"]) {
        const info = session({ start_time: raw })
        assert.deepStrictEqual(info.start_time, Option.some(raw))
        assert.isTrue(Option.isNone(info.startedAt), raw)
      }
      assert.isTrue(Option.isNone(session({}).startedAt))
      assert.isTrue(Option.isNone(session({}).endedAt))
    })
  })

  describe("U05 status", () => {
    it("U05 the three named statuses decode as literals", () => {
      for (const status of ["started", "in_progress", "complete"] as const) {
        assert.deepStrictEqual(session({ status }).status, Option.some(status))
      }
    })

    it("U05 any other status is Unrecognized(raw), and encodes back", () => {
      const info = session({ status: "paused" })
      assert.deepStrictEqual(info.status, Option.some({ _tag: "Unrecognized", raw: "paused" }))
      assert.deepStrictEqual(right(encodeSession(Dialect.documented)(info)), { session_id: "s-1", status: "paused" })
      const observed = right(decodeSession(Dialect.observed)({ data: { sessionId: "s", status: "queued" } }))
      assert.deepStrictEqual(observed.status, Option.some({ _tag: "Unrecognized", raw: "queued" }))
    })

    it("U04 no transition is assumed: any status is reported with any times", () => {
      const odd = session({ status: "complete", start_time: "2024-05-01T10:00:00Z" })
      assert.deepStrictEqual(odd.status, Option.some("complete"))
      assert.isTrue(Option.isNone(odd.end_time))
      const early = session({ status: "started", end_time: "2024-05-01T09:00:00Z", error: "stopped" })
      assert.deepStrictEqual(early.status, Option.some("started"))
      assert.deepStrictEqual(early.error, Option.some("stopped"))
      assert.isTrue(Option.isNone(session({}).status))
    })

    it("U05 a status that is not a string is refused", () => {
      assert.isDefined(failureIn(decodeSession(Dialect.documented)({ session_id: "s", status: 3 })))
    })
  })
})
