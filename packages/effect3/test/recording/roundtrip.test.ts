/**
 * Issue 23, "done when": a session recorded from the simulator over each transport (WebSocket,
 * Server-Sent Events) and dialect (documented, observed), with a dropped connection and an
 * answered request, replays in memory (the test kit, `TestClock`) and over sockets (the
 * simulator's `Replay`) with the same events, in the same order, with the same outcome; and the
 * recorded file holds no key.
 */
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
import { Replay, Simulator } from "effect-agent-session-simulator"
import { AgentSessionsTest } from "../../src/testing/index.js"

const key = "sk-live-RECORDING-SECRET-0123456789"
const request = { start_url: "https://example.com", max_actions: 4, goal: "Find the opening hours" }
const dir = mkdtempSync(join(tmpdir(), "eas-recording-"))

/** The application under test: it watches every event and answers with an email. */
const runApp = (create: typeof request = request) => {
  const events: Array<SessionEvent.SessionEvent> = []
  return AgentSessions.run(create, {
    onEvent: (event) => Effect.sync(() => void events.push(event)),
    onRequest: () => Effect.succeed(Answer.grant("jane@example.com"))
  }).pipe(Effect.map((outcome) => ({ outcome, events })))
}

/**
 * Runs an effect with the test services (the `TestClock`) in a fiber of its own, awaited without
 * taking its fiber refs: the live test around it keeps the live clock.
 */
const onTestClock = <A, E>(effect: Effect.Effect<A, E>): Effect.Effect<A, E> =>
  Effect.flatMap(Effect.fork(Effect.provide(effect, TestContext.TestContext)), (fiber) => Effect.flatten(Fiber.await(fiber)))

const fastReconnect = { reconnect: undefined, idleTimeout: "20 seconds" } as const

const cases = [
  { transport: "websocket", dialect: Dialect.documented },
  { transport: "websocket", dialect: Dialect.observed },
  { transport: "sse", dialect: Dialect.observed },
  { transport: "sse", dialect: Dialect.documented }
] as const

describe("recording round trip (issue 23)", () => {
  for (const { dialect, transport } of cases) {
    it.live(`${transport}, ${dialect.name}: recorded with a drop and an answer, replayed in memory and over sockets alike`, () =>
      Effect.scoped(Effect.gen(function*() {
        const sim = yield* Simulator.make({
          accountKey: key,
          dialect,
          heartbeatInterval: "20 millis",
          scenario: { actions: 3, ask: "input", frameDelay: "3 millis" },
          faults: { ws: { dropAfter: [4] } }
        })
        const path = join(dir, `${transport}-${dialect.name}.jsonl`)
        const sdk = (baseUrl: string, apiKey: string) =>
          NodeAgentSessions.layer({ apiKey, baseUrl, dialect, transport, events: fastReconnect })

        // Recorded live.
        const live = yield* runApp().pipe(
          Effect.tap(() => Recording.flush),
          Effect.provide(sdk(sim.baseUrl, key).pipe(Recording.record({ path }), Layer.provide(NodeFileSystem.layer)))
        )
        const text = readFileSync(path, "utf8")
        assert.notInclude(text, key, "the recording holds no key")
        const lines = text.trim().split("\n").map((line) => JSON.parse(line) as { type: string })
        assert.strictEqual(lines[0]?.type, "header")
        assert.isAtLeast(lines.filter((line) => line.type === "connect").length, 2, "a reconnect was recorded")
        assert.strictEqual(lines.filter((line) => line.type === "answer").length, 1)

        // In memory, on virtual time.
        const inMemory = yield* Effect.gen(function*() {
          const fiber = yield* Effect.fork(runApp())
          yield* TestClock.adjust("10 minutes")
          return yield* Fiber.join(fiber)
        }).pipe(Effect.provide(AgentSessionsTest.replay(path)), onTestClock)
        assert.deepStrictEqual(inMemory.events, live.events)
        assert.deepStrictEqual(inMemory.outcome, live.outcome)

        // Over sockets, to the real client.
        const replay = yield* Replay.make({ path, speed: 4 })
        const overSockets = yield* runApp().pipe(Effect.provide(sdk(replay.baseUrl, replay.accountKey)))
        assert.deepStrictEqual(overSockets.events, live.events)
        assert.deepStrictEqual(overSockets.outcome, live.outcome)
        const report = yield* replay.result
        assert.strictEqual(report.answers, 1)
        assert.isAtLeast(report.connections, 2)
      })))
  }
  it.live("a start_url parameter named key or token that holds no secret is kept: the recording replays its create without a mismatch (issue 36)", () =>
    Effect.scoped(Effect.gen(function*() {
      const sim = yield* Simulator.make({ accountKey: key, scenario: { actions: 2, ask: "input", frameDelay: "1 millis" } })
      const path = join(dir, "key-pizza.jsonl")
      const create = { start_url: "https://example.com/search?key=pizza&token=t0k", max_actions: 4, goal: "Search with key=pizza" }
      const sdk = (baseUrl: string, apiKey: string) => NodeAgentSessions.layer({ apiKey, baseUrl, events: fastReconnect })
      const live = yield* runApp(create).pipe(
        Effect.tap(() => Recording.flush),
        Effect.provide(sdk(sim.baseUrl, key).pipe(Recording.record({ path }), Layer.provide(NodeFileSystem.layer)))
      )
      const text = readFileSync(path, "utf8")
      assert.notInclude(text, key)
      assert.include(text, "?key=pizza&token=t0k")

      const inMemory = yield* Effect.gen(function*() {
        const fiber = yield* Effect.fork(runApp(create))
        yield* TestClock.adjust("10 minutes")
        return yield* Fiber.join(fiber)
      }).pipe(Effect.provide(AgentSessionsTest.replay(path)), onTestClock)
      assert.deepStrictEqual(inMemory.events, live.events)
      assert.deepStrictEqual(inMemory.outcome, live.outcome)

      const replay = yield* Replay.make({ path, speed: 4 })
      const overSockets = yield* runApp(create).pipe(Effect.provide(sdk(replay.baseUrl, replay.accountKey)))
      assert.deepStrictEqual(overSockets.events, live.events)
      const report = yield* replay.result
      assert.strictEqual(report.answers, 1)
    })))
})
