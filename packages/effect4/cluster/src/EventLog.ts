/**
 * The sessions' event log: every event a session's channel received, numbered from 1, with the
 * session's record (what to run it from, how its run ended) and the answers given to its requests;
 * what `Events` streams and a runner taking a session over reads. The same models, service and
 * stores as the Effect 3 cluster edition's, written once for both (`../binding/EventLog.ts`): in
 * memory (`layerMemory`: one machine, nothing survives the process) and in PostgreSQL (`layerSql`,
 * through `effect/sql` and `@effect/sql-pg`, an optional peer of this package that its `./cluster`
 * entry point loads).
 *
 * @since 0.1.0
 */
export * from "../binding/EventLog.js"
