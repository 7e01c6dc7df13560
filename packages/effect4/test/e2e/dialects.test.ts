/**
 * A client in one dialect against a simulator child in the other: every mismatch is a typed
 * error, never a hang (the Effect 3 edition's `test/e2e/dialects.test.ts`). The simulator's
 * handshake time-out is its default, 5 s; the client's connect time-out is set above it.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as AgentApi from "../../src/AgentApi.js"
import * as Dialect from "../../src/Dialect.js"
import * as EventStream from "../../src/EventStream.js"
import * as NodeAgentSessions from "../../src/NodeAgentSessions.js"
import { spawnSimulator } from "../helpers/simulator.js"

const request = { start_url: "https://example.com", max_actions: 3, goal: "Read the title" }

const pairs = [
  { client: Dialect.observed, server: Dialect.documented },
  { client: Dialect.documented, server: Dialect.observed }
] as const

describe("dialect mismatch end to end (the simulator as a child process)", () => {
  for (const { client, server } of pairs) {
    it.live(`a ${client.name} client against a ${server.name} server gets typed errors, HTTP and event channel`, () =>
      Effect.gen(function*() {
        const sim = yield* spawnSimulator({ dialect: server === Dialect.documented ? "documented" : "observed" })
        const layerFor = (dialect: Dialect.Dialect) =>
          NodeAgentSessions.layer({
            apiKey: sim.accountKey,
            baseUrl: sim.baseUrl,
            wsUrl: sim.wsUrl,
            dialect,
            events: { connectTimeout: "8 seconds" }
          })

        // HTTP: the wrong auth header is a 401 on onboard; the wrong sessions path is a 404 or 401.
        const onboard = yield* Effect.flip(
          Effect.flatMap(Effect.service(AgentApi.AgentApi), (api) =>
            api.onboard({ name: `mismatch-${client.name}-${Date.now()}`, website: "https://example.com", domain: "sales" })).pipe(
              Effect.provide(layerFor(client))
            )
        )
        assert.strictEqual(onboard._tag, "Unauthorized")
        const create = yield* Effect.flip(
          Effect.flatMap(Effect.service(AgentApi.AgentApi), (api) => api.createSession(request)).pipe(
            Effect.provide(layerFor(client))
          )
        )
        assert.include(["Unauthorized", "NotFound"], create._tag)

        // The event channel, for a session that exists (created in the server's own dialect).
        const session = yield* Effect.flatMap(Effect.service(AgentApi.AgentApi), (api) => api.createSession(request)).pipe(
          Effect.provide(layerFor(server))
        )
        const events = yield* Effect.flip(
          Effect.flatMap(EventStream.EventStream, (channel) => Stream.runDrain(channel.events(session.session_id))).pipe(
            Effect.provide(layerFor(client))
          )
        )
        assert.strictEqual(events._tag, "HandshakeRejected")
      }), 60_000)
  }
})
