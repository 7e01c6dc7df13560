/**
 * Who may talk to a runner: a runner on PostgreSQL with a cluster secret (`NodeClusterSessions`),
 * a client-only member with the secret, and outsiders that can reach the runner's port but have no
 * database and no secret (or a wrong one). A member runs a session to complete through the runner.
 * An outsider builds the project's own `ClusterSessions` over the line's cluster with storage of
 * its own that names the runner as the owner of every shard, so every call it makes goes to the
 * runner over the runner protocol: it must read nothing, answer nothing, close nothing and start
 * nothing, and the member must see nothing changed; the refusals are logged, never a secret. A raw
 * connection that does not speak the handshake is closed without an answer. Members keep working
 * across a rotation of the secret. Written once for both cluster editions, each against its own
 * `NodeClusterSessions`; the simulator is `e2eSimulatorLayer`.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"
import * as Net from "node:net"
import { ClusterSessions, NodeClusterSessions } from "../../src/index.js"
import * as AuthSocket from "../../src/internal/authSocket.js"
import {
  Answer,
  MessageStorage,
  NodeClusterSocket,
  RunnerStorage,
  ServiceTag,
  Sharding,
  ShardingConfig,
  SocketRunner,
  spacedTimes,
  unwrapScopedLayer,
  upTo
} from "../../src/internal/line.js"
import {
  allLogs,
  callback,
  captureLogText,
  E2eSimulator,
  e2eSimulatorLayer,
  errorLogsOnly,
  freePort,
  NodeAgentSessions,
  Runner,
  runnerAddress,
  runnerSerialization,
  startPostgres
} from "../helpers/line.js"
import { followGranting } from "./fixtures/follow.js"

const SECRET = "member-secret-0123456789abcdef"
const WRONG = "wrong-secret-0123456789abcdef"
const OLD = "old-secret-0123456789abcdef"

// The secret of every layer below is given (or, for "none", absent): none from this machine.
delete process.env["CLUSTER_SECRET"]
delete process.env["CLUSTER_SECRETS_PREVIOUS"]

const request = { start_url: "https://example.com", max_actions: 5, goal: "Find the opening hours" }

/** The suite's PostgreSQL server. */
class Server extends ServiceTag<Server, { readonly url: string }>()("cluster/test/auth/Server") {}

const SuiteLive = Layer.merge(
  unwrapScopedLayer(Effect.map(startPostgres, (pg) => Layer.succeed(Server, pg))),
  e2eSimulatorLayer({ actions: 4, ask: "permission", frameDelay: 5 })
)

/** The SDK against the suite's simulator. */
const sdk = unwrapScopedLayer(
  Effect.map(E2eSimulator, (simulator) =>
    NodeAgentSessions.layer({ apiKey: simulator.accountKey, baseUrl: simulator.baseUrl, wsUrl: simulator.wsUrl }))
)

/** Calls of outsiders and members in these tests give up after a few seconds. */
const quick = { retry: spacedTimes("200 millis", 15).pipe(upTo("3 seconds")), attemptTimeout: "2 seconds", notFoundAfter: "3 seconds" } as const

/** A runner on `url` at `port` with `secrets` (the first is the current one). */
const runnerLayer = (url: string, port: number, ...secrets: readonly [string, ...Array<string>]) =>
  NodeClusterSessions.layerRunner({
    databaseUrl: url,
    host: "127.0.0.1",
    port,
    maxConnections: 4,
    secret: Redacted.make(secrets[0]),
    previousSecrets: secrets.slice(1)
  }).pipe(Layer.provide(sdk))

/** A client-only member on `url` with `secret`. */
const clientLayer = (url: string, secret: string) =>
  NodeClusterSessions.layerClient({ databaseUrl: url, maxConnections: 2, secret, ...quick }).pipe(Layer.provide(sdk))

/** The dialing side with a wrong secret: what a process with another cluster's secret has. */
const wrongSecret = AuthSocket.layerClientProtocol({ secrets: [Redacted.make(WRONG)], handshakeTimeout: Duration.seconds(2) })

/**
 * An outsider: no database, storage of its own in memory that names the runner at `port` as the
 * only one (so every shard is its), and `protocol` to dial it.
 */
const outsider = (port: number, protocol: typeof wrongSecret) =>
  ClusterSessions.layer(quick).pipe(
    Layer.provideMerge(SocketRunner.layerClientOnly.pipe(Layer.provide(protocol))),
    Layer.provide(MessageStorage.layerNoop),
    Layer.provide(Layer.effect(
      RunnerStorage.RunnerStorage,
      Effect.gen(function*() {
        const storage = yield* RunnerStorage.makeMemory
        yield* storage.register(Runner.make({ address: runnerAddress("127.0.0.1", port), groups: ["default"], weight: 1 }), true)
        return storage
      })
    )),
    Layer.provide(ShardingConfig.layer(NodeClusterSessions.defaultShardingConfig)),
    Layer.provide(runnerSerialization),
    Layer.provide(sdk)
  )

/** What a raw TCP connection to `port` gets back for `bytes` before the runner closes it (10 s at most). */
const raw = (port: number, bytes: string) =>
  callback<{ readonly received: number; readonly closed: boolean }>((resume) => {
    let received = 0
    const socket = Net.createConnection({ host: "127.0.0.1", port }, () => socket.write(bytes))
    socket.on("data", (chunk) => {
      received += chunk.length
    })
    socket.on("error", () => {})
    const timer = setTimeout(() => {
      socket.destroy()
      resume(Effect.succeed({ received, closed: false }))
    }, 10_000)
    socket.on("close", () => {
      clearTimeout(timer)
      resume(Effect.succeed({ received, closed: true }))
    })
  })

describe("cluster membership", () => {
  layer(SuiteLive, { excludeTestServices: true, timeout: "180 seconds" })((it) => {
    it.effect("an outsider with no database and a wrong secret, or none, reads, answers, closes and starts nothing; the member sees nothing changed", () => {
      const logs: Array<string> = []
      return Effect.gen(function*() {
        const { url } = yield* Server
        const simulator = yield* E2eSimulator
        const port = yield* freePort
        const sharding = Context.get(yield* Layer.build(runnerLayer(url, port, SECRET)), Sharding.Sharding)
        const member = Context.get(yield* Layer.build(clientLayer(url, SECRET)), ClusterSessions.ClusterSessions)
        const session = yield* member.start({ start_url: "https://example.com", max_actions: 10, goal: "Approve" })
        const id = session.session_id
        // Until it waits for its answer: a session that would change if an outsider answered or closed it.
        yield* member.events(id).pipe(
          Stream.filter((logged) => logged.event._tag === "ExternalResourceRequested"),
          Stream.take(1),
          Stream.runDrain,
          Effect.timeout("30 seconds")
        )
        const before = yield* member.status(id)
        assert.strictEqual(before.run, "running")
        assert.strictEqual(before.pending.length, 1)
        const requested = before.pending[0]!

        for (
          const [name, protocol] of [
            ["no handshake (NodeClusterSocket)", NodeClusterSocket.layerClientProtocol],
            ["a wrong secret", wrongSecret]
          ] as const
        ) {
          const stranger = Context.get(yield* Layer.build(outsider(port, protocol)), ClusterSessions.ClusterSessions)
          const tried = {
            status: yield* Effect.exit(stranger.status(id)),
            events: yield* Effect.exit(Stream.runCollect(Stream.take(stranger.events(id), 1))),
            respond: yield* Effect.exit(stranger.respond(id, requested, Answer.grant())),
            close: yield* Effect.exit(stranger.close(id)),
            start: yield* Effect.exit(stranger.start({ start_url: "https://example.com", max_actions: 3, goal: "Outsider" }))
          }
          for (const [operation, exit] of Object.entries(tried) as ReadonlyArray<[string, Exit.Exit<unknown, unknown>]>) {
            assert.isTrue(Exit.isFailure(exit), `${name}: the outsider's ${operation} succeeded: ${String(exit)}`)
            if (Exit.isFailure(exit)) {
              assert.notInclude(String(exit.cause), SECRET)
              assert.notInclude(String(exit.cause), WRONG)
            }
          }
          // The runner holds the member's session only.
          assert.strictEqual(yield* sharding.activeEntityCount, 1, `${name}: an entity was started`)
        }

        // Nothing changed, as the member sees it.
        const after = yield* member.status(id)
        assert.strictEqual(after.run, "running")
        assert.deepStrictEqual(after.pending, before.pending)
        assert.deepStrictEqual(yield* simulator.answers(id), [])
        // The member still answers and the session completes, every event once.
        const seen = yield* followGranting(member, id).pipe(Effect.timeout("60 seconds"))
        assert.deepStrictEqual(seen.map((l) => l.seq), seen.map((_, i) => i + 1))
        assert.strictEqual(seen.at(-1)?.event._tag, "Complete")
        assert.strictEqual(seen.filter((l) => l.event._tag === "ExternalResourceGranted").length, 1)
        yield* member.outcome(id).pipe(Effect.timeout("30 seconds"))
        // The runner logged the refusals, never a secret.
        assert.isTrue(logs.some((line) => line.includes("not a member")), "no refusal logged")
        for (const line of logs) {
          assert.notInclude(line, SECRET)
          assert.notInclude(line, WRONG)
        }
      }).pipe(Effect.scoped, Effect.provide(captureLogText((line) => logs.push(line))), allLogs)
    }, 180_000)

    it.effect("a client-only member with the secret runs a session to complete through the runner", () =>
      Effect.gen(function*() {
        const { url } = yield* Server
        const port = yield* freePort
        yield* Layer.build(runnerLayer(url, port, SECRET))
        const sessions = Context.get(yield* Layer.build(clientLayer(url, SECRET)), ClusterSessions.ClusterSessions)
        const session = yield* sessions.start(request)
        const seen = yield* followGranting(sessions, session.session_id).pipe(Effect.timeout("60 seconds"))
        assert.deepStrictEqual(seen.map((l) => l.seq), seen.map((_, i) => i + 1))
        assert.strictEqual(seen.at(-1)?.event._tag, "Complete")
        assert.strictEqual(seen.filter((l) => l.event._tag === "ExternalResourceGranted").length, 1)
        const status = yield* sessions.status(session.session_id)
        assert.strictEqual(status.run, "complete")
      }).pipe(Effect.scoped, errorLogsOnly), 120_000)

    it.effect("a connection that does not speak the handshake is closed without an answer", () =>
      Effect.gen(function*() {
        const { url } = yield* Server
        const port = yield* freePort
        yield* Layer.build(runnerLayer(url, port, SECRET))
        const http = yield* raw(port, "GET / HTTP/1.1\r\nhost: x\r\n\r\n")
        assert.deepStrictEqual(http, { received: 0, closed: true })
      }).pipe(Effect.scoped, errorLogsOnly), 60_000)

    it.effect("a rotation: a runner with [new, old] serves a client on old; once it drops old, that client is refused", () =>
      Effect.gen(function*() {
        const { url } = yield* Server
        const port = yield* freePort
        const status = (secret: string) =>
          Effect.scoped(Effect.gen(function*() {
            const sessions = Context.get(yield* Layer.build(clientLayer(url, secret)), ClusterSessions.ClusterSessions)
            return yield* sessions.status("ses_rotation")
          }))
        yield* Effect.scoped(Effect.gen(function*() {
          yield* Layer.build(runnerLayer(url, port, SECRET, OLD))
          assert.strictEqual((yield* status(OLD)).run, "unknown")
          assert.strictEqual((yield* status(SECRET)).run, "unknown")
        }))
        yield* Effect.scoped(Effect.gen(function*() {
          yield* Layer.build(runnerLayer(url, port, SECRET))
          assert.strictEqual((yield* status(SECRET)).run, "unknown")
          const refused = yield* Effect.flip(status(OLD))
          assert.strictEqual(refused._tag, "ClusterUnavailable")
        }))
      }).pipe(errorLogsOnly), 120_000)
  })
})
