/**
 * The test kit: `effect-agent-session/testing`.
 *
 * @since 0.1.0
 */

/** @since 0.1.0 */
export * as AgentSessionsTest from "./AgentSessionsTest.js"
