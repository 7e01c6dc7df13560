/**
 * Recordings written by hand for the replay tests of the core and both editions: the conformance
 * suite's (a header and the lines after it, as the format documents them, and the file they are
 * written to). The editions' test/recording/helpers.ts re-export them.
 */
import * as Fs from "node:fs"
import type { Recording } from "../../src/index.js"

export * from "effect-agent-session-conformance/recordings"

/**
 * A recording file as the bytes `Recording.Reader` reads: opened with `node:fs` at each reading,
 * read in blocks, closed (the shell's `FileSource.fromFile` is the editions' own).
 */
export const fileSource = (path: string): Recording.Source => () => {
  const fd = Fs.openSync(path, "r")
  return {
    read: (buffer) => Fs.readSync(fd, buffer, 0, buffer.length, null),
    close: () => Fs.closeSync(fd)
  }
}
