/**
 * Reads a recording line by line, never whole: a block of 64 KiB at a time, at most one
 * unfinished line held (of at most `maxLineLength` characters), each line parsed and validated
 * as it is reached. No Effect here (the shells turn its `Invalid` into `InvalidRecording`).
 *
 * The reads are synchronous, on purpose: a replay under the `TestClock` must not wait for I/O
 * between two recorded steps (the clock would run ahead of a replay waiting for the disk, and the
 * steps after would be scheduled past the time the test advanced to). A 64 KiB read from a local
 * file takes microseconds; memory stays bounded whatever the size of the file.
 */
import * as Fs from "node:fs"
import { type Entry, type Header, LineSplitter, parseEntry, parseHeader } from "./format.js"

/** The longest line read by default: 16 Mi characters (a 1 MiB frame escaped is at most 6 MiB). */
export const defaultMaxLineLength = 16 * 1024 * 1024

const BLOCK = 64 * 1024

/** Why a recording cannot be read further, and where. */
export interface Invalid {
  readonly _tag: "Invalid"
  /** 1-based; 0 when the file itself could not be read. */
  readonly line: number
  readonly reason: string
}

/** An entry and its line. */
export interface Numbered {
  readonly _tag: "Entry"
  readonly line: number
  readonly entry: Entry
}

/** The end of the file. */
export interface Done {
  readonly _tag: "Done"
  /** The last line read. */
  readonly line: number
}

const invalid = (line: number, reason: string): Invalid => ({ _tag: "Invalid", line, reason })

const describe = (cause: unknown): string =>
  typeof cause === "object" && cause !== null && "message" in cause ? String(cause.message) : String(cause)

/** A recording open for reading, positioned after its header. */
export class Reader {
  private readonly splitter: LineSplitter
  private readonly decoder = new TextDecoder("utf-8", { fatal: true })
  private readonly buffer = Buffer.allocUnsafe(BLOCK)
  private lines: Array<string> = []
  private next = 0
  private eof = false
  private failed: Invalid | undefined
  /** A line over the limit, reported once the lines before it are read. */
  private tooLong = false
  private peeked: Numbered | Done | Invalid | undefined
  /** The last line read. */
  line = 0

  private constructor(private fd: number | undefined, maxLineLength: number) {
    this.splitter = new LineSplitter(maxLineLength)
  }

  /** The most characters of an unfinished line held at once (a bound the tests check). */
  get peakHeld(): number {
    return this.splitter.peak
  }

  /** Opens a recording and reads its header. */
  static open(path: string, maxLineLength = defaultMaxLineLength): { readonly reader: Reader; readonly header: Header } | Invalid {
    let fd: number
    try {
      fd = Fs.openSync(path, "r")
    } catch (cause) {
      return invalid(0, `cannot be read: ${describe(cause)}`)
    }
    const reader = new Reader(fd, maxLineLength)
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
    if (this.fd === undefined) return { text: "", end: true }
    try {
      const read = Fs.readSync(this.fd, this.buffer, 0, BLOCK, null)
      return read === 0
        ? { text: this.decoder.decode(), end: true }
        : { text: this.decoder.decode(this.buffer.subarray(0, read), { stream: true }), end: false }
    } catch (cause) {
      return invalid(this.line + 1, cause instanceof TypeError ? "not UTF-8 text" : `cannot be read: ${describe(cause)}`)
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

  /** Closes the file (again is harmless). */
  close(): void {
    const fd = this.fd
    this.fd = undefined
    if (fd !== undefined) {
      try {
        Fs.closeSync(fd)
      } catch {
        // Closing a file read to its end cannot lose anything.
      }
    }
  }
}
