/**
 * `NodeAgentSessions.layerConfig` of the Effect 4 edition reads each address from its own
 * variable: the HTTP calls go to `AGENT_SESSION_BASE_URL`, the event channel to
 * `AGENT_SESSION_WS_URL` when it is set, even on another host. The simulator runs as a child
 * process (`helpers/simulator.ts`); the WebSocket URL points at a plain TCP relay on another
 * loopback address (127.0.0.2) that counts the connections it forwards to the simulator, so the
 * test sees which address the channel used.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Net from "node:net"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as AgentSessions from "../src/AgentSessions.js"
import * as NodeAgentSessions from "../src/NodeAgentSessions.js"
import { spawnSimulator } from "./helpers/simulator.js"

const request = { start_url: "https://example.com", max_actions: 5, goal: "Read the title" }

/** A TCP relay listening on `host` (port 0) to `target`: the first bytes of each connection it forwarded. */
const relay = (host: string, target: URL): Effect.Effect<{ readonly port: number; readonly heads: Array<string> }, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.callback<{
      readonly server: Net.Server
      readonly sockets: Set<Net.Socket>
      readonly port: number
      readonly heads: Array<string>
    }>((resume) => {
      const heads: Array<string> = []
      const sockets = new Set<Net.Socket>()
      const server = Net.createServer((client) => {
        const upstream = Net.connect(Number(target.port), target.hostname)
        for (const socket of [client, upstream]) {
          sockets.add(socket)
          socket.once("close", () => sockets.delete(socket))
        }
        client.once("data", (chunk: Buffer) => heads.push(chunk.toString("latin1")))
        client.on("error", () => upstream.destroy())
        upstream.on("error", () => client.destroy())
        client.pipe(upstream).pipe(client)
      })
      server.listen(0, host, () => {
        const address = server.address()
        resume(Effect.succeed({ server, sockets, port: typeof address === "object" && address !== null ? address.port : 0, heads }))
      })
    }),
    ({ server, sockets }) =>
      Effect.callback<void>((resume) => {
        server.close(() => resume(Effect.void))
        for (const socket of sockets) socket.destroy()
      })
  )

describe("NodeAgentSessions", () => {
  // Guards: layerConfig reading AGENT_SESSION_BASE_URL for the channel's address (a service whose
  // WebSocket endpoint is on another host than its HTTP API would then be unreachable, or the
  // channel would go elsewhere than configured).
  it.live("layerConfig connects the channel to AGENT_SESSION_WS_URL, on another host than AGENT_SESSION_BASE_URL", () =>
    Effect.scoped(Effect.gen(function*() {
      const sim = yield* spawnSimulator({ actions: 1, ask: "none", frameDelay: 0 })
      const wsTarget = new URL(sim.wsUrl)
      const { heads, port } = yield* relay("127.0.0.2", wsTarget)
      const wsUrl = new URL(sim.wsUrl)
      wsUrl.hostname = "127.0.0.2"
      wsUrl.port = String(port)
      assert.notStrictEqual(new URL(sim.baseUrl).host, wsUrl.host)
      const outcome = yield* AgentSessions.run(request).pipe(
        Effect.provide(NodeAgentSessions.layerConfig()),
        Effect.provideService(
          ConfigProvider.ConfigProvider,
          ConfigProvider.fromUnknown({
            AGENT_SESSION_API_KEY: sim.accountKey,
            AGENT_SESSION_BASE_URL: sim.baseUrl,
            AGENT_SESSION_WS_URL: wsUrl.href
          })
        )
      )
      assert.strictEqual(outcome.actions, 1)
      // The channel's handshake went through the relay: the WebSocket upgrade, and only it.
      assert.isAtLeast(heads.length, 1)
      for (const head of heads) {
        assert.match(head, /^GET \S+ HTTP\/1\.1\r\n/)
        assert.match(head, /\r\nupgrade: websocket\r\n/i)
        assert.include(head, `\r\nHost: 127.0.0.2:${port}\r\n`)
      }
    })))
})
