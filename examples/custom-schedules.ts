/**
 * Your own retry and reconnect policies, as `Schedule`s.
 *
 * - HTTP retries (`http.retry`): the schedule's input is the failed attempt's error. Only
 *   retryable errors are retried (transport errors, time-outs, 408, 429, 5xx), whatever the
 *   schedule, and each wait is at least what the service's `Retry-After` asks (capped by
 *   `http.maxRetryAfter`).
 * - Reconnects (`events.reconnect`, or `reconnect` on one run): the schedule's input is what
 *   ended the last attempt (a typed error, or a description such as an abnormal close). When it
 *   gives up, the events fail with `ConnectionLost`.
 *
 * Both are given once for every session, to `NodeAgentSessions.layerConfig` (or `.layer`); the
 * reconnect schedule can also be given to a single `AgentSessions.run` / `start`, where it wins.
 *
 * Environment: AGENT_SESSION_API_KEY, AGENT_SESSION_BASE_URL (AGENT_SESSION_WS_URL optional) and,
 * optionally, AGENT_SESSION_DIALECT (see examples/quickstart.ts).
 *
 *   npx tsx examples/custom-schedules.ts
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Console from "effect/Console"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import { AgentSessions, Answer, type Errors, type EventStream, NodeAgentSessions } from "effect-agent-session"

/** HTTP: up to 4 retries, exponential from 200 ms (200, 400, 800, 1600 ms), jittered. */
const httpRetry = Schedule.exponential("200 millis", 2).pipe(
  Schedule.jittered,
  Schedule.intersect(Schedule.recurs(4)),
  Schedule.tapInput((error: Errors.AgentApiError) => Console.log(`http retry after ${error._tag}`))
)

/**
 * Reconnect (defaults for every session): quickly at first (5 tries 100 ms apart), then every
 * 2 seconds, for at most one minute in all.
 */
const reconnect = Schedule.spaced("100 millis").pipe(
  Schedule.intersect(Schedule.recurs(5)),
  Schedule.andThen(Schedule.spaced("2 seconds")),
  Schedule.upTo("1 minute"),
  Schedule.tapInput((cause: EventStream.AttemptError) =>
    Console.log(`reconnecting after: ${typeof cause === "string" ? cause : cause._tag}`)
  )
)

/** A stricter reconnect policy for one run: 3 attempts, exponential from 50 ms. */
const patientButBrief = Schedule.exponential("50 millis").pipe(
  Schedule.intersect(Schedule.recurs(3)),
  Schedule.tapInput((cause: EventStream.AttemptError) =>
    Console.log(`(this run) reconnecting after: ${typeof cause === "string" ? cause : cause._tag}`)
  )
)

const SdkLive = NodeAgentSessions.layerConfig({
  http: { retry: httpRetry, timeout: Duration.seconds(15), maxRetryAfter: Duration.seconds(30) },
  events: { reconnect, idleTimeout: Duration.seconds(90) }
})

const request = { start_url: "https://example.com", max_actions: 10, goal: "Find the opening hours" }

const program = Effect.gen(function*() {
  // The layer's schedules apply.
  const first = yield* AgentSessions.run(request, { onRequest: () => Effect.succeed(Answer.grant()) })
  yield* Console.log(`First run: ${first.response}`)

  // This run's reconnect schedule wins over the layer's.
  const second = yield* AgentSessions.run(request, {
    reconnect: patientButBrief,
    onRequest: () => Effect.succeed(Answer.grant())
  })
  yield* Console.log(`Second run: ${second.response}`)
  yield* Console.log(
    `Total cost: ${
      Option.getOrElse(Option.zipWith(first.totalCost, second.totalCost, (a, b) => String(Math.round((a + b) * 100) / 100)), () => "not reported")
    }`
  )
})

program.pipe(
  Effect.provide(SdkLive),
  NodeRuntime.runMain
)
