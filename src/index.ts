/**
 * effect-agent-session: an Effect-native SDK for the agent session service.
 *
 * @since 0.1.0
 */

/** @since 0.1.0 */
export * as Agent from "./Agent.js"

/** @since 0.1.0 */
export * as AgentApi from "./AgentApi.js"

/** @since 0.1.0 */
export * as AgentSessions from "./AgentSessions.js"

/** @since 0.1.0 */
export * as Answer from "./Answer.js"

/** @since 0.1.0 */
export * as Credentials from "./Credentials.js"

/** @since 0.1.0 */
export * as Dialect from "./Dialect.js"

/** @since 0.1.0 */
export * as Errors from "./Errors.js"

/** @since 0.1.0 */
export * as EventStream from "./EventStream.js"

/** @since 0.1.0 */
export * as NodeAgentSessions from "./NodeAgentSessions.js"

/** @since 0.1.0 */
export * as ServiceApi from "./ServiceApi.js"

/** @since 0.1.0 */
export * as Session from "./Session.js"

/** @since 0.1.0 */
export * as SessionEvent from "./SessionEvent.js"

/** @since 0.1.0 */
export * as Wire from "./Wire.js"

/** @since 0.1.0 */
export * as Metrics from "./Metrics.js"
