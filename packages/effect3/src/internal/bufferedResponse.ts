/**
 * A response whose body was read within its limit (`body.ts`, `readBounded`), held in memory as
 * an `HttpClientResponse`, so that a decoder downstream (the `HttpApiClient`) reads the same bytes
 * without a second copy or a web `Response`.
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
import { HttpBody } from "effect-agent-session-shell"

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
 * A response whose body was read (by `readBounded`): `status` and `headers` as given, the
 * body served from `bytes` by every accessor, decoded to text at most once.
 */
export const buffered = (
  request: HttpClientRequest.HttpClientRequest,
  status: number,
  headers: Headers.Headers,
  bytes: Uint8Array
): HttpClientResponse.HttpClientResponse => new BufferedResponse(request, status, headers, bytes)
