/**
 * The HTTP rules of the service's API: which status is which kind of error, what an error
 * body's message is, the wait `Retry-After` asks for, which failures are retried and
 * which prove the service did not act (the create policy), the `Idempotency-Key` rules and the
 * defaults of the HTTP client. Each edition builds its own error values from the kinds said here.
 * How a response body is read within its limit is the shell's `HttpBody`.
 *
 * The error messages (`internal/httpFailures.ts`) are written apart; this module is their public
 * face.
 *
 * @since 0.1.0
 */

import { failedResponse } from "./internal/httpFailures.js"
import { type Headers, isSuccess } from "./internal/httpTypes.js"

export type {
  /**
   * Response headers, by lower-case name.
   *
   * @since 0.1.0
   * @category models
   */
  Headers
} from "./internal/httpTypes.js"

/**
 * The kind of error a non-2xx status is: 400 and 422 `bad-request`, 401 `unauthorized`, 403
 * `forbidden`, 404 `not-found`, 409 `conflict`, 413 `payload-too-large`, 429 `rate-limited`, 5xx
 * `server-error`, any other `unexpected-status`.
 *
 * @since 0.1.0
 * @category models
 */
export type StatusKind =
  | "bad-request"
  | "unauthorized"
  | "forbidden"
  | "not-found"
  | "conflict"
  | "payload-too-large"
  | "rate-limited"
  | "server-error"
  | "unexpected-status"

/**
 * The kind of error of a non-2xx status.
 *
 * @since 0.1.0
 * @category constructors
 */
export const statusKind = (status: number): StatusKind => {
  switch (status) {
    case 400:
    case 422:
      return "bad-request"
    case 401:
      return "unauthorized"
    case 403:
      return "forbidden"
    case 404:
      return "not-found"
    case 409:
      return "conflict"
    case 413:
      return "payload-too-large"
    case 429:
      return "rate-limited"
    default:
      return status >= 500 && status <= 599 ? "server-error" : "unexpected-status"
  }
}

export {
  /**
   * Whether a status is success: any 2xx.
   *
   * @since 0.1.0
   * @category guards
   */
  isSuccess
} from "./internal/httpTypes.js"

/**
 * Whether a failed request with this status is worth sending again: 429, any 5xx, and 408
 * (request time-out). Transport failures and time-outs are retryable as well.
 *
 * @since 0.1.0
 * @category guards
 */
export const isRetryableStatus = (status: number): boolean => {
  const kind = statusKind(status)
  return kind === "rate-limited" || kind === "server-error" || status === 408
}

/**
 * Whether a status says the service did not act on the request: 429 (rate limited), 503
 * (unavailable) and 408 (it gave up waiting for the request). Any other retryable failure (a
 * time-out, a reset, 500, 502, 504) may have created what was asked.
 *
 * @since 0.1.0
 * @category guards
 */
export const didNotActStatus = (status: number): boolean => status === 429 || status === 503 || status === 408

/**
 * What became of an answer `POST`ed to the SSE egress path, by its status: any 2xx confirms it; a
 * retryable status ({@link isRetryableStatus}) keeps it queued and reopens the connection; any
 * other is a refusal (the request is pending again).
 *
 * @since 0.1.0
 * @category constructors
 */
export const answerPostOutcome = (status: number): "confirmed" | "retry" | "refused" =>
  isSuccess(status) ? "confirmed" : isRetryableStatus(status) ? "retry" : "refused"

// ---------------------------------------------------------------------------
// Error bodies and failures without a response
// ---------------------------------------------------------------------------

export {
  /**
   * The message of an error body, else the text body, else the status line.
   *
   * @since 0.1.0
   * @category constructors
   */
  errorMessage,
  /**
   * The request id a response carries (`x-request-id`, else `request-id`), if not blank. The peer
   * chose it: scrub it before keeping it.
   *
   * @since 0.1.0
   * @category constructors
   */
  requestId,
  /**
   * What a failure of the contract's schema holds: the caller's payload refused before any
   * response (`invalid-request`), else the response that does not match (`undecoded-response`),
   * every key out.
   *
   * @since 0.1.0
   * @category constructors
   */
  contractFailure,
  /**
   * What a `TransportError` holds of a failure without a response (its message, every key
   * scrubbed out), and whether it proves the request never left (the create policy).
   *
   * @since 0.1.0
   * @category constructors
   */
  transportFailure
} from "./internal/httpFailures.js"

// ---------------------------------------------------------------------------
// Retry-After
// ---------------------------------------------------------------------------

const SECONDS = /^\d+(\.\d+)?$/

/**
 * The wait a response asks for, in milliseconds: `retry-after-ms`, else `Retry-After` as seconds
 * or as an HTTP date (relative to `nowMillis`; a date in the past is 0). Nonsense is `undefined`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const retryAfterMillis = (headers: Headers, nowMillis: number): number | undefined => {
  const ms = headers["retry-after-ms"]?.trim()
  if (ms !== undefined && SECONDS.test(ms)) return Number(ms)
  const value = headers["retry-after"]?.trim()
  if (value === undefined || value.length === 0) return undefined
  if (SECONDS.test(value)) return Math.round(Number(value) * 1000)
  const date = Date.parse(value)
  if (Number.isNaN(date)) return undefined
  return Math.max(0, date - nowMillis)
}

/**
 * The wait before a retry: the schedule's delay, or longer when the service asked for a
 * longer wait (capped at `maxRetryAfterMillis`), in whole milliseconds.
 *
 * @since 0.1.0
 * @category constructors
 */
export const retryWaitMillis = (
  delayMillis: number,
  retryAfter: number | undefined,
  maxRetryAfterMillis: number
): number => Math.ceil(retryAfter === undefined ? delayMillis : Math.max(delayMillis, Math.min(retryAfter, maxRetryAfterMillis)))

/**
 * What the error of a non-2xx response holds: the `kind` of its status
 * ({@link statusKind}); its status, the message of its body ({@link errorMessage}), the body cut
 * to `Secrets.RAW_LIMIT`, its request id, all scrubbed of `secrets` before anything is cut (a key
 * across the cut leaves no prefix; the peer chooses every header value); and, for `rate-limited`
 * and `server-error` only, the wait it asks for ({@link retryAfterMillis} at `nowMillis`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const statusFailure = (
  response: { readonly status: number; readonly statusText: string; readonly headers: Headers; readonly body: string },
  options: { readonly secrets: ReadonlyArray<string>; readonly nowMillis: number }
): {
  readonly kind: StatusKind
  readonly status: number
  readonly message: string
  readonly body: string
  readonly requestId: string | undefined
  readonly retryAfterMillis: number | undefined
} => {
  const kind = statusKind(response.status)
  return {
    kind,
    ...failedResponse(response, options.secrets),
    retryAfterMillis: kind === "rate-limited" || kind === "server-error"
      ? retryAfterMillis(response.headers, options.nowMillis)
      : undefined
  }
}

/**
 * The defaults of the HTTP client: a 30 s time-out per attempt; 2 retries, exponential from
 * 500 ms, factor 2, jittered, each wait capped at 8 s; a `Retry-After` honoured up to 60 s;
 * response bodies up to 4 MiB.
 *
 * @since 0.1.0
 * @category models
 */
export const defaults = {
  timeoutMillis: 30_000,
  maxRetryAfterMillis: 60_000,
  retry: { initialMillis: 500, factor: 2, maxDelayMillis: 8_000, retries: 2 },
  maxResponseSize: 4 * 1024 * 1024
} as const

// ---------------------------------------------------------------------------
// Idempotency-Key
// ---------------------------------------------------------------------------

export {
  /**
   * The longest `Idempotency-Key` accepted: 255 characters.
   *
   * @since 0.1.0
   * @category models
   */
  MAX_IDEMPOTENCY_KEY_LENGTH,
  /**
   * Whether a caller's `Idempotency-Key` may be sent.
   *
   * @since 0.1.0
   * @category guards
   */
  isIdempotencyKey,
  /**
   * Why a caller's `Idempotency-Key` is refused (nothing is sent).
   *
   * @since 0.1.0
   * @category models
   */
  idempotencyKeyMessage,
  /**
   * The `Idempotency-Key` of a creating call.
   *
   * @since 0.1.0
   * @category constructors
   */
  idempotencyKeyFor,
  /**
   * The `Idempotency-Key` a request carried.
   *
   * @since 0.1.0
   * @category constructors
   */
  idempotencyKeyOf
} from "./internal/idempotencyKey.js"

// ---------------------------------------------------------------------------
// What the client sends and traces
// ---------------------------------------------------------------------------

/**
 * The request headers that carry a key (or a value the caller chose as one): redacted in traces
 * whatever the caller configured.
 *
 * @since 0.1.0
 * @category models
 */
export const keyHeaders = ["authorization", "x-api-key", "idempotency-key"] as const

/**
 * The header names to redact in traces: the caller's, the {@link keyHeaders} they lack, and every
 * other header's value (`/^/`): a response header's value is the peer's to choose, and a service
 * may echo the key in any of them. The names stay visible.
 *
 * @since 0.1.0
 * @category constructors
 */
export const redactedHeaders = (names: ReadonlyArray<string | RegExp>): ReadonlyArray<string | RegExp> => [
  ...names,
  ...keyHeaders.filter((name) => !names.includes(name)),
  /^/
]

/**
 * What the error of `getSession` holds in a dialect without a retrieve operation: a 404
 * (`not-found`) with no body, nothing sent.
 *
 * @since 0.1.0
 * @category constructors
 */
export const noRetrieve = (dialectName: string): {
  readonly status: 404
  readonly message: string
  readonly body: ""
} => ({ status: 404, message: `The ${dialectName} dialect has no retrieve operation: nothing was sent`, body: "" })

/**
 * The environment variables of the HTTP client's configuration: the base URL and the dialect's
 * name (`documented` or `observed`).
 *
 * @since 0.1.0
 * @category models
 */
export const environment = {
  baseUrl: "AGENT_SESSION_BASE_URL",
  dialect: "AGENT_SESSION_DIALECT"
} as const

// ---------------------------------------------------------------------------
// Requests and responses of the client
// ---------------------------------------------------------------------------

/**
 * The headers of every request the client sends: the key in the dialect's auth header
 * (`authorization: Bearer` or `x-api-key`), the `User-Agent`, `accept: application/json`,
 * and the `Idempotency-Key` of a creating call.
 *
 * @since 0.1.0
 * @category constructors
 */
export const requestHeaders = (options: {
  readonly authHeader: readonly [name: string, value: string]
  readonly userAgent: string
  readonly idempotencyKey?: string | undefined
}): Record<string, string> => {
  const [name, value] = options.authHeader
  const headers: Record<string, string> = { [name]: value, "user-agent": options.userAgent, accept: "application/json" }
  if (options.idempotencyKey !== undefined) headers["idempotency-key"] = options.idempotencyKey
  return headers
}
