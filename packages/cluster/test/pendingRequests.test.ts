import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { AgentApi, Answer, EventStream, NodeAgentSessions, type SessionEvent } from "effect-agent-session"
import * as Simulator from "effect-agent-session-simulator/Simulator"

const Live = Layer.unwrapEffect(
  Effect.map(Simulator.Simulator, (simulator) =>
    NodeAgentSessions.layer({
      apiKey: simulator.accountKey,
      baseUrl: simulator.baseUrl,
      wsUrl: simulator.wsUrl
    }))
).pipe(Layer.provideMerge(Simulator.layer({ port: 0, scenario: { actions: 2, ask: "permission", frameDelay: "1 millis" } })))

const isRequest = (event: SessionEvent.SessionEvent): event is SessionEvent.ExternalResourceRequested =>
  event._tag === "ExternalResourceRequested"

describe("EventStream pendingRequests (a request received by another process)", () => {
  layer(Live, { excludeTestServices: true, timeout: 30_000 })((it) => {
    it.scoped("a second connection answers a request the first one received, only when told it is pending", () =>
      Effect.gen(function*() {
        const api = yield* AgentApi.AgentApi
        const channel = yield* EventStream.EventStream
        const simulator = yield* Simulator.Simulator
        const session = yield* api.createSession({ start_url: "https://example.com", max_actions: 5, goal: "Approve" })
        const id = session.session_id
        // The first connection (the runner that dies) receives the request and closes.
        const first = yield* Effect.scoped(Effect.gen(function*() {
          const connection = yield* channel.connect(id)
          const request = yield* connection.events.pipe(Stream.filter(isRequest), Stream.runHead, Effect.map(Option.getOrThrow))
          yield* connection.close
          return request
        }))
        // Not told: the request was never received on this connection.
        const plain = yield* channel.connect(id)
        const refused = yield* Effect.flip(plain.respond(first, Answer.grant()))
        assert.strictEqual(refused._tag, "RequestNotPending")
        yield* plain.close
        // Told: the answer is accepted, written once open, and the session completes.
        const second = yield* channel.connect(id, { pendingRequests: [first] })
        yield* second.respond(first, Answer.grant())
        const rest = yield* Stream.runCollect(second.events)
        assert.isTrue([...rest].some((event) => event._tag === "Complete"))
        const answers = yield* simulator.answers(id)
        assert.deepStrictEqual(answers.map((a) => a.granted), [true])
      }))
  })
})
