/**
 * Per-frame decode cost, in process: `JSON.parse` alone against `Wire.makeDecoder(...)` on the
 * frames the SDK meets (the load generator's action_run frame, and every event of the simulator's
 * scripts in each framing, and two wide unknown events), as strings and as UTF-8 bytes. Process
 * CPU time (steadier than wall time on a shared machine), alternating rounds; printed: the median
 * per frame, the median of the per-round added nanoseconds over `JSON.parse`, and the ratio. Not
 * part of `npm run bench`: a tool for changes to src/Wire.ts, src/internal/json.ts and the fast
 * decoders.
 *
 *   tsx bench/frameDecode.ts [rounds] [--base <dir with a src/ to compare>] [--only <part of a set's name>]
 *
 * With `--base`, the same frames are also decoded by that tree's `Wire.makeDecoder` (an earlier
 * version copied aside, e.g. `git worktree add` or `cp -r src .tmp/base/src` before a change),
 * side by side in the same rounds.
 */
import * as Option from "effect/Option"
import * as Dialect from "effect-agent-session/Dialect"
import * as Script from "effect-agent-session-simulator/Script"
import * as Wire from "effect-agent-session/Wire"
import { actionRunFrame } from "effect-agent-session-test-support/frames"

const args = process.argv.slice(2)
const baseAt = args.indexOf("--base")
const baseDir = baseAt >= 0 ? args[baseAt + 1] : undefined
const onlyAt = args.indexOf("--only")
const only = onlyAt >= 0 ? args[onlyAt + 1] : undefined
const rounds = Number(args.find((a, i) => /^\d+$/.test(a) && i !== baseAt + 1 && i !== onlyAt + 1) ?? 12)

type Decoder = (frame: string | Uint8Array) => unknown
const BaseWire: { makeDecoder: (framing: Dialect.Framing, options: Wire.DecodeOptions) => Decoder } | undefined =
  baseDir === undefined ? undefined : await import(`${baseDir}/src/Wire.ts`)

const scriptEvents = (costSummary: boolean, ask: Script.Ask) => {
  const plan = Script.plan({
    sessionId: "ses_bench0001",
    goal: "Find the cheapest flight from Paris to Lisbon next Tuesday",
    startUrl: "https://www.example-travel.com/flights",
    maxActions: 20,
    actions: 8,
    ask,
    costSummary
  })
  const events = Array.from({ length: plan.head.length }, (_, i) => plan.head.at(i))
  if (Option.isSome(plan.request)) {
    events.push(...plan.tail({ granted: true, resource_type: "request_user_input", input: "a@b.c" }))
  }
  return events
}

/** Frames grouped by their event name, in order of first appearance. */
const byEvent = (frames: ReadonlyArray<string>): Array<[string, Array<string>]> => {
  const groups = new Map<string, Array<string>>()
  for (const frame of frames) {
    const name = String((JSON.parse(frame) as { readonly event?: unknown }).event)
    groups.set(name, [...(groups.get(name) ?? []), frame])
  }
  return [...groups]
}

const encoder = new TextEncoder()
const sets: Array<{ readonly name: string; readonly framing: Dialect.Framing; readonly frames: ReadonlyArray<string> }> = [
  { name: "loadgen action_run", framing: Dialect.documented.framing, frames: [actionRunFrame(12345)] },
  {
    name: "simulator script, documented",
    framing: Dialect.documented.framing,
    frames: scriptEvents(false, "input").map((e) => Wire.encodeEvent(Dialect.documented.framing, e))
  },
  ...byEvent(scriptEvents(true, "input").map((e) => Wire.encodeEvent(Dialect.documented.framing, e)))
    .map(([event, frames]) => ({ name: `  of which ${event}`, framing: Dialect.documented.framing, frames })),
  {
    name: "simulator script, observed (+heartbeat, connected)",
    framing: Dialect.observed.framing,
    frames: [{ _tag: "Connected" } as const, ...scriptEvents(true, "permission"), { _tag: "Heartbeat" } as const]
      .map((e) => Wire.encodeEvent(Dialect.observed.framing, e))
  },
  {
    name: "simulator script, type-data",
    framing: "type-data",
    frames: scriptEvents(false, "input").map((e) => Wire.encodeEvent("type-data", e))
  },
  {
    name: "simulator script, flat",
    framing: "flat",
    frames: scriptEvents(false, "input").map((e) => Wire.encodeEvent("flat", e))
  },
  {
    name: "unrecognized, many objects",
    framing: "event-data",
    frames: [JSON.stringify({ event: "mystery", data: Array.from({ length: 40 }, (_, i) => ({ i, a: [i], b: {} })) })]
  },
  {
    name: "unrecognized, strings with brackets and escapes",
    framing: "event-data",
    frames: [
      JSON.stringify({
        event: "mystery",
        data: Array.from({ length: 30 }, (_, i) => ({ text: `step ${i}: "quoted" [x] {y} \\ \\"`, list: [i, i + 1] }))
      })
    ]
  }
]

let sink = 0
const touch = (value: unknown) => {
  if (value !== undefined) sink++
}

/** CPU nanoseconds per call of `run` over `frames` (process CPU time: steadier than wall time on a shared machine). */
const cpuNs = (frames: ReadonlyArray<string | Uint8Array>, run: (frame: string | Uint8Array) => unknown): number => {
  const n = frames.length
  const reps = Math.max(1, Math.round(20_000 / n)) * n
  const start = process.cpuUsage()
  for (let i = 0; i < reps; i++) if (run(frames[i % n]!) !== undefined) sink++
  const used = process.cpuUsage(start)
  return ((used.user + used.system) * 1000) / reps
}

const median = (xs: ReadonlyArray<number>): number => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)]!
}

const textDecoder = new TextDecoder()
const parseOnly = (frame: string | Uint8Array): unknown =>
  JSON.parse(typeof frame === "string" ? frame : textDecoder.decode(frame))

// Every frame of every set is decoded first, so the decoders have met every event (as in a session)
// before any is timed, whichever sets are timed.
for (let i = 0; i < 200; i++) {
  for (const set of sets) {
    const options = { maxFrameSize: Wire.defaultMaxFrameSize, strict: false }
    for (const decode of [Wire.makeDecoder(set.framing, options), BaseWire?.makeDecoder(set.framing, options)]) {
      for (const frame of set.frames) touch(decode?.(frame))
    }
  }
}

for (const set of sets) {
  if (only !== undefined && !set.name.includes(only)) continue
  const options = { maxFrameSize: Wire.defaultMaxFrameSize, strict: false }
  const decode = Wire.makeDecoder(set.framing, options)
  const baseDecode = BaseWire?.makeDecoder(set.framing, options)
  const bytes = set.frames.map((f) => encoder.encode(f))
  for (const [kind, frames] of [["string", set.frames], ["bytes", bytes]] as const) {
    const contenders: Array<[string, Decoder]> = [["JSON.parse", parseOnly], ["makeDecoder", decode]]
    if (baseDecode !== undefined) contenders.push(["base makeDecoder", baseDecode])
    const results = contenders.map(() => [] as Array<number>)
    for (let r = 0; r < rounds + 4; r++) {
      // Alternate the order each round; the first four rounds warm up.
      const order = r % 2 === 0 ? contenders.map((_, i) => i) : contenders.map((_, i) => contenders.length - 1 - i)
      for (const i of order) {
        const t = cpuNs(frames, contenders[i]![1])
        if (r >= 4) results[i]!.push(t)
      }
    }
    const parse = median(results[0]!)
    const size = Math.round(set.frames.reduce((a, f) => a + f.length, 0) / set.frames.length)
    const line = contenders.slice(1).map(([name], k) => {
      const i = k + 1
      const added = median(results[i]!.map((t, round) => t - results[0]![round]!))
      return `${name} ${median(results[i]!).toFixed(0)} ns (+${added.toFixed(0)}, x${(median(results[i]!) / parse).toFixed(2)})`
    })
    console.log(`${set.name} [${set.framing}, ${kind}, ~${size} chars, ${set.frames.length} frames]: JSON.parse ${parse.toFixed(0)} ns; ${line.join("; ")}`)
  }
}
if (sink === 0) console.log("(nothing decoded)")
