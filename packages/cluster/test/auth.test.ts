/**
 * Who may talk to a runner (issue 36, item 1): a runner on PostgreSQL with a cluster secret, a
 * member client with the secret, and outsiders that can reach the runner's port but have no
 * database and no secret (or a wrong one). An outsider builds the project's own `ClusterSessions`
 * over `@effect/cluster` with storage of its own that names the runner as the owner of every
 * shard, so every call it makes goes to the runner over the runner protocol: it must read
 * nothing, answer nothing, close nothing and start nothing, and the member must see nothing
 * changed. Members keep working, across a rotation of the secret.
 */
import * as MessageStorage from "@effect/cluster/MessageStorage"
import * as Runner from "@effect/cluster/Runner"
import { RunnerAddress } from "@effect/cluster/RunnerAddress"
import type * as Runners from "@effect/cluster/Runners"
import * as RunnerStorage from "@effect/cluster/RunnerStorage"
import * as Sharding from "@effect/cluster/Sharding"
import * as ShardingConfig from "@effect/cluster/ShardingConfig"
import * as SocketRunner from "@effect/cluster/SocketRunner"
import * as NodeClusterSocket from "@effect/platform-node/NodeClusterSocket"
import * as RpcSerialization from "@effect/rpc/RpcSerialization"
import { assert, describe, layer } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Exit from "effect/Exit"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Redacted from "effect/Redacted"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import { ClusterSessions, NodeClusterSessions } from "../src/index.js"
import * as AuthSocket from "../src/internal/authSocket.js"
import { Answer, NodeAgentSessions } from "effect-agent-session"
import * as Simulator from "effect-agent-session-simulator/Simulator"
import * as Postgres from "effect-agent-session-test-support/Postgres"

const SECRET = "member-secret-0123456789abcdef"
const WRONG = "wrong-secret-0123456789abcdef"
const OLD = "old-secret-0123456789abcdef"

/** The dialing side with `secrets` (none: the bare transport, as a process with no secret has it). */
const dialing = (...secrets: Array<string>) =>
  AuthSocket.layerClientProtocol({ secrets: secrets.map(Redacted.make), handshakeTimeout: Duration.seconds(2) })

/** Every log line of the test's fibers (the in-process runner's included), for a scan for secrets. */
const logs: Array<string> = []
const capture = Logger.replace(
  Logger.defaultLogger,
  Logger.make(({ annotations, cause, message }) => {
    logs.push(JSON.stringify({ message, annotations: [...annotations] }) + String(cause))
  })
)

const Live = Layer.merge(
  Simulator.layer({ port: 0, scenario: { actions: 4, ask: "permission", frameDelay: "5 millis" } }),
  Postgres.layer
)

const sdk = Layer.unwrapEffect(
  Effect.map(Simulator.Simulator, (simulator) =>
    NodeAgentSessions.layer({ apiKey: simulator.accountKey, baseUrl: simulator.baseUrl, wsUrl: simulator.wsUrl }))
)

/** Calls of outsiders and members in these tests give up after a few seconds. */
const quick = { retry: Schedule.spaced("200 millis").pipe(Schedule.upTo("3 seconds")), attemptTimeout: "2 seconds", notFoundAfter: "3 seconds" } as const

/**
 * An outsider: no database, storage of its own in memory that names the runner at `port` as the
 * only one (so every shard is its), and `protocol` to dial it.
 */
const outsider = (port: number, protocol: Layer.Layer<Runners.RpcClientProtocol, never, RpcSerialization.RpcSerialization>) =>
  ClusterSessions.layer(quick).pipe(
    Layer.provideMerge(SocketRunner.layerClientOnly.pipe(Layer.provide(protocol))),
    Layer.provide(MessageStorage.layerNoop),
    Layer.provide(Layer.effect(
      RunnerStorage.RunnerStorage,
      Effect.gen(function*() {
        const storage = yield* RunnerStorage.makeMemory
        const address = RunnerAddress.make({ host: "127.0.0.1", port })
        yield* storage.register(Runner.make({ address, groups: ["default"], weight: 1 }), true)
        return storage
      })
    )),
    Layer.provide(ShardingConfig.layer(NodeClusterSessions.defaultShardingConfig)),
    Layer.provide(RpcSerialization.layerMsgPack),
    Layer.provide(sdk)
  )

const build = <A, E, R>(live: Layer.Layer<A, E, R>) => Effect.map(Layer.build(live), (context) => context)

describe("cluster membership", () => {
  layer(Live, { excludeTestServices: true, timeout: 120_000 })((it) => {
    it.scoped("an outsider with no database and no secret reads, answers, closes and starts nothing; the member sees nothing changed", () =>
      Effect.gen(function*() {
        const pg = yield* Postgres.Server
        const simulator = yield* Simulator.Simulator
        const port = yield* Postgres.freePort
        const sharding = Context.get(
          yield* build(NodeClusterSessions.layerRunner({ databaseUrl: pg.url, host: "127.0.0.1", port, maxConnections: 4, secret: SECRET }).pipe(Layer.provide(sdk))),
          Sharding.Sharding
        )
        const member = Context.get(
          yield* build(NodeClusterSessions.layerClient({ databaseUrl: pg.url, maxConnections: 2, secret: SECRET, ...quick }).pipe(Layer.provide(sdk))),
          ClusterSessions.ClusterSessions
        )
        const session = yield* member.start({ start_url: "https://example.com", max_actions: 10, goal: "Approve" })
        const id = session.session_id
        const before = yield* member.status(id).pipe(
          Effect.filterOrFail((status) => status.pending.length === 1),
          Effect.retry(Schedule.spaced("100 millis").pipe(Schedule.upTo("30 seconds")))
        )
        const request = before.pending[0]!

        for (const [name, protocol] of [
          ["no handshake (NodeClusterSocket)", NodeClusterSocket.layerClientProtocol],
          ["a wrong secret", dialing(WRONG)]
        ] as const) {
          const outsider_ = Context.get(yield* build(outsider(port, protocol)), ClusterSessions.ClusterSessions)
          const read = yield* Effect.exit(outsider_.status(id))
          assert.isTrue(Exit.isFailure(read), `${name}: the outsider read the status: ${JSON.stringify(read)}`)
          if (Exit.isFailure(read)) assert.notInclude(String(read.cause), SECRET)
          const events = yield* Effect.exit(Stream.runCollect(Stream.take(outsider_.events(id), 1)))
          assert.isTrue(Exit.isFailure(events), `${name}: the outsider read the log`)
          const answered = yield* Effect.exit(outsider_.respond(id, request, Answer.grant()))
          assert.isTrue(Exit.isFailure(answered), `${name}: the outsider answered`)
          const closed = yield* Effect.exit(outsider_.close(id))
          assert.isTrue(Exit.isFailure(closed), `${name}: the outsider closed`)
          const started = yield* Effect.exit(outsider_.start({ start_url: "https://example.com", max_actions: 3, goal: "Outsider" }))
          assert.isTrue(Exit.isFailure(started), `${name}: the outsider started a session`)
          // The runner holds the member's session only.
          assert.strictEqual(yield* sharding.activeEntityCount, 1, `${name}: an entity was started`)
        }

        // Nothing changed, as the member sees it.
        const after = yield* member.status(id)
        assert.strictEqual(after.run, "running")
        assert.deepStrictEqual(after.pending, before.pending)
        assert.deepStrictEqual(yield* simulator.answers(id), [])
        // The member still answers and the session completes.
        yield* member.respond(id, request, Answer.grant())
        yield* member.outcome(id).pipe(Effect.timeout("30 seconds"))
        // The runner logged the refusals, never the secret.
        assert.isTrue(logs.some((line) => line.includes("not a member")), "no refusal logged")
        for (const line of logs) {
          assert.notInclude(line, SECRET)
          assert.notInclude(line, WRONG)
        }
      }).pipe(Effect.provide(capture), Logger.withMinimumLogLevel(LogLevel.Debug)), 120_000)

    it.scoped("a rotation: a runner with [new, old] serves a client on old; once it drops old, that client is refused", () =>
      Effect.gen(function*() {
        const pg = yield* Postgres.Server
        const port = yield* Postgres.freePort
        const runner = (...secrets: [string, ...Array<string>]) =>
          NodeClusterSessions.layerRunner({
            databaseUrl: pg.url,
            host: "127.0.0.1",
            port,
            maxConnections: 4,
            secret: Redacted.make(secrets[0]),
            previousSecrets: secrets.slice(1)
          }).pipe(Layer.provide(sdk))
        const client = (secret: string) =>
          NodeClusterSessions.layerClient({ databaseUrl: pg.url, maxConnections: 2, secret, ...quick }).pipe(Layer.provide(sdk))
        const status = (secret: string) =>
          Effect.scoped(Effect.gen(function*() {
            const sessions = Context.get(yield* build(client(secret)), ClusterSessions.ClusterSessions)
            return yield* sessions.status("ses_rotation")
          }))
        yield* Effect.scoped(Effect.gen(function*() {
          yield* build(runner(SECRET, OLD))
          assert.strictEqual((yield* status(OLD)).run, "unknown")
          assert.strictEqual((yield* status(SECRET)).run, "unknown")
        }))
        yield* Effect.scoped(Effect.gen(function*() {
          yield* build(runner(SECRET))
          assert.strictEqual((yield* status(SECRET)).run, "unknown")
          const refused = yield* Effect.flip(status(OLD))
          assert.strictEqual(refused._tag, "ClusterUnavailable")
        }))
      }).pipe(Logger.withMinimumLogLevel(LogLevel.Error)), 120_000)
  })
})
