/**
 * The reference simulator (packages/simulator) in its own process, for the create-session and
 * create-to-first-event figures: `node --import tsx bench/simulatorServer.ts [short]` sends
 * `{ type: "ready", port, accountKey }` to its parent (or prints the address) and serves until
 * it is stopped.
 *
 * `short`: every session's script is short and immediate: one action, no request, no pause
 * between frames, so a session sends exactly five events (`started`, `browser_started`,
 * `thoughts_and_memories`, `action_run`, `complete`), `started` first, as soon as it connects.
 */
import * as Effect from "effect/Effect"
import * as Simulator from "effect-agent-session-simulator/Simulator"

/** The events of a session's script under `short`. */
export const shortScriptEvents = 5

const short = process.argv[2] === "short"

const program = Effect.gen(function*() {
  const simulator = yield* Simulator.make({
    port: 0,
    ...(short ? { scenario: { actions: 1, frameDelay: 0, ask: "none" as const } } : {})
  })
  if (process.send !== undefined) {
    process.send({ type: "ready", port: simulator.port, accountKey: simulator.accountKey })
    process.on("disconnect", () => process.exit(0))
  } else {
    console.log(`simulator on ${simulator.baseUrl} (account key ${simulator.accountKey})`)
  }
  return yield* Effect.never
})

Effect.runFork(Effect.scoped(program))
