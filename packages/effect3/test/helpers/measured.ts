/**
 * Where tests put what they measured (peak buffers, heap growth, throughput): appended to
 * `.tmp/measurements.log`, not printed, so that the suite is quiet. The assertions carry the bounds.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"

const file = Path.join(import.meta.dirname, "../../.tmp/measurements.log")

/** Records one measurement line (with the time and the test file's process). */
export const measured = (text: string): void => {
  Fs.mkdirSync(Path.dirname(file), { recursive: true })
  Fs.appendFileSync(file, `${new Date().toISOString()} [${process.pid}] ${text}\n`)
}
