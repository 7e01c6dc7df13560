/**
 * `effect-agent-session-core/shell`: what every shell over the protocol shares, in plain
 * TypeScript. The protocol itself (a connection, a session, the codecs, the recording format) is
 * the package's main entry point; this one holds the glue that drives it and that an edition would
 * otherwise write again on its own framework: each module here takes what it needs from the shell
 * through a small interface (a socket, a clock, a writer, a decoder) and decides the rest, so an
 * edition only binds those interfaces to its Effect line.
 *
 * @since 0.1.0
 */
/**
 * The address of a session's event channel: its variables, its derivation from the HTTP base URL,
 * its check.
 *
 * @since 0.1.0
 */
export * as ChannelAddress from "./ChannelAddress.js"

/**
 * The plain part of the `AgentSessions` façade: a session's event guard state, the create call's
 * options, the façade's texts.
 *
 * @since 0.1.0
 */
export * as Facade from "./Facade.js"

/**
 * The session an error happened to: the fields an error met on its event channel gets.
 *
 * @since 0.1.0
 */
export * as SessionContext from "./SessionContext.js"
