/**
 * Reading an HTTP response body within a size limit: the limit is enforced while the body is
 * read (a `content-length` over it is refused before reading; otherwise reading stops at the
 * first chunk past it and the request is aborted), so a huge or never-ending body costs at most
 * the limit in memory.
 */
import type * as HttpClientError from "@effect/platform/HttpClientError"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"

/** The default response-size limit: 4 MiB. */
export const defaultMaxResponseSize = 4 * 1024 * 1024

/** A body over the limit: the bytes read (or announced) when reading stopped. */
export interface OverLimit {
  readonly _tag: "OverLimit"
  readonly size: number
}

/** The valid limit from an option: a positive integer, else the default. */
export const limitOf = (value: number | undefined, fallback: number = defaultMaxResponseSize): number =>
  value !== undefined && Number.isFinite(value) && value >= 1 ? Math.floor(value) : fallback

const concat = (chunks: ReadonlyArray<Uint8Array>, size: number): Uint8Array => {
  if (chunks.length === 1 && chunks[0] !== undefined) return chunks[0]
  const out = new Uint8Array(size)
  let offset = 0
  for (const chunk of chunks) {
    out.set(chunk, offset)
    offset += chunk.length
  }
  return out
}

/**
 * Reads a body of at most `limit` bytes. `truncate: true` keeps the first `limit` bytes and
 * stops (for error bodies, of which only a prefix is kept anyway); otherwise a body over the
 * limit fails with `OverLimit`.
 */
export const readBounded = (
  response: HttpClientResponse.HttpClientResponse,
  limit: number,
  options: { readonly truncate?: boolean } = {}
): Effect.Effect<Uint8Array, HttpClientError.ResponseError | OverLimit> =>
  Effect.suspend(() => {
    const announced = Number(response.headers["content-length"])
    if (options.truncate !== true && Number.isFinite(announced) && announced > limit) {
      // Not read at all: the stream is opened and closed at once so the request is released.
      return Effect.zipRight(
        Stream.runDrain(Stream.take(response.stream, 0)),
        Effect.fail<OverLimit>({ _tag: "OverLimit", size: announced })
      )
    }
    const chunks: Array<Uint8Array> = []
    let size = 0
    return response.stream.pipe(
      Stream.runForEachWhile((bytes) =>
        Effect.suspend(() => {
          if (size + bytes.length > limit) {
            if (options.truncate === true) {
              chunks.push(bytes.subarray(0, limit - size))
              size = limit
              return Effect.succeed(false)
            }
            size += bytes.length
            return Effect.fail<OverLimit>({ _tag: "OverLimit", size })
          }
          chunks.push(bytes)
          size += bytes.length
          return Effect.succeed(size < limit || options.truncate !== true)
        })
      ),
      Effect.flatMap(() => Effect.sync(() => concat(chunks, size)))
    )
  })
