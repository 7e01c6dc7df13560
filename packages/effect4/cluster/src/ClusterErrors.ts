/**
 * The errors only the cluster edition raises (`ClusterUnavailable`, `SessionNotFound`,
 * `EventLogError`, `ClusterSecretError`), their union, `Schema` and guard: the same as the Effect 3
 * cluster edition's, written once for both (`../binding/ClusterErrors.ts`, copied from
 * `packages/cluster/binding`). Loads no cluster module.
 *
 * @since 0.1.0
 */
export * from "../binding/ClusterErrors.js"
