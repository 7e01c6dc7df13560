/**
 * The errors only the cluster edition raises (`ClusterUnavailable`, `SessionNotFound`,
 * `EventLogError`, `ClusterSecretError`), their union, `Schema` and guard: written once for both
 * cluster editions (`binding/ClusterErrors.ts`). Loads none of the cluster's packages.
 *
 * @since 0.1.0
 */
export * from "../binding/ClusterErrors.js"
