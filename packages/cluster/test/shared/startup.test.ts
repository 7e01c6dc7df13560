/**
 * Runners started together all come up, on an empty database and on a populated one.
 *
 * The race, made to happen every time: a transaction of another session holds `pg_type` (a lock
 * every `CREATE TABLE` needs) while three runners start on a fresh database; once they wait (or
 * after a bound), it is released. Without the start-up lock the three then create the same
 * tables at the same moment and two fail (`duplicate key value violates unique constraint
 * "pg_type_typname_nsp_index"`); with it, they create them one at a time. The same with runners
 * that hold a cluster secret (their handshake adds nothing to the start-up).
 *
 * Written once for both cluster editions.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Schedule from "effect/Schedule"
import { NodeClusterSessions } from "../../src/index.js"
import { PgClient, ServiceTag, SqlClient, unwrapScopedLayer } from "../../src/internal/line.js"
import { errorLogsOnly, freePort, NodeAgentSessions, startPostgres } from "../helpers/line.js"

/** The suite's PostgreSQL server. */
class Server extends ServiceTag<Server, { readonly url: string }>()("cluster/test/startup/Server") {}

const ServerLive = unwrapScopedLayer(Effect.map(startPostgres, (pg) => Layer.succeed(Server, pg)))

const sdk = NodeAgentSessions.layer({ apiKey: "unused", baseUrl: "http://127.0.0.1:9", wsUrl: "ws://127.0.0.1:9" })

const urlOf = (pg: { readonly url: string }, database: string) => pg.url.replace(/\/postgres$/, `/${database}`)

/** Builds a runner on `url` (with the cluster secret `secret`, if any); succeeds once it has joined (its layer is built). */
const runner = (url: string, secret?: string) =>
  Effect.gen(function*() {
    const port = yield* freePort
    return yield* Layer.build(
      NodeClusterSessions.layerRunner({
        databaseUrl: url,
        host: "127.0.0.1",
        port,
        maxConnections: 2,
        ...(secret === undefined ? {} : { secret })
      }).pipe(
        Layer.provide(sdk)
      )
    )
  })

/** How many sessions of `database` wait for a lock. */
const waiting = (database: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ readonly n: string }>`SELECT count(*) AS n FROM pg_stat_activity
      WHERE datname = ${database} AND wait_event_type = 'Lock'`.pipe(Effect.map((rows) => Number(rows[0]?.n ?? 0))))

describe("runners started together", () => {
  layer(ServerLive, { excludeTestServices: true, timeout: 60_000 })((it) => {
    const together = (name: string, rounds: ReadonlyArray<number>, secret?: string) =>
      it.effect(name, () =>
        Effect.gen(function*() {
          const pg = yield* Server
          const admin = yield* Layer.build(PgClient.layer({ url: Redacted.make(pg.url), maxConnections: 2 }))
          for (const round of rounds) {
            const database = `startup_${secret === undefined ? "" : "secret_"}${round}`
            yield* Effect.provide(SqlClient.SqlClient.pipe(Effect.flatMap((sql) => sql.unsafe(`CREATE DATABASE ${database}`))), admin)
            const url = urlOf(pg, database)
            const exits = yield* Effect.scoped(Effect.gen(function*() {
              // Another session holds pg_type: every CREATE TABLE on this database waits for it.
              const holder = yield* Layer.build(PgClient.layer({ url: Redacted.make(url), maxConnections: 1 }))
              const sql = yield* Effect.provide(SqlClient.SqlClient, holder)
              const connection = yield* sql.reserve
              yield* connection.executeRaw("BEGIN", [])
              yield* connection.executeRaw("LOCK TABLE pg_catalog.pg_type IN SHARE ROW EXCLUSIVE MODE", [])
              const runners = yield* Effect.forEach([1, 2, 3], () => Effect.forkScoped(Effect.exit(runner(url, secret))))
              // Until all three wait on the lock (without the start-up lock), or 5 s (with it, one waits).
              yield* waiting(database).pipe(
                Effect.provide(admin),
                Effect.repeat({ schedule: Schedule.spaced("100 millis"), until: (n) => n >= 3 }),
                Effect.timeout("5 seconds"),
                Effect.ignore
              )
              yield* connection.executeRaw("ROLLBACK", [])
              return yield* Effect.forEach(runners, Fiber.join)
            }))
            for (const exit of exits) {
              assert.isTrue(Exit.isSuccess(exit), `round ${round}: ${Exit.isFailure(exit) ? String(exit.cause) : ""}`)
            }
          }
        }).pipe(errorLogsOnly, Effect.scoped), 180_000)

    together("three runners at once on a fresh database, their first CREATE TABLE held then released: all come up (three times)", [1, 2, 3])

    together(
      "three runners with a cluster secret at once on a fresh database, their first CREATE TABLE held then released: all come up (twice)",
      [1, 2],
      "member-secret-0123456789abcdef"
    )

    it.effect("three runners at once on a populated database all come up", () =>
      Effect.gen(function*() {
        const pg = yield* Server
        const admin = yield* Layer.build(PgClient.layer({ url: Redacted.make(pg.url), maxConnections: 2 }))
        yield* Effect.provide(SqlClient.SqlClient.pipe(Effect.flatMap((sql) => sql.unsafe(`CREATE DATABASE populated`))), admin)
        const url = urlOf(pg, "populated")
        yield* Effect.scoped(Effect.asVoid(runner(url)))
        const exits = yield* Effect.scoped(
          Effect.forEach([1, 2, 3], () => Effect.exit(runner(url)), { concurrency: "unbounded" })
        )
        for (const exit of exits) assert.isTrue(Exit.isSuccess(exit), Exit.isFailure(exit) ? String(exit.cause) : "")
      }).pipe(errorLogsOnly, Effect.scoped), 120_000)
  })
})
