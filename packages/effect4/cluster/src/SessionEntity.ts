/**
 * A session of the service as an `effect/cluster` entity, keyed by the service's session id: its
 * protocol (`Start`, `Attach`, `Events`, `Respond`, `Status`, `Close`, `Resume`) and its layer,
 * with the runner's resumer, answer watch and writer claims: the same as the Effect 3 cluster
 * edition's, written once for both (`../binding/SessionEntity.ts`). The two lines' runners do not
 * share a cluster.
 *
 * @since 0.1.0
 */
export * from "../binding/SessionEntity.js"
