/**
 * A recording file as the bytes the core's `Recording.Reader` reads: opened through the
 * synchronous file functions an edition gives (`node:fs` has them), read in blocks, closed once.
 *
 * @since 0.1.0
 */
import type { Recording } from "effect-agent-session-core"

/**
 * The synchronous file functions a file source reads through: pass `node:fs` (whose functions
 * have these shapes). A function that throws is a file that cannot be read.
 *
 * @since 0.1.0
 * @category models
 */
export interface FileSystemSync {
  readonly openSync: (path: string, flags: "r") => number
  readonly readSync: (fd: number, buffer: Uint8Array, offset: number, length: number, position: null) => number
  readonly closeSync: (fd: number) => void
}

/** One open file: each read fills the buffer from its start. */
class FileBytes implements Recording.ByteSource {
  constructor(private readonly fs: FileSystemSync, private readonly fd: number) {}
  read(buffer: Uint8Array): number {
    return this.fs.readSync(this.fd, buffer, 0, buffer.length, null)
  }
  close(): void {
    this.fs.closeSync(this.fd)
  }
}

/**
 * The file at `path`, opened (for reading) each time the source is opened.
 *
 * @example
 * ```ts
 * import * as Fs from "node:fs"
 * import { Recording } from "effect-agent-session-core"
 * import { FileSource } from "effect-agent-session-shell"
 *
 * const opened = Recording.Reader.open(FileSource.fromFile("rec/session.jsonl", Fs))
 * if ("reader" in opened) opened.reader.close()
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromFile = (path: string, fs: FileSystemSync): Recording.Source => () => new FileBytes(fs, fs.openSync(path, "r"))
