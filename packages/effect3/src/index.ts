/**
 * effect-agent-session: an Effect-native SDK for the agent session service.
 *
 * @since 0.1.0
 * @module effect-agent-session
 */

/**
 * Agents: the onboard request and the agent the service returns.
 *
 * @since 0.1.0
 */
export * as Agent from "./Agent.js"

/**
 * The service's HTTP operations: onboard an agent, create a session, and (observed dialect only)
 * retrieve a session, with typed status errors, retries on a `Schedule` and `Retry-After`.
 *
 * @since 0.1.0
 */
export * as AgentApi from "./AgentApi.js"

/**
 * The façade most users call: create a session, watch its events, answer its requests, and get
 * its outcome, with the action budget guard and an explicit end for a session that stops
 * before `complete`.
 *
 * @since 0.1.0
 */
export * as AgentSessions from "./AgentSessions.js"

/**
 * The caller's answer to an `external_resource_requested` event: grant, with input, or deny.
 *
 * @since 0.1.0
 */
export * as Answer from "./Answer.js"

/**
 * The keys the SDK authenticates with, and which key each operation uses.
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
 * The event channel as a `Stream` of typed events that survives dropped connections, through
 * which the caller answers the agent's requests.
 *
 * @since 0.1.0
 */
export * as EventStream from "./EventStream.js"

/**
 * One layer for any runtime with the standard `fetch` and `WebSocket` (Node 22, Bun, Deno):
 * `AgentSessions`, `AgentApi`, `EventStream` and `Credentials` over `FetchHttpClient` and the
 * runtime's own `WebSocket`, from values or from the environment.
 *
 * @since 0.1.0
 */
export * as FetchAgentSessions from "./FetchAgentSessions.js"

/**
 * One layer for Node: `AgentSessions`, `AgentApi`, `EventStream` and `Credentials`, over Node's
 * HTTP client and a `ws`-based WebSocket constructor, from values or from the environment.
 *
 * @since 0.1.0
 */
export * as NodeAgentSessions from "./NodeAgentSessions.js"

/**
 * The service's HTTP contract, written once as an `HttpApi`: the SDK's client is derived from it
 * and the simulator serves it.
 *
 * @since 0.1.0
 */
export * as ServiceApi from "./ServiceApi.js"

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

/**
 * The codecs a dialect selects: how server frames are decoded, how the connection payload
 * is delivered, and how answers are framed.
 *
 * @since 0.1.0
 */
export * as Wire from "./Wire.js"

/**
 * The SDK's metrics, as `effect/Metric` values: events received by tag, actions, reconnects,
 * answers sent, HTTP attempts and retries by status, and the create-session latency.
 *
 * @since 0.1.0
 */
export * as Metrics from "./Metrics.js"

/**
 * Recorded sessions: record one real session to a file (JSON Lines, no key in it), then replay
 * it in tests, in memory with the test kit or over sockets with the simulator.
 *
 * @since 0.1.0
 */
export * as Recording from "./Recording.js"
