import { assert, describe, it } from "@effect/vitest"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { AgentSessions, Answer, Dialect, NodeAgentSessions } from "../src/index.js"
import * as Simulator from "../src/simulator/Simulator.js"

const request = { start_url: "https://example.com", max_actions: 5, goal: "Read the title" }

describe("NodeAgentSessions", () => {
  it.live("the WebSocket transport needs wsUrl: InvalidRequest when it is missing", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(
        Layer.build(NodeAgentSessions.layer({ apiKey: "k", baseUrl: "http://127.0.0.1:1" })).pipe(Effect.scoped)
      )
      assert.strictEqual(error._tag, "InvalidRequest")
    }))

  it.live("layerConfig reads the environment: observed dialect over SSE needs no WebSocket URL", () =>
    Effect.scoped(Effect.gen(function*() {
      const simulator = yield* Simulator.make({
        port: 0,
        dialect: Dialect.observed,
        scenario: { actions: 2, ask: "permission", frameDelay: 0 }
      })
      const env = ConfigProvider.fromMap(
        new Map([
          ["AGENT_SESSION_API_KEY", simulator.accountKey],
          ["AGENT_SESSION_BASE_URL", simulator.baseUrl],
          ["AGENT_SESSION_DIALECT", "observed"],
          ["AGENT_SESSION_TRANSPORT", "sse"]
        ])
      )
      const outcome = yield* AgentSessions.run(request, { onRequest: () => Effect.succeed(Answer.grant()) }).pipe(
        Effect.provide(NodeAgentSessions.layerConfig()),
        Effect.withConfigProvider(env)
      )
      assert.strictEqual(outcome.actions, 2)
      assert.deepStrictEqual((yield* simulator.answers(outcome.sessionId)).map((a) => a.granted), [true])
    })))

  it.live("layerConfig without AGENT_SESSION_WS_URL on the WebSocket transport is a ConfigError naming it", () =>
    Effect.gen(function*() {
      const env = ConfigProvider.fromMap(new Map([["AGENT_SESSION_BASE_URL", "http://127.0.0.1:1"]]))
      const error = yield* Effect.flip(
        Layer.build(NodeAgentSessions.layerConfig()).pipe(Effect.scoped, Effect.withConfigProvider(env))
      )
      assert.include(String(error), "AGENT_SESSION_WS_URL")
    }))
})
