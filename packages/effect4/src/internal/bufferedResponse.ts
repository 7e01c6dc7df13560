/**
 * A response whose body was read within its limit (`body.ts`, `readBounded`), handed on as an
 * `HttpClientResponse` over a web `Response` of those bytes, for a decoder downstream (the
 * `HttpApiClient`).
 */
import type * as Headers from "effect/http/Headers"
import type * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as HttpClientResponse from "effect/http/HttpClientResponse"
import { HttpBody } from "effect-agent-session-shell"

/**
 * A response whose body was read (by `readBounded`): `status` and `headers` as given, the
 * body served from `bytes`.
 */
export const buffered = (
  request: HttpClientRequest.HttpClientRequest,
  status: number,
  headers: Headers.Headers,
  bytes: Uint8Array
): HttpClientResponse.HttpClientResponse =>
  HttpClientResponse.fromWeb(request, new Response(bytes.byteLength === 0 ? null : HttpBody.ownArrayBuffer(bytes), { status, headers }))
