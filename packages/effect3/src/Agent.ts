/**
 * Agents: the onboard request and the agent the service returns.
 *
 * @since 0.1.0
 */
export * from "../binding/Agent.js"
