/**
 * The reference simulator of the agent session service: `effect-agent-session-simulator`.
 *
 * @since 0.1.0
 * @module effect-agent-session-simulator
 */

/**
 * The simulator's scripted agent: the events a session sends, computed from the session's goal,
 * start URL, `max_actions` and the scenario, with no randomness.
 *
 * @since 0.1.0
 */
export * as Script from "./Script.js"

/**
 * The reference simulator of the service: a real server on loopback, in either dialect, with a
 * deterministic scripted agent per session and faults on demand.
 *
 * @since 0.1.0
 */
export * as Simulator from "./Simulator.js"

/**
 * The replay of a recorded session over real sockets: serves a recording to any client, over
 * WebSocket and Server-Sent Events, in the recorded dialect, and checks the client's answers.
 *
 * @since 0.1.0
 */
export * as Replay from "./Replay.js"
