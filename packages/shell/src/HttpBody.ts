/**
 * A response body read within its limit: how to read it (refuse it from its announced length,
 * read it whole, or stream it), each read held to the limit, and the body kept for a decode
 * failure. Each edition's HTTP client reads bodies through it.
 *
 * @since 0.1.0
 */
import { Http } from "effect-agent-session-core"

/**
 * A size limit from an option: a finite number >= 1 (rounded down), else the fallback.
 *
 * @since 0.1.0
 * @category constructors
 */
export const limitOf = (value: number | undefined, fallback: number = Http.defaults.maxResponseSize): number =>
  value !== undefined && Number.isFinite(value) && value >= 1 ? Math.floor(value) : fallback

export type {
  /**
   * A body over its limit: the bytes read (or announced) when reading stopped.
   *
   * @since 0.1.0
   * @category models
   */
  OverLimit,
  /**
   * A 2xx response as kept for a possible decode failure.
   *
   * @since 0.1.0
   * @category models
   */
  ReceivedBody
} from "./internal/httpBody.js"

export {
  /**
   * The announced length of a body, when `content-length` is a plain decimal number.
   *
   * @since 0.1.0
   * @category constructors
   */
  announcedLength,
  /**
   * How to read a response body within `limit` bytes: refuse it, read it whole, or stream it; a
   * success must fit, of any other only a prefix is kept.
   *
   * @since 0.1.0
   * @category constructors
   */
  bodyPlan,
  /**
   * A body read whole held to its limit.
   *
   * @since 0.1.0
   * @category constructors
   */
  fitBody,
  /**
   * A body read piece by piece within `limit` bytes.
   *
   * @since 0.1.0
   * @category models
   */
  BoundedBody,
  /**
   * One response's body read within its limit: how to read it, each read held to the limit.
   *
   * @since 0.1.0
   * @category models
   */
  BodyReader,
  /**
   * Whether a read ended over the limit.
   *
   * @since 0.1.0
   * @category guards
   */
  isOverLimit,
  /**
   * The bytes as an `ArrayBuffer` of their own (for a web `Response`).
   *
   * @since 0.1.0
   * @category constructors
   */
  ownArrayBuffer,
  /**
   * The {@link ReceivedBody} of a response's status and bytes.
   *
   * @since 0.1.0
   * @category constructors
   */
  receivedBody
} from "./internal/httpBody.js"
