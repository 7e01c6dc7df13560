/**
 * The paid-safety scenarios of the conformance suite (`paidScenarios`, effect-agent-session-conformance)
 * run with each edition: at most one session (or agent) per creating call, whatever fails.
 * Each call goes through this edition's `AgentApi` (or `AgentSessions.run`) over undici and real
 * sockets, to a server on 127.0.0.1 that acts and then hides whether it did, a port nothing
 * listens on, a proxy that drops the simulator's first answer, or the simulator (in process on
 * Effect 3, a child process on Effect 4); `paidVerdict` judges what was observed, once for both
 * editions. Written once for both editions: no case differs, so neither keeps a file of its own.
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import type * as Scope from "effect/Scope"
import {
  type CallObservation,
  failed,
  type PaidCall,
  type PaidClient,
  paidAgent,
  type PaidObservation,
  type PaidScenario,
  paidScenarios,
  paidSession,
  paidVerdict,
  startActingServer,
  startResettingProxy
} from "effect-agent-session-conformance"
import * as AgentApi from "../../../src/AgentApi.js"
import * as AgentSessions from "../../../src/AgentSessions.js"
import * as Credentials from "../../../src/Credentials.js"
import * as NodeAgentSessions from "../../../src/NodeAgentSessions.js"
import { scopedLive, spacedRetries, startSimulator } from "../../helpers/line.js"

const KEY = "sk-paid-test-key"

/** Where a scenario's calls go, with the key it takes, and what the runner reads of it afterwards. */
interface Target {
  readonly url: string
  readonly key: string
  readonly read: () => Omit<PaidObservation, "calls" | "secrets">
}

const target = (scenario: PaidScenario): Effect.Effect<Target, never, Scope.Scope> => {
  const server = scenario.server
  switch (server._tag) {
    case "Acting":
      return Effect.acquireRelease(
        Effect.promise(() => startActingServer(server.failure)),
        ({ close }) => Effect.promise(close)
      ).pipe(Effect.map(({ acting }) => ({
        url: acting.url,
        key: KEY,
        read: () => ({ created: acting.created(), keys: acting.keys() })
      })))
    case "Nothing":
      return Effect.succeed({ url: "http://127.0.0.1:1", key: KEY, read: () => ({}) })
    case "Simulator":
      return Effect.map(startSimulator(), (sim) => ({ url: sim.baseUrl, key: sim.accountKey, read: () => ({}) }))
    case "ResettingProxy":
      return Effect.flatMap(startSimulator(), (sim) =>
        Effect.acquireRelease(
          Effect.promise(() => startResettingProxy(sim.baseUrl)),
          (proxy) => Effect.promise(proxy.close)
        ).pipe(Effect.map((proxy) => ({ url: proxy.url, key: sim.accountKey, read: () => ({ proxied: proxy.ids() }) }))))
  }
}

const retryOf = (client: PaidClient) => spacedRetries(20, client.retries)

/** One call through this edition, observed. */
const call = (where: Target, client: PaidClient, api: AgentApi.Service, made: PaidCall): Effect.Effect<CallObservation> => {
  switch (made._tag) {
    case "createSession":
      return api.createSession(
        { ...paidSession, goal: made.goal ?? paidSession.goal },
        { idempotencyKey: made.idempotencyKey }
      ).pipe(Effect.match({
        onFailure: (error) => ({ ending: failed(error) }),
        onSuccess: (info) => ({ ending: { _tag: "Ok", id: info.session_id } })
      }))
    case "onboard":
      return api.onboard(
        { ...paidAgent, website: made.website ?? paidAgent.website },
        { idempotencyKey: made.idempotencyKey }
      ).pipe(Effect.match({
        onFailure: (error) => ({ ending: failed(error) }),
        onSuccess: (agent) => ({ ending: { _tag: "Ok", id: agent.agentId } })
      }))
    case "run": {
      let delivered = 0
      return AgentSessions.run(paidSession, { onEvent: () => Effect.sync(() => (delivered += 1)) }).pipe(
        Effect.provide(NodeAgentSessions.layer({
          apiKey: where.key,
          baseUrl: where.url,
          transport: made.transport,
          http: { timeout: client.timeoutMs, retry: retryOf(client), createPolicy: client.createPolicy }
        })),
        Effect.match({
          onFailure: (error) => ({ ending: failed(error), delivered }),
          onSuccess: (outcome) => ({ ending: { _tag: "Ok", id: outcome.sessionId }, delivered })
        })
      )
    }
  }
}

describe("the create policy: at most one session per call (conformance paid scenarios)", () => {
  for (const scenario of paidScenarios) {
    scopedLive(scenario.name, () =>
      Effect.gen(function*() {
        const where = yield* target(scenario)
        const context = yield* Layer.build(
          Layer.merge(NodeHttpClient.layerUndici, Credentials.layer({ apiKey: Redacted.make(where.key) }))
        )
        const api = yield* AgentApi.make({
          baseUrl: where.url,
          timeout: scenario.client.timeoutMs,
          retry: retryOf(scenario.client),
          createPolicy: scenario.client.createPolicy
        }).pipe(Effect.provide(context), Effect.orDie)
        const calls: Array<CallObservation> = []
        for (const made of scenario.calls) calls.push(yield* call(where, scenario.client, api, made))
        assert.deepStrictEqual(paidVerdict(scenario, { calls, secrets: [KEY, where.key], ...where.read() }), [])
      }))
  }
})

describe("paidVerdict (the judge both editions share) sees what breaks the rule", () => {
  const scenario = (name: string): PaidScenario => {
    const found = paidScenarios.find((s) => s.name.startsWith(name))
    assert.isDefined(found)
    return found as PaidScenario
  }
  const unknown = (key: string): CallObservation => ({
    ending: { _tag: "Failed", tag: "OutcomeUnknown", text: "the session may exist", fields: { attempts: 1, idempotencyKey: key } },
    delivered: 0
  })
  const key = "0b0f2c1e-6f1d-4d8e-9c55-1f7d3c0a9b42"

  it("accepts what holds, and names a second session, a second request, a lost key, an event delivered, a key in a text", () => {
    const acted = scenario("AgentSessions.run (websocket): a server that acts then fails the answer (reset)")
    const good = { calls: [unknown(key)], created: 1, keys: [key], secrets: [KEY] }
    assert.deepStrictEqual(paidVerdict(acted, good), [])
    const wrong: ReadonlyArray<PaidObservation> = [
      { ...good, created: 2 },
      { ...good, keys: [key, key] },
      { ...good, keys: ["not-a-uuid"] },
      { ...good, calls: [unknown("another")] },
      { ...good, calls: [{ ...unknown(key), delivered: 1 }] },
      { ...good, calls: [{ ending: { _tag: "Ok", id: "ses_1" }, delivered: 3 }] },
      {
        ...good,
        calls: [{ ...unknown(key), ending: { _tag: "Failed", tag: "OutcomeUnknown", text: `may exist ${KEY}`, fields: { attempts: 1, idempotencyKey: key } } }]
      }
    ]
    for (const observed of wrong) assert.isNotEmpty(paidVerdict(acted, observed), JSON.stringify(observed))
  })

  it("names two sessions behind a resetting proxy, and an idempotent replay that got another id", () => {
    const proxied = scenario("the opt-in policy sends again after a reset")
    const good = { calls: [{ ending: { _tag: "Ok", id: "ses_a" } } as const], proxied: ["ses_a", "ses_a"], secrets: [KEY] }
    assert.deepStrictEqual(paidVerdict(proxied, good), [])
    assert.isNotEmpty(paidVerdict(proxied, { ...good, proxied: ["ses_a", "ses_b"] }))
    assert.isNotEmpty(paidVerdict(proxied, { ...good, proxied: ["ses_a"] }))
    const honoured = scenario("the simulator honours Idempotency-Key")
    const ok = (id: string): CallObservation => ({ ending: { _tag: "Ok", id } })
    const refused = (tag: string): CallObservation => ({ ending: { _tag: "Failed", tag, text: "", fields: {} } })
    const calls = [ok("s1"), ok("s1"), refused("BadRequest"), ok("a1"), ok("a1"), refused("Conflict")]
    assert.deepStrictEqual(paidVerdict(honoured, { calls, secrets: [KEY] }), [])
    assert.isNotEmpty(paidVerdict(honoured, { calls: [ok("s1"), ok("s2"), ...calls.slice(2)], secrets: [KEY] }))
    assert.isNotEmpty(paidVerdict(honoured, { calls: calls.slice(0, 5), secrets: [KEY] }))
  })
})
