/**
 * The one place where HTTP failures become the SDK's typed errors: a non-2xx
 * response by its status, a failure without a response, a 2xx whose body does not decode. What
 * each holds (its kind, message, body, request id, `Retry-After`, whether the request never left,
 * every key out) is the protocol core's (`Http.statusFailure`, `Http.transportFailure`,
 * `Http.contractFailure`); this module only builds the error classes.
 */
import * as Duration from "effect/Duration"
import * as Option from "effect/Option"
import { Failures, Http } from "effect-agent-session-core"
import type { HttpCall } from "effect-agent-session-shell"
import {
  BadRequest,
  Conflict,
  Forbidden,
  type HttpStatusError,
  InvalidRequest,
  NotFound,
  PayloadTooLarge,
  RateLimited,
  ResponseDecodeError,
  ServerError,
  TransportError,
  Unauthorized,
  UnexpectedStatus
} from "../../src/Errors.js"
import { type HttpClientError, httpFailureOf, optionFromNullish } from "../../src/internal/line.js"

/** The error class of each kind of status but the two that carry a `Retry-After`. */
const STATUS_ERRORS = {
  "bad-request": BadRequest,
  "unauthorized": Unauthorized,
  "forbidden": Forbidden,
  "not-found": NotFound,
  "conflict": Conflict,
  "payload-too-large": PayloadTooLarge,
  "unexpected-status": UnexpectedStatus
} as const

/** A non-2xx response's typed error, of what it holds (`HttpCall.Attempt.statusFailure`, every key out). */
export const fromStatus = (failure: HttpCall.StatusFailure): HttpStatusError => {
  const { kind, requestId, retryAfterMillis, ...kept } = failure
  const fields = { ...kept, requestId: optionFromNullish(requestId) }
  if (kind !== "rate-limited" && kind !== "server-error") return new STATUS_ERRORS[kind](fields)
  const retryAfter = Option.map(optionFromNullish(retryAfterMillis), Duration.millis)
  return kind === "rate-limited" ? new RateLimited({ ...fields, retryAfter }) : new ServerError({ ...fields, retryAfter })
}

/**
 * A failure without a response as `TransportError` (`Http.transportFailure`: its message
 * scrubbed), marked when the request provably never left (`Failures.withNotSent`, the create
 * policy). `readingStatus`: the failure came while reading the body of a response with that status.
 */
export const fromRequestError = (
  error: HttpClientError.HttpClientError,
  options: { readonly operation: string; readonly secrets: ReadonlyArray<string> },
  readingStatus?: number
): TransportError => {
  const { message, notSent } = Http.transportFailure({ ...httpFailureOf(error), readingStatus }, options.secrets)
  return Failures.withNotSent(new TransportError({ operation: options.operation, message }), notSent)
}

/**
 * A failure of the contract's schema (`HttpCall.Attempt.contractFailure`): before any response,
 * the payload refused (`InvalidRequest`); after one, a `ResponseDecodeError` (its body, when kept).
 */
export const fromContractFailure = (failure: HttpCall.ContractFailure): InvalidRequest | ResponseDecodeError => {
  if (failure.kind === "invalid-request") return new InvalidRequest({ subject: failure.operation, message: failure.message })
  const { body, message, operation, status } = failure
  return new ResponseDecodeError({ operation, status, message, body })
}
