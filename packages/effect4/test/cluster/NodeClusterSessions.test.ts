/**
 * The Effect 4 cluster over the network (`NodeClusterSessions`), in this process, on a real
 * PostgreSQL and against the simulator as a child process:
 * - membership: a runner with a cluster secret serves a client-only member that proves it (a
 *   session runs to complete through it); an outsider that can reach the runner's port but has no
 *   database, and a wrong secret or none, is refused on every connection and is served nothing of
 *   a session (neither its status, its log, an answer, a close nor a start); a raw connection that
 *   does not speak the handshake is closed without an answer;
 * - the start-up lock: three runners started at once on an empty database, their first
 *   `CREATE TABLE` held back until all three wait, all come up.
 * The cross-process take-over is `NodeClusterSessions.e2e.test.ts`; the handshake as a codec and
 * the secrets' configuration, `cluster/test/shared/membership.test.ts` (written once for both
 * cluster editions).
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as References from "effect/References"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import * as NodeClusterSocket from "@effect/platform-node/NodeClusterSocket"
import * as MessageStorage from "effect/cluster/MessageStorage"
import * as Runner from "effect/cluster/Runner"
import * as RunnerAddress from "effect/cluster/RunnerAddress"
import type * as Runners from "effect/cluster/Runners"
import * as RunnerStorage from "effect/cluster/RunnerStorage"
import * as ShardingConfig from "effect/cluster/ShardingConfig"
import * as SocketRunner from "effect/cluster/SocketRunner"
import * as Duration from "effect/Duration"
import * as RpcSerialization from "effect/rpc/RpcSerialization"
import * as Net from "node:net"
import * as Answer from "../../src/Answer.js"
import * as NodeAgentSessions from "../../src/NodeAgentSessions.js"
import { ClusterSessions, NodeClusterSessions } from "../../cluster/src/index.js"
import * as AuthSocket from "../../cluster/src/internal/authSocket.js"
import { PgClient, spacedTimes, SqlClient } from "../../cluster/src/internal/line.js"
import { startPostgres } from "../../cluster/test/helpers/line.js"
import { freePort } from "effect-agent-session-test-support/postgresServer"
import { sdkLayer, simLayer } from "../helpers/sdk.js"

const SECRET = "member-secret-0123456789abcdef"
const WRONG = "wrong-secret-0123456789abcdef"

// The secret of every layer below is given (or, for "none", absent): none from this machine.
delete process.env["CLUSTER_SECRET"]
delete process.env["CLUSTER_SECRETS_PREVIOUS"]

const request = { start_url: "https://example.com", max_actions: 5, goal: "Find the opening hours" }

/** The suite's cluster: its database and the port of its one runner (which has the secret). */
class Cluster extends Context.Service<Cluster, { readonly url: string; readonly runnerPort: number }>()("test/cluster/Cluster") {}

const ClusterLive = Layer.effect(
  Cluster,
  Effect.gen(function*() {
    const pg = yield* startPostgres
    const runnerPort = yield* Effect.promise(freePort)
    yield* Layer.build(
      NodeClusterSessions.layerRunner({ databaseUrl: pg.url, host: "127.0.0.1", port: runnerPort, secret: SECRET, maxConnections: 4 }).pipe(
        Layer.provide(sdkLayer("websocket"))
      )
    )
    return { url: pg.url, runnerPort }
  })
).pipe(Layer.orDie)

const SuiteLive = ClusterLive.pipe(Layer.provideMerge(simLayer({ actions: 3, ask: "permission", frameDelay: 1 })))

/** A client-only member of the suite's cluster with `secret` (none: the environment's, which is empty). */
const client = (secret: string | undefined) =>
  Layer.unwrap(Effect.gen(function*() {
    const cluster = yield* Cluster
    return NodeClusterSessions.layerClient({
      databaseUrl: cluster.url,
      secret,
      maxConnections: 2,
      retry: spacedTimes("200 millis", 10),
      attemptTimeout: "2 seconds",
      notFoundAfter: "5 seconds"
    }).pipe(Layer.provide(sdkLayer("websocket")))
  }))

/**
 * An outsider: no database, storage of its own in memory that names the runner at `port` as the
 * only one (so every shard is its), and `protocol` to dial it.
 */
const outsider = (port: number, protocol: Layer.Layer<Runners.RpcClientProtocol, never, RpcSerialization.RpcSerialization>) =>
  ClusterSessions.layer({ retry: spacedTimes("100 millis", 3), attemptTimeout: "1 second", notFoundAfter: "2 seconds" }).pipe(
    Layer.provideMerge(SocketRunner.layerClientOnly.pipe(Layer.provide(protocol))),
    Layer.provide(MessageStorage.layerNoop),
    Layer.provide(Layer.effect(
      RunnerStorage.RunnerStorage,
      Effect.gen(function*() {
        const storage = yield* RunnerStorage.makeMemory
        yield* storage.register(Runner.make({ address: RunnerAddress.make("127.0.0.1", port), groups: ["default"], weight: 1 }), true)
        return storage
      })
    )),
    Layer.provide(ShardingConfig.layer(NodeClusterSessions.defaultShardingConfig)),
    Layer.provide(RpcSerialization.layerNdjson),
    Layer.provide(sdkLayer("websocket"))
  )

/** Follows a session's events to their end, answering each request with a grant. */
const follow = (sessions: ClusterSessions.Service, sessionId: string) =>
  sessions.events(sessionId).pipe(
    Stream.tap((logged) =>
      logged.event._tag === "ExternalResourceRequested"
        ? sessions.respond(sessionId, logged.event, Answer.grant())
        : Effect.void
    ),
    Stream.runCollect
  )

/** What a raw TCP connection to `port` gets back for `bytes` before the runner closes it. */
const raw = (port: number, bytes: string) =>
  Effect.callback<{ readonly received: number; readonly closed: boolean }>((resume) => {
    let received = 0
    const socket = Net.createConnection({ host: "127.0.0.1", port }, () => socket.write(bytes))
    socket.on("data", (chunk) => {
      received += chunk.length
    })
    socket.on("error", () => {})
    socket.on("close", () => resume(Effect.succeed({ received, closed: true })))
    const timer = setTimeout(() => {
      socket.destroy()
      resume(Effect.succeed({ received, closed: false }))
    }, 10_000)
    socket.on("close", () => clearTimeout(timer))
  })

const quiet = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.provideService(effect, References.MinimumLogLevel, "Error")

describe("NodeClusterSessions (Effect 4): membership", () => {
  layer(SuiteLive, { excludeTestServices: true, timeout: "180 seconds" })((it) => {
    it.effect("a client-only member with the secret runs a session to complete through the runner", () =>
      Effect.gen(function*() {
        const sessions = yield* ClusterSessions.ClusterSessions
        const session = yield* sessions.start(request)
        const seen = yield* follow(sessions, session.session_id)
        assert.deepStrictEqual(seen.map((l) => l.seq), seen.map((_, i) => i + 1))
        assert.strictEqual(seen.at(-1)?.event._tag, "Complete")
        assert.strictEqual(seen.filter((l) => l.event._tag === "ExternalResourceGranted").length, 1)
        const status = yield* sessions.status(session.session_id)
        assert.strictEqual(status.run, "complete")
      }).pipe(Effect.provide(client(SECRET))), 120_000)

    it.effect("an outsider with no database and a wrong secret, or none, reads, answers, closes and starts nothing; the member sees nothing changed", () =>
      Effect.gen(function*() {
        const cluster = yield* Cluster
        const member = yield* Effect.gen(function*() {
          const sessions = yield* ClusterSessions.ClusterSessions
          const session = yield* sessions.start(request)
          // Until it waits for its answer: a session that would change if an outsider answered or closed it.
          const requested = yield* sessions.events(session.session_id).pipe(
            Stream.filter((logged) => logged.event._tag === "ExternalResourceRequested"),
            Stream.take(1),
            Stream.runCollect
          )
          return { id: session.session_id, status: yield* sessions.status(session.session_id), requested }
        }).pipe(Effect.provide(client(SECRET)))
        assert.strictEqual(member.status.run, "running")
        assert.strictEqual(member.status.pending.length, 1)
        const requestEvent = member.status.pending[0]!
        for (
          const [name, protocol] of [
            ["no handshake (NodeClusterSocket)", NodeClusterSocket.layerClientProtocol],
            ["a wrong secret", AuthSocket.layerClientProtocol({ secrets: [Redacted.make(WRONG)], handshakeTimeout: Duration.seconds(2) })]
          ] as const
        ) {
          const tried = yield* Effect.gen(function*() {
            const sessions = yield* ClusterSessions.ClusterSessions
            return {
              status: yield* Effect.exit(sessions.status(member.id)),
              events: yield* Effect.exit(Stream.runCollect(Stream.take(sessions.events(member.id), 1))),
              respond: yield* Effect.exit(sessions.respond(member.id, requestEvent, Answer.grant())),
              close: yield* Effect.exit(sessions.close(member.id)),
              start: yield* Effect.exit(sessions.start({ start_url: "https://example.com", max_actions: 3, goal: "Outsider" }))
            }
          }).pipe(Effect.provide(outsider(cluster.runnerPort, protocol)), quiet)
          for (const [operation, exit] of Object.entries(tried) as ReadonlyArray<[string, Exit.Exit<unknown, unknown>]>) {
            assert.isTrue(Exit.isFailure(exit), `${name}: the outsider's ${operation} succeeded: ${String(exit)}`)
            if (Exit.isFailure(exit)) assert.notInclude(String(exit.cause), WRONG)
          }
        }
        // Nothing changed, as the member sees it; the member answers and the session completes.
        const after = yield* Effect.gen(function*() {
          const sessions = yield* ClusterSessions.ClusterSessions
          const status = yield* sessions.status(member.id)
          const seen = yield* follow(sessions, member.id)
          return { status, seen }
        }).pipe(Effect.provide(client(SECRET)))
        assert.strictEqual(after.status.run, "running")
        assert.deepStrictEqual(after.status.pending, member.status.pending)
        assert.strictEqual(after.seen.at(-1)?.event._tag, "Complete")
        assert.strictEqual(after.seen.filter((l) => l.event._tag === "ExternalResourceGranted").length, 1)
        assert.deepStrictEqual(after.seen.map((l) => l.seq), after.seen.map((_, i) => i + 1))
      }), 180_000)

    it.effect("a connection that does not speak the handshake is closed without an answer", () =>
      Effect.gen(function*() {
        const cluster = yield* Cluster
        const http = yield* raw(cluster.runnerPort, "GET / HTTP/1.1\r\nhost: x\r\n\r\n")
        assert.deepStrictEqual(http, { received: 0, closed: true })
      }))
  })
})

describe("NodeClusterSessions (Effect 4): runners started together", () => {
  const sdk = NodeAgentSessions.layer({ apiKey: "unused", baseUrl: "http://127.0.0.1:9", wsUrl: "ws://127.0.0.1:9" })
  const Database = Layer.effect(Cluster, Effect.map(startPostgres, (pg) => ({ url: pg.url, runnerPort: 0 }))).pipe(Layer.orDie)

  /** Builds a runner on `url`; succeeds once it has joined (its layer is built). */
  const runner = (url: string) =>
    Effect.gen(function*() {
      const port = yield* Effect.promise(freePort)
      return yield* Layer.build(
        NodeClusterSessions.layerRunner({ databaseUrl: url, host: "127.0.0.1", port, secret: SECRET, maxConnections: 2 }).pipe(
          Layer.provide(sdk)
        )
      )
    })

  /** How many sessions of `database` wait for a lock. */
  const waiting = (database: string) =>
    Effect.flatMap(Effect.service(SqlClient.SqlClient), (sql) =>
      sql<{ readonly n: string }>`SELECT count(*) AS n FROM pg_stat_activity
        WHERE datname = ${database} AND wait_event_type = 'Lock'`.pipe(Effect.map((rows) => Number(rows[0]?.n ?? 0))))

  layer(Database, { excludeTestServices: true, timeout: "60 seconds" })((it) => {
    it.effect("three runners at once on an empty database, their first CREATE TABLE held then released: all come up (twice)", () =>
      Effect.gen(function*() {
        const { url: adminUrl } = yield* Cluster
        const admin = yield* Layer.build(PgClient.layer({ url: Redacted.make(adminUrl), maxConnections: 2 }))
        for (const round of [1, 2]) {
          const database = `startup_${round}`
          yield* Effect.provide(Effect.flatMap(Effect.service(SqlClient.SqlClient), (sql) => sql.unsafe(`CREATE DATABASE ${database}`)), admin)
          const url = adminUrl.replace(/\/[^/]*$/, `/${database}`)
          const exits = yield* Effect.scoped(Effect.gen(function*() {
            // Another session holds pg_type: every CREATE TABLE on this database waits for it.
            const holder = yield* Layer.build(PgClient.layer({ url: Redacted.make(url), maxConnections: 1 }))
            const sql = yield* Effect.provide(Effect.service(SqlClient.SqlClient), holder)
            const connection = yield* sql.reserve
            yield* connection.executeRaw("BEGIN", [])
            yield* connection.executeRaw("LOCK TABLE pg_catalog.pg_type IN SHARE ROW EXCLUSIVE MODE", [])
            const runners = yield* Effect.forEach([1, 2, 3], () => Effect.forkScoped(Effect.exit(runner(url))))
            // Until all three wait on the lock (without the start-up lock), or 5 s (with it, one waits).
            yield* waiting(database).pipe(
              Effect.provide(admin),
              Effect.repeat({ schedule: Schedule.spaced("100 millis"), until: (n) => n >= 3 }),
              Effect.timeout("5 seconds"),
              Effect.ignore
            )
            yield* connection.executeRaw("ROLLBACK", [])
            return yield* Effect.forEach(runners, (fiber) => Effect.flatten(Fiber.await(fiber)))
          }))
          for (const exit of exits) {
            assert.isTrue(Exit.isSuccess(exit), `round ${round}: ${Exit.isFailure(exit) ? String(exit.cause) : ""}`)
          }
        }
      }).pipe(quiet), 180_000)
  })
})
