/**
 * The events are a `Stream`: compose them with `Stream` operators.
 *
 * This pipeline
 * - taps every event to the log (`Effect.log`, with the session id as an annotation),
 * - answers the agent's requests on the way (`Stream.tap` + `respond`),
 * - takes events until `complete` (`Stream.takeUntil`),
 * - splits the actions from the rest (`Stream.partition` with `SessionEvent.$is("ActionRun")`),
 * - numbers the actions, and groups the agent's thoughts in batches (`Stream.groupedWithin`),
 * then reads the outcome.
 *
 * Environment: AGENT_SESSION_API_KEY, AGENT_SESSION_BASE_URL (AGENT_SESSION_WS_URL optional) and,
 * optionally, AGENT_SESSION_DIALECT (see examples/quickstart.ts).
 *
 *   npx tsx examples/stream-pipeline.ts
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Chunk from "effect/Chunk"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { AgentSessions, Answer, NodeAgentSessions, SessionEvent } from "effect-agent-session"

const program = Effect.scoped(
  Effect.gen(function*() {
    const running = yield* AgentSessions.start({
      start_url: "https://example.com",
      max_actions: 10,
      goal: "Compare the three pricing plans"
    })

    const events = running.events.pipe(
      // Tap to a log: every event, as it arrives.
      Stream.tap((event) =>
        Effect.log(`received ${event._tag}`).pipe(Effect.annotateLogs("sessionId", running.session.session_id))
      ),
      // Answer requests on the way: input where a field is named, approval otherwise.
      Stream.tap((event) =>
        SessionEvent.$is("ExternalResourceRequested")(event)
          ? running.respond(event, Option.isSome(event.field_name) ? Answer.grant("jane@example.com") : Answer.grant())
          : Effect.void
      ),
      // Until `complete` (the stream also ends there by itself: this makes the intent explicit).
      Stream.takeUntil(SessionEvent.isTerminal)
    )

    // Actions on one side, everything else on the other, consumed concurrently. `partition` runs
    // the events in the scope it is given: this inner scope ends that run once both sides are
    // done, and only then is the outcome known.
    const [actionCount, thoughtCount] = yield* Effect.scoped(
      Effect.gen(function*() {
        const [others, actions] = yield* Stream.partition(events, SessionEvent.$is("ActionRun"))

        const numberedActions = actions.pipe(
          Stream.zipWithIndex,
          Stream.tap(([action, index]) => Console.log(`action #${index + 1}: ${action.name} (${action.content})`)),
          Stream.runCount
        )

        const thoughtBatches = others.pipe(
          Stream.filter(SessionEvent.$is("ThoughtsAndMemories")),
          Stream.map((event) => event.thought),
          // A batch every 3 thoughts, or every 2 seconds, whichever comes first.
          Stream.groupedWithin(3, "2 seconds"),
          Stream.tap((batch) => Console.log(`thoughts (${batch.length}): ${Chunk.join(batch, " / ")}`)),
          Stream.runFold(0, (total, batch) => total + batch.length)
        )

        return yield* Effect.all([numberedActions, thoughtBatches], { concurrency: "unbounded" })
      })
    )

    const outcome = yield* running.outcome
    yield* Console.log(`Actions seen: ${actionCount}, thoughts seen: ${thoughtCount}`)
    yield* Console.log(`Outcome: ${outcome.response}`)
  })
)

program.pipe(
  Effect.provide(NodeAgentSessions.layerConfig()),
  NodeRuntime.runMain
)
