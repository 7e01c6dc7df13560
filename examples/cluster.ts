/**
 * Sessions on the cluster engine, embedded: one process, in memory, no database.
 *
 * `ClusterSessions` is the façade of `effect-agent-session-cluster`. Here it runs on the embedded
 * single runner (`ClusterSessions.layerEmbedded`); to run a fleet, swap that layer for
 * `NodeClusterSessions.layerRunner` (on each runner) and `NodeClusterSessions.layerClient` (on the
 * web tier), both on PostgreSQL: the program does not change (see docs/scale-out.md).
 *
 * The program starts two sessions, follows each one's event log (every event with its sequence
 * number), answers the agent's requests from the log, and prints the outcomes.
 *
 * Environment: AGENT_SESSION_API_KEY, AGENT_SESSION_BASE_URL, AGENT_SESSION_WS_URL and, optionally,
 * AGENT_SESSION_DIALECT (see examples/quickstart.ts).
 *
 *   npx tsx examples/cluster.ts
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { ClusterSessions } from "effect-agent-session-cluster"
import { Answer, NodeAgentSessions, SessionEvent } from "effect-agent-session"

const goals = ["Find the opening hours", "Read the return policy"]

const follow = (sessions: ClusterSessions.Service, sessionId: string) =>
  sessions.events(sessionId).pipe(
    Stream.runForEach((logged) =>
      Effect.gen(function*() {
        yield* Console.log(`${sessionId} #${logged.seq} ${logged.event._tag}`)
        if (logged.event._tag === "ExternalResourceRequested") {
          // Any process of the cluster can answer: the answer is persisted, then reaches the
          // runner that holds the session.
          const answer = Option.isSome(logged.event.field_name) ? Answer.grant("jane@example.com") : Answer.grant()
          yield* sessions.respond(sessionId, logged.event, answer)
        }
      })
    )
  )

const program = Effect.gen(function*() {
  const sessions = yield* ClusterSessions.ClusterSessions
  yield* Effect.forEach(
    goals,
    (goal) =>
      Effect.gen(function*() {
        const session = yield* sessions.start({ start_url: "https://example.com", max_actions: 10, goal })
        yield* Console.log(`Started ${session.session_id}: ${goal}`)
        yield* follow(sessions, session.session_id)
        const outcome = yield* sessions.outcome(session.session_id)
        const status = yield* sessions.status(session.session_id)
        yield* Console.log(
          `Outcome of ${session.session_id}: ${outcome.response} (${outcome.actions}/${outcome.maxActions} actions, ` +
            `cost ${Option.getOrElse(outcome.totalCost, () => 0)}, type ${SessionEvent.responseTypeRaw(outcome.type)}, ` +
            `${status.lastSeq} events logged)`
        )
      }),
    { concurrency: "unbounded", discard: true }
  )
})

const MainLive = ClusterSessions.layerEmbedded().pipe(Layer.provide(NodeAgentSessions.layerConfig()))

program.pipe(Effect.provide(MainLive), NodeRuntime.runMain)
