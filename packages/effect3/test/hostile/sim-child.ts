/**
 * The reference simulator in a child process, for the hostile-peer suite: a crash must be
 * observable (the process exits), and memory is measured in the process that holds the state.
 *
 * Started with `fork` (an IPC channel) and configured by the environment: `SIM_DIALECT`
 * (`documented` or `observed`), `SIM_ACCOUNT_KEY`, `SIM_ASK` (`none`, `input`, `permission`),
 * `SIM_LIMITS` (JSON, a partial `Simulator.Limits`). It tells its parent
 * `{ type: "ready", port }`, and answers
 * - `{ type: "memory" }` with `{ type: "memory", rss, heapUsed }` (after a full GC when exposed);
 * - `{ type: "answers", id }` with `{ type: "answers", count }`;
 * - `{ type: "script", id }` with `{ type: "script", tags }` (the event tags known so far).
 * It exits when the parent disconnects.
 */
import * as Effect from "effect/Effect"
import * as Dialect from "../../src/Dialect.js"
import type * as Script from "effect-agent-session-simulator/Script"
import * as Simulator from "effect-agent-session-simulator/Simulator"

type Request =
  | { readonly type: "memory" }
  | { readonly type: "answers"; readonly id: string }
  | { readonly type: "script"; readonly id: string }

const program = Effect.gen(function*() {
  const limits = JSON.parse(process.env["SIM_LIMITS"] ?? "{}") as Partial<Simulator.Limits>
  const sim = yield* Simulator.make({
    port: 0,
    dialect: Dialect.fromName(process.env["SIM_DIALECT"] === "observed" ? "observed" : "documented"),
    accountKey: process.env["SIM_ACCOUNT_KEY"] ?? "sim-account-key",
    scenario: { actions: 2, frameDelay: "1 millis", ask: (process.env["SIM_ASK"] ?? "permission") as Script.Ask },
    handshakeTimeout: "2 seconds",
    limits
  })
  const send = (message: unknown) => process.send?.(message)
  process.on("message", (request: Request) => {
    switch (request.type) {
      case "memory": {
        globalThis.gc?.()
        const { heapUsed, rss } = process.memoryUsage()
        return send({ type: "memory", rss, heapUsed })
      }
      case "answers":
        return send({ type: "answers", count: Effect.runSync(sim.answers(request.id)).length })
      case "script":
        return send({ type: "script", tags: Effect.runSync(sim.script(request.id)).map((event) => event._tag) })
    }
  })
  process.on("disconnect", () => process.exit(0))
  send({ type: "ready", port: sim.port })
  return yield* Effect.never
})

Effect.runFork(Effect.scoped(program))
