/**
 * The one place where HTTP failures become the SDK's typed errors: a non-2xx
 * response by its status, a transport failure, a 2xx whose body does not decode. The rules (which
 * status is which kind, the message of a body, `Retry-After`, scrubbing) are the protocol core's
 * (`Http`, `Secrets`); this module builds the errors.
 */
import * as HttpClientError from "@effect/platform/HttpClientError"
import type * as Headers from "@effect/platform/Headers"
import * as Duration from "effect/Duration"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import {
  BadRequest,
  Conflict,
  Forbidden,
  type HttpStatusError,
  NotFound,
  PayloadTooLarge,
  RateLimited,
  ResponseDecodeError,
  ServerError,
  TransportError,
  Unauthorized,
  UnexpectedStatus
} from "../Errors.js"
import { formatIssues } from "./schema.js"
import { Http, Secrets } from "effect-agent-session-core"

/** Text from the service without any key (`Secrets.scrub` of the protocol core). */
export const scrub = Secrets.scrub

/**
 * The wait a response asks for (`Http.retryAfterMillis`): `retry-after-ms`, else
 * `Retry-After` as seconds or an HTTP date; nonsense is `None`.
 */
export const retryAfter = (headers: Headers.Headers, nowMillis: number): Option.Option<Duration.Duration> =>
  Option.map(Option.fromNullable(Http.retryAfterMillis(headers, nowMillis)), Duration.millis)

// ---------------------------------------------------------------------------
// Status -> error
// ---------------------------------------------------------------------------

/** What the mapping needs to know of a non-2xx response. */
interface FailedResponse {
  readonly status: number
  readonly statusText: string
  readonly headers: Headers.Headers
  /** The whole body as text. */
  readonly body: string
}

/**
 * Maps a non-2xx response to its typed error. The message and the body (cut to
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
  const kept = Http.failedResponse(response, options.secrets)
  const fields = { ...kept, requestId: Option.fromNullable(kept.requestId), operation: options.operation }
  switch (Http.statusKind(kept.status)) {
    case "bad-request":
      return new BadRequest(fields)
    case "unauthorized":
      return new Unauthorized(fields)
    case "forbidden":
      return new Forbidden(fields)
    case "not-found":
      return new NotFound(fields)
    case "conflict":
      return new Conflict(fields)
    case "payload-too-large":
      return new PayloadTooLarge(fields)
    case "rate-limited":
      return new RateLimited({ ...fields, retryAfter: retryAfter(response.headers, options.nowMillis) })
    case "server-error":
      return new ServerError({ ...fields, retryAfter: retryAfter(response.headers, options.nowMillis) })
    case "unexpected-status":
      return new UnexpectedStatus(fields)
  }
}

// ---------------------------------------------------------------------------
// Transport and decoding
// ---------------------------------------------------------------------------

/** A transport failure (no response) as `TransportError`, its message scrubbed. */
export const fromRequestError = (
  error: HttpClientError.RequestError,
  options: { readonly operation: string; readonly secrets: ReadonlyArray<string> }
): TransportError => {
  const { cause, description, reason, request } = error
  return new TransportError({
    operation: options.operation,
    message: Http.transportMessage(
      { description: description ?? `${reason} error`, cause, method: request.method, url: request.url },
      options.secrets
    )
  })
}


/** The body and status of the 2xx response whose decoding failed, when known (`Http.receivedBody`). */
export type DecodedResponse = Http.ReceivedBody

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
    ...Http.undecodedResponse(status, message, body, options.secrets)
  })
}
