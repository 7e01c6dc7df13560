/**
 * Pinned simulator behaviours (issue 16): each test here fails against a planted bug that the
 * rest of the suite let through (test/README.md, test/mutants/). Real sockets on port 0.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Dialect from "effect-agent-session/Dialect"
import { Simulator } from "../src/index.js"
import { answerFrame, authHeader, connectOnce, createSession, field, http, scriptedEvents } from "./helpers.js"

describe("Simulator (pinned behaviours, issue 16)", () => {
  // Guards: an answer that arrives before the request was written unblocking the agent.
  it.scopedLive("U16 an answer sent before the request was written does not unblock the agent", () =>
    Effect.gen(function*() {
      const sim = yield* Simulator.make({ scenario: { frameDelay: "60 millis", ask: "input", actions: 4 } })
      const sessionId = yield* createSession(sim)
      const early = { granted: true, resource_type: "request_user_input", input: "too early" }
      const first = yield* connectOnce(sim, {
        sessionId,
        apiKey: sim.accountKey,
        handshake: "message",
        onOpen: (client) => client.send(answerFrame("event", early)),
        onFrame: (frame, client) => {
          if (JSON.parse(frame).event === "external_resource_requested") client.close()
        }
      })
      const seen = scriptedEvents(sim.dialect.framing, first.frames)
      assert.strictEqual(seen[seen.length - 1]?._tag, "ExternalResourceRequested")
      const known = yield* sim.script(sessionId)
      assert.strictEqual(known[known.length - 1]?._tag, "ExternalResourceRequested", "the agent still waits")
      // Recorded or refused (a simulator may bound the answers it keeps), but never acted on.
      assert.isAtMost((yield* sim.answers(sessionId)).length, 1)
      // The answer after the request unblocks it.
      const answer = { granted: true, resource_type: "request_user_input", input: "jane@example.com" }
      const second = yield* connectOnce(sim, {
        sessionId,
        apiKey: sim.accountKey,
        handshake: "message",
        onOpen: (client) => client.send(answerFrame("event", answer))
      })
      assert.strictEqual(second.code, 1000)
      const rest = scriptedEvents(sim.dialect.framing, second.frames)
      const granted = rest[0]
      assert.strictEqual(granted?._tag, "ExternalResourceGranted")
      if (granted?._tag === "ExternalResourceGranted") assert.include(JSON.stringify(granted), "jane@example.com")
      const answers = yield* sim.answers(sessionId)
      assert.deepStrictEqual(answers[answers.length - 1], answer)
    }))

  // Guards: a session whose whole script is known (no request) reported complete before it ran.
  it.scopedLive("U10 retrieve: the status follows the run (started, in_progress, complete), also without a request", () =>
    Effect.gen(function*() {
      const sim = yield* Simulator.make({
        dialect: Dialect.observed,
        scenario: { frameDelay: "1 millis", ask: "none", actions: 2 }
      })
      const headers = authHeader(sim.dialect, sim.accountKey)
      const status = (id: string) =>
        Effect.map(http(sim, "GET", `/api/v1/sessions/${id}`, { headers }), (answer) => field(answer.body, "data", "status"))
      const plain = yield* createSession(sim)
      assert.strictEqual(yield* status(plain), "started")
      const run = yield* connectOnce(sim, { sessionId: plain, apiKey: sim.accountKey, handshake: "query" })
      assert.strictEqual(run.code, 1000)
      assert.strictEqual(yield* status(plain), "complete")
      // With a request: in progress while the agent waits for the answer.
      yield* sim.setScenario({ ask: "input" })
      const asking = yield* createSession(sim)
      assert.strictEqual(yield* status(asking), "started")
      yield* connectOnce(sim, {
        sessionId: asking,
        apiKey: sim.accountKey,
        handshake: "query",
        onFrame: (frame, client) => {
          if (JSON.parse(frame).event === "external_resource_requested") client.close()
        }
      })
      assert.strictEqual(yield* status(asking), "in_progress")
    }))
})
