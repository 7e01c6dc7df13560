/**
 * The reference simulator of the agent session service: `effect-agent-session/simulator`.
 *
 * @since 0.1.0
 */

/** @since 0.1.0 */
export * as Script from "./Script.js"

/** @since 0.1.0 */
export * as Simulator from "./Simulator.js"
