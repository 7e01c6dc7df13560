import * as PgClient from "@effect/sql-pg/PgClient"
import * as MessageStorage from "@effect/cluster/MessageStorage"
import * as RunnerHealth from "@effect/cluster/RunnerHealth"
import * as Runners from "@effect/cluster/Runners"
import * as RunnerStorage from "@effect/cluster/RunnerStorage"
import * as Sharding from "@effect/cluster/Sharding"
import * as ShardingConfig from "@effect/cluster/ShardingConfig"
import { assert, describe, layer } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"
import { ClusterSessions, EventLog, SessionEntity } from "../src/index.js"
import { Answer, NodeAgentSessions, type SessionEvent } from "effect-agent-session"
import * as Simulator from "effect-agent-session-simulator/Simulator"
import * as Postgres from "effect-agent-session-test-support/Postgres"

// Issue 37: the cluster keys a request as the core does (bounded), and stores the key as text
// PostgreSQL accepts. A 256 KiB action session id made an unbounded key (`id/type`) that no
// index entry holds (2,704 bytes at most); an id with U+0000 made one PostgreSQL text refuses.
const ids = {
  "a 256 KiB action_session_id": `as_${"x".repeat(256 * 1024)}`,
  "an action_session_id with U+0000, U+0001, a lone surrogate and a slash": "as_\u0000/\u0001\ud800/x"
}

const live = (actionSessionId: string) => {
  const SimulatorLive = Simulator.layer({
    port: 0,
    scenario: { actions: 2, ask: "permission", frameDelay: "1 millis", actionSessionId },
    limits: { maxClientFrameBytes: 1024 * 1024, maxAnswerFieldLength: 512 * 1024 }
  })
  const SdkLive = Layer.unwrapEffect(
    Effect.map(Simulator.Simulator, (simulator) =>
      NodeAgentSessions.layer({
        apiKey: simulator.accountKey,
        baseUrl: simulator.baseUrl,
        wsUrl: simulator.wsUrl,
        dialect: simulator.dialect
      }))
  )
  const PgLive = Layer.unwrapScoped(
    Effect.map(Postgres.start, (pg) => PgClient.layer({ url: Redacted.make(pg.url), maxConnections: 4 }))
  )
  return ClusterSessions.layer().pipe(
    Layer.provideMerge(SessionEntity.layer()),
    Layer.provideMerge(EventLog.layerSql()),
    Layer.provideMerge(
      Sharding.layer.pipe(
        Layer.provideMerge(Runners.layerNoop),
        Layer.provideMerge(MessageStorage.layerMemory),
        Layer.provide([RunnerStorage.layerMemory, RunnerHealth.layerNoop])
      )
    ),
    Layer.provide(ShardingConfig.layer({ entityTerminationTimeout: Duration.seconds(1) })),
    Layer.provide(Layer.orDie(PgLive)),
    Layer.provideMerge(SdkLive),
    Layer.provideMerge(SimulatorLive),
    Layer.provide(Logger.minimumLogLevel(LogLevel.Error))
  )
}

for (const [name, actionSessionId] of Object.entries(ids)) {
  describe(`ClusterSessions on PostgreSQL: ${name}`, () => {
    layer(live(actionSessionId), { excludeTestServices: true, timeout: 120_000 })((it) => {
      it.effect("the request is answered through the cluster, once; the session completes", () =>
        Effect.gen(function*() {
          const sessions = yield* ClusterSessions.ClusterSessions
          const simulator = yield* Simulator.Simulator
          const session = yield* sessions.start({ start_url: "https://example.com", max_actions: 5, goal: "Approve" })
          const id = session.session_id
          let answered: SessionEvent.ExternalResourceRequested | undefined
          const logged = yield* sessions.events(id).pipe(
            Stream.tap((l) => {
              if (l.event._tag !== "ExternalResourceRequested") return Effect.void
              answered = l.event
              return sessions.respond(id, l.event, Answer.grant())
            }),
            Stream.runCollect,
            Effect.map(Chunk.toReadonlyArray)
          )
          assert.strictEqual(answered?.action_session_id, actionSessionId)
          assert.isTrue(logged.some((l) => l.event._tag === "Complete"))
          const outcome = yield* sessions.outcome(id)
          assert.isString(outcome.response)
          assert.deepStrictEqual((yield* simulator.answers(id)).map((a) => a.granted), [true])
          // Recorded in PostgreSQL under its key: the same answer again is done already, another
          // is refused.
          yield* sessions.respond(id, answered!, Answer.grant())
          const other = yield* Effect.flip(sessions.respond(id, answered!, Answer.deny()))
          assert.strictEqual(other._tag === "RequestNotPending" ? other.reason : other._tag, "already-answered")
          const log = yield* EventLog.EventLog
          const answers = yield* log.answers(id)
          assert.deepStrictEqual(answers.map((a) => a.request.action_session_id), [actionSessionId])
        }))
    })
  })
}
