/**
 * The cluster commands against real parts: PostgreSQL, the simulator, a runner started with
 * `effect-agent-session runner`; a session handed to the cluster from this process; then
 * `answer <sessionId>` and `watch <sessionId>` as separate processes (any machine of the cluster);
 * `submit` runs a session to its end; every known failure is one line and its documented code.
 */
import * as PgClient from "@effect/sql-pg/PgClient"
import * as SqlClient from "@effect/sql/SqlClient"
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"
import { ClusterSessions, NodeClusterSessions } from "effect-agent-session-cluster"
import { NodeAgentSessions } from "effect-agent-session"
import { Simulator } from "effect-agent-session-simulator"
import * as Postgres from "effect-agent-session-test-support/Postgres"
import { cleanEnv, run, spawn } from "./helpers.js"

const SECRET = "cli-cluster-secret-0123456789"

describe("cluster commands", () => {
  layer(Simulator.layer({ port: 0, scenario: { actions: 2, ask: "input", frameDelay: "5 millis" } }), {
    excludeTestServices: true,
    timeout: 120_000
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
          CLUSTER_DATABASE_URL: pg.url,
          CLUSTER_SECRET: SECRET
        })
        const runner = yield* spawn(["runner", "--port", String(port)], env)
        yield* runner.waitFor(/joined the cluster/, 90_000)

        const client = NodeClusterSessions.layerClient({ databaseUrl: pg.url, maxConnections: 2, secret: SECRET }).pipe(
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

        // submit: the session is created, handed to the cluster and followed to its end; its
        // request is answered from another process.
        const submitted = yield* spawn(
          ["submit", "--goal", "Sign up", "--start-url", "https://example.com", "--max-actions", "5"],
          env
        )
        const [, submittedId] = yield* submitted.waitFor(/waiting for an answer: effect-agent-session answer (\S+)/, 90_000)
        const answeredSubmit = yield* run(["answer", submittedId!, "--input", "joe@example.com"], env, 90_000)
        assert.strictEqual(answeredSubmit.code, 0, answeredSubmit.stderr)
        const submitDone = yield* submitted.finished
        assert.strictEqual(submitDone.code, 0, submitDone.stderr)
        assert.match(submitDone.stdout, /^session \S+ runs on the cluster/m)
        assert.match(submitDone.stdout, /^held by runner 127\.0\.0\.1:\d+$/m)
        assert.match(submitDone.stdout, /^#1 started /m)
        assert.match(submitDone.stdout, /^#\d+ complete /m)
        assert.match(submitDone.stdout, /^run: complete$/m)
        assert.deepStrictEqual((yield* simulator.answers(submittedId!)).map((a) => a.input), ["joe@example.com"])

        // --detach prints the id and returns; watch follows it to its end.
        const detached = yield* run(
          ["submit", "--goal", "Look around", "--start-url", "https://example.com", "--max-actions", "5", "--detach"],
          env,
          90_000
        )
        assert.strictEqual(detached.code, 0, detached.stderr)
        assert.match(detached.stdout.trim(), /^\S+$/)

        // An unknown session: a typed not-found, exit 2, within the bound (no hang).
        const startedAt = Date.now()
        const unknown = yield* run(["watch", "ses_no_such_session"], env, 60_000)
        assert.strictEqual(unknown.code, 2, unknown.stderr)
        assert.match(unknown.stderr, /^error: no session "ses_no_such_session" in the cluster/m)
        assert.isBelow(Date.now() - startedAt, 45_000)

        // A database with no runner: exit 5, saying so.
        const admin = yield* Layer.build(PgClient.layer({ url: Redacted.make(pg.url), maxConnections: 1 }))
        yield* Effect.provide(Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe("CREATE DATABASE norunner")), admin)
        const noRunner = yield* run(
          ["watch", "ses_x"],
          { ...env, CLUSTER_DATABASE_URL: pg.url.replace(/\/postgres$/, "/norunner") },
          90_000
        )
        assert.strictEqual(noRunner.code, 5, noRunner.stderr)
        assert.match(noRunner.stderr, /^error: no runner of the cluster answered/m)
        assert.notInclude(noRunner.stderr, "internal error")
        // submit with no runner: refused before the (paid) create, at once, exit 5.
        const requestsBefore = yield* simulator.httpRequests
        const submitAt = Date.now()
        const noRunnerSubmit = yield* run(
          ["submit", "--goal", "g", "--start-url", "https://example.com", "--max-actions", "2"],
          { ...env, CLUSTER_DATABASE_URL: pg.url.replace(/\/postgres$/, "/norunner") },
          90_000
        )
        assert.strictEqual(noRunnerSubmit.code, 5, noRunnerSubmit.stderr)
        assert.match(noRunnerSubmit.stderr, /^error: no runner of the cluster is up .*no session was created$/m)
        assert.strictEqual(yield* simulator.httpRequests, requestsBefore)
        assert.isBelow(Date.now() - submitAt, 30_000)
      }), 400_000)

    it.scoped("an unreachable database: runner, watch, answer and submit exit 5 with one line, no internal error", () =>
      Effect.gen(function*() {
        const simulator = yield* Simulator.Simulator
        const port = yield* Postgres.freePort
        const env = cleanEnv({
          AGENT_SESSION_API_KEY: simulator.accountKey,
          AGENT_SESSION_BASE_URL: simulator.baseUrl,
          CLUSTER_DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/postgres`
        })
        const runnerPort = yield* Postgres.freePort
        const results = yield* Effect.all([
          run(["runner", "--port", String(runnerPort)], env, 60_000),
          run(["watch", "ses_x"], env, 60_000),
          run(["answer", "ses_x"], env, 60_000),
          run(["submit", "--goal", "g", "--start-url", "https://example.com", "--max-actions", "2"], env, 60_000)
        ], { concurrency: "unbounded" })
        for (const result of results) {
          assert.strictEqual(result.code, 5, result.stderr)
          assert.match(result.stderr, /^error: cannot use the cluster's database: .*CLUSTER_DATABASE_URL/m)
          assert.notInclude(result.stderr, "internal error")
        }
        // A runner listening beyond loopback with no cluster secret stops first, naming the variable.
        const open = yield* run(["runner", "--port", String(runnerPort), "--listen-host", "0.0.0.0"], env, 60_000)
        assert.strictEqual(open.code, 2, open.stderr)
        assert.match(open.stderr, /^error: the cluster secret: .*CLUSTER_SECRET/m)
        const short = yield* run(["runner", "--port", String(runnerPort)], { ...env, CLUSTER_SECRET: "tiny-secret" }, 60_000)
        assert.strictEqual(short.code, 2, short.stderr)
        assert.notInclude(short.stderr, "tiny-secret")
      }), 120_000)
  })
})
