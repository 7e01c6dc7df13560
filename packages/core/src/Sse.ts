/**
 * The Server-Sent Events line parser
 * (https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation),
 * incremental and synchronous: text goes in as it arrives, complete events come out.
 *
 * Lines end with `\n`, `\r` or `\r\n` (a `\r` at the end of one piece of text and a `\n` at the
 * start of the next are one line end); `event:` names the event, `data:` lines accumulate
 * (joined by `\n`), a blank line dispatches, lines starting with `:` are comments, `id:` and
 * `retry:` are ignored. One space after the colon is dropped; a line without a colon is a field
 * of that name with an empty value (`data` alone is an empty data line).
 *
 * Bounded: an event whose data grows over `maxData` characters (every data line counted, an empty
 * one too, with the newline that joins it to the one before) is reported once (`tooLarge`) as
 * soon as it goes over, its data discarded while it is read; a line that never ends counts as
 * data over the limit once it is longer than `maxData + 64`, and the rest of it is dropped up to
 * its end.
 *
 * Linear in the text received: each character is scanned once, and the unfinished line is kept
 * as the pieces it arrived in, joined once when it ends (src/internal/README.md of `effect-agent-session`,
 * "The SSE parser"). {@link SseParser.scanned} counts the characters scanned and joined, so tests
 * can hold that bound.
 *
 * @since 0.1.0
 */
import type { AnswerData } from "./Frame.js"
import { encodeAnswer } from "./Frame.js"
import { formatMillis } from "./internal/connection.js"
import { classifyRefusal } from "./Close.js"
import { redactUrl, scrubChannelText, truncateRaw } from "./Secrets.js"

/**
 * What the parser reports.
 *
 * @since 0.1.0
 * @category models
 */
export interface SseHandler {
  /** A complete event: its name (`message` when none was given) and its data lines joined by `\n`. */
  readonly event: (name: string, data: string) => void
  /** An event whose data grew over the limit (its size so far): its data is discarded. Once per event. */
  readonly tooLarge: (size: number) => void
}

/** How much longer than `maxData` an unfinished line may grow before it is dropped. */
const LINE_SLACK = 64

const LF = 10
const CR = 13
const COLON = 58
const SPACE = 32

/**
 * An incremental SSE parser: {@link SseParser.feed} it text as it arrives.
 *
 * @example
 * ```ts
 * import { Sse } from "effect-agent-session-core"
 *
 * const seen: Array<string> = []
 * const parser = new Sse.SseParser({
 *   event: (name, data) => seen.push(`${name}: ${data}`),
 *   tooLarge: (size) => seen.push(`too large: ${size}`)
 * }, 1024 * 1024)
 * parser.feed("event: action_run\ndata: {\"na")
 * parser.feed("me\":\"click\"}\n\n")
 * // seen: ['action_run: {"name":"click"}']
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export class SseParser {
  /** The unfinished line, as the pieces it arrived in (none contains a line end). */
  private pieces: Array<string> = []
  private pieceChars = 0
  private name = ""
  /** The pending event's data as it will be joined: its lines and the newlines between them. */
  private data: Array<string> = []
  /** Newlines owed before the next non-empty data line (a run of empty lines costs no entry). */
  private newlines = 0
  /** The length of the pending event's data, joined: every data line and the newline before it. */
  private dataSize = 0
  private hasData = false
  /** The last text ended with `\r`: a `\n` starting the next one ends nothing more. */
  private pendingCr = false
  /** The rest of a line already cut for being too long is dropped up to its end. */
  private discarding = false
  /** The event over the limit was reported as soon as it went over: not again at its dispatch. */
  private reported = false
  private work = 0

  constructor(private readonly handler: SseHandler, private readonly maxData: number) {}

  /** Characters scanned for line ends and joined into lines so far: linear in the text fed. */
  get scanned(): number {
    return this.work
  }

  /**
   * Characters the parser holds between two feeds: the pending event's data as it will be joined
   * and the unfinished line. Counted from what is held, not from the running size, so tests can
   * hold the bound: at most `maxData` of data and `maxData + 64` of unfinished line.
   */
  get retained(): number {
    let chars = this.newlines + this.pieceChars
    for (const piece of this.data) chars += piece.length
    return chars
  }

  /** Feeds the next piece of text (decoded from the stream's bytes). */
  feed(text: string): void {
    let start = 0
    if (this.pendingCr && text.charCodeAt(0) === LF) start = 1
    this.pendingCr = false
    const length = text.length
    this.work += length - start
    for (let i = start; i < length; i++) {
      const code = text.charCodeAt(i)
      if (code !== LF && code !== CR) continue
      if (this.discarding) {
        this.discarding = false
        this.clearPieces()
      } else {
        this.line(this.takeLine(text, start, i))
      }
      if (code === CR) {
        if (i + 1 < length) {
          if (text.charCodeAt(i + 1) === LF) i += 1
        } else {
          this.pendingCr = true
        }
      }
      start = i + 1
    }
    if (start < length) {
      this.pieces.push(start === 0 ? text : text.slice(start))
      this.pieceChars += length - start
    }
    // A line that never ends must not grow without bound: count it as data over the limit.
    if (this.pieceChars > this.maxData + LINE_SLACK || (this.discarding && this.pieceChars > 0)) {
      this.hasData = true
      this.dataSize += this.pieceChars
      this.data = []
      this.newlines = 0
      this.clearPieces()
      this.discarding = true
      this.overLimit()
    }
  }

  /** The line ending at `end` of `text`: the pieces kept before it and `text[start, end)`. */
  private takeLine(text: string, start: number, end: number): string {
    if (this.pieces.length === 0) return text.slice(start, end)
    this.pieces.push(text.slice(start, end))
    const line = this.pieces.join("")
    this.work += line.length
    this.clearPieces()
    return line
  }

  private clearPieces(): void {
    if (this.pieces.length > 0) this.pieces = []
    this.pieceChars = 0
  }

  private overLimit(): void {
    if (this.reported || this.dataSize <= this.maxData) return
    this.reported = true
    this.handler.tooLarge(this.dataSize)
  }

  private dispatch(): void {
    if (this.hasData && this.dataSize <= this.maxData) {
      if (this.newlines > 0) this.data.push("\n".repeat(this.newlines))
      this.handler.event(this.name.length === 0 ? "message" : this.name, this.data.join(""))
    } else {
      this.overLimit()
    }
    this.name = ""
    this.data = []
    this.newlines = 0
    this.dataSize = 0
    this.hasData = false
    this.reported = false
  }

  private line(text: string): void {
    if (text.length === 0) return this.dispatch()
    if (text.charCodeAt(0) === COLON) return
    const colon = text.indexOf(":")
    const field = colon === -1 ? text : text.slice(0, colon)
    let value = colon === -1 ? "" : text.slice(colon + 1)
    if (value.charCodeAt(0) === SPACE) value = value.slice(1)
    if (field === "event") {
      this.name = value
    } else if (field === "data") {
      // Every data line counts, an empty one too: the joined data holds its newline, so a stream
      // of empty data lines reaches the bound like the same bytes on one line.
      this.dataSize += value.length + (this.hasData ? 1 : 0)
      if (this.hasData) this.newlines += 1
      this.hasData = true
      if (this.dataSize > this.maxData) {
        this.data = []
        this.newlines = 0
        this.overLimit()
      } else if (value.length > 0) {
        // A run of empty lines is kept as a count, one string of newlines when text follows.
        if (this.newlines > 0) this.data.push("\n".repeat(this.newlines))
        this.newlines = 0
        this.data.push(value)
      }
    }
  }
}

// ---------------------------------------------------------------------------
// The SSE transport of the event channel (the observed client's second transport)
// ---------------------------------------------------------------------------

/**
 * The headers of the stream's `GET`.
 *
 * @since 0.1.0
 * @category models
 */
export const streamHeaders: { readonly accept: string; readonly "cache-control": string } = {
  accept: "text/event-stream",
  "cache-control": "no-cache"
}

/**
 * The query of the stream's `GET` and of the answers' `POST`: the session and the key (the key
 * travels as a URL parameter, kept apart from the request's URL so that no message prints it).
 *
 * @since 0.1.0
 * @category constructors
 */
export const streamParams = (sessionId: string, apiKey: string): { readonly sessionId: string; readonly apiKey: string } => ({
  sessionId,
  apiKey
})

/**
 * The stream's address as logs print it: the query named, its key `<redacted>`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const printableStreamUrl = (url: string, sessionId: string): string =>
  redactUrl(`${url}?sessionId=${sessionId}&apiKey=<redacted>`)

/**
 * The body of an answer `POST`ed to the egress path: `{ event: "external_resource_granted", data }`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const answerBody = (data: AnswerData): string => encodeAnswer("event", data)

/**
 * The most of a refused `GET`'s body read: 4 KiB are kept (scrubbed, as the reason), read with a
 * margin so that a key across the cut is scrubbed whole before the cut.
 *
 * @since 0.1.0
 * @category models
 */
export const REFUSAL_READ_LIMIT = 4096 + 1024

const refusalDecoder = new TextDecoder()

/**
 * What a refusal of the stream's `GET` (a status that is not 2xx) means, from its status and the
 * first bytes of its body (at most {@link REFUSAL_READ_LIMIT} read): a status that rejects the
 * credentials or the session for good (`Close.classifyRefusal`) is `Rejected`, the body its
 * reason (the key out as from any channel text, `Secrets.scrubChannelText`, then cut to
 * `Secrets.RAW_LIMIT`); any other is `Refused`, retried with its message.
 *
 * @since 0.1.0
 * @category constructors
 */
export const streamRefusal = (
  status: number,
  body: Uint8Array,
  apiKey: string
):
  | { readonly _tag: "Rejected"; readonly code: number; readonly reason: string }
  | { readonly _tag: "Refused"; readonly message: string } => {
  const refusal = classifyRefusal(status, "event stream")
  return refusal._tag === "Refused"
    ? refusal
    : { _tag: "Rejected", code: status, reason: truncateRaw(scrubChannelText(refusalDecoder.decode(body), apiKey)) }
}

/**
 * Why an answer `POST` failed when the service did not answer it within the answer time-out
 * (`answerTimeoutMillis`): the answer stays queued and is sent again after the reconnect.
 *
 * @since 0.1.0
 * @category constructors
 */
export const answerTimedOut = (answerTimeoutMillis: number): string =>
  `no response to the answer within ${formatMillis(answerTimeoutMillis)}`
