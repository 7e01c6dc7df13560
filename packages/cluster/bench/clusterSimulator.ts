/**
 * The simulator in its own process for the cluster benchmark (packages/cluster/bench/cluster.ts): started with
 * `node --import tsx packages/cluster/bench/clusterSimulator.ts <actions> <frameMs>` and an IPC channel, it sends
 * `{ type: "ready", baseUrl, wsUrl, accountKey }`, then answers each `{ type: "script", id }` with
 * `{ type: "script", id, events }` (the session's script, keep-alives left out, encoded), and
 * `{ type: "answers" }` with the number of answers it received per session; and
 * `{ type: "connected", ids, at }` with `{ type: "connected", count }`: how many of the sessions
 * `ids` have had at least `at` channels accepted.
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { SessionEvent } from "effect-agent-session"
import * as Simulator from "effect-agent-session-simulator/Simulator"

const actions = Number(process.argv[2] ?? "60")
const frameMs = Number(process.argv[3] ?? "1000")
const ask = process.argv[4] === "permission" ? "permission" as const : "none" as const
const encode = Schema.encodeSync(Schema.Array(SessionEvent.SessionEvent))

const program = Effect.gen(function*() {
  const simulator = yield* Simulator.make({
    port: 0,
    scenario: { actions, ask, frameDelay: `${frameMs} millis` },
    // The benchmark holds up to tens of thousands of sessions of one key.
    limits: { maxSessionsPerKey: 50_000, maxSessions: 50_000 }
  })
  process.on("message", (message: { readonly type?: string; readonly id?: string; readonly ids?: ReadonlyArray<string>; readonly at?: number }) => {
    if (message.type === "connected" && message.ids !== undefined) {
      const at = message.at ?? 1
      const count = message.ids.filter((id) => Effect.runSync(simulator.connections(id)) >= at).length
      process.send?.({ type: "connected", count })
      return
    }
    if (message.type === "script" && typeof message.id === "string") {
      const id = message.id
      const events = Effect.runSync(simulator.script(id)).filter((e) => e._tag !== "Heartbeat" && e._tag !== "Connected")
      const answers = Effect.runSync(simulator.answers(id)).length
      process.send?.({ type: "script", id, events: encode(events), answers })
    }
  })
  process.on("disconnect", () => process.exit(0))
  process.send?.({ type: "ready", baseUrl: simulator.baseUrl, wsUrl: simulator.wsUrl, accountKey: simulator.accountKey })
  return yield* Effect.never
})

Effect.runFork(Effect.scoped(program))
