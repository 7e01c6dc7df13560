/**
 * The façade (`AgentSessions`) over the real event channel on the fake socket, with the HTTP
 * client stubbed: what the test kit cannot show, since it delivers one event per chunk (issue 20).
 * Each test here fails against a planted bug the rest of the suite let through (test/README.md,
 * test/mutants/), or against a defect of issue 20.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as TestClock from "effect/TestClock"
import * as AgentApi from "../src/AgentApi.js"
import * as AgentSessions from "../src/AgentSessions.js"
import * as Credentials from "../src/Credentials.js"
import * as EventStream from "../src/EventStream.js"
import { awaitSocket, layerFake, makeFakeServer, settle } from "./shared/FakeWebSocket.js"
import { action, completeFrame, fast, request, startedFrame, URL_BASE } from "./shared/events.js"
import { json, makeApi, sessionBody } from "./shared/StubHttpClient.js"

const KEY = "sk-facade-pinned-key-20"
const SESSION = "session-facade"
const started = startedFrame(SESSION)
const complete = completeFrame(SESSION)

/** The façade over the stubbed HTTP client (the create answers `SESSION`) and the fake socket. */
const facade = (options: Partial<EventStream.Options> = {}) =>
  Effect.gen(function*() {
    const server = makeFakeServer()
    const credentials = Credentials.layer({ apiKey: KEY })
    const { api } = yield* makeApi(() => json(201, sessionBody({ session_id: SESSION })))
    const events = yield* EventStream.make({ url: URL_BASE, reconnect: fast(3), ...options }).pipe(
      Effect.provide(Layer.merge(layerFake(server), credentials))
    )
    const sessions = yield* AgentSessions.make.pipe(
      Effect.provide(
        Layer.mergeAll(Layer.succeed(AgentApi.AgentApi, api), Layer.succeed(EventStream.EventStream, events), credentials)
      )
    )
    return { server, sessions }
  })

const input = (maxActions: number) => ({ start_url: "https://example.com", max_actions: maxActions, goal: "Scroll" })

/** The events' tags as the consumer got them, chunk by chunk, and the failure as `!Tag`. */
const consume = (running: AgentSessions.RunningSession) =>
  Stream.runCollect(Stream.either(Stream.chunks(running.events))).pipe(
    Effect.map((all) =>
      Chunk.toReadonlyArray(all).map((result) =>
        Either.isRight(result) ? Chunk.toReadonlyArray(result.right).map((event) => event._tag) : [`!${result.left._tag}`]
      )
    )
  )

/**
 * A session started with `maxActions` whose socket hands over three actions and `complete` in one
 * read: the chunks the consumer got, the session, and the socket.
 */
const oneRead = (maxActions: number) =>
  Effect.gen(function*() {
    const { server, sessions } = yield* facade()
    const running = yield* sessions.start(input(maxActions))
    const consumer = yield* Effect.fork(consume(running))
    const socket = yield* awaitSocket(server, 1)
    socket.open()
    yield* settle()
    // One socket read: the four frames reach the engine's buffer before the consumer wakes.
    socket.message(action(1), action(2), action(3), complete)
    return { chunks: yield* Fiber.join(consumer), running, socket }
  })

describe("AgentSessions over the real event channel (issue 20)", () => {
  // Guards: the budget guard passing on the whole chunk that holds the overrun (the test kit
  // delivers one event per chunk, so its budget test cannot see this).
  it.scoped("U20 one chunk [ActionRun, ActionRun, ActionRun, Complete] with max_actions 1: nothing is delivered after the overrun", () =>
    Effect.gen(function*() {
      const { chunks, running, socket } = yield* oneRead(1)
      assert.deepStrictEqual(chunks, [["ActionRun", "ActionRun"], ["!ActionBudgetExceeded"]])
      const outcome = yield* Effect.flip(running.outcome)
      assert.strictEqual(outcome._tag, "ActionBudgetExceeded")
      if (outcome._tag === "ActionBudgetExceeded") assert.strictEqual(outcome.actions, 2)
      assert.strictEqual(socket.closedByClientWith, 1000, "the guard closed the connection")
    }))

  it.scoped("the engine does hand the four frames over as one chunk (what the test above relies on)", () =>
    Effect.gen(function*() {
      const { chunks } = yield* oneRead(10)
      assert.deepStrictEqual(chunks, [["ActionRun", "ActionRun", "ActionRun", "Complete"]])
    }))

  it.scoped("max_actions 3 and 4 identical action_run around a reconnect (a service not known to replay): ActionBudgetExceeded", () =>
    Effect.gen(function*() {
      const { server, sessions } = yield* facade()
      const running = yield* sessions.start(input(3))
      const consumer = yield* Effect.fork(consume(running))
      const scroll = action(7, "scroll down")
      const first = yield* awaitSocket(server, 1)
      first.open()
      first.message(started, scroll, scroll)
      yield* settle()
      first.serverClose(1006)
      yield* settle()
      yield* TestClock.adjust("250 millis")
      const second = yield* awaitSocket(server, 2)
      second.open()
      second.message(scroll, scroll, complete)
      const chunks = (yield* Fiber.join(consumer)).flat()
      assert.deepStrictEqual(chunks, ["Started", "ActionRun", "ActionRun", "ActionRun", "ActionRun", "!ActionBudgetExceeded"])
      const error = yield* Effect.flip(running.outcome)
      assert.strictEqual(error._tag, "ActionBudgetExceeded")
      if (error._tag === "ActionBudgetExceeded") assert.deepStrictEqual([error.actions, error.maxActions], [4, 3])
    }))

  it.scoped("issue 20 (sibling of item 3): RunningSession.pending lists at most 1,024 requests, the newest", () =>
    Effect.gen(function*() {
      const { server, sessions } = yield* facade()
      const running = yield* sessions.start(input(5), { pendingWarningAfter: "1 hour" })
      yield* Effect.fork(Stream.runDrain(running.events))
      const socket = yield* awaitSocket(server, 1)
      socket.open()
      for (let i = 0; i < 1100; i++) {
        socket.message(request(`as-${i}`))
        if (i % 100 === 99) yield* settle(5)
      }
      yield* settle()
      const pending = yield* SubscriptionRef.get(running.pending)
      assert.strictEqual(pending.length, 1024)
      assert.strictEqual(pending.at(-1)?.request.action_session_id, "as-1099")
      assert.strictEqual(pending[0]?.request.action_session_id, "as-76")
    }))
})
