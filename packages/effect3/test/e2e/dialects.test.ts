/**
 * A client in one dialect against a server in the other, what only the in-process simulator
 * answers: the client's socket is refused in the handshake and the simulator counts no connection
 * of the session. The mismatch's typed errors, HTTP and event channel, are written once for both
 * editions (`test/shared/e2e.dialects.test.ts`).
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

describe("dialect mismatch end to end (the simulator's connections)", () => {
  for (const { client, server } of pairs) {
    it.live(`a ${client.name} client against a ${server.name} server: HandshakeRejected, no connection counted`, () =>
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
