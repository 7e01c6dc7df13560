/**
 * The test kit: `effect-agent-session/testing`.
 *
 * @since 0.1.0
 * @module effect-agent-session/testing
 */

/**
 * Test your own application without a network: in-memory `AgentApi`, `EventStream` and
 * `Credentials` driven by a script of events, under the real `AgentSessions` façade.
 *
 * @since 0.1.0
 */
export * as AgentSessionsTest from "./AgentSessionsTest.js"
