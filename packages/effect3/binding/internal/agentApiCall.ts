/**
 * One call of `AgentApi` on the wire: the `HttpClient` with the auth header, the `User-Agent` and
 * the `Idempotency-Key`; every response handled before the contract decodes it (a non-2xx becomes
 * its typed error, a 2xx body is read within the limit and kept for a possible
 * `ResponseDecodeError`); and every failure of the derived client mapped to an
 * {@link AttemptError}. The call's context (`HttpCall.Attempt`) is set by its attempt
 * ({@link CurrentCall}).
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type * as Redacted from "effect/Redacted"
import { HttpCall } from "effect-agent-session-shell"
import type * as Dialect from "../../src/Dialect.js"
import {
  type HttpStatusError,
  type InvalidRequest,
  isAgentSessionError,
  type RequestTimeout,
  type ResponseDecodeError,
  ResponseTooLarge,
  type TransportError
} from "../../src/Errors.js"
import { buffered } from "../../src/internal/bufferedResponse.js"
import {
  attemptContext,
  declaredErrorResponse,
  HttpClient,
  HttpClientError,
  HttpClientRequest,
  type HttpClientResponse,
  readFailureMessage,
  responseOf,
  schemaFailureMessage
} from "../../src/internal/line.js"
import { userAgent } from "../../src/internal/version.js"
import { readBounded } from "./body.js"
import { fromContractFailure, fromRequestError, fromStatus } from "./httpErrors.js"

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
 * The call of the attempt running, read by the `HttpClient` below, with the header names the
 * attempt redacts (`HttpCall.redactedHeaders`); an attempt runs under its time-out through it.
 */
export const CurrentCall = attemptContext<CallInfo>(
  "effect-agent-session/internal/AgentApi/CurrentCall",
  "AgentApi: a request outside an attempt",
  HttpCall.redactedHeaders
)

/** The call of this attempt (a request outside an attempt would be a bug of this module). */
const Call: Effect.Effect<CallInfo> = CurrentCall.current

/**
 * What happens to every response before the contract decodes it: a non-2xx becomes its typed
 * error here (so the contract never sees a status it does not declare), and a 2xx is handed on
 * as a 200 (any 2xx is success), held in memory, with its body kept for a possible
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
        ? Effect.fail(new ResponseTooLarge({ operation: call.operation, status, size: error.size, limit: maxResponseSize }))
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

/** The client with the auth header, the `User-Agent`, the `Idempotency-Key`, and the status mapping. */
export const serviceClient = (httpClient: HttpClient.HttpClient, dialect: Dialect.Dialect, maxResponseSize: number) =>
  httpClient.pipe(
    HttpClient.mapRequestEffect((request) =>
      Effect.map(Call, (call) => {
        const headers = call.requestHeaders(dialect.auth, userAgent)
        return HttpClientRequest.setHeaders(request, headers)
      })
    ),
    HttpClient.transformResponse((effect) =>
      Effect.flatMap(Call, (call) =>
        Effect.matchEffect(effect, {
          onFailure: (error: HttpClientError.HttpClientError) => {
            const response = responseOf(error)
            return response === undefined
              ? Effect.fail(fromRequestError(error, call))
              // A client that filters statuses itself reports the response: map it the same way.
              : handleResponse(response, call, maxResponseSize)
          },
          onSuccess: (response) => handleResponse(response, call, maxResponseSize)
        }))
    )
  )

/**
 * Everything the derived client can fail with, as an {@link AttemptError}: ours pass through; a
 * schema's failure before any response is a payload the contract refused (`InvalidRequest`),
 * after a 2xx a `ResponseDecodeError`; an HTTP client failure is a `TransportError` or a
 * `ResponseDecodeError`; a decoded contract error (never reached: statuses are mapped first) by
 * its status where the line surfaces one (`declaredErrorResponse`), else a defect.
 */
export const toAttemptError = (error: unknown, call: CallInfo): Effect.Effect<never, AttemptError> => {
  // Only the client above fails with ours: a status, the transport or the body (handleResponse).
  if (isAgentSessionError(error)) return Effect.fail(error as AttemptError)
  const schemaProblem = schemaFailureMessage(error)
  if (schemaProblem !== undefined) return Effect.fail(fromContractFailure(call.contractFailure(schemaProblem)))
  if (HttpClientError.isHttpClientError(error)) {
    const response = responseOf(error)
    if (response === undefined) return Effect.fail(fromRequestError(error, call))
    return Effect.fail(fromContractFailure(call.contractFailure(readFailureMessage(error), response.status)))
  }
  const declared = declaredErrorResponse(error)
  if (declared !== undefined) {
    return Effect.flatMap(Clock.currentTimeMillis, (nowMillis) => Effect.fail(fromStatus(call.statusFailure(declared, nowMillis))))
  }
  return Effect.die(error)
}
