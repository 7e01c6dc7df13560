/**
 * The SSE line parser's cost on one long event (issue 20, item 4): a legal event of `size`
 * characters parsed in one piece and in `piece`-character pieces, alternating, in process CPU
 * time. The parser is linear in the text received: the pieces should cost about what one piece
 * does, and the characters it scanned (`SseParser.scanned`) stay under twice the text.
 */
import { Sse } from "effect-agent-session-core"

/** What one run of the SSE parser task measured. */
export interface SseResult {
  /** CPU per parse of the whole event in one piece, per round (ms). */
  readonly wholeMs: ReadonlyArray<number>
  /** CPU per parse of the event in pieces, per round (ms). */
  readonly piecesMs: ReadonlyArray<number>
  /** Characters scanned and joined per character received, in pieces. */
  readonly scannedPerChar: number
}

const cpuMs = (body: () => void): number => {
  const start = process.cpuUsage()
  body()
  const used = process.cpuUsage(start)
  return (used.user + used.system) / 1000
}

/** Parses a `size`-character event whole and in `piece`-character pieces, `rounds` times each. */
export const run = (options: { readonly size: number; readonly piece: number; readonly rounds: number }): SseResult => {
  const text = `event: thoughts_and_memories\ndata: {"thought":"${"t".repeat(options.size)}"}\n\n`
  const pieces: Array<string> = []
  for (let i = 0; i < text.length; i += options.piece) pieces.push(text.slice(i, i + options.piece))
  let events = 0
  const parser = () =>
    new Sse.SseParser({ event: () => (events += 1), tooLarge: () => (events = Number.NaN) }, options.size + 64)
  const wholeMs: Array<number> = []
  const piecesMs: Array<number> = []
  let scanned = 0
  // One warm-up of each, then alternating rounds.
  parser().feed(text)
  for (const p of pieces) parser().feed(p)
  for (let round = 0; round < options.rounds; round++) {
    wholeMs.push(cpuMs(() => parser().feed(text)))
    const inPieces = parser()
    piecesMs.push(cpuMs(() => {
      for (const p of pieces) inPieces.feed(p)
    }))
    scanned = inPieces.scanned
  }
  if (!Number.isFinite(events)) throw new Error("the event was reported too large")
  return { wholeMs, piecesMs, scannedPerChar: scanned / text.length }
}
