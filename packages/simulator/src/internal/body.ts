/**
 * Reading request bodies on the raw Node request, under bounds, before anything parses them.
 *
 * The platform's reader destroys the socket when a body passes its limit, so a client still
 * sending sees a connection reset instead of the 413 (the SDK then retries). Here a body over the
 * limit is read to its end and thrown away (up to a drain bound), and only then refused, so the
 * client reads the answer. A body that does not end within the time-out, that is not UTF-8 or
 * that nests deeper than the depth bound is refused too. Every refusal is a typed value the
 * caller answers with a `{ _tag, error }` body.
 */
import type * as Http from "node:http"
import { Json } from "effect-agent-session-core"

/** The bounds of a body. */
export interface BodyLimits {
  /** The largest body kept, in bytes. */
  readonly maxBodyBytes: number
  /** The most bytes read (and thrown away) from a body over the limit before the socket is closed. */
  readonly maxDrainBytes: number
  /** The longest a body may take to arrive, in milliseconds. */
  readonly bodyTimeoutMillis: number
  /** The deepest JSON nesting accepted. */
  readonly maxDepth: number
}

/** What reading a body gave. */
type BodyResult =
  | { readonly _tag: "Ok"; readonly text: string }
  /** Over `maxBodyBytes`; `drained` is false when the socket must be closed (past `maxDrainBytes`). */
  | { readonly _tag: "TooLarge"; readonly drained: boolean }
  | { readonly _tag: "Timeout" }
  | { readonly _tag: "NotUtf8" }
  | { readonly _tag: "TooDeep" }
  /** The client went away: nothing to answer. */
  | { readonly _tag: "Aborted" }


/** Reads a request's body under `limits` and calls `done` once with the result. */
export const readBody = (request: Http.IncomingMessage, limits: BodyLimits, done: (result: BodyResult) => void): void => {
  let finished = false
  const finish = (result: BodyResult) => {
    if (finished) return
    finished = true
    clearTimeout(timer)
    request.off("data", onData)
    request.off("end", onEnd)
    request.off("error", onError)
    request.off("close", onClose)
    done(result)
  }
  const chunks: Array<Buffer> = []
  let size = 0
  const declared = Number(request.headers["content-length"] ?? "NaN")
  let tooLarge = Number.isFinite(declared) && declared > limits.maxBodyBytes
  const onData = (chunk: Buffer) => {
    size += chunk.byteLength
    if (size > limits.maxBodyBytes) {
      tooLarge = true
      chunks.length = 0
    }
    if (size > limits.maxDrainBytes) {
      request.pause()
      return finish({ _tag: "TooLarge", drained: false })
    }
    if (!tooLarge) chunks.push(chunk)
  }
  const onEnd = () => {
    if (tooLarge) return finish({ _tag: "TooLarge", drained: true })
    const text = Json.decodeUtf8(Buffer.concat(chunks, size))
    if (text === undefined) return finish({ _tag: "NotUtf8" })
    if (Json.exceedsDepth(text, limits.maxDepth)) return finish({ _tag: "TooDeep" })
    finish({ _tag: "Ok", text })
  }
  const onError = () => finish({ _tag: "Aborted" })
  const onClose = () => finish({ _tag: "Aborted" })
  const timer = setTimeout(() => {
    request.pause()
    finish({ _tag: "Timeout" })
  }, limits.bodyTimeoutMillis)
  if (Number.isFinite(declared) && declared > limits.maxDrainBytes) {
    // Declared too large to drain: refuse at once (the socket is closed after the answer).
    request.pause()
    finish({ _tag: "TooLarge", drained: false })
    return
  }
  request.on("data", onData)
  request.on("end", onEnd)
  request.on("error", onError)
  request.on("close", onClose)
}
