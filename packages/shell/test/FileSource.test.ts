/**
 * A recording file as the bytes the core's `Recording.Reader` reads (FileSource): read in blocks
 * through the file functions given, to its last line; opened again for each reading and closed
 * each time; a file that cannot be opened is a recording refused at line 0.
 */
import * as Fs from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "vitest"
import { Recording } from "effect-agent-session-core"
import * as Recordings from "effect-agent-session-conformance/recordings"
import { FileSource } from "../src/index.js"

const dir = Fs.mkdtempSync(join(tmpdir(), "eas-shell-file-source-"))

describe("FileSource", () => {
  it("a file read through the functions given, in blocks, to its last line; opened and closed once per reading", () => {
    const frame = JSON.stringify({ event: "thoughts_and_memories", data: { thought: "t".repeat(300), memory: "m" } })
    const lines = [JSON.stringify(Recordings.header())]
    for (let i = 0; i < 1_000; i++) lines.push(JSON.stringify({ type: "frame", t: i, conn: 1, text: frame }))
    const path = join(dir, "large.jsonl")
    Fs.writeFileSync(path, lines.join("\n") + "\n")
    const calls = { open: 0, read: 0, close: 0 }
    const fs: FileSource.FileSystemSync = {
      openSync: (file, flags) => (calls.open += 1, Fs.openSync(file, flags)),
      readSync: (fd, buffer, offset, length, position) => (calls.read += 1, Fs.readSync(fd, buffer, offset, length, position)),
      closeSync: (fd) => (calls.close += 1, Fs.closeSync(fd))
    }
    const source = FileSource.fromFile(path, fs)
    for (const reading of [1, 2]) {
      const opened = Recording.Reader.open(source)
      assert.isTrue("reader" in opened)
      if (!("reader" in opened)) return
      let entries = 0
      for (let next = opened.reader.take(); next._tag === "Entry"; next = opened.reader.take()) entries += 1
      opened.reader.close()
      assert.strictEqual(entries, 1_000)
      assert.deepStrictEqual([calls.open, calls.close], [reading, reading])
    }
    // About 350 KB, read in blocks rather than at once.
    assert.isAbove(calls.read, 4)
  })

  it("a file that cannot be opened is refused at line 0, naming why", () => {
    const missing = Recording.Reader.open(FileSource.fromFile(join(dir, "no-such-file.jsonl"), Fs))
    assert.isTrue("_tag" in missing && missing._tag === "Invalid" && missing.line === 0 && missing.reason.startsWith("cannot be read: "))
  })
})
