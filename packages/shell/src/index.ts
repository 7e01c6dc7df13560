/**
 * `effect-agent-session-shell`: what every shell over the protocol shares, in plain TypeScript,
 * internal to the editions (not a public API for applications). The protocol itself (a connection,
 * a session, the codecs, the recording format) is `effect-agent-session-core`, which this package
 * imports through its public entry point only; this one holds the glue that drives it and that an
 * edition would otherwise write again on its own framework: each module here takes what it needs
 * from the shell through a small interface (a socket, a clock, a writer, a decoder) and decides the
 * rest, so an edition only binds those interfaces to its Effect line.
 *
 * @since 0.1.0
 * @module effect-agent-session-shell
 */

/**
 * The address of a session's event channel: its variables, its derivation from the HTTP base URL,
 * its check.
 *
 * @since 0.1.0
 */
export * as ChannelAddress from "./ChannelAddress.js"

/**
 * The membership handshake of the cluster's runner protocol: bytes in, bytes out, the
 * cryptography passed in (both cluster editions drive it over their sockets).
 *
 * @since 0.1.0
 */
export * as ClusterHandshake from "./ClusterHandshake.js"

/**
 * The options of one connection with their defaults applied, and the core `Connection`'s options.
 *
 * @since 0.1.0
 */
export * as ConnectionSettings from "./ConnectionSettings.js"

/**
 * One connection's shell around the core's `Connection`: its inputs fed and its actions done,
 * and what an attempt's transport calls, over what the edition does.
 *
 * @since 0.1.0
 */
export * as ConnectionShell from "./ConnectionShell.js"

/**
 * The HTTP API's contract as both editions build it: once per dialect value, the key of its
 * authentication middleware.
 *
 * @since 0.1.0
 */
export * as Contract from "./Contract.js"

/**
 * The plain part of the `AgentSessions` façade: a session's event guard state, the create call's
 * options, the façade's texts.
 *
 * @since 0.1.0
 */
export * as Facade from "./Facade.js"

/**
 * A recording file as the bytes the core's `Recording.Reader` reads, through the synchronous file
 * functions an edition gives (`node:fs`).
 *
 * @since 0.1.0
 */
export * as FileSource from "./FileSource.js"

/**
 * One call of the HTTP API: its attempts counted, each attempt's headers and context, what a
 * response read within its limit becomes and what its failures hold, what each operation sends
 * again (the create policy) and a creating call's unknown outcome, the span attributes, the
 * redacted header names.
 *
 * @since 0.1.0
 */
export * as HttpCall from "./HttpCall.js"

/**
 * A response body read within its limit: how to read it, each read held to the limit, and the
 * body kept for a decode failure.
 *
 * @since 0.1.0
 */
export * as HttpBody from "./HttpBody.js"

/**
 * A schema's problems as text: `path: message` lines joined by `; `, and the texts of a report
 * that prints no value.
 *
 * @since 0.1.0
 */
export * as Issues from "./Issues.js"

/**
 * The test kit's in-memory replay: a recording opened for the kit, creates answered, connections
 * and attempts played and reported, what an attempt waits on, the replay's errors.
 *
 * @since 0.1.0
 */
export * as KitReplay from "./KitReplay.js"

/**
 * The test kit's scripted connection: the script played once, the application's answers matched
 * and reported to the kit's world.
 *
 * @since 0.1.0
 */
export * as KitScript from "./KitScript.js"

/**
 * A wait on the host's timer: the longest delay `setTimeout` keeps, and a wait that ends once.
 *
 * @since 0.1.0
 */
export * as LiveWait from "./LiveWait.js"

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
 * The session an error happened to: the fields an error met on its event channel gets.
 *
 * @since 0.1.0
 */
export * as SessionContext from "./SessionContext.js"

/**
 * One SSE attempt without its I/O: the stream's query, the body parsed into events, how the
 * `GET` failing, refused or ended ends the attempt, what an answer's `POST` came to.
 *
 * @since 0.1.0
 */
export * as SseAttempt from "./SseAttempt.js"

/**
 * A WebSocket that pauses, over a runtime's `WebSocketStream` (Deno's): reads only while the
 * consumer wants more.
 *
 * @since 0.1.0
 */
export * as StreamWebSocket from "./StreamWebSocket.js"

/**
 * What the SDK reports: metric names, attributes, boundaries, span attributes, readings.
 *
 * @since 0.1.0
 */
export * as Telemetry from "./Telemetry.js"

/**
 * The shared timer of a service's connections: one sleeper for every deadline.
 *
 * @since 0.1.0
 */
export * as Timer from "./Timer.js"

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

/**
 * Deadlines: one queue of time-outs, the shell sleeping until the earliest.
 *
 * @since 0.1.0
 */
export * as Deadlines from "./Deadlines.js"

/**
 * The test kit's scripted world: a script's steps, a connection playing one, the scripted service.
 *
 * @since 0.1.0
 */
export * as Script from "./Script.js"

/**
 * An attempt's WebSocket, whatever made it: pausing, `ws`'s own messages, data as frames, closing.
 *
 * @since 0.1.0
 */
export * as Socket from "./Socket.js"

/**
 * Recording a session without I/O: lines noted from the engine's callbacks, written in batches by
 * one writer, scrubbed and bounded in bytes.
 *
 * @since 0.1.0
 */
export * as Journal from "./Journal.js"

/**
 * What both cluster editions know of a session from its log, by the core's rules (the fold, the
 * request key, the open requests), and the wake-up set of its live readers.
 *
 * @since 0.1.0
 */
export * as ClusterTally from "./ClusterTally.js"
