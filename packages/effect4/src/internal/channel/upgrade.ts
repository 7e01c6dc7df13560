/**
 * What the SDK's own WebSocket constructor (`../webSocket.ts`, on `ws`) tells the WebSocket
 * transport beyond the `Socket.WebSocketLike` interface: the HTTP status of a refused upgrade (the
 * core's `Upgrade` registry: a refused handshake is `HandshakeRejected`, never retried) and a form
 * of the constructor that bounds the size of a message while it is read (`maxPayload`). Kept apart
 * so that `webSocket.ts` does not import the engine.
 */
import type * as Socket from "effect/socket/Socket"
import { Close } from "effect-agent-session-core"
import { Upgrade } from "effect-agent-session-core/shell"
import type { Settings } from "./settings.js"

/** Records the HTTP status with which the server refused a socket's upgrade (`../webSocket.ts`). */
export const recordRejection = Upgrade.recordRejection

/** A constructor that can bound the size of one message while it is read (`ws`'s `maxPayload`). */
export type SizedConstructor = (
  url: string,
  maxPayload: number,
  headers: Readonly<Record<string, string>> | undefined
) => Socket.WebSocketLike

/** The bounded forms registered, by constructor. */
export const sizedConstructors = new WeakMap<object, SizedConstructor>()

/**
 * Registers the bounded form of a `Socket.WebSocketConstructor` (`../webSocket.ts` does for its
 * own): the engine then opens every socket with `maxPayload` = its `maxFrameSize`, so a frame
 * over it is refused while it is read instead of being read whole first.
 */
export const registerSizedConstructor = (constructor: object, sized: SizedConstructor): void => {
  sizedConstructors.set(constructor, sized)
}

/** The largest message a socket reads (`Close.maxPayload`): `maxFrameSize`, or up to 16 MiB to skip. */
export const maxPayloadOf = (settings: Settings): number =>
  Close.maxPayload(settings.maxFrameSize, settings.failOnFrameError)

/**
 * The constructors whose sockets the engine bounds itself, whether or not they can pause: a
 * runtime's standard `WebSocket` (`../standardWebSocket.ts`). Bun's has `pause()`/`resume()`,
 * but frames it had read already keep arriving after a pause (hundreds of small ones, measured),
 * so its pause alone does not bound what waits for the consumer.
 */
const boundedConstructors = new WeakSet<object>()

/** Registers a constructor whose sockets are bounded by the engine (`BufferOverflow`). */
export const registerBoundedConstructor = (constructor: object): void => {
  boundedConstructors.add(constructor)
}

/** Whether the engine bounds the sockets of this constructor even when they can pause. */
export const isBoundedConstructor = (constructor: object): boolean => boundedConstructors.has(constructor)
