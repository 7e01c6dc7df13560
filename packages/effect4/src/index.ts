/**
 * effect-agent-session-effect4: the Effect 4 edition of the Effect-native SDK for the agent
 * session service.
 *
 * @since 0.1.0
 * @module effect-agent-session-effect4
 */

/**
 * Agents: the onboard request and the agent the service returns.
 *
 * @since 0.1.0
 */
export * as Agent from "./Agent.js"

/**
 * The caller's answer to an `external_resource_requested` event (U16): grant, with input, or deny.
 *
 * @since 0.1.0
 */
export * as Answer from "./Answer.js"

/**
 * The keys the SDK authenticates with, and which key each operation uses (U11, U12).
 *
 * @since 0.1.0
 */
export * as Credentials from "./Credentials.js"

/**
 * Every wire choice the document leaves open, gathered in one value: `Dialect.documented` (the
 * default), `Dialect.observed` (how the service's own JavaScript client talks), `Dialect.make`.
 *
 * @since 0.1.0
 */
export * as Dialect from "./Dialect.js"

/**
 * Every failure a caller of the SDK can meet, as `Schema.TaggedError` classes, gathered in one
 * union, `AgentSessionError`, with one guard, `isAgentSessionError`.
 *
 * @since 0.1.0
 */
export * as Errors from "./Errors.js"

/**
 * Sessions: the create-session request, the session the service returns, and its status.
 *
 * @since 0.1.0
 */
export * as Session from "./Session.js"

/**
 * The events of a session's event channel, as one tagged union decoded with `effect/Schema`.
 *
 * @since 0.1.0
 */
export * as SessionEvent from "./SessionEvent.js"
export * as ServiceApi from "./ServiceApi.js"
export * as Metrics from "./Metrics.js"
export * as AgentApi from "./AgentApi.js"
