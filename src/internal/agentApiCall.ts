/**
 * One call of `AgentApi` on the wire: the platform `HttpClient` with the auth header, the
 * `User-Agent` and the `Idempotency-Key`; every response handled before the contract decodes it (a
 * non-2xx becomes its typed error, a 2xx body is read within the limit and kept for a possible
 * `ResponseDecodeError`); and every failure of the derived client mapped to an
 * {@link AttemptError}. The call's context (`HttpCall.Attempt`) is a fiber ref set by its attempt.
 */
import * as Headers from "@effect/platform/Headers"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientError from "@effect/platform/HttpClientError"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as ParseResult from "effect/ParseResult"
import * as Predicate from "effect/Predicate"
import type * as Redacted from "effect/Redacted"
import type { HttpCall } from "effect-agent-session-core/shell"
import type * as Dialect from "../Dialect.js"
import {
  type HttpStatusError,
  type InvalidRequest,
  isAgentSessionError,
  type RequestTimeout,
  type ResponseDecodeError,
  ResponseTooLarge,
  type TransportError
} from "../Errors.js"
import { buffered, readBounded } from "./body.js"
import { fromContractFailure, fromRequestError, fromStatus } from "../../binding/internal/httpErrors.js"
import { formatIssues } from "./schema.js"
import { userAgent } from "./version.js"

/**
 * What one attempt of a call can fail with, besides a missing key: the contract refused the
 * payload (`InvalidRequest`), a status, the transport, the time-out, the body.
 */
export type AttemptError =
  | InvalidRequest
  | HttpStatusError
  | TransportError
  | RequestTimeout
  | ResponseDecodeError
  | ResponseTooLarge

/** One attempt of one operation, as the `HttpClient` below reads it (`HttpCall.Attempt`). */
export type CallInfo = HttpCall.Attempt<Redacted.Redacted<string>>

/**
 * The call of the attempt running in this fiber, read by the `HttpClient` below. A fiber ref,
 * not a service: each attempt runs in a fiber of its own (timeout.ts), which sets it directly.
 */
export const currentCall: FiberRef.FiberRef<CallInfo | undefined> = FiberRef.unsafeMake<CallInfo | undefined>(undefined)

/** The call of this attempt (a request outside an attempt would be a bug of this module). */
const Call: Effect.Effect<CallInfo> = FiberRef.getWith(
  currentCall,
  (call) => call === undefined ? Effect.dieMessage("AgentApi: a request outside an attempt") : Effect.succeed(call)
)

/**
 * What happens to every response before the contract decodes it: a non-2xx becomes its typed
 * error here (so the contract never sees an undeclared status), and a 2xx is handed on as a 200
 * (any 2xx is success), held in memory, with its body kept for a possible
 * `ResponseDecodeError`.
 */
const handleResponse = (
  response: HttpClientResponse.HttpClientResponse,
  call: CallInfo,
  maxResponseSize: number
): Effect.Effect<HttpClientResponse.HttpClientResponse, AttemptError> => {
  const { headers, status } = response
  // The body is read within the limit (defect: unbounded bodies); an error body is cut at it.
  return Effect.matchEffect(readBounded(response, maxResponseSize, headers), {
    onFailure: (error): Effect.Effect<never, AttemptError> =>
      error._tag === "OverLimit"
        ? Effect.fail(
          new ResponseTooLarge({
            operation: call.operation,
            status,
            size: error.size,
            limit: maxResponseSize
          })
        )
        : Effect.fail(fromRequestError(error, call, status)),
    onSuccess: (bytes) => {
      const received = call.receive(status, headers, bytes)
      if (received._tag === "Failure") {
        return Effect.flatMap(Clock.currentTimeMillis, (nowMillis) =>
          Effect.fail(fromStatus(call.statusFailure(received.response, nowMillis))))
      }
      return Effect.succeed(buffered(response.request, 200, headers, bytes))
    }
  })
}

/** The platform client with the auth header, the `User-Agent`, and the status mapping. */
export const serviceClient = (httpClient: HttpClient.HttpClient, dialect: Dialect.Dialect, maxResponseSize: number) => {
  return httpClient.pipe(
    HttpClient.mapRequestEffect((request) =>
      Effect.map(Call, (call) => {
        const headers = call.requestHeaders(dialect.auth, userAgent)
        return HttpClientRequest.setHeaders(request, headers)
      })
    ),
    HttpClient.transformResponse((effect) =>
      Effect.flatMap(Call, (call) =>
        Effect.matchEffect(effect, {
          onFailure: (error) =>
            error._tag === "RequestError"
              ? Effect.fail(fromRequestError(error, call))
              // A client that filters statuses itself reports the response: map it the same way.
              : handleResponse(error.response, call, maxResponseSize),
          onSuccess: (response) => handleResponse(response, call, maxResponseSize)
        }))
    )
  )
}

const API_ERROR_STATUS: Record<string, number> = {
  BadRequest: 400,
  Unauthorized: 401,
  Forbidden: 403,
  NotFound: 404,
  Conflict: 409,
  PayloadTooLarge: 413,
  RateLimited: 429,
  Unavailable: 503
}

/**
 * Everything the derived client can fail with, as an {@link AttemptError}: ours pass through; a
 * `ParseError` before any response is a payload the contract refused (`InvalidRequest`), after
 * a 2xx a `ResponseDecodeError`; platform errors become `TransportError` or
 * `ResponseDecodeError`; a decoded contract error (never reached: statuses are mapped first)
 * by its status.
 */
export const toAttemptError = (error: unknown, call: CallInfo): Effect.Effect<never, AttemptError> => {
  // Only the client above fails with ours: a status, the transport or the body (handleResponse).
  if (isAgentSessionError(error)) return Effect.fail(error as AttemptError)
  if (ParseResult.isParseError(error)) {
    return Effect.fail(fromContractFailure(call.contractFailure(formatIssues(error))))
  }
  if (HttpClientError.isHttpClientError(error)) {
    if (error._tag === "RequestError") return Effect.fail(fromRequestError(error, call))
    const problem = error.description ?? `${error.reason} error reading the response`
    return Effect.fail(fromContractFailure(call.contractFailure(problem, error.response.status)))
  }
  if (Predicate.hasProperty(error, "_tag")) {
    const status = typeof error._tag === "string" ? API_ERROR_STATUS[error._tag] : undefined
    if (status !== undefined) {
      const message = Predicate.hasProperty(error, "error") && typeof error.error === "string" ? error.error : ""
      const response = { status, statusText: "", headers: Headers.empty, body: JSON.stringify({ error: message }) }
      return Effect.flatMap(Clock.currentTimeMillis, (nowMillis) =>
        Effect.fail(fromStatus(call.statusFailure(response, nowMillis))))
    }
  }
  return Effect.die(error)
}
