/**
 * One layer for Node: `AgentSessions`, `AgentApi`, `EventStream` and `Credentials`, over Node's
 * HTTP client (undici) and a `ws`-based WebSocket constructor.
 *
 * @since 0.1.0
 */
export * from "../binding/NodeAgentSessions.js"
