/**
 * The process's terminal while the live view draws (`Render.muteProcessInput`,
 * `Render.unmuteProcessInput`): echo off and typed keys consumed in raw mode, Ctrl-C still
 * interrupting, then the terminal restored.
 */

let muted = false

const onMutedInput = (data: Buffer | string) => {
  const bytes = typeof data === "string" ? Buffer.from(data) : data
  // Raw mode turns the terminal's own signal keys off: Ctrl-C interrupts as it would have.
  if (bytes.includes(0x03)) process.kill(process.pid, "SIGINT")
}

/** Turns echo off and consumes what is typed (raw mode), until {@link unmute}. */
export const mute = (): void => {
  if (muted || process.stdin.isTTY !== true) return
  muted = true
  process.stdin.setRawMode(true)
  process.stdin.on("data", onMutedInput)
  process.stdin.resume()
}

/** Restores the terminal after {@link mute}; safe to call at any time, and more than once. */
export const unmute = (): void => {
  if (!muted) return
  muted = false
  process.stdin.removeListener("data", onMutedInput)
  if (process.stdin.isTTY === true) process.stdin.setRawMode(false)
  process.stdin.pause()
}
