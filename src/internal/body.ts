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
 * {@link buffered} hands a body read here on as an `HttpClientResponse` held in memory, so a
 * decoder downstream (the `HttpApiClient`) reads the same bytes without a second copy or a
 * web `Response`.
 */
import * as Cookies from "@effect/platform/Cookies"
import type * as Headers from "@effect/platform/Headers"
import type * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as HttpClientError from "@effect/platform/HttpClientError"
import * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as IncomingMessage from "@effect/platform/HttpIncomingMessage"
import * as UrlParams from "@effect/platform/UrlParams"
import * as Effect from "effect/Effect"
import * as Inspectable from "effect/Inspectable"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { Http } from "effect-agent-session-core"
import { HttpBody } from "effect-agent-session-core/shell"

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
 * caller has them already (the platform's getter builds them afresh on each read).
 */
export const readBounded = (
  response: HttpClientResponse.HttpClientResponse,
  limit: number,
  headers?: Headers.Headers
): Effect.Effect<Uint8Array, HttpClientError.ResponseError | OverLimit> =>
  Effect.suspend(() => {
    const body = new HttpBody.BodyReader(response.status, headers ?? response.headers, limit)
    switch (body.plan) {
      case "refuse":
        // Not read: the stream is opened and closed at once, so that the request is released (a
        // `fetch` body's connection closed). `Stream.take(stream, 0)` never opens it; its first
        // chunk (the transport's, bounded) is the least that does.
        return Effect.zipRight(Stream.runDrain(Stream.take(response.stream, 1)), Effect.fail(body.refused()))
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

// ---------------------------------------------------------------------------
// A response whose body is in memory
// ---------------------------------------------------------------------------

const textDecoder = new TextDecoder()

const toArrayBuffer = HttpBody.ownArrayBuffer

class BufferedResponse extends Inspectable.Class implements HttpClientResponse.HttpClientResponse {
  readonly [IncomingMessage.TypeId]: IncomingMessage.TypeId = IncomingMessage.TypeId
  readonly [HttpClientResponse.TypeId]: HttpClientResponse.TypeId = HttpClientResponse.TypeId
  readonly remoteAddress: Option.Option<string> = Option.none()
  private decoded: string | undefined
  private parsedCookies: Cookies.Cookies | undefined

  constructor(
    readonly request: HttpClientRequest.HttpClientRequest,
    readonly status: number,
    readonly headers: Headers.Headers,
    private readonly bytes: Uint8Array
  ) {
    super()
  }

  private decodeError(cause: unknown): HttpClientError.ResponseError {
    return new HttpClientError.ResponseError({ request: this.request, response: this, reason: "Decode", cause })
  }

  private get body(): string {
    return this.decoded ??= textDecoder.decode(this.bytes)
  }

  get cookies(): Cookies.Cookies {
    const header = this.headers["set-cookie"]
    return this.parsedCookies ??= header === undefined ? Cookies.empty : Cookies.fromSetCookie(header)
  }

  get text(): Effect.Effect<string, HttpClientError.ResponseError> {
    return Effect.sync(() => this.body)
  }

  get json(): Effect.Effect<unknown, HttpClientError.ResponseError> {
    return Effect.try({
      try: () => this.body === "" ? null : JSON.parse(this.body) as unknown,
      catch: (cause) => this.decodeError(cause)
    })
  }

  get arrayBuffer(): Effect.Effect<ArrayBuffer, HttpClientError.ResponseError> {
    return Effect.sync(() => toArrayBuffer(this.bytes))
  }

  get urlParamsBody(): Effect.Effect<UrlParams.UrlParams, HttpClientError.ResponseError> {
    return Effect.try({
      try: () => UrlParams.fromInput(new URLSearchParams(this.body)),
      catch: (cause) => this.decodeError(cause)
    })
  }

  get formData(): Effect.Effect<FormData, HttpClientError.ResponseError> {
    return Effect.tryPromise({
      try: () => new Response(toArrayBuffer(this.bytes), { headers: this.headers }).formData(),
      catch: (cause) => this.decodeError(cause)
    })
  }

  get stream(): Stream.Stream<Uint8Array, HttpClientError.ResponseError> {
    return this.bytes.byteLength === 0 ? Stream.empty : Stream.succeed(this.bytes)
  }

  toJSON(): unknown {
    return IncomingMessage.inspect(this, {
      _id: "@effect/platform/HttpClientResponse",
      request: this.request.toJSON(),
      status: this.status
    })
  }
}

/**
 * A response whose body was read (by {@link readBounded}): `status` and `headers` as given, the
 * body served from `bytes` by every accessor, decoded to text at most once.
 */
export const buffered = (
  request: HttpClientRequest.HttpClientRequest,
  status: number,
  headers: Headers.Headers,
  bytes: Uint8Array
): HttpClientResponse.HttpClientResponse => new BufferedResponse(request, status, headers, bytes)
