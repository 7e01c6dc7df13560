/**
 * What a failed request says (`Http`'s error messages): the message of an error response's body
 * and its request id, and the message of a failure without a response, with whether it
 * proves the request never left. Re-exported by `Http`.
 */
import type { Headers } from "./httpTypes.js"
import { scrub, truncateRaw } from "../Secrets.js"

// ---------------------------------------------------------------------------
// Error bodies
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
 * The message of an error body: the first non-blank of `error`, `message`, `error_message`,
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
 * What an HTTP status error keeps of a failed response, with every key out: the
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
 * What a failure of the contract's schema holds. Before any response (`received` undefined) the
 * caller's payload did not match: `invalid-request`, the problem scrubbed. After one, the
 * response did not: `undecoded-response`, its status, the message
 * `The <status> response does not match the contract: <problem>` and its body (if kept), each
 * scrubbed and cut.
 *
 * @since 0.1.0
 * @category constructors
 */
export const contractFailure = (
  problem: string,
  received: { readonly status: number; readonly body?: string | undefined } | undefined,
  secrets: ReadonlyArray<string>
):
  | { readonly kind: "invalid-request"; readonly message: string }
  | { readonly kind: "undecoded-response"; readonly status: number; readonly message: string; readonly body: string } =>
  received === undefined
    ? { kind: "invalid-request", message: scrub(problem, secrets) }
    : {
      kind: "undecoded-response",
      status: received.status,
      message: truncateRaw(scrub(`The ${received.status} response does not match the contract: ${problem}`, secrets)),
      body: truncateRaw(scrub(received.body ?? "", secrets))
    }

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

/**
 * What a `TransportError` holds of a failure without a response, and whether it proves the
 * request never left. `reason` is the client's word for the failure (`Transport`, `Encode`,
 * `InvalidUrl`); the description, when the client gave none, is `<reason> error`. A request whose
 * address is invalid, or whose every error code says no connection was made
 * ({@link provablyNotSent}), never left. `readingStatus`: the failure came while reading the body
 * of a response with that status (`reading the <status> response body failed`): it was sent.
 *
 * @since 0.1.0
 * @category constructors
 */
export const transportFailure = (
  failure: {
    readonly reason: string
    readonly description?: string | undefined
    readonly cause: unknown
    readonly method: string
    readonly url: string
    readonly readingStatus?: number | undefined
  },
  secrets: ReadonlyArray<string>
): { readonly message: string; readonly notSent: boolean } => {
  const { readingStatus, reason } = failure
  const description = readingStatus !== undefined
    ? `reading the ${readingStatus} response body failed`
    : failure.description ?? `${reason} error`
  return {
    message: transportMessage({ ...failure, description }, secrets),
    notSent: readingStatus === undefined && (reason === "InvalidUrl" || provablyNotSent(failure.cause))
  }
}
