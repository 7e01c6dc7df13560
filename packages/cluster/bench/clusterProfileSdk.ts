/**
 * The floor of packages/cluster/bench/clusterProfile.ts (`--plain`): the plain SDK holding the same sessions in
 * one process, no cluster. Started with `node --expose-gc --import tsx packages/cluster/bench/clusterProfileSdk.ts`
 * and the simulator's AGENT_SESSION_* variables; prints `ready`, then on stdin:
 * - `hold <tag> <n>`: starts sessions until it holds n (each one's events drained with
 *   `forEachBatch`, as a runner does, nothing kept), waits for each one's first event, prints `hold <tag>`;
 * - `mem <tag>`, `count <tag>`, `snap <tag> <file>`: as the runner fixture of test/cluster.
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import { createInterface } from "node:readline"
import { writeHeapSnapshot } from "node:v8"
import { AgentSessions, NodeAgentSessions } from "effect-agent-session"
import { memLine } from "../test/shared/fixtures/memory.js"

const env = (name: string): string => process.env[name] ?? ""

let held = 0
const program = Effect.gen(function*() {
  const sessions = yield* AgentSessions.AgentSessions
  const holdOne = (i: number) =>
    Effect.gen(function*() {
      const first = yield* Deferred.make<void>()
      const running = yield* sessions.start(
        { start_url: `https://example.com/${i}`, max_actions: 100, goal: `Goal ${i}` },
        { keepEvents: false }
      )
      yield* running.forEachBatch(() => Deferred.succeed(first, undefined)).pipe(Effect.forkDaemon)
      yield* Deferred.await(first)
      held += 1
    })
  const runtime = yield* Effect.runtime<AgentSessions.AgentSessions>()
  const lines = createInterface({ input: process.stdin })
  lines.on("line", (line) => {
    const [word, tag, arg] = line.trim().split(" ")
    if (word === "hold") {
      const from = held
      const to = Number(arg)
      const run = Effect.forEach(Array.from({ length: to - from }, (_, k) => from + k), holdOne, {
        concurrency: 50,
        discard: true
      })
      // The sessions' scopes live as long as the process (it is killed at the end).
      Effect.runFork(Effect.provide(Effect.scoped(Effect.zipRight(run, Effect.never)), runtime.context))
      const wait = Effect.sync(() => held >= to).pipe(
        Effect.repeat({ schedule: Schedule.spaced("100 millis"), until: (done) => done })
      )
      void Effect.runPromise(wait).then(() => process.stdout.write(`hold ${tag}\n`))
    } else if (word === "count") {
      process.stdout.write(`count ${tag} ${held}\n`)
    } else if (word === "mem") {
      process.stdout.write(memLine(tag))
    } else if (word === "snap" && arg !== undefined) {
      writeHeapSnapshot(arg)
      process.stdout.write(`snap ${tag}\n`)
    }
  })
  process.stdout.write("ready\n")
  return yield* Effect.never
})

Effect.runFork(
  program.pipe(
    Effect.provide(NodeAgentSessions.layer({
      apiKey: env("AGENT_SESSION_API_KEY"),
      baseUrl: env("AGENT_SESSION_BASE_URL"),
      wsUrl: env("AGENT_SESSION_WS_URL")
    }))
  )
)
