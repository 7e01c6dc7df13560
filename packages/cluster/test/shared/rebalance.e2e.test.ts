/**
 * Shards moved between live runners: nothing lost, nothing twice. Real processes, as in
 * failover.e2e.test.ts: PostgreSQL, the simulator (`e2eSimulatorLayer`), runner processes over
 * NodeClusterSocket and a client process that follows every session. Two runners hold 60
 * sessions; each asks for an approval after its first action and, once answered, streams without
 * pause (one event every 200 ms, about 28 s). Every session waits for its answer until all of
 * them do, however long the processes take to start on a loaded machine (sessions that streamed
 * from their start would end before the last one is ready, and none would be left to move). The
 * client then answers them, and a third runner joins meanwhile: the cluster moves shards from
 * the two live runners to it (each gives its sessions away: their channels drained, what they
 * received persisted, their runs resumed by the new owner). Every session must complete, and its
 * log as delivered must be exactly the simulator's script: sequence numbers 1..n, no event
 * missing, none twice. Outside a kill there is no loss window (docs/scale-out.md): any loss here
 * is a bug.
 *
 * The ways a hand-over loses events that this catches: a channel closed without reading what
 * the service had sent already (the service resumes the next channel after it: hence
 * `EventStream.Connection.drain`); under load, two runners writing one log (a runner whose
 * shard locks lapsed, as `@effect/cluster` gives them all up when a lock operation misses its
 * deadline, loses its shards while its activations still persist what they received: hence one
 * writer per log, `EventLog.Service.claim`); and a claim taken from a runner that is alive but
 * stalled longer than the claim's lease (the same stall costs it its shard locks), so that the
 * next owner takes the session while the stalled runner, awake again, still persists what its
 * channel received (at load averages of 12 to 15 on 2 cores that lost hundreds of events): hence
 * a claim holds while its runner lives (`EventLog.Service.live`: a lock of the runner's name on a
 * connection of its own). freeze.e2e.test.ts makes that stall on purpose.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { timeoutFail } from "../../src/internal/line.js"
import { E2eSimulator, e2eSimulatorLayer, freePort, startPostgres } from "../helpers/line.js"
import { everyEventOnce } from "./fixtures/everyEvent.js"
import { type ClientDone, fixture, fixtureEnv, startRunners } from "./fixtures/process.js"
import { type ClientAnswered, clientLine, type ClientReady } from "./fixtures/startCluster.js"

const SESSIONS = 60

// One action, the request, then 69 actions: about 140 events after the answer.
const ACTIONS = 70
const Live = e2eSimulatorLayer({ actions: ACTIONS, ask: "permission", askAfter: 1, frameDelay: 200 })

describe("cluster end to end: a runner joins while sessions stream", () => {
  layer(Live, { excludeTestServices: true, timeout: 420_000 })((it) => {
    it.effect("60 sessions stream on 2 runners; a third joins and takes shards over; every event of every session once", () =>
      Effect.scoped(Effect.gen(function*() {
        const simulator = yield* E2eSimulator
        const pg = yield* startPostgres
        const sdkEnv = fixtureEnv(simulator, pg.url)
        const ports = [yield* freePort, yield* freePort, yield* freePort]
        // The third runner loaded now, while the first two start, joining later (JOIN=stdin):
        // loading takes seconds.
        const joining = yield* fixture("runner.ts", { ...sdkEnv, RUNNER_PORT: String(ports[2]), JOIN: "stdin" })
        yield* startRunners(sdkEnv, ports.slice(0, 2))
        yield* joining.nextLine((line) => line === "loaded").pipe(
          timeoutFail("240 seconds", () => new Error(`third runner did not load: ${joining.stderr()}`))
        )

        const client = yield* fixture("client.ts", { ...sdkEnv, SESSIONS: String(SESSIONS), MAX_ACTIONS: String(ACTIONS) })
        const ready = yield* clientLine<ClientReady>(client, "ready", 240)
        const before = new Set(ready.runners.map(String))
        assert.isFalse(before.has(`127.0.0.1:${ports[2]}`))

        // The client answers every session (each streams once its answer is in), and the third
        // runner joins meanwhile: on a loaded machine the answers alone take a minute or more,
        // longer than a session streams, so the join does not wait for them.
        client.child.stdin!.write("answer\n")
        joining.child.stdin!.write("join\n")
        yield* joining.nextLine((line) => line === "ready").pipe(
          timeoutFail("240 seconds", () => new Error(`third runner did not start: ${joining.stderr()}`))
        )
        assert.deepStrictEqual((yield* clientLine<ClientAnswered>(client, "answered", 240)).errors, [])

        yield* everyEventOnce(yield* clientLine<ClientDone>(client, "done", 300), simulator, SESSIONS)
        // The new runner took sessions over while they ran (the shards did move).
        const taken = joining.lines.filter((line) => line.includes("Took session")).length
        assert.isAtLeast(taken, 1, `no session was taken over by the joining runner: ${joining.stderr()}`)
        // Sessions created at the service: exactly the ones started.
        assert.strictEqual(yield* simulator.httpRequests, SESSIONS)
      })), 420_000)
  })
})
