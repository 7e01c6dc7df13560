/**
 * Quickstart: a whole session in one call.
 *
 * `AgentSessions.run` creates the session, connects to its event channel before any event can be
 * missed, answers the agent's requests with `onRequest`, counts the chargeable actions against
 * `max_actions`, and gives the `Outcome` once `complete` arrives.
 *
 * Configuration comes from the environment (`NodeAgentSessions.layerConfig()`):
 *
 *   AGENT_SESSION_API_KEY   your account key
 *   AGENT_SESSION_BASE_URL  the HTTP base URL, such as https://agents.example.com
 *   AGENT_SESSION_WS_URL    optional: the WebSocket base URL (default: the base URL, ws:// or wss://)
 *   AGENT_SESSION_DIALECT   optional: documented (default) or observed
 *
 *   npx tsx examples/quickstart.ts
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { AgentSessions, Answer, NodeAgentSessions, SessionEvent } from "effect-agent-session"

const program = Effect.gen(function*() {
  const outcome = yield* AgentSessions.run(
    { start_url: "https://example.com", max_actions: 10, goal: "Find the opening hours" },
    {
      // Every event, as it arrives.
      onEvent: (event) => Console.log(`event: ${event._tag}`),
      // The agent asked for input or approval: grant it (with input where a field is named).
      onRequest: (request) =>
        Effect.succeed(
          Option.isSome(request.field_name) ? Answer.grant("jane@example.com") : Answer.grant()
        )
    }
  )

  yield* Console.log(`Session: ${outcome.sessionId}`)
  yield* Console.log(`Outcome: ${outcome.response}`)
  yield* Console.log(`Type: ${SessionEvent.responseTypeRaw(outcome.type)}`)
  yield* Console.log(`Actions: ${outcome.actions}/${outcome.maxActions}`)
  yield* Console.log(
    `Total cost: ${Option.match(outcome.totalCost, { onNone: () => "not reported", onSome: (cost) => String(cost) })}`
  )
})

program.pipe(
  Effect.provide(NodeAgentSessions.layerConfig()),
  NodeRuntime.runMain
)
