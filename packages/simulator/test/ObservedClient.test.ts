/**
 * Issue 11, item 6: the simulator accepts the traffic of the service's own JavaScript client, as
 * `spec/observed-dialect.md` states it: create bodies with `auto_trigger: null`, the caller's other
 * fields and `url` as the start page; answers without `action_session_id` or `field_name`,
 * matched to the pending request by `resource_type`, framed with `type` on the WebSocket and
 * posted to the SSE egress. Every body and frame below is byte for byte what that client sends.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Dialect from "effect-agent-session/Dialect"
import { Simulator } from "../src/index.js"
import { connectOnce, field, http, type SseEvent, sseOnce } from "./helpers.js"

const permissionAnswer = "{\"type\":\"external_resource_granted\",\"data\":{\"granted\":true,\"resource_type\":\"admin_permission_request\"}}"
const inputAnswer =
  "{\"type\":\"external_resource_granted\",\"data\":{\"input\":\"jane@example.com\",\"resource_type\":\"request_user_input\",\"granted\":true}}"
const egressPermission = "{\"event\":\"external_resource_granted\",\"data\":{\"granted\":true,\"resource_type\":\"admin_permission_request\"}}"
const egressInput =
  "{\"event\":\"external_resource_granted\",\"data\":{\"input\":\"jane@example.com\",\"resource_type\":\"request_user_input\",\"granted\":true}}"

/** The bodies that client posts: unscheduled (`auto_trigger: null`) and scheduled. */
const plainBody =
  "{\"goal\":\"find the pricing page\",\"url\":\"https://shop.example.org/pricing\",\"connectStrategy\":\"websocket\",\"auto_trigger\":null}"
const scheduledBody = JSON.stringify({
  goal: "check the order status",
  url: "https://shop.example.org/orders",
  connectStrategy: "sse",
  withAutoTrigger: { interval: 60, end_at: "2026-12-31T00:00:00.000Z", start_now: true, web_hook_url: "https://hooks.example.org/x" },
  auto_trigger: { interval: 60, end_at: "2026-12-31T00:00:00.000Z", start_now: true, web_hook_url: "https://hooks.example.org/x" }
})

const create = (sim: Simulator.Service, body: string) =>
  Effect.map(
    http(sim, "POST", sim.dialect.sessionsPath, { rawBody: body, headers: { "x-api-key": sim.accountKey } }),
    (answer) => {
      assert.strictEqual(answer.status, 200, answer.text)
      return String(field(answer.body, "data", "sessionId"))
    }
  )

const observed = (ask: "input" | "permission") =>
  Simulator.make({ port: 0, dialect: Dialect.observed, scenario: { actions: 2, frameDelay: "1 millis", ask } })

const sseEgress = (sim: Simulator.Service, sessionId: string, body: string) =>
  fetch(
    `${sim.baseUrl}${sim.dialect.sse.egressPath}?sessionId=${encodeURIComponent(sessionId)}&apiKey=${encodeURIComponent(sim.accountKey)}`,
    { method: "POST", headers: { "content-type": "application/json" }, body }
  ).then(async (response) => ({ status: response.status, text: await response.text() }))

describe("Simulator: the observed client's own traffic (issue 11, item 6)", () => {
  it.scopedLive("create bodies with auto_trigger null, unknown fields and a schedule are accepted; url is the start page", () =>
    Effect.gen(function*() {
      const sim = yield* Effect.orDie(observed("permission"))
      const plain = yield* create(sim, plainBody)
      const scheduled = yield* create(sim, scheduledBody)
      const browserStarted = (yield* sim.script(plain)).find((event) => event._tag === "BrowserStarted")
      assert.strictEqual(browserStarted?._tag === "BrowserStarted" ? browserStarted.url : undefined, "https://shop.example.org/pricing")
      const scheduledStart = (yield* sim.script(scheduled)).find((event) => event._tag === "BrowserStarted")
      assert.strictEqual(scheduledStart?._tag === "BrowserStarted" ? scheduledStart.url : undefined, "https://shop.example.org/orders")
      // null for the optional fields reads as absent; the server's defaults apply.
      const nulls = yield* create(sim, "{\"goal\":\"go\",\"url\":null,\"max_actions\":null,\"auto_trigger\":null}")
      const defaultStart = (yield* sim.script(nulls)).find((event) => event._tag === "BrowserStarted")
      assert.strictEqual(defaultStart?._tag === "BrowserStarted" ? defaultStart.url : undefined, "https://example.com/")
      // Still validated: a blank goal or a start page that is not http(s) is 400.
      const blank = yield* http(sim, "POST", sim.dialect.sessionsPath, {
        rawBody: "{\"goal\":\" \",\"auto_trigger\":null}",
        headers: { "x-api-key": sim.accountKey }
      })
      assert.strictEqual(blank.status, 400)
      assert.strictEqual(field(blank.body, "_tag"), "BadRequest")
    }))

  for (const ask of ["permission", "input"] as const) {
    it.scopedLive(`WebSocket: the client's ${ask} answer (type-framed, no action_session_id, no field_name) unblocks the agent`, () =>
      Effect.gen(function*() {
        const sim = yield* Effect.orDie(observed(ask))
        const sessionId = yield* create(sim, plainBody)
        const run = yield* connectOnce(sim, {
          sessionId,
          apiKey: sim.accountKey,
          handshake: "query",
          onFrame: (frame, client) => {
            if (frame.includes("\"external_resource_requested\"")) client.send(ask === "input" ? inputAnswer : permissionAnswer)
            if (frame.includes("\"complete\"")) client.close()
          }
        })
        assert.strictEqual(run.code, 1000)
        const names = run.frames.map((frame) => String(JSON.parse(frame).event))
        assert.includeMembers(names, ["external_resource_requested", "external_resource_granted", "complete"])
        const granted = run.frames.map((frame) => JSON.parse(frame)).find((frame) => frame.event === "external_resource_granted")
        assert.strictEqual(granted.data.granted, true)
        if (ask === "input") assert.strictEqual(granted.data.input, "jane@example.com")
        assert.deepStrictEqual(yield* sim.answers(sessionId), [JSON.parse(ask === "input" ? inputAnswer : permissionAnswer).data])
      }))

    it.scopedLive(`SSE: the client's ${ask} answer posted to the egress (202) unblocks the agent`, () =>
      Effect.gen(function*() {
        const sim = yield* Effect.orDie(observed(ask))
        const sessionId = yield* create(sim, plainBody)
        const statuses: Array<Promise<number>> = []
        const run = yield* sseOnce(sim, {
          sessionId,
          apiKey: sim.accountKey,
          onEvent: (event: SseEvent) => {
            if (event.event === "external_resource_requested") {
              statuses.push(sseEgress(sim, sessionId, ask === "input" ? egressInput : egressPermission).then((r) => r.status))
            }
          }
        })
        assert.deepStrictEqual(yield* Effect.promise(() => Promise.all(statuses)), [202])
        const names = run.events.map((event) => event.event)
        assert.includeMembers(names, ["external_resource_requested", "external_resource_granted", "complete"])
        assert.deepStrictEqual(yield* sim.answers(sessionId), [JSON.parse(ask === "input" ? egressInput : egressPermission).data])
      }))
  }

  it.scopedLive("an answer is matched by resource_type: one for another resource is kept but does not unblock the agent", () =>
    Effect.gen(function*() {
      const sim = yield* Effect.orDie(observed("permission"))
      const sessionId = yield* create(sim, plainBody)
      let sentWrong = false
      const run = yield* connectOnce(sim, {
        sessionId,
        apiKey: sim.accountKey,
        handshake: "query",
        onFrame: (frame, client) => {
          if (frame.includes("\"external_resource_requested\"")) {
            sentWrong = true
            client.send(inputAnswer)
            // The agent must still wait: the next scripted frame comes only after the right answer.
            setTimeout(() => client.send(permissionAnswer), 150)
          }
          if (frame.includes("\"complete\"")) client.close()
        }
      })
      assert.isTrue(sentWrong)
      assert.strictEqual(run.code, 1000)
      const granted = run.frames.map((frame) => JSON.parse(frame)).find((frame) => frame.event === "external_resource_granted")
      // The granted event echoes the permission answer (no input), not the input answer.
      assert.strictEqual(granted.data.granted, true)
      assert.isUndefined(granted.data.input)
      assert.strictEqual((yield* sim.answers(sessionId)).length, 2)
    }))
})
