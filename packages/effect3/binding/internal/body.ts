/**
 * Reading an HTTP response body within a size limit: the limit is enforced while the body is
 * read (a `content-length` over it is refused before reading; otherwise reading stops at the
 * first chunk past it and the request is aborted), so a huge or never-ending body costs at most
 * the limit in memory.
 *
 * Which way a body is read is the protocol core's rule (`HttpBody.bodyPlan`). A body the transport
 * frames itself (a `content-length` within the limit, no `content-encoding`) is read whole in one
 * call (`arrayBuffer`) instead of as a stream: HTTP/1.1 ends such a body at the announced length,
 * so it cannot exceed the limit, and the length is checked again after reading; it costs less CPU
 * than a stream over the Node `Readable` and its abort (src/internal/README.md, "HTTP calls"). An encoded
 * body (`gzip`, ...) may be decoded by the client to any size, so it is streamed.
 *
 * A body read here is handed on as an `HttpClientResponse` held in memory by the edition's
 * `bufferedResponse.ts`.
 */
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { Http } from "effect-agent-session-core"
import { HttpBody } from "effect-agent-session-shell"
import {
  type Headers,
  type HttpClientError,
  type HttpClientResponse,
  releaseUnread
} from "../../src/internal/line.js"

/** The default response-size limit: 4 MiB. */
export const defaultMaxResponseSize: number = Http.defaults.maxResponseSize

/** A body over the limit: the bytes read (or announced) when reading stopped. */
export type OverLimit = HttpBody.OverLimit

/** A read held to the limit (`HttpBody.BodyReader`), as an effect. */
const settle = <A>(read: A | OverLimit): Effect.Effect<A, OverLimit> =>
  HttpBody.isOverLimit(read) ? Effect.fail(read) : Effect.succeed(read)

/**
 * Reads a body of at most `limit` bytes (`HttpBody.BodyReader`): a success over the limit fails with
 * `OverLimit`; of any other status (an error body, of which only a prefix is kept anyway) the
 * first `limit` bytes are kept and reading stops there. `headers` are the response's, when the
 * caller has them already (the platform's getter may build them afresh on each read).
 */
export const readBounded = (
  response: HttpClientResponse.HttpClientResponse,
  limit: number,
  headers?: Headers.Headers
): Effect.Effect<Uint8Array, HttpClientError.HttpClientError | OverLimit> =>
  Effect.suspend(() => {
    const body = new HttpBody.BodyReader(response.status, headers ?? response.headers, limit)
    switch (body.plan) {
      case "refuse":
        // Not read: the stream is opened and closed at once, so that the request is released.
        return Effect.andThen(releaseUnread(response.stream), Effect.fail(body.refused()))
      case "whole":
        // Framed by the transport: read whole. The reader holds a client that does not frame by
        // `content-length` to the same bound (it cannot have read more than it holds).
        return Effect.flatMap(response.arrayBuffer, (buffer) => settle(body.whole(new Uint8Array(buffer))))
      case "stream":
        return response.stream.pipe(
          Stream.runForEachWhile((bytes) => settle(body.push(bytes))),
          Effect.map(() => body.bytes())
        )
    }
  })
