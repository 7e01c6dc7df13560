/**
 * The event channel: `{ws_url}/v1/connect` as a `Stream` of typed {@link SessionEvent.SessionEvent}s
 * that survives dropped connections, through which the caller answers the agent's requests.
 *
 * - Subscribe-then-connect: no socket is opened before the consumer of `events` exists, so the
 *   first frame reaches the caller. Every frame received from then on waits in the buffer.
 * - Reconnect on a `Schedule` (abnormal close, including 1006; open failure; connect time-out;
 *   idle time-out), re-sending the handshake with a freshly read key; never after `complete`,
 *   after `close`, or after the service closed the channel with 1000.
 * - A refused handshake (HTTP 400, 401, 403, 404 or 410 at the upgrade, close codes 1008, 4001,
 *   4003, 4401, 4403) fails at once with `HandshakeRejected`: never retried.
 * - Bounded: frames wait in a buffer of `bufferSize`; when it is full the socket stops reading
 *   until the consumer has taken half of them. Nothing is dropped.
 * - Answers sent while reconnecting are queued (bounded) and sent in order once open.
 *
 * @example
 * ```ts
 * import { Credentials, EventStream } from "effect-agent-session"
 * import * as NodeSocket from "@effect/platform-node/NodeSocket"
 * import * as Effect from "effect/Effect"
 * import * as Layer from "effect/Layer"
 * import * as Stream from "effect/Stream"
 *
 * const program = Effect.gen(function*() {
 *   const channel = yield* EventStream.EventStream
 *   yield* channel.events("session-1").pipe(
 *     Stream.runForEach((event) => Effect.log(event._tag))
 *   )
 * })
 *
 * const EventStreamLive = EventStream.layer({ url: "wss://agents.example.com" }).pipe(
 *   Layer.provide([Credentials.layer({ apiKey: "..." }), NodeSocket.layerWebSocketConstructor])
 * )
 *
 * program.pipe(Effect.provide(EventStreamLive))
 * ```
 *
 * @since 0.1.0
 */
export * from "../binding/EventStream.js"
