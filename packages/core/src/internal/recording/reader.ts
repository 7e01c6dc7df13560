/**
 * Reading a recording file line by line with bounded memory (`Recording.LineSplitter`,
 * `Recording.Reader` and their models). Re-exported by `Recording`.
 */
import type { Entry, Header } from "./model.js"
import { parseEntry, parseHeader } from "./parse.js"

// ---------------------------------------------------------------------------
// Lines
// ---------------------------------------------------------------------------

/**
 * Cuts text into lines (`\n` or `\r\n`) as it arrives, holding at most one unfinished line of
 * at most `maxLineLength` characters: a longer line is refused, never held.
 *
 * @since 0.1.0
 * @category models
 */
export class LineSplitter {
  private partial = ""
  /** The most characters held at once. */
  peak = 0

  constructor(readonly maxLineLength: number) {}

  /**
   * The complete lines in `text` (with what was held); `tooLong` when a line is over the limit:
   * the lines before it are given, nothing after it is kept.
   */
  push(text: string): { readonly lines: Array<string>; readonly tooLong: boolean } {
    const lines: Array<string> = []
    let start = 0
    let input = text
    let at = input.indexOf("\n")
    if (at >= 0 && this.partial.length > 0) {
      input = this.partial + input
      at += this.partial.length
      this.partial = ""
    }
    while (at >= 0) {
      const end = at > start && input.charCodeAt(at - 1) === 13 ? at - 1 : at
      if (end - start > this.maxLineLength) return this.refuse(lines)
      lines.push(input.slice(start, end))
      start = at + 1
      at = input.indexOf("\n", start)
    }
    this.partial += input.slice(start)
    this.peak = Math.max(this.peak, this.partial.length)
    if (this.partial.length > this.maxLineLength + 1) return this.refuse(lines)
    return { lines, tooLong: false }
  }

  private refuse(lines: Array<string>): { readonly lines: Array<string>; readonly tooLong: boolean } {
    this.partial = ""
    return { lines, tooLong: true }
  }

  /** The last line, when the text did not end with a newline. */
  end(): string | undefined {
    const rest = this.partial.endsWith("\r") ? this.partial.slice(0, -1) : this.partial
    this.partial = ""
    return rest.length > 0 ? rest : undefined
  }
}

// ---------------------------------------------------------------------------
// Reading a file
// ---------------------------------------------------------------------------
//
// A recording is read line by line, never whole: a block of 64 KiB at a time, at most one
// unfinished line held (of at most `maxLineLength` characters), each line parsed and validated
// as it is reached. The shells turn an `Invalid` into their `InvalidRecording`.
//
// The reads are synchronous, on purpose: a replay under a test clock must not wait for I/O
// between two recorded steps (the clock would run ahead of a replay waiting for the disk, and the
// steps after would be scheduled past the time the test advanced to). A 64 KiB read from a local
// file takes microseconds; memory stays bounded whatever the size of the file.

/**
 * The longest line read by default: 16 Mi characters (a 1 MiB frame escaped is at most 6 MiB).
 *
 * @since 0.1.0
 * @category constructors
 */
export const defaultMaxLineLength = 16 * 1024 * 1024

const BLOCK = 64 * 1024

/**
 * The bytes of a recording, read in blocks: `read` fills `buffer` from its start and says how
 * many bytes it put there (0 at the end); `close` lets go of what it holds. A function that throws
 * is a source that cannot be read. The reads are synchronous (see above). The core's shell makes
 * one of a file (`FileSource.fromFile`).
 *
 * @since 0.1.0
 * @category models
 */
export interface ByteSource {
  readonly read: (buffer: Uint8Array) => number
  readonly close: () => void
}

/**
 * Opens a recording's bytes, once per reading (a replay reads its recording again for each pass);
 * a function that throws is a recording that cannot be opened.
 *
 * @since 0.1.0
 * @category models
 */
export type Source = () => ByteSource

/**
 * Why a recording cannot be read further, and where.
 *
 * @since 0.1.0
 * @category models
 */
export interface Invalid {
  readonly _tag: "Invalid"
  /** 1-based; 0 when the file itself could not be read. */
  readonly line: number
  readonly reason: string
}

/**
 * How many line ends come before the first bytes that are not UTF-8 in a block (the block starts
 * on the line being read). A line end (0x0A) is never part of a multi-byte character, so the
 * block is checked line by line; the bytes continuing a character begun in the block before are
 * skipped.
 */
const badLineIn = (bytes: Uint8Array): number => {
  const strict = new TextDecoder("utf-8", { fatal: true })
  let start = 0
  while (start < bytes.length && start < 3 && ((bytes[start] ?? 0) & 0xc0) === 0x80) start++
  let lines = 0
  while (start <= bytes.length) {
    const end = bytes.indexOf(0x0a, start)
    const stop = end < 0 ? bytes.length : end
    try {
      // The last piece may end inside a character the next block completes.
      strict.decode(bytes.subarray(start, stop), { stream: end < 0 })
    } catch {
      return lines
    }
    if (end < 0) return lines
    lines++
    start = end + 1
  }
  return lines
}

/**
 * An entry and its line.
 *
 * @since 0.1.0
 * @category models
 */
export interface Numbered {
  readonly _tag: "Entry"
  readonly line: number
  readonly entry: Entry
}

/**
 * The end of the file.
 *
 * @since 0.1.0
 * @category models
 */
export interface Done {
  readonly _tag: "Done"
  /** The last line read. */
  readonly line: number
}

const invalid = (line: number, reason: string): Invalid => ({ _tag: "Invalid", line, reason })

const describe = (cause: unknown): string =>
  typeof cause === "object" && cause !== null && "message" in cause ? String(cause.message) : String(cause)

/**
 * A recording open for reading, positioned after its header.
 *
 * @since 0.1.0
 * @category models
 */
export class Reader {
  private readonly splitter: LineSplitter
  private readonly decoder = new TextDecoder("utf-8", { fatal: true })
  private readonly buffer = new Uint8Array(BLOCK)
  private lines: Array<string> = []
  private next = 0
  private eof = false
  private failed: Invalid | undefined
  /** A line over the limit, reported once the lines before it are read. */
  private tooLong = false
  private peeked: Numbered | Done | Invalid | undefined
  /** The last line read. */
  line = 0

  private constructor(private source: ByteSource | undefined, maxLineLength: number) {
    this.splitter = new LineSplitter(maxLineLength)
  }

  /** The most characters of an unfinished line held at once (a bound the tests check). */
  get peakHeld(): number {
    return this.splitter.peak
  }

  /** Opens a recording from its bytes and reads its header. */
  static open(
    source: Source,
    maxLineLength = defaultMaxLineLength
  ): { readonly reader: Reader; readonly header: Header } | Invalid {
    let bytes: ByteSource
    try {
      bytes = source()
    } catch (cause) {
      return invalid(0, `cannot be read: ${describe(cause)}`)
    }
    const reader = new Reader(bytes, maxLineLength)
    let first = reader.readLine()
    while (typeof first === "string" && first.trim().length === 0) first = reader.readLine()
    if (typeof first !== "string") {
      reader.close()
      return first._tag === "Invalid" ? first : invalid(1, "the file is empty: not a recording")
    }
    const header = parseHeader(first)
    if (!header.ok) {
      reader.close()
      return invalid(1, header.reason)
    }
    return { reader, header: header.value }
  }

  /** The next line's text, the end, or why it cannot be read. */
  private readLine(): string | Done | Invalid {
    if (this.failed !== undefined) return this.failed
    while (this.next >= this.lines.length) {
      this.lines = []
      this.next = 0
      if (this.tooLong) {
        return this.fail(invalid(this.line + 1, `a line is longer than ${this.splitter.maxLineLength} characters`))
      }
      if (this.eof) return { _tag: "Done", line: this.line }
      const block = this.readBlock()
      if ("_tag" in block) return this.fail(block)
      const { lines, tooLong } = block.end ? this.finish(block.text) : this.splitter.push(block.text)
      this.tooLong = tooLong
      this.lines = lines
    }
    this.line += 1
    const text = this.lines[this.next] ?? ""
    this.lines[this.next] = ""
    this.next += 1
    return text
  }

  private finish(text: string): { readonly lines: Array<string>; readonly tooLong: boolean } {
    this.eof = true
    this.close()
    const pushed = this.splitter.push(text)
    const last = pushed.tooLong ? undefined : this.splitter.end()
    return last === undefined ? pushed : { lines: [...pushed.lines, last], tooLong: false }
  }

  /** The next block as text, and whether the file ended. */
  private readBlock(): { readonly text: string; readonly end: boolean } | Invalid {
    if (this.source === undefined) return { text: "", end: true }
    let read: number
    try {
      read = this.source.read(this.buffer)
    } catch (cause) {
      return invalid(this.line + 1, `cannot be read: ${describe(cause)}`)
    }
    const bytes = this.buffer.subarray(0, read)
    try {
      return read === 0 ? { text: this.decoder.decode(), end: true } : { text: this.decoder.decode(bytes, { stream: true }), end: false }
    } catch {
      return invalid(this.line + 1 + badLineIn(bytes), "not UTF-8 text")
    }
  }

  private fail(reason: Invalid): Invalid {
    this.failed = reason
    this.close()
    return reason
  }

  /** The next entry (blank lines are skipped), the end of the file, or why not. */
  take(): Numbered | Done | Invalid {
    const peeked = this.peeked
    if (peeked !== undefined) {
      this.peeked = undefined
      return peeked
    }
    while (true) {
      const text = this.readLine()
      if (typeof text !== "string") return text
      if (text.trim().length === 0) continue
      const parsed = parseEntry(text)
      if (!parsed.ok) return this.fail(invalid(this.line, parsed.reason))
      return { _tag: "Entry", line: this.line, entry: parsed.value }
    }
  }

  /** The next entry without taking it. */
  peek(): Numbered | Done | Invalid {
    this.peeked ??= this.take()
    return this.peeked
  }

  /** Lets go of the source (again is harmless). */
  close(): void {
    const source = this.source
    this.source = undefined
    if (source !== undefined) {
      try {
        source.close()
      } catch {
        // Closing a file read to its end cannot lose anything.
      }
    }
  }
}
