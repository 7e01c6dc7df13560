/**
 * The test kit: `effect-agent-session-effect4/testing`.
 *
 * @since 0.1.0
 * @module effect-agent-session-effect4/testing
 */

/**
 * Test your own application without a network: an in-memory `AgentApi` and `Credentials`, and
 * scripts of events.
 *
 * @since 0.1.0
 */
export * as AgentSessionsTest from "./AgentSessionsTest.js"
