/**
 * The one place where HTTP failures become the SDK's typed errors (U07, U18, U21): a non-2xx
 * response by its status, a transport failure, a 2xx whose body does not decode.
 */
import * as HttpClientError from "@effect/platform/HttpClientError"
import type * as Headers from "@effect/platform/Headers"
import * as Duration from "effect/Duration"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Predicate from "effect/Predicate"
import {
  BadRequest,
  Conflict,
  Forbidden,
  type HttpStatusError,
  NotFound,
  PayloadTooLarge,
  RateLimited,
  redactSecrets,
  ResponseDecodeError,
  ServerError,
  TransportError,
  truncateRaw,
  Unauthorized,
  UnexpectedStatus
} from "../Errors.js"
import { formatIssues } from "./schema.js"

// ---------------------------------------------------------------------------
// Scrubbing
// ---------------------------------------------------------------------------

/** JSON members whose value is a secret, whatever the service put there. */
const SECRET_MEMBER =
  /("(?:api[_-]?key|apikey|x-api-key|access[_-]?token|refresh[_-]?token|token|secret|client[_-]?secret|password|authorization)"\s*:\s*)"(?:[^"\\]|\\.)*("?)/gi

/** A bearer credential written in text. */
const BEARER = /\b(Bearer\s+)[A-Za-z0-9._~+/=-]+/g

/**
 * Removes every known secret from text, the value of any JSON member named like a key
 * (`apiKey`, `token`, ...), and any `Bearer <token>`.
 */
export const scrub = (text: string, secrets: ReadonlyArray<string>): string =>
  redactSecrets(text, secrets)
    .replace(SECRET_MEMBER, (_match, prefix: string, closing: string) => `${prefix}"<redacted>${closing}`)
    .replace(BEARER, "$1<redacted>")

// ---------------------------------------------------------------------------
// Message (U18)
// ---------------------------------------------------------------------------

const MESSAGE_FIELDS = ["error", "message", "error_message", "error_description"] as const

const nonBlank = (u: unknown): Option.Option<string> =>
  typeof u === "string" && u.trim().length > 0 ? Option.some(u.trim()) : Option.none()

const fieldMessage = (value: unknown): Option.Option<string> => {
  if (typeof value === "string") return nonBlank(value)
  // `{ "error": { "message": "..." } }` is common enough to read as well.
  if (Predicate.isRecord(value)) {
    return Option.firstSomeOf([nonBlank(value.message), nonBlank(value.error), nonBlank(value.description)])
  }
  return Option.none()
}

const parseJson = (text: string): Option.Option<unknown> => {
  try {
    return Option.some(JSON.parse(text) as unknown)
  } catch {
    return Option.none()
  }
}

/**
 * The message of an error body (U18): the first non-blank of `error`, `message`,
 * `error_message`, `error_description`; else the text body; else the status line.
 */
export const errorMessage = (status: number, statusText: string, body: string): string => {
  const json = parseJson(body)
  if (Option.isSome(json) && Predicate.isRecord(json.value)) {
    const record = json.value
    for (const field of MESSAGE_FIELDS) {
      const found = fieldMessage(record[field])
      if (Option.isSome(found)) return truncateRaw(found.value)
    }
  }
  const text = body.trim()
  if (text.length > 0) return truncateRaw(text)
  return `HTTP ${status}${statusText.length > 0 ? ` ${statusText}` : ""}`
}

// ---------------------------------------------------------------------------
// Retry-After (U21)
// ---------------------------------------------------------------------------

const SECONDS = /^\d+(\.\d+)?$/

/**
 * The wait a response asks for: `retry-after-ms` (milliseconds), else `Retry-After` as seconds
 * or as an HTTP date (relative to `nowMillis`). A date in the past is zero; nonsense is `None`.
 */
export const retryAfter = (headers: Headers.Headers, nowMillis: number): Option.Option<Duration.Duration> => {
  const ms = headers["retry-after-ms"]?.trim()
  if (ms !== undefined && SECONDS.test(ms)) return Option.some(Duration.millis(Number(ms)))
  const value = headers["retry-after"]?.trim()
  if (value === undefined || value.length === 0) return Option.none()
  if (SECONDS.test(value)) return Option.some(Duration.millis(Math.round(Number(value) * 1000)))
  const date = Date.parse(value)
  if (Number.isNaN(date)) return Option.none()
  return Option.some(Duration.millis(Math.max(0, date - nowMillis)))
}

// ---------------------------------------------------------------------------
// Status -> error (U07)
// ---------------------------------------------------------------------------

/** What the mapping needs to know of a non-2xx response. */
export interface FailedResponse {
  readonly status: number
  readonly statusText: string
  readonly headers: Headers.Headers
  /** The whole body as text. */
  readonly body: string
}

/**
 * Maps a non-2xx response to its typed error (U07, U18, U21). The message and the body (cut to
 * 4 KiB) are scrubbed of `secrets` and of any JSON member named like a key.
 */
export const fromStatus = (
  response: FailedResponse,
  options: {
    readonly operation: string
    readonly secrets: ReadonlyArray<string>
    readonly nowMillis: number
  }
): HttpStatusError => {
  const { status } = response
  // Scrubbed before anything is cut: a key across the cut would otherwise leave its prefix.
  const body = scrub(response.body, options.secrets)
  const fields = {
    status,
    message: scrub(errorMessage(status, scrub(response.statusText, options.secrets), body), options.secrets),
    body: truncateRaw(body),
    // The peer chooses every header value: the key it may echo there is scrubbed too.
    requestId: Option.map(
      Option.firstSomeOf([
        nonBlank(response.headers["x-request-id"]),
        nonBlank(response.headers["request-id"])
      ]),
      (id) => truncateRaw(scrub(id, options.secrets))
    ),
    operation: options.operation
  }
  switch (status) {
    case 400:
    case 422:
      return new BadRequest(fields)
    case 401:
      return new Unauthorized(fields)
    case 403:
      return new Forbidden(fields)
    case 404:
      return new NotFound(fields)
    case 409:
      return new Conflict(fields)
    case 413:
      return new PayloadTooLarge(fields)
    case 429:
      return new RateLimited({ ...fields, retryAfter: retryAfter(response.headers, options.nowMillis) })
    default:
      return status >= 500 && status <= 599
        ? new ServerError({ ...fields, retryAfter: retryAfter(response.headers, options.nowMillis) })
        : new UnexpectedStatus(fields)
  }
}

// ---------------------------------------------------------------------------
// Transport and decoding
// ---------------------------------------------------------------------------

/** The messages along a chain of causes (`fetch failed: connect ECONNREFUSED ...`). */
const describeCause = (cause: unknown, depth = 0): ReadonlyArray<string> => {
  if (depth > 3 || !Predicate.isRecord(cause) && !(cause instanceof Error)) return []
  const message = Predicate.hasProperty(cause, "message") && typeof cause.message === "string"
    ? cause.message
    : ""
  const code = Predicate.hasProperty(cause, "code") && typeof cause.code === "string" ? cause.code : ""
  const own = [
    ...(message.length > 0 ? [message] : []),
    ...(code.length > 0 && !message.includes(code) ? [code] : [])
  ]
  const next = Predicate.hasProperty(cause, "cause") ? describeCause(cause.cause, depth + 1) : []
  return [...own, ...next]
}

/** A transport failure (no response) as `TransportError`, its message scrubbed. */
export const fromRequestError = (
  error: HttpClientError.RequestError,
  options: { readonly operation: string; readonly secrets: ReadonlyArray<string> }
): TransportError => {
  const parts = [
    error.description ?? `${error.reason} error`,
    ...describeCause(error.cause)
  ].filter((part, i, all) => part.length > 0 && all.indexOf(part) === i)
  const where = `${error.request.method} ${printablePath(error.request.url)}`
  return new TransportError({
    operation: options.operation,
    message: scrub(`${parts.join(": ")} (${where})`, options.secrets)
  })
}

const printablePath = (url: string): string => {
  const cut = url.search(/[?#]/)
  return cut === -1 ? url : url.slice(0, cut)
}

/** The body and status of the 2xx response whose decoding failed, when known. */
export interface DecodedResponse {
  readonly status: number
  readonly body: string
}

/** A 2xx body that does not match the contract as `ResponseDecodeError`. */
export const fromDecodeFailure = (
  error: ParseResult.ParseError | HttpClientError.ResponseError,
  response: Option.Option<DecodedResponse>,
  options: { readonly operation: string; readonly secrets: ReadonlyArray<string> }
): ResponseDecodeError => {
  const message = ParseResult.isParseError(error)
    ? formatIssues(error)
    : error.description ?? `${error.reason} error reading the response`
  const status = Option.match(response, {
    onNone: () => HttpClientError.isHttpClientError(error) && error._tag === "ResponseError" ? error.response.status : 0,
    onSome: (r) => r.status
  })
  const body = Option.match(response, { onNone: () => "", onSome: (r) => r.body })
  return new ResponseDecodeError({
    operation: options.operation,
    status,
    message: truncateRaw(scrub(`The ${status} response does not match the contract: ${message}`, options.secrets)),
    body: truncateRaw(scrub(body, options.secrets))
  })
}
