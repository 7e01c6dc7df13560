/**
 * What the SDK's own WebSocket constructor (`../webSocket.ts`, on `ws`) tells the WebSocket
 * transport beyond the WHATWG interface: the HTTP status of a refused upgrade (the core's
 * `Upgrade` registry: a refused handshake is `HandshakeRejected`, never retried) and a form of
 * the constructor that bounds the size of a message while it is read (`maxPayload`). Kept apart
 * so that `webSocket.ts` does not import the engine.
 */
import { Close } from "effect-agent-session-core"
import { Upgrade } from "effect-agent-session-core/shell"
import type { Settings } from "./settings.js"

/** Records the HTTP status with which the server refused a socket's upgrade (`../webSocket.ts`). */
export const recordRejection = Upgrade.recordRejection

/** A constructor that can bound the size of one message while it is read (`ws`'s `maxPayload`). */
type SizedConstructor = (url: string, maxPayload: number) => globalThis.WebSocket

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
