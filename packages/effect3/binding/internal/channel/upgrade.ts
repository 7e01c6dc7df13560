/**
 * What the SDK's own WebSocket constructors (each edition's `src/internal/webSocket.ts` on `ws`,
 * `src/internal/standardWebSocket.ts`) tell the WebSocket transport beyond the socket interface
 * (`WebSocketLike`): the HTTP status of a refused upgrade (the core's `Upgrade` registry: a refused
 * handshake is `HandshakeRejected`, never retried) and the constructor's traits (a form that bounds
 * the size of a message while it is read, `maxPayload`; whether its sockets pause; whether they are
 * `ws`'s own). Kept apart so that the constructors do not import the engine.
 */
import { Close } from "effect-agent-session-core"
import { Upgrade } from "effect-agent-session-shell"
import type { Settings } from "./settings.js"
import type { WebSocketLike } from "../../../src/internal/line.js"

/** Records the HTTP status with which the server refused a socket's upgrade (`src/internal/webSocket.ts`). */
export const recordRejection = Upgrade.recordRejection

/**
 * A constructor that can bound the size of one message while it is read (`ws`'s `maxPayload`),
 * given the extra headers of the upgrade request where the constructor service takes some.
 */
export type SizedConstructor = (
  url: string,
  maxPayload: number,
  headers: Readonly<Record<string, string>> | undefined
) => WebSocketLike

/**
 * What the WebSocket transport knows of a constructor beyond the socket interface:
 * - `sized`: its form that bounds the size of a message while it is read (`ws`'s `maxPayload`):
 *   the engine then opens every socket with `maxPayload` = its `maxFrameSize`, so a frame over it
 *   is refused while it is read instead of being read whole first;
 * - `pausable: false`: its sockets are bounded by the connection (`BufferOverflow`), whether or not
 *   they have `pause()`/`resume()`: a runtime's standard `WebSocket`
 *   (`src/internal/standardWebSocket.ts`).
 *   Bun's has them, but frames it had read already keep arriving after a pause (hundreds of small
 *   ones, measured), so its pause alone does not bound what waits for the consumer;
 * - `ownEvents`: its sockets are the `ws` package's, which a transport may listen to through their
 *   own events (`on("open" | "message" | "close" | "error")`, with `ws`'s arguments) instead of
 *   `addEventListener`, whose wrappers and event objects cost heap per open socket.
 */
export interface ConstructorTraits {
  readonly sized?: SizedConstructor | undefined
  readonly pausable?: boolean | undefined
  readonly ownEvents?: boolean | undefined
}

/** The traits registered, by constructor. */
const traits = new WeakMap<object, ConstructorTraits>()

/** Registers what a `Socket.WebSocketConstructor` can do (the SDK's own constructors do for theirs). */
export const registerConstructor = (constructor: object, constructorTraits: ConstructorTraits): void => {
  traits.set(constructor, constructorTraits)
}

/** What a constructor was registered with (nothing for a user's own). */
export const traitsOf = (constructor: object): ConstructorTraits | undefined => traits.get(constructor)

/** The largest message a socket reads (`Close.maxPayload`): `maxFrameSize`, or up to 16 MiB to skip. */
export const maxPayloadOf = (settings: Settings): number =>
  Close.maxPayload(settings.maxFrameSize, settings.failOnFrameError)
