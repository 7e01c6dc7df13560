import { assert, describe, it } from "@effect/vitest"
import * as Config from "effect/Config"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { AgentSessions, Answer, Dialect, EventStream, NodeAgentSessions } from "../src/index.js"
import * as Simulator from "effect-agent-session-simulator/Simulator"

const request = { start_url: "https://example.com", max_actions: 5, goal: "Read the title" }

describe("NodeAgentSessions", () => {
  it("wsUrlFromBaseUrl: http becomes ws, https becomes wss, same host, port and base path", () => {
    assert.strictEqual(EventStream.wsUrlFromBaseUrl("http://127.0.0.1:8787"), "ws://127.0.0.1:8787")
    assert.strictEqual(EventStream.wsUrlFromBaseUrl("https://agents.example.com/base/"), "wss://agents.example.com/base/")
    assert.strictEqual(EventStream.wsUrlFromBaseUrl("HTTPS://agents.example.com:8443"), "wss://agents.example.com:8443")
  })

  for (const dialect of [Dialect.documented, Dialect.observed]) {
    it.live(`wsUrl defaults from baseUrl: a ${dialect.name} session runs with only the base URL and the key`, () =>
      Effect.scoped(Effect.gen(function*() {
        const simulator = yield* Simulator.make({
          port: 0,
          dialect,
          scenario: { actions: 2, ask: "permission", frameDelay: 0 }
        })
        const outcome = yield* AgentSessions.run(request, { onRequest: () => Effect.succeed(Answer.grant()) }).pipe(
          Effect.provide(NodeAgentSessions.layer({ apiKey: simulator.accountKey, baseUrl: simulator.baseUrl, dialect }))
        )
        assert.strictEqual(outcome.actions, 2)
      })))
  }

  it.live("layerConfig takes a Config per field: the caller's own variable names, no WebSocket URL", () =>
    Effect.scoped(Effect.gen(function*() {
      const simulator = yield* Simulator.make({
        port: 0,
        dialect: Dialect.observed,
        scenario: { actions: 1, ask: "none", frameDelay: 0 }
      })
      const env = ConfigProvider.fromMap(
        new Map([
          ["MY_KEY", simulator.accountKey],
          ["MY_URL", simulator.baseUrl],
          ["AGENT_SESSION_BASE_URL", "http://127.0.0.1:1"],
          ["AGENT_SESSION_WS_URL", "ws://127.0.0.1:1"]
        ])
      )
      const outcome = yield* AgentSessions.run(request).pipe(
        Effect.provide(NodeAgentSessions.layerConfig({
          apiKey: Config.redacted("MY_KEY"),
          baseUrl: Config.string("MY_URL"),
          wsUrl: Config.string("MY_WS_URL"),
          dialect: Config.succeed(Dialect.observed)
        })),
        Effect.withConfigProvider(env)
      )
      assert.strictEqual(outcome.actions, 1)
    })))

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

  it.live("layerConfig without AGENT_SESSION_BASE_URL is a ConfigError naming it", () =>
    Effect.gen(function*() {
      const env = ConfigProvider.fromMap(new Map([["AGENT_SESSION_WS_URL", "ws://127.0.0.1:1"]]))
      const error = yield* Effect.flip(
        Layer.build(NodeAgentSessions.layerConfig()).pipe(Effect.scoped, Effect.withConfigProvider(env))
      )
      assert.include(String(error), "AGENT_SESSION_BASE_URL")
    }))
})
