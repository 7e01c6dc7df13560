import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Dialect from "effect-agent-session/Dialect"
import * as SessionEvent from "effect-agent-session/SessionEvent"
import { Simulator } from "../src/index.js"
import { createSession, field, onboard, type SseEvent, sseOnce } from "./helpers.js"

/** An SSE event decoded with the SDK's payload schemas. */
const decode = (event: SseEvent): SessionEvent.SessionEvent => {
  const result = SessionEvent.decodePayload(event.event, JSON.parse(event.data))
  if (Option.isNone(result) || Either.isLeft(result.value)) {
    return assert.fail(`undecodable SSE event ${event.event}: ${event.data}`)
  }
  return result.value.right
}

const scripted = (events: ReadonlyArray<SseEvent>) =>
  events.filter((event) => event.event !== "connected" && event.event !== "heartbeat").map(decode)

const egress = (sim: Simulator.Service, sessionId: string, apiKey: string, body: string) =>
  fetch(
    `${sim.baseUrl}${sim.dialect.sse.egressPath}?sessionId=${encodeURIComponent(sessionId)}&apiKey=${
      encodeURIComponent(apiKey)
    }`,
    { method: "POST", headers: { "content-type": "application/json" }, body }
  ).then(async (response) => ({ status: response.status, body: JSON.parse(await response.text()) as unknown }))

describe("Simulator SSE transport (observed dialect)", () => {
  it.scopedLive("streams the script as named events; an egress answer (202) unblocks the agent", () =>
    Effect.gen(function*() {
      const sim = yield* Simulator.make({
        dialect: Dialect.observed,
        scenario: { frameDelay: "1 millis", ask: "permission", actions: 3 }
      })
      const sessionId = yield* createSession(sim)
      const answer = { granted: true, resource_type: "admin_permission_request" }
      const statuses: Array<Promise<number>> = []
      const run = yield* sseOnce(sim, {
        sessionId,
        apiKey: sim.accountKey,
        onEvent: (event) => {
          if (event.event === "external_resource_requested") {
            statuses.push(
              egress(sim, sessionId, sim.accountKey, JSON.stringify({ event: "external_resource_granted", data: answer }))
                .then((r) => r.status)
            )
          }
        }
      })
      assert.strictEqual(run.status, 200)
      assert.isFalse(run.aborted)
      assert.strictEqual(run.events[0]?.event, "connected")
      assert.deepStrictEqual(yield* Effect.promise(() => Promise.all(statuses)), [202])
      assert.deepStrictEqual(scripted(run.events), yield* sim.script(sessionId))
      assert.deepStrictEqual(yield* sim.answers(sessionId), [answer])
      assert.isTrue(scripted(run.events).some(SessionEvent.isTerminal))
    }))

  it.scopedLive("dropAfter ends the response abruptly; reconnecting resumes exactly once, in order", () =>
    Effect.gen(function*() {
      const sim = yield* Simulator.make({
        dialect: Dialect.observed,
        scenario: { frameDelay: "1 millis", ask: "none", actions: 3 },
        faults: { ws: { dropAfter: [4] } }
      })
      const sessionId = yield* createSession(sim)
      const first = yield* sseOnce(sim, { sessionId, apiKey: sim.accountKey })
      assert.isTrue(first.aborted)
      assert.strictEqual(scripted(first.events).length, 4)
      const second = yield* sseOnce(sim, { sessionId, apiKey: sim.accountKey })
      assert.isFalse(second.aborted)
      assert.deepStrictEqual([...scripted(first.events), ...scripted(second.events)], yield* sim.script(sessionId))
      assert.strictEqual(yield* sim.connections(sessionId), 2)
    }))

  it.scopedLive("U12 connect and egress refuse a bad key (401), an unknown session (404), another agent (403)", () =>
    Effect.gen(function*() {
      const sim = yield* Simulator.make({ dialect: Dialect.observed })
      const owner = yield* onboard(sim, "owner")
      const intruder = yield* onboard(sim, "intruder")
      const sessionId = yield* createSession(sim, { key: owner.apiKey })
      const statuses = yield* Effect.forEach(
        [
          { sessionId, apiKey: "wrong" },
          { sessionId: "ses_unknown", apiKey: sim.accountKey },
          { sessionId, apiKey: intruder.apiKey }
        ],
        (options) => Effect.map(sseOnce(sim, options), (run) => run.status)
      )
      assert.deepStrictEqual(statuses, [401, 404, 403])
      const body = JSON.stringify({ event: "external_resource_granted", data: { granted: true, resource_type: "x" } })
      const refused = yield* Effect.promise(() => egress(sim, sessionId, "wrong", body))
      assert.strictEqual(refused.status, 401)
      assert.strictEqual(field(refused.body, "_tag"), "Unauthorized")
      const malformed = yield* Effect.promise(() => egress(sim, sessionId, owner.apiKey, "{\"event\":\"nope\"}"))
      assert.strictEqual(malformed.status, 400)
      assert.deepStrictEqual(yield* sim.answers(sessionId), [])
    }))
})
