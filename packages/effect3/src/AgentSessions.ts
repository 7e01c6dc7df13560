/**
 * The façade most users call: create a session, watch its events, answer its requests, and get
 * its outcome, with the action budget guard and an explicit end for a session that stops
 * before `complete`.
 *
 * @since 0.1.0
 */
export * from "../binding/AgentSessions.js"
