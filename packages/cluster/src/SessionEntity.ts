/**
 * A session of the service as an `@effect/cluster` entity, keyed by the service's session id: its
 * protocol (`Start`, `Attach`, `Events`, `Respond`, `Status`, `Close`, `Resume`) and its layer,
 * with the runner's resumer, answer watch and writer claims: written once for both cluster
 * editions (`binding/SessionEntity.ts`).
 *
 * @since 0.1.0
 */
export * from "../binding/SessionEntity.js"
