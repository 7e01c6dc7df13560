import { assert, describe, it } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Dialect from "effect-agent-session/Dialect"
import * as ServiceApi from "effect-agent-session/ServiceApi"
import { Simulator } from "../src/index.js"
import { authHeader, createSession, field, http, onboard } from "./helpers.js"

const agentBody = (name: string) => ({ name, website: "https://example.com", domain: "sales" })
const documentedSession = { start_url: "https://example.com/start", goal: "find the pricing page", max_actions: 4 }

/** The error body shape every refusal carries: `{ _tag, error }` with a non-empty message. */
const assertErrorBody = (body: unknown, tag: string) => {
  assert.strictEqual(field(body, "_tag"), tag)
  const error = field(body, "error")
  assert.isString(error)
  assert.isAbove(String(error).length, 0)
}

describe("Simulator HTTP (documented dialect)", () => {
  it.scopedLive("onboards an agent with the account key: agentId, echoed fields, a fresh agent key", () =>
    Effect.gen(function*() {
      const sim = yield* Simulator.make()
      const answer = yield* http(sim, "POST", "/agent/onboard", {
        body: agentBody("scout"),
        headers: authHeader(sim.dialect, sim.accountKey)
      })
      assert.strictEqual(answer.status, 200)
      assert.match(String(field(answer.body, "agentId")), /^agt_/)
      assert.match(String(field(answer.body, "apiKey")), /^agk_/)
      assert.strictEqual(field(answer.body, "name"), "scout")
      assert.strictEqual(field(answer.body, "website"), "https://example.com")
      assert.strictEqual(field(answer.body, "domain"), "sales")
      const other = yield* onboard(sim, "scout-2")
      assert.notStrictEqual(other.apiKey, field(answer.body, "apiKey"))
    }))

  it.scopedLive("U07 a duplicate agent name is 409 Conflict with an { error } body", () =>
    Effect.gen(function*() {
      const sim = yield* Simulator.make()
      yield* onboard(sim, "twin")
      const answer = yield* http(sim, "POST", "/agent/onboard", {
        body: agentBody("twin"),
        headers: authHeader(sim.dialect, sim.accountKey)
      })
      assert.strictEqual(answer.status, 409)
      assertErrorBody(answer.body, "Conflict")
    }))

  it.scopedLive("U12 a missing, empty, wrong or scheme-less key is 401 Unauthorized", () =>
    Effect.gen(function*() {
      const sim = yield* Simulator.make()
      const statuses = yield* Effect.forEach(
        [
          {},
          { authorization: "Bearer " },
          { authorization: "Bearer " + "not-the-key" },
          { authorization: sim.accountKey.padStart(sim.accountKey.length + 7, "x") }
        ],
        (headers) =>
          Effect.map(http(sim, "POST", "/agent/onboard", { body: agentBody("nobody"), headers }), (answer) => {
            assertErrorBody(answer.body, "Unauthorized")
            return answer.status
          })
      )
      assert.deepStrictEqual(statuses, [401, 401, 401, 401])
      const created = yield* http(sim, "POST", "/api/v1sessions", { body: documentedSession })
      assert.strictEqual(created.status, 401)
    }))

  it.scopedLive("U11 onboarding needs the account key: an agent key is 401", () =>
    Effect.gen(function*() {
      const sim = yield* Simulator.make()
      const agent = yield* onboard(sim, "first")
      const answer = yield* http(sim, "POST", "/agent/onboard", {
        body: agentBody("second"),
        headers: authHeader(sim.dialect, agent.apiKey)
      })
      assert.strictEqual(answer.status, 401)
    }))

  it.scopedLive("U07 a body that does not decode is 400 BadRequest with an { error } body", () =>
    Effect.gen(function*() {
      const sim = yield* Simulator.make()
      const headers = authHeader(sim.dialect, sim.accountKey)
      const badDomain = yield* http(sim, "POST", "/agent/onboard", {
        body: { ...agentBody("x"), domain: "gardening" },
        headers
      })
      assert.strictEqual(badDomain.status, 400)
      assertErrorBody(badDomain.body, "BadRequest")
      assert.include(String(field(badDomain.body, "error")), "domain")
      const notJson = yield* http(sim, "POST", "/agent/onboard", { rawBody: "{not json", headers })
      assert.strictEqual(notJson.status, 400)
      assertErrorBody(notJson.body, "BadRequest")
      const badSession = yield* http(sim, "POST", "/api/v1sessions", {
        body: { ...documentedSession, max_actions: 0 },
        headers
      })
      assert.strictEqual(badSession.status, 400)
      assertErrorBody(badSession.body, "BadRequest")
      const badUrl = yield* http(sim, "POST", "/api/v1sessions", {
        body: { ...documentedSession, start_url: "not a url" },
        headers
      })
      assert.strictEqual(badUrl.status, 400)
    }))

  it.scopedLive("U22 a body over maxBodyBytes is 413 PayloadTooLarge", () =>
    Effect.gen(function*() {
      const sim = yield* Simulator.make({ maxBodyBytes: 1024 })
      const answer = yield* http(sim, "POST", "/agent/onboard", {
        body: { ...agentBody("big"), website: `https://example.com/${"a".repeat(2000)}` },
        headers: authHeader(sim.dialect, sim.accountKey)
      })
      assert.strictEqual(answer.status, 413)
      assertErrorBody(answer.body, "PayloadTooLarge")
      // A body under the limit is served.
      const small = yield* http(sim, "POST", "/agent/onboard", {
        body: agentBody("small"),
        headers: authHeader(sim.dialect, sim.accountKey)
      })
      assert.strictEqual(small.status, 200)
    }))

  it.scopedLive("U22 a chunked body (no Content-Length) over maxBodyBytes is 413 too", () =>
    Effect.gen(function*() {
      const sim = yield* Simulator.make({ maxBodyBytes: 1024 })
      const status = yield* Effect.promise(async () => {
        const payload = new TextEncoder().encode(JSON.stringify({ ...agentBody("chunky"), website: "x".repeat(4000) }))
        const body = new ReadableStream<Uint8Array>({
          start(controller) {
            controller.enqueue(payload)
            controller.close()
          }
        })
        const response = await fetch(`${sim.baseUrl}/agent/onboard`, {
          method: "POST",
          headers: { "content-type": "application/json", ...authHeader(sim.dialect, sim.accountKey) },
          body,
          duplex: "half"
        } as RequestInit)
        await response.text()
        return response.status
      })
      assert.strictEqual(status, 413)
    }))

  it.scopedLive("creates a session: flat body, status started, an ISO start_time", () =>
    Effect.gen(function*() {
      const sim = yield* Simulator.make()
      const answer = yield* http(sim, "POST", "/api/v1sessions", {
        body: documentedSession,
        headers: authHeader(sim.dialect, sim.accountKey)
      })
      assert.strictEqual(answer.status, 200)
      assert.match(String(field(answer.body, "session_id")), /^ses_/)
      assert.strictEqual(field(answer.body, "status"), "started")
      const startTime = String(field(answer.body, "start_time"))
      assert.isTrue(Option.isSome(DateTime.make(startTime)))
      assert.match(startTime, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}/)
      // The response decodes with the contract's schema.
      const sessionId = String(field(answer.body, "session_id"))
      const script = yield* sim.script(sessionId)
      assert.strictEqual(script[0]?._tag, "Started")
    }))

  it.scopedLive("U11 an agent key may create a session", () =>
    Effect.gen(function*() {
      const sim = yield* Simulator.make()
      const agent = yield* onboard(sim, "maker")
      const sessionId = yield* createSession(sim, { key: agent.apiKey })
      assert.match(sessionId, /^ses_/)
    }))

  it.scopedLive("U10 retrieve is 404 in the documented dialect; unknown paths are 404", () =>
    Effect.gen(function*() {
      const sim = yield* Simulator.make()
      const sessionId = yield* createSession(sim)
      const headers = authHeader(sim.dialect, sim.accountKey)
      const retrieve = yield* http(sim, "GET", `/api/v1sessions/${sessionId}`, { headers })
      assert.strictEqual(retrieve.status, 404)
      assertErrorBody(retrieve.body, "NotFound")
      const unknown = yield* http(sim, "GET", "/no/such/path", { headers })
      assert.strictEqual(unknown.status, 404)
      assertErrorBody(unknown.body, "NotFound")
    }))

  it.scopedLive("a client of the observed dialect gets what the documented server gives: 401, then 404", () =>
    Effect.gen(function*() {
      const sim = yield* Simulator.make()
      // x-api-key instead of Authorization: the expected header is missing.
      const wrongHeader = yield* http(sim, "POST", "/agent/onboard", {
        body: agentBody("observer"),
        headers: authHeader(Dialect.observed, sim.accountKey)
      })
      assert.strictEqual(wrongHeader.status, 401)
      // The observed path (with a slash) does not exist here.
      const wrongPath = yield* http(sim, "POST", "/api/v1/sessions", {
        body: { goal: "g", url: "https://example.com/" },
        headers: authHeader(sim.dialect, sim.accountKey)
      })
      assert.strictEqual(wrongPath.status, 404)
    }))
})

describe("Simulator HTTP (observed dialect)", () => {
  it.scopedLive("creates with goal/url, answers { data: { sessionId } }, retrieves by id", () =>
    Effect.gen(function*() {
      const sim = yield* Simulator.make({ dialect: Dialect.observed })
      const headers = authHeader(sim.dialect, sim.accountKey)
      const created = yield* http(sim, "POST", "/api/v1/sessions", {
        body: { goal: "check the news", url: "https://news.example.com/", auto_trigger: { start_now: true } },
        headers
      })
      assert.strictEqual(created.status, 200)
      const sessionId = String(field(created.body, "data", "sessionId"))
      assert.match(sessionId, /^ses_/)
      assert.strictEqual(field(created.body, "session_id"), undefined)
      const retrieved = yield* http(sim, "GET", `/api/v1/sessions/${sessionId}`, { headers })
      assert.strictEqual(retrieved.status, 200)
      assert.strictEqual(field(retrieved.body, "data", "sessionId"), sessionId)
      assert.strictEqual(field(retrieved.body, "data", "status"), "started")
      // Without url and max_actions, the server's defaults apply.
      const bare = yield* http(sim, "POST", "/api/v1/sessions", { body: { goal: "defaults" }, headers })
      const script = yield* sim.script(String(field(bare.body, "data", "sessionId")))
      const started = script[0]
      assert.strictEqual(started?._tag, "Started")
      if (started?._tag === "Started") assert.strictEqual(started.start_url, ServiceApi.observedDefaults.startUrl)
      const missing = yield* http(sim, "GET", "/api/v1/sessions/ses_unknown", { headers })
      assert.strictEqual(missing.status, 404)
    }))

  it.scopedLive("U11 retrieve of another agent's session is 403", () =>
    Effect.gen(function*() {
      const sim = yield* Simulator.make({ dialect: Dialect.observed })
      const owner = yield* onboard(sim, "owner")
      const intruder = yield* onboard(sim, "intruder")
      const sessionId = yield* createSession(sim, { key: owner.apiKey })
      const own = yield* http(sim, "GET", `/api/v1/sessions/${sessionId}`, {
        headers: authHeader(sim.dialect, owner.apiKey)
      })
      assert.strictEqual(own.status, 200)
      const other = yield* http(sim, "GET", `/api/v1/sessions/${sessionId}`, {
        headers: authHeader(sim.dialect, intruder.apiKey)
      })
      assert.strictEqual(other.status, 403)
      assertErrorBody(other.body, "Forbidden")
    }))

  it.scopedLive("a client of the documented dialect gets 401 (Bearer is not read) and 404 (no-slash path)", () =>
    Effect.gen(function*() {
      const sim = yield* Simulator.make({ dialect: Dialect.observed })
      const bearer = yield* http(sim, "POST", "/api/v1/sessions", {
        body: { goal: "g" },
        headers: authHeader(Dialect.documented, sim.accountKey)
      })
      assert.strictEqual(bearer.status, 401)
      const noSlash = yield* http(sim, "POST", "/api/v1sessions", {
        body: documentedSession,
        headers: authHeader(sim.dialect, sim.accountKey)
      })
      assert.strictEqual(noSlash.status, 404)
    }))
})

describe("Simulator HTTP faults", () => {
  it.scopedLive("U07 fail503: the next N requests are 503 without Retry-After, then success", () =>
    Effect.gen(function*() {
      const sim = yield* Simulator.make({ faults: { http: { fail503: 2 } } })
      const headers = authHeader(sim.dialect, sim.accountKey)
      const answers = yield* Effect.forEach([1, 2, 3], (i) =>
        http(sim, "POST", "/agent/onboard", { body: agentBody(`retry-${i}`), headers }))
      assert.deepStrictEqual(answers.map((a) => a.status), [503, 503, 200])
      assert.isNull(answers[0]!.headers.get("retry-after"))
      assertErrorBody(answers[0]!.body, "Unavailable")
      assert.strictEqual(yield* sim.httpRequests, 3)
    }))

  it.scopedLive("U21 rateLimit: 429 with the Retry-After given, after the 503s, then success", () =>
    Effect.gen(function*() {
      const sim = yield* Simulator.make()
      yield* sim.setFaults({ http: { fail503: 1, rateLimit: { count: 2, retryAfter: "7" } } })
      const headers = authHeader(sim.dialect, sim.accountKey)
      const answers = yield* Effect.forEach([1, 2, 3, 4], (i) =>
        http(sim, "POST", "/api/v1sessions", { body: { ...documentedSession, goal: `g${i}` }, headers }))
      assert.deepStrictEqual(answers.map((a) => a.status), [503, 429, 429, 200])
      assert.strictEqual(answers[1]!.headers.get("retry-after"), "7")
      assertErrorBody(answers[1]!.body, "RateLimited")
      // An HTTP date is passed through as given.
      const date = "Wed, 21 Oct 2026 07:28:00 GMT"
      yield* sim.setFaults({ http: { rateLimit: { count: 1, retryAfter: date } } })
      const dated = yield* http(sim, "POST", "/api/v1sessions", { body: documentedSession, headers })
      assert.strictEqual(dated.headers.get("retry-after"), date)
    }))

  it.scopedLive("delay holds every response; setFaults({}) clears the faults", () =>
    Effect.gen(function*() {
      const sim = yield* Simulator.make({ faults: { http: { delay: "1 second" } } })
      const headers = authHeader(sim.dialect, sim.accountKey)
      // A client that gives up before the delay sees no answer; one that waits gets it.
      const early = yield* Effect.promise(async () => {
        const controller = new AbortController()
        const timer = setTimeout(() => controller.abort(), 20)
        try {
          await fetch(`${sim.baseUrl}/agent/onboard`, {
            method: "POST",
            headers: { "content-type": "application/json", ...headers },
            body: JSON.stringify(agentBody("early")),
            signal: controller.signal
          })
          return "answered"
        } catch {
          return "aborted"
        } finally {
          clearTimeout(timer)
        }
      })
      assert.strictEqual(early, "aborted")
      const late = yield* http(sim, "POST", "/agent/onboard", { body: agentBody("late"), headers })
      assert.strictEqual(late.status, 200)
      yield* sim.setFaults({})
      const after = yield* http(sim, "POST", "/agent/onboard", { body: agentBody("after"), headers })
      assert.strictEqual(after.status, 200)
    }))
})
