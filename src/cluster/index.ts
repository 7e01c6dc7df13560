/**
 * `effect-agent-session/cluster`: agent sessions as `@effect/cluster` entities, with their event
 * log in PostgreSQL (or in memory on one machine). Its packages (`@effect/cluster`, `@effect/rpc`,
 * `@effect/sql`, `@effect/sql-pg`) are optional peers: only this entry point imports them.
 *
 * @since 0.1.0
 */

/**
 * @since 0.1.0
 */
export * as ClusterSessions from "./ClusterSessions.js"

/**
 * @since 0.1.0
 */
export * as EventLog from "./EventLog.js"

/**
 * @since 0.1.0
 */
export * as SessionEntity from "./SessionEntity.js"

/**
 * @since 0.1.0
 */
export * as NodeClusterSessions from "./NodeClusterSessions.js"
