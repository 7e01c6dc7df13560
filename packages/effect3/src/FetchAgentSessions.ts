/**
 * One layer for any runtime with the standard `fetch` and `WebSocket` (Node 22, Bun, Deno):
 * `AgentSessions`, `AgentApi`, `EventStream` and `Credentials` over `@effect/platform`'s
 * `FetchHttpClient` and the runtime's own global `WebSocket`, nothing of `@effect/platform-node`.
 * Same options, same variables, same address rules as `NodeAgentSessions`; two things differ, both
 * because a standard `WebSocket` is more limited than the `ws` package's:
 *
 * - **No upgrade headers.** The WebSocket upgrade carries no header (no `user-agent`). Nothing of
 *   the protocol needs one: the key goes in the first message (the `message` handshake of the
 *   documented dialect) or, when the dialect asks for it (`query`, `both`), in the address, under
 *   the rules every layer follows: a plain `ws://` address only to a loopback host unless
 *   `allowInsecure`, and the address printed only without the key. The HTTP calls and the SSE
 *   transport send their headers through `fetch` as on Node.
 * - **Back-pressure.** A standard `WebSocket` cannot pause its reading. When `bufferSize` events
 *   wait for a slow consumer, the channel keeps reading up to twice that; past it the connection
 *   is closed and the events fail with `BufferOverflow` after every event received before it:
 *   memory stays bounded and no event is dropped silently. The SSE transport reads a `fetch` body,
 *   which pauses: with `transport: "sse"` a slow consumer is back-pressured as on Node.
 *
 * A refused WebSocket upgrade (an HTTP status instead of `101`) reaches a standard `WebSocket` as
 * a bare `error`, without the status: it is retried as an open failure (then `NeverConnected`)
 * rather than failing at once with `HandshakeRejected` as on Node. A key refused after the socket
 * opened (close codes 1008, 4001, 4003, ...) is `HandshakeRejected` on every runtime.
 *
 * Node 20 has no global `WebSocket`: on Node, use Node 22 or later, or `NodeAgentSessions`.
 *
 * @since 0.1.0
 */
export * from "../binding/FetchAgentSessions.js"
