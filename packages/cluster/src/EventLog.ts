/**
 * The event log of clustered sessions: its models, service and stores (in memory, `layerMemory`;
 * in PostgreSQL, `layerSql`), written once for both cluster editions (`binding/EventLog.ts`).
 *
 * @since 0.1.0
 */
export * from "../binding/EventLog.js"
