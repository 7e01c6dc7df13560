/**
 * The `Idempotency-Key` rules (`Http`'s): what a key may be, the key of a creating call, the key
 * a request carried. Re-exported by `Http`.
 */
import type { Headers } from "./httpTypes.js"

/**
 * The longest `Idempotency-Key` accepted: 255 characters.
 *
 * @since 0.1.0
 * @category models
 */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255

const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/

/**
 * Whether a caller's `Idempotency-Key` may be sent: 1 to 255 printable ASCII characters, no
 * spaces.
 *
 * @since 0.1.0
 * @category guards
 */
export const isIdempotencyKey = (key: string): boolean => IDEMPOTENCY_KEY.test(key)

/**
 * Why a caller's `Idempotency-Key` is refused (nothing is sent).
 *
 * @since 0.1.0
 * @category models
 */
export const idempotencyKeyMessage = "idempotencyKey: 1 to 255 printable ASCII characters, no spaces"

/**
 * The `Idempotency-Key` of one creating call: the caller's when it may be sent, a fresh one from
 * `fresh` when none was given, `undefined` when the caller's is refused ({@link idempotencyKeyMessage}:
 * the call fails before anything is sent).
 *
 * @since 0.1.0
 * @category constructors
 */
export const idempotencyKeyFor = (given: string | undefined, fresh: () => string): string | undefined =>
  given === undefined ? fresh() : isIdempotencyKey(given) ? given : undefined

/**
 * The `Idempotency-Key` of a request as a server reads it: the header trimmed, when it is 1 to
 * 255 characters long; else none (the request is not deduplicated).
 *
 * @since 0.1.0
 * @category constructors
 */
export const idempotencyKeyOf = (headers: Headers): string | undefined => {
  const key = headers["idempotency-key"]?.trim()
  return key !== undefined && key.length > 0 && key.length <= MAX_IDEMPOTENCY_KEY_LENGTH ? key : undefined
}
