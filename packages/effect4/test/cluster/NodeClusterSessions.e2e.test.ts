/**
 * The Effect 4 cluster end to end, with real processes: PostgreSQL (started here, on a free
 * loopback port), the simulator (a child process), three Effect 4 runner processes
 * (`cluster/test/fixtures/runner.ts`, every connection between them proving the cluster secret)
 * and a client-only member in this process. The client starts sessions and follows them; once
 * every session waits for its answer, the runner holding the most sessions is killed with
 * SIGKILL, and the client answers every request. Every session must be taken over by a surviving
 * runner (its notice `Took session <id> over`), reach `complete`, and deliver its log exactly once:
 * sequence numbers 1..n, one request, one grant, nothing twice. The Effect 3 version is
 * packages/cluster/test/failover.e2e.test.ts.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as Answer from "../../src/Answer.js"
import type * as SessionEvent from "../../src/SessionEvent.js"
import { ClusterSessions, type EventLog, NodeClusterSessions } from "../../cluster/src/index.js"
import { startRunners } from "../../cluster/test/fixtures/process.js"
import { startPostgres } from "../../cluster/test/helpers/line.js"
import { freePort } from "effect-agent-session-test-support/postgresServer"
import { Sim, sdkLayer, simLayer } from "../helpers/sdk.js"

const SESSIONS = 6
const SECRET = "e2e-cluster-secret-0123456789abcdef"

interface Followed {
  readonly id: string
  readonly delivered: Array<EventLog.LoggedEvent>
  readonly request: Deferred.Deferred<SessionEvent.ExternalResourceRequested>
}

describe("the Effect 4 cluster end to end", () => {
  layer(simLayer({ actions: 4, ask: "permission", frameDelay: 5 }), { excludeTestServices: true, timeout: "420 seconds" })((it) => {
    it.effect("sessions over 3 Effect 4 runner processes; the runner holding the most SIGKILLed while they wait; each is taken over and delivers every event once", () =>
      Effect.gen(function*() {
        const sim = yield* Sim
        const pg = yield* startPostgres
        const env = {
          AGENT_SESSION_API_KEY: sim.accountKey,
          AGENT_SESSION_BASE_URL: sim.baseUrl,
          AGENT_SESSION_WS_URL: sim.wsUrl,
          CLUSTER_DATABASE_URL: pg.url,
          CLUSTER_SECRET: SECRET
        }
        const ports = [yield* Effect.promise(freePort), yield* Effect.promise(freePort), yield* Effect.promise(freePort)]
        const runners = yield* startRunners(env, ports)

        const client = NodeClusterSessions.layerClient({ databaseUrl: pg.url, secret: SECRET, maxConnections: 4 }).pipe(
          Layer.provide(sdkLayer("websocket"))
        )
        yield* Effect.gen(function*() {
          const sessions = yield* ClusterSessions.ClusterSessions
          const followed = yield* Effect.forEach(Array.from({ length: SESSIONS }, (_, i) => i), (i) =>
            Effect.gen(function*() {
              const info = yield* sessions.start({ start_url: `https://example.com/${i}`, max_actions: 10, goal: `Goal ${i}` })
              const f: Followed = {
                id: info.session_id,
                delivered: [],
                request: yield* Deferred.make<SessionEvent.ExternalResourceRequested>()
              }
              const fiber = yield* sessions.events(info.session_id).pipe(
                Stream.runForEach((logged) =>
                  Effect.sync(() => {
                    f.delivered.push(logged)
                    if (logged.event._tag === "ExternalResourceRequested") Deferred.doneUnsafe(f.request, Effect.succeed(logged.event))
                  })
                ),
                Effect.forkScoped
              )
              return { f, fiber }
            }), { concurrency: 3 })

          // Every session waits for its answer, held by a runner.
          const requests = yield* Effect.forEach(followed, ({ f }) => Deferred.await(f.request)).pipe(
            Effect.timeoutOrElse({ duration: "120 seconds", orElse: () => Effect.die(new Error("the sessions did not all ask")) })
          )
          const before = yield* Effect.forEach(followed, ({ f }) => Effect.map(sessions.status(f.id), (s) => Option.getOrNull(s.runner)))
          const held = new Map<string, Array<string>>()
          before.forEach((runner, i) => held.set(String(runner), [...(held.get(String(runner)) ?? []), followed[i]!.f.id]))
          assert.isFalse(held.has("null"), `sessions per runner: ${JSON.stringify([...held])}`)

          // Kill the runner holding the most sessions, then answer everything.
          const [victimAddress, moved] = [...held.entries()].sort((a, b) => b[1].length - a[1].length)[0]!
          const victimIndex = ports.findIndex((port) => victimAddress.endsWith(`:${port}`))
          assert.isAtLeast(victimIndex, 0, victimAddress)
          runners[victimIndex]!.child.kill("SIGKILL")
          yield* Effect.forEach(followed, ({ f }, i) => sessions.respond(f.id, requests[i]!, Answer.grant()), { concurrency: "unbounded" })
          yield* Effect.forEach(followed, ({ fiber }) => Fiber.join(fiber)).pipe(
            Effect.timeoutOrElse({ duration: "180 seconds", orElse: () => Effect.die(new Error("the sessions' events did not all end")) })
          )

          for (const { f } of followed) {
            const seqs = f.delivered.map((l) => l.seq)
            // Contiguous from 1: nothing twice, nothing missing.
            assert.deepStrictEqual(seqs, seqs.map((_, i) => i + 1), f.id)
            const tags = f.delivered.map((l) => l.event._tag)
            assert.strictEqual(tags.at(-1), "Complete", `${f.id}: ${tags.join(",")}`)
            assert.strictEqual(tags.filter((t) => t === "ExternalResourceRequested").length, 1, `${f.id}: ${tags.join(",")}`)
            assert.strictEqual(tags.filter((t) => t === "ExternalResourceGranted").length, 1, `${f.id}: ${tags.join(",")}`)
            assert.strictEqual(tags.filter((t) => t === "ActionRun").length, 4, `${f.id}: ${tags.join(",")}`)
            const after = yield* sessions.status(f.id)
            assert.strictEqual(after.run, "complete", f.id)
            assert.strictEqual(after.lastSeq, seqs.length, f.id)
          }
          // Each session of the killed runner was taken over by a survivor, which said so.
          assert.isAtLeast(moved.length, 1)
          const survivors = runners.filter((_, i) => i !== victimIndex)
          for (const id of moved) {
            assert.isTrue(
              survivors.some((runner) => runner.lines.some((line) => line.includes(`Took session ${id} over`))),
              `${id}: no survivor took it over:\n${survivors.map((r) => r.lines.join("\n")).join("\n---\n")}`
            )
          }
        }).pipe(Effect.provide(client))
      }), 420_000)
  })
})
