/**
 * Answering the agent's requests yourself.
 *
 * `AgentSessions.start` creates the session and gives a `RunningSession` (scoped: the connection
 * closes with the scope). You consume its `events`, answer each `external_resource_requested` with
 * `respond(request, answer)`, and await `outcome`.
 *
 * - `request_user_input`: the agent needs a value for `field_name`: grant it with the input.
 * - `admin_permission_request`: the agent asks for approval: approve (grant) or deny.
 * - Any other kind (the service may add some, U15) arrives as `{ _tag: "Unrecognized", raw }`
 *   and can be answered too: here it is denied.
 *
 * Environment: AGENT_SESSION_API_KEY, AGENT_SESSION_BASE_URL (AGENT_SESSION_WS_URL optional) and,
 * optionally, AGENT_SESSION_DIALECT (see examples/quickstart.ts).
 *
 *   npx tsx examples/answer-requests.ts
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { AgentSessions, Answer, NodeAgentSessions, SessionEvent } from "effect-agent-session"

/** The values this application can fill in, by field name. */
const profile: Record<string, string> = {
  email: "jane@example.com",
  name: "Jane Doe"
}

/** Actions this application never approves. */
const forbidden = /\b(delete|pay|purchase)\b/i

/** The application's decision for one request. */
const decide = (request: SessionEvent.ExternalResourceRequested): Answer.Answer => {
  if (request.resource_type === "request_user_input") {
    const field = Option.getOrElse(request.field_name, () => "")
    const value = profile[field]
    return value === undefined ? Answer.deny() : Answer.grant(value)
  }
  if (request.resource_type === "admin_permission_request") {
    return forbidden.test(request.reason) ? Answer.deny() : Answer.grant()
  }
  // An unrecognized kind of request: refuse what we do not understand.
  return Answer.deny()
}

const describeAnswer = (answer: Answer.Answer): string =>
  Answer.isGrant(answer)
    ? Option.match(answer.input, { onNone: () => "grant", onSome: (input) => `grant with input "${input}"` })
    : "deny"

const program = Effect.scoped(
  Effect.gen(function*() {
    const running = yield* AgentSessions.start({
      start_url: "https://example.com/contact",
      max_actions: 10,
      goal: "Fill in the contact form"
    })
    yield* Console.log(`Session ${running.session.session_id} created`)

    // The connection state, as it changes: Connecting -> Open -> ... -> Closed.
    yield* running.state.changes.pipe(
      Stream.changesWith((a, b) => a._tag === b._tag),
      Stream.runForEach((state) => Console.log(`state: ${state._tag}`)),
      Effect.forkScoped
    )

    // The events, once: print each, answer each request as it comes.
    yield* running.events.pipe(
      Stream.runForEach((event) => {
        if (event._tag !== "ExternalResourceRequested") {
          return Console.log(`event: ${event._tag}`)
        }
        const answer = decide(event)
        return Console.log(
          `request: ${SessionEvent.resourceTypeRaw(event.resource_type)} (${event.reason}) -> ${describeAnswer(answer)}`
        ).pipe(Effect.zipRight(running.respond(event, answer)))
      })
    )

    // The events are consumed: the outcome is already known.
    const outcome = yield* running.outcome
    yield* Console.log(`Outcome: ${outcome.response}`)
    yield* Console.log(`Actions: ${outcome.actions}/${outcome.maxActions}`)
  })
)

program.pipe(
  Effect.provide(NodeAgentSessions.layerConfig()),
  NodeRuntime.runMain
)
