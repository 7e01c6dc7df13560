import { assert, describe, it } from "@effect/vitest"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { mkdtempSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as TestClock from "effect/TestClock"
import * as TestContext from "effect/TestContext"
import { AgentSessions, Answer, Dialect, NodeAgentSessions, Recording, type SessionEvent } from "../../src/index.js"
import * as Simulator from "../../src/simulator/Simulator.js"
import { AgentSessionsTest } from "../../src/testing/index.js"

const key = "sk-live-RECORDING-SECRET-0123456789"
const request = { start_url: "https://example.com", max_actions: 4, goal: "Find the opening hours" }

const dir = mkdtempSync(join(tmpdir(), "eas-recording-"))

const runApp = () => {
  const events: Array<SessionEvent.SessionEvent> = []
  return AgentSessions.run(request, {
    onEvent: (event) => Effect.sync(() => void events.push(event)),
    onRequest: () => Effect.succeed(Answer.grant("jane@example.com"))
  }).pipe(Effect.map((outcome) => ({ outcome, events })))
}

describe("recording round trip", () => {
  it.live("records over WebSocket (documented) and replays in memory", () =>
    Effect.scoped(Effect.gen(function*() {
      const sim = yield* Simulator.make({ accountKey: key, scenario: { actions: 3, ask: "input", frameDelay: "2 millis" } })
      const path = join(dir, "ws-documented.jsonl")
      const layer = NodeAgentSessions.layer({ apiKey: key, baseUrl: sim.baseUrl }).pipe(
        Recording.record({ path }),
        Layer.provide(NodeFileSystem.layer)
      )
      const live = yield* runApp().pipe(Effect.tap(() => Recording.flush), Effect.provide(layer))
      const text = readFileSync(path, "utf8")
      console.log(text.slice(0, 3000))
      assert.notInclude(text, key)
      const replayed = yield* Effect.gen(function*() {
        const fiber = yield* Effect.fork(runApp())
        yield* TestClock.adjust("10 minutes")
        return yield* Fiber.join(fiber)
      }).pipe(Effect.provide(AgentSessionsTest.replay(path)), Effect.provide(TestContext.TestContext))
      assert.deepStrictEqual(replayed.events, live.events)
      assert.deepStrictEqual(replayed.outcome.response, live.outcome.response)
    })))
})
