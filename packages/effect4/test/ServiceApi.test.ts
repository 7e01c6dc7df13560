import { assert, describe, it } from "@effect/vitest"
import * as HttpApi from "effect/http-api/HttpApi"
import * as HttpApiMiddleware from "effect/http-api/HttpApiMiddleware"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as Dialect from "../src/Dialect.js"
import * as ServiceApi from "../src/ServiceApi.js"
import { CreateSessionRequest, SessionInfo } from "../src/Session.js"

const spec = (dialect: Dialect.Dialect) => OpenApi.fromApi(ServiceApi.make(dialect).api)

/** Every endpoint of a contract as `METHOD path`, with the security of its middleware. */
const endpoints = (dialect: Dialect.Dialect) => {
  const out: Array<{ readonly route: string; readonly security: ReadonlyArray<string> }> = []
  HttpApi.reflect(ServiceApi.make(dialect).api, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, middleware }) => {
      const security: Array<string> = []
      for (const tag of middleware) {
        if (HttpApiMiddleware.isSecurity(tag)) {
          for (const scheme of Object.values(tag.security)) security.push(scheme._tag)
        }
      }
      out.push({ route: `${endpoint.method} ${endpoint.path}`, security })
    }
  })
  return out
}

const decodeBody = (dialect: Dialect.Dialect) => Schema.decodeUnknownResult(ServiceApi.createSessionBody(dialect))
const encodeBody = (dialect: Dialect.Dialect) => Schema.encodeUnknownResult(ServiceApi.createSessionBody(dialect))
const decodeSession = (dialect: Dialect.Dialect) => Schema.decodeUnknownResult(ServiceApi.sessionResponse(dialect))
const encodeSession = (dialect: Dialect.Dialect) => Schema.encodeUnknownResult(ServiceApi.sessionResponse(dialect))

const success = <A, E>(result: Result.Result<A, E>): A => {
  if (Result.isFailure(result)) return assert.fail(`expected success, got ${String(result.failure)}`)
  return result.success
}

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

    it("U12 the security of every endpoint is the dialect's: Authorization Bearer, or an x-api-key header", () => {
      for (const endpoint of endpoints(Dialect.documented)) assert.deepStrictEqual(endpoint.security, ["Http"])
      for (const endpoint of endpoints(Dialect.observed)) assert.deepStrictEqual(endpoint.security, ["ApiKey"])
      assert.deepStrictEqual(spec(Dialect.documented).components.securitySchemes, {
        key: { type: "http", scheme: "Bearer" }
      })
      assert.deepStrictEqual(spec(Dialect.observed).components.securitySchemes, {
        key: { type: "apiKey", name: "x-api-key", in: "header" }
      })
    })

    it("U07 every endpoint declares its error statuses", () => {
      const paths = spec(Dialect.documented).paths
      const statuses = (path: string, method: "get" | "post") =>
        Object.keys(paths[path]?.[method]?.responses ?? {}).sort()
      assert.deepStrictEqual(statuses("/agent/onboard", "post"), ["200", "400", "401", "409", "413", "429", "503"])
      assert.deepStrictEqual(statuses("/api/v1sessions", "post"), ["200", "400", "401", "403", "413", "429", "503"])
      assert.deepStrictEqual(statuses("/api/v1sessions/{sessionId}", "get"), ["200", "401", "403", "404", "413", "429", "503"])
    })

    it("U23 make builds the contract of a custom dialect, once per dialect value", () => {
      const mine = Dialect.make({ name: "mine", sessionsPath: "/v2/sessions" })
      assert.strictEqual(ServiceApi.make(mine), ServiceApi.make(mine))
      assert.strictEqual(ServiceApi.make(Dialect.documented), ServiceApi.documented)
      assert.deepStrictEqual(endpoints(mine).map((e) => e.route)[1], "POST /v2/sessions")
    })
  })

  describe("create-session body", () => {
    it("U20 documented: start_url, max_actions, goal, decoded and encoded as is; bad ones refused", () => {
      const body = { start_url: "https://example.com/start", max_actions: 5, goal: "find the price" }
      const request = success(decodeBody(Dialect.documented)(body))
      assert.instanceOf(request, CreateSessionRequest)
      assert.deepStrictEqual(success(encodeBody(Dialect.documented)(request)), body)
      for (const bad of [{ ...body, start_url: "ftp://x" }, { ...body, max_actions: 0 }, { ...body, goal: "  " }]) {
        assert.isTrue(Result.isFailure(decodeBody(Dialect.documented)(bad)), JSON.stringify(bad))
      }
    })

    it("observed: url is read as start_url; without url or max_actions the server's defaults apply", () => {
      const request = success(decodeBody(Dialect.observed)({ goal: "g", url: "https://shop.example/", max_actions: 3 }))
      assert.strictEqual(request.start_url, "https://shop.example/")
      assert.strictEqual(request.max_actions, 3)
      const defaults = success(decodeBody(Dialect.observed)({ goal: "g", url: null }))
      assert.strictEqual(defaults.start_url, ServiceApi.observedDefaults.startUrl)
      assert.strictEqual(defaults.max_actions, ServiceApi.observedDefaults.maxActions)
    })

    it("observed: the SDK's request is sent as goal, url and max_actions; auto_trigger passes through", () => {
      const request = new CreateSessionRequest({ start_url: "https://a.example/x", max_actions: 7, goal: "do it" })
      assert.deepStrictEqual(success(encodeBody(Dialect.observed)(request)), {
        goal: "do it",
        url: "https://a.example/x",
        max_actions: 7
      })
      const auto_trigger = { interval: 30, end_at: "2030-01-01T00:00:00Z", start_now: true }
      const scheduled = success(decodeBody(Dialect.observed)({ goal: "g", auto_trigger }))
      assert.deepStrictEqual(scheduled.auto_trigger, auto_trigger)
      assert.deepStrictEqual((success(encodeBody(Dialect.observed)(scheduled)) as Record<string, unknown>).auto_trigger, auto_trigger)
    })

    it("U20 observed: a bad url, max_actions or goal is refused", () => {
      for (const bad of [{ goal: "" }, { goal: "g", url: "nope" }, { goal: "g", max_actions: 0 }, { url: "https://a/" }]) {
        assert.isTrue(Result.isFailure(decodeBody(Dialect.observed)(bad)), JSON.stringify(bad))
      }
    })
  })

  describe("session response", () => {
    it("documented: a flat SessionInfo, encoded back as it came", () => {
      const body = { session_id: "s-1", status: "in_progress", start_time: "2024-05-01T10:00:00Z", error: "none" }
      const info = success(decodeSession(Dialect.documented)(body))
      assert.instanceOf(info, SessionInfo)
      assert.deepStrictEqual(info.status, Option.some("in_progress" as const))
      assert.deepStrictEqual(success(encodeSession(Dialect.documented)(info)), body)
      assert.isTrue(Result.isFailure(decodeSession(Dialect.documented)({ status: "started" })))
    })

    it("observed: the { data: { sessionId } } envelope decodes into SessionInfo, and encodes back", () => {
      const info = success(decodeSession(Dialect.observed)({ data: { sessionId: "s-9" } }))
      assert.instanceOf(info, SessionInfo)
      assert.strictEqual(info.session_id, "s-9")
      assert.isTrue(Option.isNone(info.status))
      assert.deepStrictEqual(success(encodeSession(Dialect.observed)(info)), { data: { sessionId: "s-9" } })
      const envelope = {
        data: { sessionId: "s-9", status: "complete", start_time: "1714557600", end_time: "1714557700", error: "x" }
      }
      const full = success(decodeSession(Dialect.observed)(envelope))
      assert.deepStrictEqual(full.status, Option.some("complete" as const))
      assert.deepStrictEqual(success(encodeSession(Dialect.observed)(full)), envelope)
    })

    it("observed: a flat body, or session_id instead of sessionId, is refused", () => {
      assert.isTrue(Result.isFailure(decodeSession(Dialect.observed)({ session_id: "s-1" })))
      assert.isTrue(Result.isFailure(decodeSession(Dialect.observed)({ data: { session_id: "s-1" } })))
      assert.isTrue(Result.isFailure(decodeSession(Dialect.observed)({ data: null })))
    })
  })
})
