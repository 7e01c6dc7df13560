/**
 * The start-up of a process of the cluster over Node, the same on both lines: its pool on the
 * cluster's database, and its storage built under the cluster's start-up lock (one PostgreSQL
 * advisory lock, the same key on both lines), so that processes started together create the
 * storage's tables one at a time.
 */
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Redacted from "effect/Redacted"
import * as Schedule from "effect/Schedule"
import {
  type ConfigError,
  type DurationInput,
  durationOf,
  PgClient,
  scopedContextLayer,
  type SqlClient,
  type SqlError,
  sqlError,
  unwrapScopedLayer,
  upTo
} from "../../src/internal/line.js"
import type { DatabaseOptions } from "../NodeClusterSessions.js"
import { databaseUrl } from "./membership.js"

/** The key of the start-up lock (PostgreSQL's two-key advisory lock space: no clash with the shard locks). */
const startupLockKey = [0x45415353, 1] as const

/**
 * Builds `layer` while this process holds the cluster's start-up lock (a PostgreSQL advisory
 * lock on a connection of its own), so that processes started together create the storage's
 * tables one at a time: two `CREATE TABLE IF NOT EXISTS` of one table at once fail in PostgreSQL.
 * The lock is awaited for at most `timeout`; its connection is returned once the layer is built.
 */
export const withStartupLock = <A, E, R>(
  url: Redacted.Redacted<string>,
  layer: Layer.Layer<A, E, R>,
  timeout: DurationInput = Duration.minutes(2)
): Layer.Layer<A, E | SqlError, R> =>
  scopedContextLayer(Effect.gen(function*() {
    const scope = yield* Effect.scope
    return yield* Effect.scoped(Effect.gen(function*() {
      const lockClient = yield* Effect.map(Layer.build(PgClient.layer({ url, maxConnections: 1 })), Context.get(PgClient.PgClient))
      const connection = yield* lockClient.reserve
      const [classId, objId] = startupLockKey
      yield* connection.executeValues(`SELECT pg_try_advisory_lock(${classId}, ${objId})`, []).pipe(
        Effect.filterOrFail(
          (rows) => rows[0]?.[0] === true,
          () => sqlError("the cluster's start-up lock is held by another process")
        ),
        Effect.retry(Schedule.spaced("100 millis").pipe(upTo(timeout))),
        Effect.mapError((error) =>
          sqlError(`the cluster's start-up lock was not obtained within ${Duration.format(durationOf(timeout))}: ${error.message}`, error)
        )
      )
      yield* Effect.addFinalizer(() =>
        connection.executeRaw(`SELECT pg_advisory_unlock(${classId}, ${objId})`, []).pipe(Effect.ignore)
      )
      return yield* Layer.buildWithScope(layer, scope)
    }))
  }))

/**
 * The process's pool, and `storage` built on it under the start-up lock, which is held on a
 * connection of its own (not the pool's: the storage's first queries need those).
 */
export const pg = <A, E, R>(
  options: DatabaseOptions,
  storage: Layer.Layer<A, E, R>
): Layer.Layer<A | PgClient.PgClient | SqlClient.SqlClient, E | SqlError | ConfigError, Exclude<R, SqlClient.SqlClient>> =>
  unwrapScopedLayer(
    Effect.map(databaseUrl(options), (url) =>
      withStartupLock(url, storage).pipe(
        Layer.provideMerge(PgClient.layer({ url, maxConnections: options.maxConnections ?? 10 }))
      ))
  )
