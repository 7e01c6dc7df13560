/**
 * Vitest's global set-up (the root's and the Effect 4 edition's configs): the temporary files of a
 * test run all go under one directory of its own, removed when the run ends, whatever the tests
 * left in it (recordings, a throwaway PostgreSQL's directory, test certificates and their keys).
 * It is `TMPDIR`, which `os.tmpdir()` reads and the test processes and their children inherit.
 */
import { chmodSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

export default function setup(): () => void {
  const previous = process.env["TMPDIR"]
  const dir = mkdtempSync(join(tmpdir(), "eas-tests-"))
  // Traversable by the user a throwaway PostgreSQL runs as, whose directory is made in it.
  chmodSync(dir, 0o755)
  process.env["TMPDIR"] = dir
  return () => {
    rmSync(dir, { recursive: true, force: true })
    if (previous === undefined) delete process.env["TMPDIR"]
    else process.env["TMPDIR"] = previous
  }
}
