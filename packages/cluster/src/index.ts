/**
 * `effect-agent-session-cluster`: agent sessions as `@effect/cluster` entities, with their event
 * log in PostgreSQL (or in memory on one machine). Its packages (`@effect/cluster`, `@effect/rpc`,
 * `@effect/sql`, `@effect/sql-pg`) are optional peers: only this entry point imports them.
 *
 * @since 0.1.0
 * @module effect-agent-session-cluster
 */

/**
 * The cluster edition's own errors (`ClusterUnavailable`, `EventLogError`), their union, `Schema`
 * and guard.
 *
 * @since 0.1.0
 */
export * as ClusterErrors from "./ClusterErrors.js"

/**
 * The cluster's session façade (`start`, `attach`, `events`, `respond`, `status`, `outcome`), and
 * the embedded single-runner layer.
 *
 * @since 0.1.0
 */
export * as ClusterSessions from "./ClusterSessions.js"

/**
 * The sessions' event log: PostgreSQL (`layerSql`) or memory (`layerMemory`).
 *
 * @since 0.1.0
 */
export * as EventLog from "./EventLog.js"

/**
 * The session entity and its protocol.
 *
 * @since 0.1.0
 */
export * as SessionEntity from "./SessionEntity.js"

/**
 * Runners and client-only members over Node (`NodeClusterSocket`, PostgreSQL).
 *
 * @since 0.1.0
 */
export * as NodeClusterSessions from "./NodeClusterSessions.js"
