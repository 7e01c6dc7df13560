/**
 * A client in one dialect against a server in the other: every mismatch is a typed error, never
 * a hang (issue: "mismatched dialects give the documented typed errors within the connect
 * time-out").
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { AgentApi, Dialect, EventStream, NodeAgentSessions } from "../../src/index.js"
import * as Simulator from "effect-agent-session-simulator/Simulator"

const request = { start_url: "https://example.com", max_actions: 3, goal: "Read the title" }

const pairs = [
  { client: Dialect.observed, server: Dialect.documented },
  { client: Dialect.documented, server: Dialect.observed }
] as const

describe("dialect mismatch end to end", () => {
  for (const { client, server } of pairs) {
    it.live(`a ${client.name} client against a ${server.name} server gets typed errors, HTTP and event channel`, () =>
      Effect.scoped(Effect.gen(function*() {
        const simulator = yield* Simulator.make({ port: 0, dialect: server, handshakeTimeout: "1 second" })
        const layerFor = (dialect: Dialect.Dialect) =>
          NodeAgentSessions.layer({
            apiKey: simulator.accountKey,
            baseUrl: simulator.baseUrl,
            wsUrl: simulator.wsUrl,
            dialect,
            events: { connectTimeout: "3 seconds" }
          })

        // HTTP: the wrong auth header is a 401 on onboard; the wrong sessions path is a 404 or 401.
        const onboard = yield* Effect.flip(
          Effect.flatMap(AgentApi.AgentApi, (api) =>
            api.onboard({ name: `mismatch-${client.name}`, website: "https://example.com", domain: "sales" })
          ).pipe(Effect.provide(layerFor(client)))
        )
        assert.strictEqual(onboard._tag, "Unauthorized")
        const create = yield* Effect.flip(
          Effect.flatMap(AgentApi.AgentApi, (api) => api.createSession(request)).pipe(Effect.provide(layerFor(client)))
        )
        assert.include(["Unauthorized", "NotFound"], create._tag)

        // The event channel, for a session that exists (created in the server's own dialect).
        const session = yield* Effect.flatMap(AgentApi.AgentApi, (api) => api.createSession(request)).pipe(
          Effect.provide(layerFor(server))
        )
        const events = yield* Effect.flip(
          Effect.flatMap(EventStream.EventStream, (channel) => Stream.runDrain(channel.events(session.session_id))).pipe(
            Effect.provide(layerFor(client))
          )
        )
        assert.strictEqual(events._tag, "HandshakeRejected")
        assert.strictEqual(yield* simulator.connections(session.session_id), 0)
      })))
  }
})
