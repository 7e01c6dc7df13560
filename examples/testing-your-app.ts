/**
 * An application built on `AgentSessions`, written so it can be tested without a network.
 *
 * `bookTable` is the application's own logic: it runs a session, fills in the customer's email
 * when the agent asks for it, approves the agent's steps except paying anything, and turns the
 * outcome into a `Booking`. It only needs `AgentSessions` in its context: the program below
 * provides the real service (`NodeAgentSessions.layerConfig()`), and its test,
 * `examples/testing-your-app.test.ts`, provides the test kit (`AgentSessionsTest.layer`).
 *
 * Environment: AGENT_SESSION_API_KEY, AGENT_SESSION_BASE_URL (AGENT_SESSION_WS_URL optional) and,
 * optionally, AGENT_SESSION_DIALECT (see examples/quickstart.ts).
 *
 *   npx tsx examples/testing-your-app.ts          # the application, against the service
 *   npx vitest run examples/testing-your-app.test.ts  # its test, no network
 */
import { pathToFileURL } from "node:url"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { AgentSessions, Answer, NodeAgentSessions, type SessionEvent } from "effect-agent-session"

/** What the application asks for. */
export interface BookingRequest {
  readonly restaurantUrl: string
  readonly partySize: number
  readonly email: string
}

/** What the application reports. */
export type Booking =
  | { readonly _tag: "Booked"; readonly summary: string; readonly actions: number; readonly cost: number }
  | { readonly _tag: "Abandoned"; readonly reason: string }

/** The application's policy for the agent's requests. */
export const answerFor = (customerEmail: string) => (request: SessionEvent.ExternalResourceRequested): Answer.Answer => {
  switch (request.resource_type) {
    case "request_user_input":
      return Answer.grant(customerEmail)
    case "admin_permission_request":
      return /\b(pay|deposit|card)\b/i.test(request.reason) ? Answer.deny() : Answer.grant()
    default:
      return Answer.deny()
  }
}

/** Books a table through the agent. */
export const bookTable = (booking: BookingRequest) =>
  AgentSessions.run(
    {
      start_url: booking.restaurantUrl,
      max_actions: 15,
      goal: `Book a table for ${booking.partySize} tonight`
    },
    { onRequest: (request) => Effect.succeed(answerFor(booking.email)(request)) }
  ).pipe(
    Effect.map((outcome): Booking => ({
      _tag: "Booked",
      summary: outcome.response,
      actions: outcome.actions,
      cost: Option.getOrElse(outcome.totalCost, () => 0)
    })),
    // A session that stops before `complete` is an answer of its own for this application.
    Effect.catchTag("SessionEndedWithoutComplete", (ended) =>
      Effect.succeed<Booking>({
        _tag: "Abandoned",
        reason: Option.getOrElse(ended.lastError, () => "the session ended early")
      }))
  )

// Run as a program (not when imported by the test).
if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  bookTable({ restaurantUrl: "https://example.com/reservations", partySize: 4, email: "jane@example.com" }).pipe(
    Effect.flatMap((booking) =>
      booking._tag === "Booked"
        ? Console.log(`Booked: ${booking.summary} (${booking.actions} actions, cost ${booking.cost})`)
        : Console.log(`Abandoned: ${booking.reason}`)
    ),
    Effect.provide(NodeAgentSessions.layerConfig()),
    NodeRuntime.runMain
  )
}
