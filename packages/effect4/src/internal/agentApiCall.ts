/**
 * One call of `AgentApi` on the wire: the `HttpClient` with the auth header, the `User-Agent` and
 * the `Idempotency-Key`; every response handled before the contract decodes it (a non-2xx becomes
 * its typed error, a 2xx body is read within the limit and kept for a possible
 * `ResponseDecodeError`); and every failure of the derived client mapped to an
 * {@link AttemptError}. The call's context (`HttpCall.Attempt`) is a reference set by its attempt.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientError from "effect/http/HttpClientError"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as HttpClientResponse from "effect/http/HttpClientResponse"
import type * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import { HttpBody, type HttpCall } from "effect-agent-session-core/shell"
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
import { readBounded } from "./body.js"
import { fromContractFailure, fromRequestError, fromStatus } from "../../binding/internal/httpErrors.js"
import { formatIssue } from "./schema.js"
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

// ---------------------------------------------------------------------------
// The per-call context read by the HttpClient
// ---------------------------------------------------------------------------

/** One attempt of one operation, as the `HttpClient` below reads it (`HttpCall.Attempt`). */
export type CallInfo = HttpCall.Attempt<Redacted.Redacted<string>>

/** The call of the attempt running in this fiber, read by the `HttpClient` below. */
export const CurrentCall = Context.Reference<CallInfo | undefined>("effect-agent-session/internal/AgentApi/CurrentCall", {
  defaultValue: () => undefined
})

/** The call of this attempt (a request outside an attempt would be a bug of this module). */
const Call: Effect.Effect<CallInfo> = Effect.flatMap(
  Effect.service(CurrentCall),
  (call) => call === undefined ? Effect.die(new Error("AgentApi: a request outside an attempt")) : Effect.succeed(call)
)

// ---------------------------------------------------------------------------
// Responses
// ---------------------------------------------------------------------------

/**
 * What happens to every response before the contract decodes it: a non-2xx becomes its typed
 * error here (so the contract never sees a status it does not declare), and a 2xx is handed on
 * as a 200 (any 2xx is success), its body read within the limit and kept for a possible
 * `ResponseDecodeError`.
 */
const handleResponse = (
  response: HttpClientResponse.HttpClientResponse,
  call: CallInfo,
  maxResponseSize: number
): Effect.Effect<HttpClientResponse.HttpClientResponse, AttemptError> => {
  const { headers, status } = response
  return Effect.matchEffect(readBounded(response, maxResponseSize), {
    onFailure: (error): Effect.Effect<never, AttemptError> =>
      "_tag" in error && error._tag === "OverLimit"
        ? Effect.fail(new ResponseTooLarge({ operation: call.operation, status, size: error.size, limit: maxResponseSize }))
        : Effect.fail(fromRequestError(error as HttpClientError.HttpClientError, call, status)),
    onSuccess: (bytes) => {
      const received = call.receive(status, headers, bytes)
      if (received._tag === "Failure") {
        return Effect.flatMap(Effect.clockWith((clock) => Effect.succeed(clock.currentTimeMillisUnsafe())), (nowMillis) =>
          Effect.fail(fromStatus(call.statusFailure(received.response, nowMillis))))
      }
      return Effect.succeed(
        HttpClientResponse.fromWeb(
          response.request,
          new Response(bytes.byteLength === 0 ? null : HttpBody.ownArrayBuffer(bytes), { status: 200, headers })
        )
      )
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
          onFailure: (error: HttpClientError.HttpClientError) =>
            error.response === undefined
              ? Effect.fail(fromRequestError(error, call))
              // A client that filters statuses itself reports the response: map it the same way.
              : handleResponse(error.response, call, maxResponseSize),
          onSuccess: (response) => handleResponse(response, call, maxResponseSize)
        }))
    )
  )

/**
 * Everything the derived client can fail with, as an {@link AttemptError}: ours pass through; a
 * `SchemaError` before any response is a payload the contract refused (`InvalidRequest`), after a
 * 2xx a `ResponseDecodeError`; an `HttpClientError` is a `TransportError` or a
 * `ResponseDecodeError`. A decoded contract error cannot come (statuses are mapped first): it is
 * a defect.
 */
export const toAttemptError = (error: unknown, call: CallInfo): Effect.Effect<never, AttemptError> => {
  // Only the client above fails with ours: a status, the transport or the body (handleResponse).
  if (isAgentSessionError(error)) return Effect.fail(error as AttemptError)
  if (Schema.isSchemaError(error)) {
    return Effect.fail(fromContractFailure(call.contractFailure(formatIssue(error.issue))))
  }
  if (HttpClientError.isHttpClientError(error)) {
    const { response } = error
    if (response === undefined) return Effect.fail(fromRequestError(error, call))
    return Effect.fail(fromContractFailure(call.contractFailure(error.message, response.status)))
  }
  return Effect.die(error)
}
