/**
 * The reference simulator in a child process, for the load test: `node --import tsx
 * test/reliability/simulatorChild.ts`, started with `fork` (an IPC channel). It serves bulk
 * sessions (`started`, `browser_started`, `LOAD_BULK` `action_run` frames with no delay, `complete`),
 * tells its parent `{ type: "ready", port, accountKey }`, and answers:
 * - `{ type: "digests", ids }` with `{ type: "digests", digests: { [id]: { count, sha256 } } }`: the
 *   length of each session's script and the SHA-256 of its events, one documented-framing frame a
 *   line, so the parent can check every event of every session without shipping the events;
 * - `{ type: "memory" }` with `{ type: "memory", rss, heapUsed }`.
 * It exits when the parent disconnects.
 */
import * as Crypto from "node:crypto"
import * as Effect from "effect/Effect"
import * as Simulator from "effect-agent-session-simulator/Simulator"
import * as Wire from "../../src/Wire.js"

const bulk = Number(process.env["LOAD_BULK"] ?? "97")

type Request = { readonly type: "digests"; readonly ids: ReadonlyArray<string> } | { readonly type: "memory" }

const program = Effect.gen(function*() {
  const sim = yield* Simulator.make({
    port: 0,
    scenario: { ask: "none", bulkActions: bulk, frameDelay: 0 }
  })
  const send = (message: unknown) => process.send?.(message)
  process.on("message", (request: Request) => {
    if (request.type === "memory") {
      const { heapUsed, rss } = process.memoryUsage()
      send({ type: "memory", rss, heapUsed })
      return
    }
    const digests: Record<string, { count: number; sha256: string }> = {}
    for (const id of request.ids) {
      const script = Effect.runSync(sim.script(id))
      const hash = Crypto.createHash("sha256")
      for (const event of script) hash.update(`${Wire.encodeEvent("event-data", event)}\n`)
      digests[id] = { count: script.length, sha256: hash.digest("hex") }
    }
    send({ type: "digests", digests })
  })
  process.on("disconnect", () => process.exit(0))
  send({ type: "ready", port: sim.port, accountKey: sim.accountKey })
  return yield* Effect.never
})

Effect.runFork(Effect.scoped(program))
