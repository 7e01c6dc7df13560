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
 * Values built once per key and kept, up to a bound (metrics with attributes, per-framing
 * decoders).
 *
 * @since 0.1.0
 */
export * as Memo from "./Memo.js"

/**
 * What a transport's attempt needs of its edition: the key read in clear, each way an attempt
 * ends built as the edition's outcome, and the settings it reads.
 *
 * @since 0.1.0
 */
export * as Outcomes from "./Outcomes.js"

/**
 * The options of an edition's whole-SDK layer read once: the transport and its variable, the
 * dialect and insecure transport defaults.
 *
 * @since 0.1.0
 */
export * as SdkLayer from "./SdkLayer.js"

/**
 * One SSE attempt without its I/O: the stream's query, the body parsed into events, how the
 * `GET` failing, refused or ended ends the attempt, what an answer's `POST` came to.
 *
 * @since 0.1.0
 */
export * as SseAttempt from "./SseAttempt.js"

/**
 * What a `ws`-based WebSocket constructor records and opens with: a refused upgrade's HTTP
 * status (read back by the WebSocket attempt), the options of its sockets.
 *
 * @since 0.1.0
 */
export * as Upgrade from "./Upgrade.js"

/**
 * One WebSocket attempt driven from its socket's events: the handshake, frames to the hooks,
 * the attempt's end from an `error` or `close` event or the connect time-out.
 *
 * @since 0.1.0
 */
export * as WebSocketAttempt from "./WebSocketAttempt.js"
