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
export * as ChannelAddress from "./ChannelAddress.js"
export * as Facade from "./Facade.js"
export * as SessionContext from "./SessionContext.js"
