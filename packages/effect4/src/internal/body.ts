/**
 * Reading an HTTP response body within a size limit, as the protocol core's `HttpBody.bodyPlan`
 * says: a success announced over the limit is refused unread, a body the transport frames is read
 * whole, any other is streamed and stopped at the first byte past the limit; so a huge or
 * never-ending body costs at most the limit in memory.
 */
import * as Effect from "effect/Effect"
import type * as Headers from "effect/http/Headers"
import type * as HttpClientError from "effect/http/HttpClientError"
import type * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as HttpClientResponse from "effect/http/HttpClientResponse"
import * as Stream from "effect/Stream"
import { Http } from "effect-agent-session-core"
import { HttpBody } from "effect-agent-session-core/shell"

/** The default largest response body. */
export const defaultMaxResponseSize: number = Http.defaults.maxResponseSize

/** A body over the limit: the bytes read (or announced) when reading stopped. */
export type OverLimit = HttpBody.OverLimit

/** A read held to the limit (`HttpBody.BodyReader`), as an effect. */
const settle = <A>(read: A | OverLimit): Effect.Effect<A, OverLimit> =>
  HttpBody.isOverLimit(read) ? Effect.fail(read) : Effect.succeed(read)

/**
 * Reads a body of at most `limit` bytes, as `HttpBody.BodyReader` holds it: a success refused unread
 * when announced over the limit, read whole when the transport frames it, else streamed and
 * stopped at the first byte past the limit; of any other status only the first `limit` bytes are
 * kept. `headers` are the response's, when the caller has them already.
 */
export const readBounded = (
  response: HttpClientResponse.HttpClientResponse,
  limit: number,
  headers?: Headers.Headers
): Effect.Effect<Uint8Array, HttpClientError.HttpClientError | OverLimit> =>
  Effect.suspend(() => {
    const body = new HttpBody.BodyReader(response.status, headers ?? response.headers, limit)
    if (body.plan === "refuse") {
      // Not read at all: the stream is opened (its reader taken) and closed at once, so that the
      // request is released; `Stream.take(stream, 0)` never opens it, which leaves a `fetch`
      // body's connection open.
      return Effect.andThen(Effect.scoped(Stream.toPull(response.stream)), Effect.fail(body.refused()))
    }
    if (body.plan === "whole") {
      return Effect.flatMap(response.arrayBuffer, (buffer) => settle(body.whole(new Uint8Array(buffer))))
    }
    return response.stream.pipe(
      Stream.runForEachWhile((bytes) => settle(body.push(bytes))),
      Effect.map(() => body.bytes())
    )
  })

/**
 * A response whose body was read (by {@link readBounded}): `status` and `headers` as given, the
 * body served from `bytes`.
 */
export const buffered = (
  request: HttpClientRequest.HttpClientRequest,
  status: number,
  headers: Headers.Headers,
  bytes: Uint8Array
): HttpClientResponse.HttpClientResponse =>
  HttpClientResponse.fromWeb(request, new Response(bytes.byteLength === 0 ? null : HttpBody.ownArrayBuffer(bytes), { status, headers }))
