/**
 * The paid-safety scenarios of the conformance suite (`paidScenarios`, effect-agent-session-conformance)
 * run with the Effect 4 edition: at most one session (or agent) per creating call, whatever fails.
 * Each call goes through this edition's `AgentApi` (or `AgentSessions.run`) over undici and real
 * sockets, to a server on 127.0.0.1 that acts and then hides whether it did, a port nothing
 * listens on, a proxy that drops the simulator's first answer, or the simulator (a child
 * process); `paidVerdict` judges what was observed, once for both editions.
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Schedule from "effect/Schedule"
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
import * as AgentApi from "../../src/AgentApi.js"
import * as AgentSessions from "../../src/AgentSessions.js"
import * as Credentials from "../../src/Credentials.js"
import * as NodeAgentSessions from "../../src/NodeAgentSessions.js"
import { spawnSimulator } from "../helpers/simulator.js"

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
      return Effect.map(spawnSimulator(), (sim) => ({ url: sim.baseUrl, key: sim.accountKey, read: () => ({}) }))
    case "ResettingProxy":
      return Effect.flatMap(spawnSimulator(), (sim) =>
        Effect.acquireRelease(
          Effect.promise(() => startResettingProxy(sim.baseUrl)),
          (proxy) => Effect.promise(proxy.close)
        ).pipe(Effect.map((proxy) => ({ url: proxy.url, key: sim.accountKey, read: () => ({ proxied: proxy.ids() }) }))))
  }
}

const retryOf = (client: PaidClient) =>
  Schedule.spaced("20 millis").pipe(Schedule.upTo({ times: client.retries }))

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
    it.live(scenario.name, () =>
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
        }).pipe(Effect.provideContext(context), Effect.orDie)
        const calls: Array<CallObservation> = []
        for (const made of scenario.calls) calls.push(yield* call(where, scenario.client, api, made))
        assert.deepStrictEqual(paidVerdict(scenario, { calls, secrets: [KEY, where.key], ...where.read() }), [])
      }))
  }
})
