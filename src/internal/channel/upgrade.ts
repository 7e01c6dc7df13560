/**
 * What the SDK's own WebSocket constructor (`../webSocket.ts`, on `ws`) tells the WebSocket
 * transport beyond the WHATWG interface: the HTTP status of a refused upgrade (so a refused
 * handshake is `HandshakeRejected`, never retried) and a form of the constructor that bounds the
 * size of a message while it is read (`maxPayload`). Kept apart so that `webSocket.ts` does not
 * import the engine.
 */
import * as Option from "effect/Option"
import type { Settings } from "./settings.js"
import { describeCause } from "./transport.js"

/** The HTTP answer to a refused upgrade. */
export interface UpgradeRejection {
  readonly status: number
  readonly reason: string
}

const rejections = new WeakMap<object, UpgradeRejection>()

/** Records the HTTP status with which the server refused a socket's upgrade (`../webSocket.ts`). */
export const recordRejection = (ws: object, rejection: UpgradeRejection): void => {
  rejections.set(ws, rejection)
}

/** The refused upgrade recorded for a socket by the SDK's own constructor. */
export const rejectionOf = (ws: object): Option.Option<UpgradeRejection> => Option.fromNullable(rejections.get(ws))

const UNEXPECTED_RESPONSE = /Unexpected server response: (\d{3})/

/**
 * The refused upgrade status found in an open error of any `ws`-based socket (`ws` reports
 * `Unexpected server response: 401` when no one handles `unexpected-response`).
 */
export const rejectionFromError = (cause: unknown): Option.Option<UpgradeRejection> => {
  const match = UNEXPECTED_RESPONSE.exec(describeCause(cause))
  return match?.[1] === undefined ? Option.none() : Option.some({ status: Number(match[1]), reason: match[0] })
}

/** A constructor that can bound the size of one message while it is read (`ws`'s `maxPayload`). */
export type SizedConstructor = (url: string, maxPayload: number) => globalThis.WebSocket

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

/** The largest frame read (to be skipped) with `failOnFrameError: false`. */
export const SKIPPABLE_FRAME_SIZE = 16 * 1024 * 1024

/**
 * The largest message a socket reads: `maxFrameSize`. With `failOnFrameError: false` a frame
 * over it is read to be skipped, up to {@link SKIPPABLE_FRAME_SIZE} (16 MiB, or `maxFrameSize`
 * when larger); past that the stream fails with `FrameTooLarge` all the same.
 */
export const maxPayloadOf = (settings: Settings): number =>
  settings.failOnFrameError ? settings.maxFrameSize : Math.max(settings.maxFrameSize, SKIPPABLE_FRAME_SIZE)
