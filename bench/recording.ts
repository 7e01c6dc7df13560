/**
 * What recording a session costs (issue 23): one session of `--frames` `action_run` frames sent
 * as fast as the socket takes them (the simulator's `bulkActions`), run through the façade with
 * and without `Recording.record`, alternately, `--rounds` times; the medians of the time to the
 * outcome (the frames delivered) and to the recording flushed, and the file's size.
 *
 * The writer shares the event loop with the session: on a busy session what it costs shows as
 * the session's own time. Prints the figures; bench/ANALYSIS.md keeps the last ones.
 *
 *   npx tsx bench/recording.ts [--frames 50000] [--rounds 7]
 */
import { mkdtempSync, rmSync, statSync } from "node:fs"
import * as Os from "node:os"
import { join } from "node:path"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { AgentSessions, NodeAgentSessions, Recording } from "effect-agent-session"
import * as Simulator from "effect-agent-session-simulator/Simulator"

const arg = (name: string, fallback: number): number => {
  const at = process.argv.indexOf(`--${name}`)
  const value = at < 0 ? Number.NaN : Number(process.argv[at + 1])
  return Number.isFinite(value) && value > 0 ? value : fallback
}
const frames = arg("frames", 50_000)
const rounds = arg("rounds", 7)

const median = (values: ReadonlyArray<number>): number => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN
}

const program = Effect.gen(function*() {
  const sim = yield* Simulator.make({ scenario: { bulkActions: frames } })
  const sdk = NodeAgentSessions.layer({ apiKey: sim.accountKey, baseUrl: sim.baseUrl })
  const dir = mkdtempSync(join(Os.tmpdir(), "eas-bench-recording-"))
  const path = join(dir, "session.jsonl")
  yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(dir, { recursive: true, force: true })))

  const once = (record: boolean) =>
    Effect.gen(function*() {
      const started = performance.now()
      let outcomeAt = 0
      yield* AgentSessions.run({ start_url: "https://example.com", max_actions: frames + 10, goal: "bulk" }, {
        keepEvents: false
      }).pipe(
        Effect.tap(() => Effect.sync(() => void (outcomeAt = performance.now() - started))),
        Effect.tap(() =>
          Effect.flatMap(Effect.serviceOption(Recording.Recorder), (recorder) =>
            recorder._tag === "Some" ? recorder.value.flush : Effect.void)
        ),
        Effect.provide(record ? sdk.pipe(Recording.record({ path }), Layer.provide(NodeFileSystem.layer)) : sdk)
      )
      return { outcome: outcomeAt, flushed: performance.now() - started }
    })

  // One of each first, unmeasured (module loading, JIT).
  yield* once(false)
  yield* once(true)
  const plain: Array<number> = []
  const recorded: Array<number> = []
  const flushed: Array<number> = []
  for (let round = 0; round < rounds; round++) {
    plain.push((yield* once(false)).outcome)
    const withRecording = yield* once(true)
    recorded.push(withRecording.outcome)
    flushed.push(withRecording.flushed)
  }
  const bytes = statSync(path).size
  const lines = [
    `recording a session of ${frames} frames, ${rounds} rounds, medians (${Os.cpus().length} cores, Node ${process.version}):`,
    `  without recording: ${median(plain).toFixed(0)} ms to the outcome`,
    `  with recording:    ${median(recorded).toFixed(0)} ms to the outcome, ${median(flushed).toFixed(0)} ms to the file flushed`,
    `  per frame:         ${((median(recorded) - median(plain)) * 1000 / frames).toFixed(1)} us more`,
    `  file:              ${(bytes / 1024 / 1024).toFixed(1)} MiB (${(bytes / frames).toFixed(0)} bytes a frame)`
  ]
  yield* Effect.sync(() => console.log(lines.join("\n")))
}).pipe(Effect.scoped)

NodeRuntime.runMain(program)
