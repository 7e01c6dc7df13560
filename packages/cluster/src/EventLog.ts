/**
 * The event log of clustered sessions (its models, service and store in memory: written once for
 * both cluster editions, `binding/EventLog.ts`), and its store in PostgreSQL.
 *
 * @since 0.1.0
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { EventLog, type EventLogError, type Options } from "../binding/EventLog.js"
import { sweeper } from "../binding/internal/eventLogMemory.js"
import * as internal from "./internal/eventLog.js"

export * from "../binding/EventLog.js"

/**
 * The log in PostgreSQL (through `@effect/sql`'s `SqlClient`). The layer runs the migration
 * that creates its tables (`agent_session_sessions`, `agent_session_events`,
 * `agent_session_answers`; migrations recorded in `agent_session_migrations`), retried while
 * another process holds the migration lock.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerSql = (options: Options = {}): Layer.Layer<EventLog, EventLogError, SqlClient.SqlClient> =>
  Layer.scopedContext(
    Effect.gen(function*() {
      yield* internal.migrate
      const log = yield* internal.makeSql
      const context = Context.make(EventLog, log)
      yield* sweeper(log, options)
      return context
    })
  )
