/**
 * Record a real session once, to replay it in tests for ever (docs/testing.md).
 *
 * `Recording.record` wraps the SDK's layer: the application runs as it always does, and the
 * session (the create request and response, every frame with its timing and connection, every
 * answer, every drop and reconnect, the end) is written to a JSON Lines file, with no key in it.
 * Here the application is `bookTable` from `testing-your-app.ts`;
 * `examples/recordings/book-a-table.jsonl` is a recording of it made this way against the
 * simulator, and `replay-a-recording.test.ts` replays it.
 *
 * Environment: as for examples/quickstart.ts; `RECORDING_PATH` names the file (default
 * `book-a-table.jsonl`).
 *
 *   npx tsx examples/record-a-session.ts
 */
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { NodeAgentSessions, Recording } from "effect-agent-session"
import { bookTable } from "./testing-your-app.js"

const path = process.env["RECORDING_PATH"] ?? "book-a-table.jsonl"

// The SDK as usual, recorded; the recorder writes through the platform's file system.
const Recorded = NodeAgentSessions.layerConfig().pipe(
  Recording.record({ path }),
  Layer.provide(NodeFileSystem.layer)
)

const program = Effect.gen(function*() {
  const booking = yield* bookTable({
    restaurantUrl: "https://example.com/reservations",
    partySize: 4,
    email: "jane@example.com"
  })
  yield* Console.log(booking._tag === "Booked" ? `Booked: ${booking.summary}` : `Abandoned: ${booking.reason}`)
  // Everything recorded is in the file (a disk that failed would say so here, typed).
  yield* Recording.flush
  yield* Console.log(`Recorded ${path}`)
})

program.pipe(Effect.provide(Recorded), NodeRuntime.runMain)
