/**
 * The HTTP rules of the service's API: which status is which kind of error (U07), what an error
 * body's message is (U18), the wait `Retry-After` asks for (U21), which failures are retried and
 * which prove the service did not act (the create policy), the `Idempotency-Key` rules, how a
 * response body is read within its limit, and the defaults of the HTTP client. Each edition
 * builds its own error values from the kinds said here.
 *
 * @since 0.1.0
 */
import { scrub, truncateRaw } from "./Secrets.js"

/**
 * Response headers, by lower-case name.
 *
 * @since 0.1.0
 * @category models
 */
export type Headers = { readonly [name: string]: string | undefined }

/**
 * The kind of error a non-2xx status is (U07): 400 and 422 `bad-request`, 401 `unauthorized`, 403
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
 * The kind of error of a non-2xx status (U07).
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

/**
 * Whether a status is success: any 2xx (U07).
 *
 * @since 0.1.0
 * @category guards
 */
export const isSuccess = (status: number): boolean => status >= 200 && status < 300

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
// Error bodies (U18)
// ---------------------------------------------------------------------------

const MESSAGE_FIELDS = ["error", "message", "error_message", "error_description"] as const

const isRecord = (value: unknown): value is { readonly [key: string]: unknown } =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const nonBlank = (value: unknown): string | undefined =>
  typeof value === "string" && value.trim().length > 0 ? value.trim() : undefined

const fieldMessage = (value: unknown): string | undefined => {
  if (typeof value === "string") return nonBlank(value)
  // `{ "error": { "message": "..." } }` is common enough to read as well.
  if (isRecord(value)) return nonBlank(value["message"]) ?? nonBlank(value["error"]) ?? nonBlank(value["description"])
  return undefined
}

const parseJson = (text: string): { readonly value: unknown } | undefined => {
  try {
    return { value: JSON.parse(text) as unknown }
  } catch {
    return undefined
  }
}

/**
 * The message of an error body (U18): the first non-blank of `error`, `message`, `error_message`,
 * `error_description` (a string, or an object's `message`, `error` or `description`); else the
 * text body; else the status line. Cut by `Secrets.truncateRaw`; not scrubbed: the caller does that.
 *
 * @since 0.1.0
 * @category constructors
 */
export const errorMessage = (status: number, statusText: string, body: string): string => {
  const json = parseJson(body)
  if (json !== undefined && isRecord(json.value)) {
    for (const field of MESSAGE_FIELDS) {
      const found = fieldMessage(json.value[field])
      if (found !== undefined) return truncateRaw(found)
    }
  }
  const text = body.trim()
  if (text.length > 0) return truncateRaw(text)
  return `HTTP ${status}${statusText.length > 0 ? ` ${statusText}` : ""}`
}

/**
 * The request id a response carries (`x-request-id`, else `request-id`), if not blank. The peer
 * chose it: scrub it before keeping it.
 *
 * @since 0.1.0
 * @category constructors
 */
export const requestId = (headers: Headers): string | undefined =>
  nonBlank(headers["x-request-id"]) ?? nonBlank(headers["request-id"])

/**
 * What an HTTP status error keeps of a failed response (U07, U18), with every key out: the
 * status; the message of its body (`errorMessage`); the body cut to `Secrets.RAW_LIMIT`; the
 * request id, if any. Scrubbed (`Secrets.scrub`) before anything is cut, so that a key across the
 * cut leaves no prefix; the request id too, as the peer chooses every header value.
 *
 * @since 0.1.0
 * @category constructors
 */
export const failedResponse = (
  response: { readonly status: number; readonly statusText: string; readonly headers: Headers; readonly body: string },
  secrets: ReadonlyArray<string>
): { readonly status: number; readonly message: string; readonly body: string; readonly requestId: string | undefined } => {
  const { status } = response
  const body = scrub(response.body, secrets)
  const id = requestId(response.headers)
  return {
    status,
    message: scrub(errorMessage(status, scrub(response.statusText, secrets), body), secrets),
    body: truncateRaw(body),
    requestId: id === undefined ? undefined : truncateRaw(scrub(id, secrets))
  }
}

/**
 * What a `ResponseDecodeError` keeps of a 2xx response whose body does not match the contract:
 * the message (`The <status> response does not match the contract: <problem>`) and the body, each
 * scrubbed and cut.
 *
 * @since 0.1.0
 * @category constructors
 */
export const undecodedResponse = (
  status: number,
  problem: string,
  body: string,
  secrets: ReadonlyArray<string>
): { readonly message: string; readonly body: string } => ({
  message: truncateRaw(scrub(`The ${status} response does not match the contract: ${problem}`, secrets)),
  body: truncateRaw(scrub(body, secrets))
})

// ---------------------------------------------------------------------------
// Retry-After (U21)
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
 * The wait before a retry (U21): the schedule's delay, or longer when the service asked for a
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
 * The defaults of the HTTP client: a 30 s time-out per attempt (U22); 2 retries, exponential from
 * 500 ms, factor 2, jittered, each wait capped at 8 s; a `Retry-After` honoured up to 60 s (U21);
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
// Failures without a response
// ---------------------------------------------------------------------------

/**
 * The messages along a chain of causes (`fetch failed: connect ECONNREFUSED ...`): each cause's
 * `message`, and its `code` when the message does not name it, four causes deep at most.
 *
 * @since 0.1.0
 * @category constructors
 */
export const causeMessages = (cause: unknown, depth = 0): ReadonlyArray<string> => {
  if (depth > 3 || !isRecord(cause) && !(cause instanceof Error)) return []
  const message = "message" in cause && typeof cause.message === "string" ? cause.message : ""
  const code = "code" in cause && typeof cause.code === "string" ? cause.code : ""
  const own = [
    ...(message.length > 0 ? [message] : []),
    ...(code.length > 0 && !message.includes(code) ? [code] : [])
  ]
  const next = "cause" in cause ? causeMessages(cause.cause, depth + 1) : []
  return [...own, ...next]
}

/** An address without its query string or fragment (which may carry a key). */
const withoutQuery = (url: string): string => {
  const cut = url.search(/[?#]/)
  return cut === -1 ? url : url.slice(0, cut)
}

/**
 * The message of a failure without a response: what the client said, then each cause's message
 * along the chain (`causeMessages`), each once, then the method and the address without its query
 * (`(POST https://host/path)`), every key scrubbed out.
 *
 * @since 0.1.0
 * @category constructors
 */
export const transportMessage = (
  failure: { readonly description: string; readonly cause: unknown; readonly method: string; readonly url: string },
  secrets: ReadonlyArray<string>
): string => {
  const parts = [failure.description, ...causeMessages(failure.cause)].filter((part, i, all) =>
    part.length > 0 && all.indexOf(part) === i
  )
  return scrub(`${parts.join(": ")} (${failure.method} ${withoutQuery(failure.url)})`, secrets)
}

/**
 * Error codes of a request that provably never reached the service: no connection was made
 * (refused, no route, no such host, the connect phase timed out), so nothing was written.
 */
const NOT_SENT_CODES: ReadonlySet<string> = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EAI_NONAME",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EADDRNOTAVAIL",
  "UND_ERR_CONNECT_TIMEOUT",
  "ERR_INVALID_URL"
])

const codesOf = (cause: unknown, depth = 0): ReadonlyArray<string> => {
  if (depth > 4 || !isRecord(cause) && !(cause instanceof Error)) return []
  const own = "code" in cause && typeof cause.code === "string" ? [cause.code] : []
  const errors = "errors" in cause && Array.isArray(cause.errors)
    ? cause.errors.flatMap((inner: unknown) => codesOf(inner, depth + 1))
    : []
  const next = "cause" in cause ? codesOf(cause.cause, depth + 1) : []
  return [...own, ...errors, ...next]
}

/**
 * Whether a transport failure's cause proves the request never left: every error code along its
 * causes (and `AggregateError`s) says no connection was made, and there is at least one.
 *
 * @since 0.1.0
 * @category guards
 */
export const provablyNotSent = (cause: unknown): boolean => {
  const codes = codesOf(cause)
  return codes.length > 0 && codes.every((code) => NOT_SENT_CODES.has(code))
}

// ---------------------------------------------------------------------------
// Idempotency-Key
// ---------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------
// Response bodies
// ---------------------------------------------------------------------------

/**
 * A size limit from an option: a finite number >= 1 (rounded down), else the fallback.
 *
 * @since 0.1.0
 * @category constructors
 */
export const limitOf = (value: number | undefined, fallback: number = defaults.maxResponseSize): number =>
  value !== undefined && Number.isFinite(value) && value >= 1 ? Math.floor(value) : fallback

const DIGITS = /^\d+$/

/**
 * The announced length of a body, when `content-length` is a plain decimal number.
 *
 * @since 0.1.0
 * @category constructors
 */
export const announcedLength = (headers: Headers): number | undefined => {
  const value = headers["content-length"]?.trim()
  return value !== undefined && DIGITS.test(value) ? Number(value) : undefined
}

/** Whether the body reaches the client as sent (no `content-encoding` the client may decode). */
const unencoded = (headers: Headers): boolean => {
  const encoding = headers["content-encoding"]?.trim().toLowerCase()
  return encoding === undefined || encoding === "" || encoding === "identity"
}

/**
 * How to read a response body within `limit` bytes. `truncate` keeps the first `limit` bytes of a
 * longer body (error bodies, of which only a prefix is kept); otherwise a longer body is refused.
 * - `refuse`: the announced length is over the limit: not read at all (`size` is that length).
 * - `whole`: framed by the transport within the limit (a `content-length`, no `content-encoding`):
 *   read in one call, checked again after reading.
 * - `stream`: read piece by piece, stopping at the first byte past the limit (an encoded body may
 *   be decoded to any size).
 *
 * @since 0.1.0
 * @category constructors
 */
export const bodyPlan = (
  headers: Headers,
  limit: number,
  truncate: boolean
): { readonly _tag: "refuse"; readonly size: number } | { readonly _tag: "whole" } | { readonly _tag: "stream" } => {
  const announced = announcedLength(headers)
  if (announced !== undefined && announced > limit && !truncate) return { _tag: "refuse", size: announced }
  if (announced !== undefined && announced <= limit && unencoded(headers)) return { _tag: "whole" }
  return { _tag: "stream" }
}

// ---------------------------------------------------------------------------
// Reading a body within its limit
// ---------------------------------------------------------------------------

/**
 * A body read whole (the `whole` plan of {@link bodyPlan}) held to its limit: the bytes, cut to
 * `limit` when truncating; `undefined` when longer without truncating (its size is then the
 * bytes' length).
 *
 * @since 0.1.0
 * @category constructors
 */
export const fitBody = (bytes: Uint8Array, limit: number, truncate: boolean): Uint8Array | undefined =>
  bytes.byteLength <= limit ? bytes : truncate ? bytes.subarray(0, limit) : undefined

/**
 * A body read piece by piece (the `stream` plan of {@link bodyPlan}) within `limit` bytes: each
 * piece is `push`ed as it arrives, and says whether to read on. Truncating, the first `limit`
 * bytes are kept and reading stops there; otherwise a body past the limit is over it at the first
 * piece that crosses it (`size` is then the bytes seen), and nothing past the limit is kept.
 *
 * @since 0.1.0
 * @category models
 */
export class BoundedBody {
  private readonly chunks: Array<Uint8Array> = []
  private seen = 0

  constructor(readonly limit: number, readonly truncate: boolean) {}

  /** The bytes seen so far (past the limit when {@link push} said `over`). */
  get size(): number {
    return this.seen
  }

  /** A piece arrived: `more` to read on, `done` when the kept prefix is full, `over` when past the limit. */
  push(bytes: Uint8Array): "more" | "done" | "over" {
    if (this.seen + bytes.length > this.limit) {
      if (!this.truncate) {
        this.seen += bytes.length
        return "over"
      }
      this.chunks.push(bytes.subarray(0, this.limit - this.seen))
      this.seen = this.limit
      return "done"
    }
    this.chunks.push(bytes)
    this.seen += bytes.length
    return this.seen < this.limit || !this.truncate ? "more" : "done"
  }

  /** The bytes kept, in one array (the piece itself when there was one). */
  bytes(): Uint8Array {
    const [first] = this.chunks
    if (this.chunks.length === 1 && first !== undefined) return first
    const out = new Uint8Array(this.seen)
    let offset = 0
    for (const chunk of this.chunks) {
      out.set(chunk, offset)
      offset += chunk.length
    }
    return out
  }
}

/**
 * The bytes as an `ArrayBuffer` of their own (for a web `Response`): the backing buffer itself
 * when it is exactly theirs, else a copy.
 *
 * @since 0.1.0
 * @category constructors
 */
export const ownArrayBuffer = (bytes: Uint8Array): ArrayBuffer => {
  const { buffer } = bytes
  if (buffer instanceof ArrayBuffer && bytes.byteOffset === 0 && bytes.byteLength === buffer.byteLength) return buffer
  const copy = new ArrayBuffer(bytes.byteLength)
  new Uint8Array(copy).set(bytes)
  return copy
}

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
 * The error message of `getSession` in a dialect without a retrieve operation (U10): nothing is
 * sent.
 *
 * @since 0.1.0
 * @category constructors
 */
export const noRetrieveMessage = (dialectName: string): string =>
  `The ${dialectName} dialect has no retrieve operation (U10): nothing was sent`

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
 * (`authorization: Bearer` or `x-api-key`), the `User-Agent` (U23), `accept: application/json`,
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

/**
 * The description of a transport failure met while reading a response's body.
 *
 * @since 0.1.0
 * @category constructors
 */
export const bodyReadFailed = (status: number): string => `reading the ${status} response body failed`

/**
 * A 2xx response as kept for a possible decode failure: its status, and its body decoded as text
 * only when read (most responses decode and are never read as text).
 *
 * @since 0.1.0
 * @category models
 */
export interface ReceivedBody {
  readonly status: number
  readonly body: string
}

const textDecoder = new TextDecoder()

/**
 * The {@link ReceivedBody} of a response's status and bytes.
 *
 * @since 0.1.0
 * @category constructors
 */
export const receivedBody = (status: number, bytes: Uint8Array): ReceivedBody => {
  let text: string | undefined
  return {
    status,
    get body() {
      return text ??= textDecoder.decode(bytes)
    }
  }
}
