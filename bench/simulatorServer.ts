/**
 * The reference simulator (src/simulator) in its own process, for the create-session figure:
 * `node --import tsx bench/simulatorServer.ts` sends `{ type: "ready", port, accountKey }` to
 * its parent (or prints the address) and serves until it is stopped.
 */
import * as Effect from "effect/Effect"
import * as Simulator from "../src/simulator/Simulator.js"

const program = Effect.gen(function*() {
  const simulator = yield* Simulator.make({ port: 0 })
  if (process.send !== undefined) {
    process.send({ type: "ready", port: simulator.port, accountKey: simulator.accountKey })
    process.on("disconnect", () => process.exit(0))
  } else {
    console.log(`simulator on ${simulator.baseUrl} (account key ${simulator.accountKey})`)
  }
  return yield* Effect.never
})

Effect.runFork(Effect.scoped(program))
