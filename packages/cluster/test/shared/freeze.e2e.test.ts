/**
 * A false failure detection while sessions stream: nothing lost, nothing twice. Real processes, as
 * in rebalance.e2e.test.ts: PostgreSQL, the simulator (`e2eSimulatorLayer`), three runner processes
 * and a client process that follows every session. Each session asks for an approval after its
 * first action and, once answered, streams without pause (one event every 200 ms, about 48 s).
 * Once every answer is in, the runner that holds the most sessions is frozen (SIGSTOP) for 10 s
 * while its sessions stream, then resumed (SIGCONT): longer than the detection takes to declare
 * it dead (about 4 s: `NodeClusterSessions.defaultDetection`), than the engine's deadline for its
 * shard-lock operations (5 s: the runner gives its shards up when it wakes) and than the lease of
 * its sessions' log claims (6 s without renewal). The other runners must not write its sessions'
 * logs while it is frozen (it lives: its claims hold), and when it wakes it persists what its
 * channels received and hands over, or goes on. Every session must complete, and its log as
 * delivered must be exactly the simulator's script: sequence numbers 1..n, no event missing, none
 * twice. Nobody died: any loss here is a bug.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { e2eSimulatorLayer } from "../helpers/line.js"
import { everyEventOnce } from "./fixtures/everyEvent.js"
import type { ClientDone } from "./fixtures/process.js"
import { type ClientAnswered, clientLine, startCluster } from "./fixtures/startCluster.js"

const SESSIONS = 45

// One action, the request, then 119 actions: about 240 events after the answer.
const ACTIONS = 120
const Live = e2eSimulatorLayer({ actions: ACTIONS, ask: "permission", askAfter: 1, frameDelay: 200 })

describe("cluster end to end: a runner frozen past the detection while sessions stream", () => {
  layer(Live, { excludeTestServices: true, timeout: 420_000 })((it) => {
    it.effect("45 sessions stream on 3 runners; the busiest is frozen 10 s, then resumed; every event of every session once", () =>
      Effect.scoped(Effect.gen(function*() {
        const { client, runners, simulator, victim, victimHeld } = yield* startCluster(SESSIONS, { MAX_ACTIONS: String(ACTIONS) })
        assert.isAtLeast(victimHeld, 1)

        client.child.stdin!.write("answer\n")
        assert.deepStrictEqual((yield* clientLine<ClientAnswered>(client, "answered", 240)).errors, [])

        // Frozen while its sessions stream, past the detection, the shard-lock deadline and the
        // claims' lease; then resumed.
        victim.child.kill("SIGSTOP")
        yield* Effect.sleep("10 seconds")
        victim.child.kill("SIGCONT")

        const done = yield* clientLine<ClientDone>(client, "done", 300)
        yield* everyEventOnce(done, simulator, SESSIONS)
        for (const session of done.sessions) {
          assert.strictEqual((yield* simulator.answers(session.id)).length, 1, `${session.id}: answered twice at the service`)
        }
        // The frozen runner lived through it, as did the others.
        for (const runner of runners) assert.strictEqual(runner.child.exitCode, null, runner.stderr())
        // Sessions created at the service: exactly the ones started.
        assert.strictEqual(yield* simulator.httpRequests, SESSIONS)
      })), 420_000)
  })
})
