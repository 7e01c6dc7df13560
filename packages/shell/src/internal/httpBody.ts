/**
 * Reading a response body within its limit (`Http`'s body rules): how to read it, holding it to
 * its limit, and a 2xx body kept for a decode failure. Re-exported by `HttpBody`.
 */
import { Http } from "effect-agent-session-core"

// ---------------------------------------------------------------------------
// Response bodies
// ---------------------------------------------------------------------------
const DIGITS = /^\d+$/

/**
 * The announced length of a body, when `content-length` is a plain decimal number.
 *
 * @since 0.1.0
 * @category constructors
 */
export const announcedLength = (headers: Http.Headers): number | undefined => {
  const value = headers["content-length"]?.trim()
  return value !== undefined && DIGITS.test(value) ? Number(value) : undefined
}

/** Whether the body reaches the client as sent (no `content-encoding` the client may decode). */
const unencoded = (headers: Http.Headers): boolean => {
  const encoding = headers["content-encoding"]?.trim().toLowerCase()
  return encoding === undefined || encoding === "" || encoding === "identity"
}

/**
 * How to read the body of a response with `status` within `limit` bytes. A success must fit: a
 * longer one is refused (a `ResponseTooLarge`). Of any other (an error body, a refused stream)
 * only a prefix is kept: `truncate`, the first `limit` bytes of a longer body are kept.
 * - `refuse`: a success announced over the limit: not read at all (`size` is that length).
 * - `whole`: framed by the transport within the limit (a `content-length`, no `content-encoding`):
 *   read in one call, held to the limit after reading ({@link fitBody}).
 * - `stream`: read piece by piece ({@link BoundedBody}), stopping at the first byte past the limit
 *   (an encoded body may be decoded to any size).
 *
 * @since 0.1.0
 * @category constructors
 */
export const bodyPlan = (
  status: number,
  headers: Http.Headers,
  limit: number
):
  | { readonly _tag: "refuse"; readonly size: number }
  | { readonly _tag: "whole" | "stream"; readonly truncate: boolean } => {
  const truncate = !Http.isSuccess(status)
  const announced = announcedLength(headers)
  if (announced !== undefined && announced > limit && !truncate) return { _tag: "refuse", size: announced }
  if (announced !== undefined && announced <= limit && unencoded(headers)) return { _tag: "whole", truncate }
  return { _tag: "stream", truncate }
}

// ---------------------------------------------------------------------------
// Reading a body within its limit
// ---------------------------------------------------------------------------

/**
 * A body read whole (the `whole` plan of {@link bodyPlan}) held to its limit: the bytes, cut to
 * `limit` when truncating; `undefined` when longer without truncating (its size is then the
 * bytes' length).
 *
 * @since 0.1.0
 * @category constructors
 */
export const fitBody = (bytes: Uint8Array, limit: number, truncate: boolean): Uint8Array | undefined =>
  bytes.byteLength <= limit ? bytes : truncate ? bytes.subarray(0, limit) : undefined

/**
 * A body read piece by piece (the `stream` plan of {@link bodyPlan}) within `limit` bytes: each
 * piece is `push`ed as it arrives, and says whether to read on. Truncating, the first `limit`
 * bytes are kept and reading stops there; otherwise a body past the limit is over it at the first
 * piece that crosses it (`size` is then the bytes seen), and nothing past the limit is kept.
 *
 * @since 0.1.0
 * @category models
 */
export class BoundedBody {
  private readonly chunks: Array<Uint8Array> = []
  private seen = 0

  constructor(readonly limit: number, readonly truncate: boolean) {}

  /** The bytes seen so far (past the limit when {@link push} said `over`). */
  get size(): number {
    return this.seen
  }

  /** A piece arrived: `more` to read on, `done` when the kept prefix is full, `over` when past the limit. */
  push(bytes: Uint8Array): "more" | "done" | "over" {
    if (this.seen + bytes.length > this.limit) {
      if (!this.truncate) {
        this.seen += bytes.length
        return "over"
      }
      this.chunks.push(bytes.subarray(0, this.limit - this.seen))
      this.seen = this.limit
      return "done"
    }
    this.chunks.push(bytes)
    this.seen += bytes.length
    return this.seen < this.limit || !this.truncate ? "more" : "done"
  }

  /** The bytes kept, in one array (the piece itself when there was one). */
  bytes(): Uint8Array {
    const [first] = this.chunks
    if (this.chunks.length === 1 && first !== undefined) return first
    const out = new Uint8Array(this.seen)
    let offset = 0
    for (const chunk of this.chunks) {
      out.set(chunk, offset)
      offset += chunk.length
    }
    return out
  }
}

/**
 * A body over its limit: the bytes read (or announced) when reading stopped.
 *
 * @since 0.1.0
 * @category models
 */
export interface OverLimit {
  readonly _tag: "OverLimit"
  readonly size: number
}

const overLimit = (size: number): OverLimit => ({ _tag: "OverLimit", size })

/**
 * One response's body read within `limit` bytes, as {@link bodyPlan} says: `plan` tells the
 * edition how to read it (`refuse`: not at all, {@link BodyReader.refused} is the failure;
 * `whole`: in one call, handed to {@link BodyReader.whole}; `stream`: piece by piece, each handed
 * to {@link BodyReader.push}, then {@link BodyReader.bytes}); the reader holds it to its limit.
 *
 * @since 0.1.0
 * @category models
 */
export class BodyReader {
  readonly plan: "refuse" | "whole" | "stream"
  private readonly body: BoundedBody
  private readonly announced: number

  constructor(status: number, headers: Http.Headers, readonly limit: number) {
    const plan = bodyPlan(status, headers, limit)
    this.plan = plan._tag
    this.announced = plan._tag === "refuse" ? plan.size : 0
    this.body = new BoundedBody(limit, plan._tag !== "refuse" && plan.truncate)
  }

  /** The failure of a body refused unread: its announced length. */
  refused(): OverLimit {
    return overLimit(this.announced)
  }

  /** The body read in one call: the bytes kept (a longer error body cut), or over the limit. */
  whole(bytes: Uint8Array): Uint8Array | OverLimit {
    return fitBody(bytes, this.limit, this.body.truncate) ?? overLimit(bytes.byteLength)
  }

  /** A piece of the body: whether to read on, or over the limit (the bytes seen). */
  push(bytes: Uint8Array): boolean | OverLimit {
    const next = this.body.push(bytes)
    return next === "over" ? overLimit(this.body.size) : next === "more"
  }

  /** The bytes kept of a body read piece by piece. */
  bytes(): Uint8Array {
    return this.body.bytes()
  }
}

/**
 * Whether a read ended over the limit.
 *
 * @since 0.1.0
 * @category guards
 */
export const isOverLimit = (read: unknown): read is OverLimit =>
  typeof read === "object" && read !== null && "_tag" in read && read._tag === "OverLimit"

/**
 * The bytes as an `ArrayBuffer` of their own (for a web `Response`): the backing buffer itself
 * when it is exactly theirs, else a copy.
 *
 * @since 0.1.0
 * @category constructors
 */
export const ownArrayBuffer = (bytes: Uint8Array): ArrayBuffer => {
  const { buffer } = bytes
  if (buffer instanceof ArrayBuffer && bytes.byteOffset === 0 && bytes.byteLength === buffer.byteLength) return buffer
  const copy = new ArrayBuffer(bytes.byteLength)
  new Uint8Array(copy).set(bytes)
  return copy
}

// ---------------------------------------------------------------------------
// Responses of the client
// ---------------------------------------------------------------------------

/**
 * A 2xx response as kept for a possible decode failure: its status, and its body decoded as text
 * only when read (most responses decode and are never read as text).
 *
 * @since 0.1.0
 * @category models
 */
export interface ReceivedBody {
  readonly status: number
  readonly body: string
}

const textDecoder = new TextDecoder()

/**
 * The {@link ReceivedBody} of a response's status and bytes.
 *
 * @since 0.1.0
 * @category constructors
 */
export const receivedBody = (status: number, bytes: Uint8Array): ReceivedBody => {
  let text: string | undefined
  return {
    status,
    get body() {
      return text ??= textDecoder.decode(bytes)
    }
  }
}
