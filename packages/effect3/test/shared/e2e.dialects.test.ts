/**
 * A client in one dialect against a simulator in the other, written once for both editions: every
 * mismatch is a typed error, never a hang. The simulator (in process on Effect 3, a child process on
 * Effect 4: `startSimulatorIn` of `../helpers/line.ts`) keeps its default handshake time-out, 5 s;
 * the client's connect time-out is set above it. The Effect 3 edition's `test/e2e/dialects.test.ts`
 * holds what only its in-process simulator answers (the connections it counted).
 */
import { assert, describe } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as AgentApi from "../../src/AgentApi.js"
import * as Dialect from "../../src/Dialect.js"
import * as EventStream from "../../src/EventStream.js"
import * as NodeAgentSessions from "../../src/NodeAgentSessions.js"
import { scopedLive, startSimulatorIn } from "../helpers/line.js"

const request = { start_url: "https://example.com", max_actions: 3, goal: "Read the title" }

const pairs = [
  { client: Dialect.observed, server: "documented" },
  { client: Dialect.documented, server: "observed" }
] as const

describe("dialect mismatch end to end", () => {
  for (const { client, server } of pairs) {
    scopedLive(`a ${client.name} client against a ${server} server gets typed errors, HTTP and event channel`, () =>
      Effect.gen(function*() {
        const sim = yield* startSimulatorIn({ dialect: server })
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
          Effect.gen(function*() {
            const api = yield* AgentApi.AgentApi
            return yield* api.onboard({
              name: `mismatch-${client.name}-${Date.now()}`,
              website: "https://example.com",
              domain: "sales"
            })
          }).pipe(Effect.provide(layerFor(client)))
        )
        assert.strictEqual(onboard._tag, "Unauthorized")
        const create = yield* Effect.flip(
          Effect.gen(function*() {
            const api = yield* AgentApi.AgentApi
            return yield* api.createSession(request)
          }).pipe(Effect.provide(layerFor(client)))
        )
        assert.include(["Unauthorized", "NotFound"], create._tag)

        // The event channel, for a session that exists (created in the server's own dialect).
        const session = yield* Effect.gen(function*() {
          const api = yield* AgentApi.AgentApi
          return yield* api.createSession(request)
        }).pipe(Effect.provide(layerFor(Dialect.fromName(server))))
        const events = yield* Effect.flip(
          Effect.gen(function*() {
            const channel = yield* EventStream.EventStream
            return yield* Stream.runDrain(channel.events(session.session_id))
          }).pipe(Effect.provide(layerFor(client)))
        )
        assert.strictEqual(events._tag, "HandshakeRejected")
      }), 60_000)
  }
})
