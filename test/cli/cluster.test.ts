/**
 * The cluster commands against real parts: PostgreSQL, the simulator, a runner started with
 * `effect-agent-session runner`; a session handed to the cluster from this process; then
 * `answer <sessionId>` and `watch <sessionId>` as separate processes (any machine of the cluster).
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Stream from "effect/Stream"
import { ClusterSessions, NodeClusterSessions } from "../../src/cluster/index.js"
import { NodeAgentSessions } from "../../src/index.js"
import * as Simulator from "../../src/simulator/Simulator.js"
import * as Postgres from "../helpers/Postgres.js"
import { cleanEnv, run, spawn } from "./helpers.js"

describe("cluster commands", () => {
  layer(Simulator.layer({ port: 0, scenario: { actions: 2, ask: "input", frameDelay: "5 millis" } }), {
    excludeTestServices: true,
    timeout: 60_000
  })((it) => {
    it.scoped("runner runs a session; answer grants its request from another process; watch prints the log", () =>
      Effect.gen(function*() {
        const simulator = yield* Simulator.Simulator
        const pg = yield* Postgres.start
        const port = yield* Postgres.freePort
        const env = cleanEnv({
          AGENT_SESSION_API_KEY: simulator.accountKey,
          AGENT_SESSION_BASE_URL: simulator.baseUrl,
          AGENT_SESSION_WS_URL: simulator.wsUrl,
          CLUSTER_DATABASE_URL: pg.url
        })
        const runner = yield* spawn(["runner", "--port", String(port)], env)
        yield* runner.waitFor(/joined the cluster/, 90_000)

        const client = NodeClusterSessions.layerClient({ databaseUrl: pg.url, maxConnections: 2 }).pipe(
          Layer.provide(NodeAgentSessions.layer({
            apiKey: simulator.accountKey,
            baseUrl: simulator.baseUrl,
            wsUrl: simulator.wsUrl
          }))
        )
        const sessionId = yield* Effect.gen(function*() {
          const sessions = yield* ClusterSessions.ClusterSessions
          const session = yield* sessions.start({ start_url: "https://example.com", max_actions: 5, goal: "Sign up" })
          // Wait until the request is in the log.
          yield* sessions.events(session.session_id).pipe(
            Stream.takeUntil((logged) => logged.event._tag === "ExternalResourceRequested"),
            Stream.runDrain
          )
          return session.session_id
        }).pipe(Effect.provide(client), Effect.scoped, Logger.withMinimumLogLevel(LogLevel.Error))

        const answered = yield* run(["answer", sessionId, "--input", "jane@example.com"], env, 90_000)
        assert.strictEqual(answered.code, 0, answered.stderr)
        assert.match(answered.stdout, /answered request_user_input \(\S+\): grant/)

        const watched = yield* run(["watch", sessionId], env, 90_000)
        assert.strictEqual(watched.code, 0, watched.stderr)
        assert.match(watched.stdout, /^#1 started /m)
        assert.match(watched.stdout, /^#\d+ external_resource_requested /m)
        assert.match(watched.stdout, /^#\d+ complete /m)
        assert.match(watched.stdout, /^run: complete$/m)
        const answers = yield* simulator.answers(sessionId)
        assert.deepStrictEqual(answers.map((a) => [a.granted, a.input]), [[true, "jane@example.com"]])

        const missing = yield* run(["watch", sessionId], cleanEnv({}), 60_000)
        assert.strictEqual(missing.code, 2)
        assert.include(missing.stderr, "CLUSTER_DATABASE_URL")
      }), 240_000)
  })
})
