/**
 * The cluster's session façade (`start`, `attach`, `events`, `respond`, `status`, `outcome`,
 * `close`) and the embedded single-runner layer: the same as the Effect 3 cluster edition's,
 * written once for both (`../binding/ClusterSessions.ts`).
 *
 * @since 0.1.0
 */
export * from "../binding/ClusterSessions.js"
