/**
 * `effect-agent-session-effect4/cluster`: agent sessions as `effect/cluster` entities on Effect 4,
 * their event log in memory on one machine. Effect 4 ships the cluster in `effect` itself, so this
 * entry point needs no package beyond the edition's own. An Effect 4 application's client talks
 * to Effect 4 runners: the two Effect lines do not share a cluster.
 *
 * @since 0.1.0
 * @module effect-agent-session-effect4/cluster
 */

/**
 * The cluster edition's own errors (`ClusterUnavailable`, `SessionNotFound`, `EventLogError`),
 * their union, `Schema` and guard.
 *
 * @since 0.1.0
 */
export * as ClusterErrors from "./ClusterErrors.js"

/**
 * The cluster's session façade (`start`, `attach`, `events`, `respond`, `status`, `outcome`,
 * `close`), and the embedded single-runner layer.
 *
 * @since 0.1.0
 */
export * as ClusterSessions from "./ClusterSessions.js"

/**
 * The sessions' event log (`layerMemory`).
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
 * Runners and client-only members over Node (`NodeClusterSocket`, PostgreSQL), every connection
 * between them proving the cluster secret.
 *
 * @since 0.1.0
 */
export * as NodeClusterSessions from "./NodeClusterSessions.js"
