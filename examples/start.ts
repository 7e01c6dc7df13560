/**
 * `npm start`: a whole session against the embedded simulator, no key and no network beyond
 * loopback. Starts the simulator on a free port, runs `AgentSessions.run`, prints each event as it
 * arrives, answers the agent's request, and ends with the outcome and its cost.
 *
 * Set AGENT_SESSION_DIALECT=observed to speak the service's own client's dialect.
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { AgentSessions, Answer, Dialect, NodeAgentSessions, SessionEvent } from "effect-agent-session"
import * as Simulator from "effect-agent-session-simulator/Simulator"

const dialect = process.env["AGENT_SESSION_DIALECT"] === "observed" ? Dialect.observed : Dialect.documented
const maxActions = 6

const describe = (actions: { count: number }) =>
  SessionEvent.$match({
    Started: (e) => `started      session ${e.sessionId} at ${e.start_url}`,
    BrowserStarted: (e) => `browser      on ${e.url}`,
    ActionRun: (e) => {
      actions.count += 1
      return `action ${actions.count}/${maxActions} ${e.name}: ${e.content}`
    },
    ThoughtsAndMemories: (e) => `thought      ${e.thought}`,
    Complete: (e) => `complete     ${e.response}`,
    AgentError: (e) => `error        ${e.error}`,
    ExternalResourceRequested: (e) =>
      `request      ${SessionEvent.resourceTypeRaw(e.resource_type)}: ${e.reason}${
        Option.match(e.field_name, { onNone: () => "", onSome: (f) => ` (field ${f})` })
      }`,
    ExternalResourceGranted: (e) => `granted      ${e.granted ? "yes" : "no"}`,
    Heartbeat: () => "heartbeat",
    Connected: () => "connected",
    Unrecognized: (e) => `unrecognized ${e.event}`
  })

const program = Effect.gen(function*() {
  const simulator = yield* Simulator.Simulator
  yield* Console.log(`Simulator (${dialect.name} dialect) at ${simulator.baseUrl}`)

  const agent = yield* AgentSessions.onboard({
    name: `demo-agent-${Date.now()}`,
    website: "https://example.com",
    domain: "research"
  })
  yield* Console.log(`Onboarded agent ${agent.agentId} (${agent.name})`)

  const actions = { count: 0 }
  const line = describe(actions)
  const outcome = yield* AgentSessions.run(
    { start_url: "https://example.com", max_actions: maxActions, goal: "Find the opening hours" },
    {
      agent: { agentId: agent.agentId, apiKey: agent.apiKey },
      onEvent: (event) => Console.log(line(event)),
      onRequest: (request) =>
        Effect.as(
          Console.log(`answering    ${request.resource_type === "request_user_input" ? "with input" : "approve"}`),
          request.resource_type === "request_user_input" ? Answer.grant("demo@example.com") : Answer.grant()
        )
    }
  )
  yield* Console.log("")
  yield* Console.log(`Outcome: ${outcome.response}`)
  yield* Console.log(`Type: ${SessionEvent.responseTypeRaw(outcome.type)}`)
  yield* Console.log(`Actions: ${outcome.actions}/${outcome.maxActions}`)
  yield* Console.log(
    `Total cost: ${Option.match(outcome.totalCost, { onNone: () => "not reported", onSome: (c) => c.toFixed(2) })}`
  )
})

const SimulatorLive = Simulator.layer({ port: 0, dialect, scenario: { actions: 4, ask: "permission", frameDelay: "150 millis" } })

const SdkLive = Layer.unwrapEffect(
  Effect.map(Simulator.Simulator, (simulator) =>
    NodeAgentSessions.layer({
      apiKey: simulator.accountKey,
      baseUrl: simulator.baseUrl,
      wsUrl: simulator.wsUrl,
      dialect
    }))
)

program.pipe(
  Effect.provide(SdkLive),
  Effect.provide(SimulatorLive),
  NodeRuntime.runMain
)
