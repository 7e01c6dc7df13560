/**
 * The event channel end to end over real sockets against the simulator (started as `simulate
 * --port 0 --fault ...` starts it, in process on Effect 3, a child process on Effect 4; a fault
 * applies to every session of that simulator), written once for both editions: over WebSocket (the
 * SDK's `ws` constructor) and over Server-Sent Events (undici), in both dialects, with hostile
 * frames and an answer given while disconnected, read from what the client received (the
 * simulator's script is deterministic, `./e2e.ts`). The Effect 3 edition's `test/e2e/events.test.ts`
 * holds the cases that read its in-process simulator's own state (its script, its answers, its
 * connection count) and reach into the engine. A whole session with its answer, three drops, a
 * stall the idle time-out reconnects, a frame too large, an unknown event in strict mode, a drained
 * connection and a refused handshake are cases of the conformance suite both editions run
 * (`shared/conformance.test.ts`, scenarios in `packages/conformance`).
 */
import { assert, describe } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import type * as AgentApi from "../../src/AgentApi.js"
import * as Answer from "../../src/Answer.js"
import type * as Credentials from "../../src/Credentials.js"
import * as EventStream from "../../src/EventStream.js"
import type * as SessionEvent from "../../src/SessionEvent.js"
import {
  changesOf,
  type LayerMethods,
  outcomes,
  scopedLive,
  Sim,
  type SimOptions,
  spacedRetries,
  startSimulatorIn,
  successOf
} from "../helpers/line.js"
import {
  actionNumbers,
  channelLayer,
  createSession,
  drain,
  eventsOf,
  lastFailure,
  meaningful,
  stepNumbers,
  suiteOn,
  type TransportName,
  upTo
} from "./e2e.js"

const request = { start_url: "https://example.com/", max_actions: 6, goal: "Find the opening hours" }

/** Connects to a new session and drains it, recording the connection's states. */
const session = (options?: EventStream.ConnectOptions) =>
  Effect.gen(function*() {
    const channel = yield* EventStream.EventStream
    const connection = yield* channel.connect(yield* createSession(request), options)
    const states: Array<EventStream.ConnectionState> = []
    yield* Effect.forkScoped(
      Stream.runForEach(changesOf(connection.state), (s) => Effect.sync(() => states.push(s)))
    )
    const results = yield* drain(connection)
    return { results, states, connection }
  })

/** The `reconnects` of each `Open` state, in order. */
const opens = (states: ReadonlyArray<EventStream.ConnectionState>) =>
  states.flatMap((s) => (s._tag === "Open" ? [s.reconnects] : []))

/** The one answer the simulator echoed (`ExternalResourceGranted`), as `[granted, input]`, per echo. */
const echoes = (events: ReadonlyArray<SessionEvent.SessionEvent>) =>
  events.flatMap((e) => e._tag === "ExternalResourceGranted" ? [[e.granted, Option.getOrUndefined(e.input)]] : [])

/** A whole session received exactly once, in order: every action and step `1..5` once, ending in `Complete`. */
const assertWhole = (events: ReadonlyArray<SessionEvent.SessionEvent>) => {
  assert.strictEqual(events[0]?._tag, "Started")
  assert.strictEqual(events.at(-1)?._tag, "Complete")
  assert.deepStrictEqual(actionNumbers(events), upTo(5))
  assert.deepStrictEqual(stepNumbers(events), upTo(5))
}

const base: SimOptions = { actions: 5, ask: "input", frameDelay: 2 }

const suite = (
  transport: TransportName,
  dialect: "documented" | "observed",
  name: string,
  simulator: SimOptions,
  tests: (it: LayerMethods<Sim | AgentApi.AgentApi | EventStream.EventStream | Credentials.Credentials>) => void
) =>
  suiteOn(
    `EventStream end to end (${transport}, ${dialect} dialect): ${name}`,
    channelLayer(transport),
    { ...base, ...simulator, dialect },
    tests
  )

for (const transport of ["websocket", "sse"] as const) {
  for (const dialect of ["documented", "observed"] as const) {
    suite(transport, dialect, "hostile frames", {
      faults: ["oversize-at=3:100000", "unknown-event-at=5", "malformed-at=7"]
    }, (it) => {
      it.effect("U09 an unknown event arrives as Unrecognized; a malformed frame then fails with MalformedFrame", () =>
        Effect.scoped(Effect.gen(function*() {
          const { results } = yield* session()
          assert.strictEqual(lastFailure(results)?._tag, "MalformedFrame")
          const events = meaningful(eventsOf(results))
          const unknown = events.filter((e) => e._tag === "Unrecognized")
          assert.deepStrictEqual(unknown.map((e) => e._tag === "Unrecognized" ? e.event : ""), ["mystery_event"])
          assert.lengthOf(events, 8, "six events, the oversize (under 1 MiB) and the unknown one before the malformed frame")
        })))

      it.effect("U09 U22 with failOnFrameError: false the oversize and malformed frames are skipped and the session completes", () =>
        Effect.scoped(Effect.gen(function*() {
          const { connection, results } = yield* session({ failOnFrameError: false, maxFrameSize: 64 * 1024 })
          assert.isUndefined(lastFailure(results))
          const events = meaningful(eventsOf(results)).filter((e) => e._tag !== "Unrecognized")
          assertWhole(events)
          assert.deepStrictEqual(echoes(events), [[true, "jane@example.com"]])
          assert.deepStrictEqual(
            yield* SubscriptionRef.get(connection.state),
            EventStream.ConnectionState.Closed({ reason: "complete" })
          )
        })))
    })
  }
}

describe("EventStream end to end: an answer given while disconnected (U16)", () => {
  for (const transport of ["websocket", "sse"] as const) {
    for (const dialect of ["documented", "observed"] as const) {
      scopedLive(`${transport}, ${dialect} dialect: U16 an answer given while the channel is down reaches the simulator after the reconnect`, () =>
        Effect.gen(function*() {
          // Where the request falls in the script (deterministic): counted on a session without faults.
          const plain = yield* startSimulatorIn({ ...base, dialect })
          const script = yield* session().pipe(
            Effect.map(({ results }) => meaningful(eventsOf(results))),
            Effect.provide(Layer.provide(channelLayer(transport), Layer.succeed(Sim, plain)))
          )
          const position = script.findIndex((e) => e._tag === "ExternalResourceRequested") + 1
          assert.isAbove(position, 0)
          // Dropped right after the request: the answer is given while the channel is down.
          const sim = yield* startSimulatorIn({ ...base, dialect, faults: [`drop-after=${position}`] })
          const { results, states } = yield* Effect.gen(function*() {
            const channel = yield* EventStream.EventStream
            const connection = yield* channel.connect(yield* createSession(request), {
              reconnect: spacedRetries(400, 3)
            })
            const states: Array<EventStream.ConnectionState> = []
            yield* Effect.forkScoped(
              Stream.runForEach(changesOf(connection.state), (s) => Effect.sync(() => states.push(s)))
            )
            const results = yield* outcomes(connection.events).pipe(
              Stream.tap((result) => {
                const request = successOf(result)
                return request?._tag === "ExternalResourceRequested"
                  ? Effect.gen(function*() {
                    const down = yield* changesOf(connection.state).pipe(
                      Stream.filter((s) => s._tag === "Reconnecting"),
                      Stream.runHead
                    )
                    assert.isTrue(Option.isSome(down))
                    yield* connection.respond(request, Answer.grant("while-down@example.com"))
                  }).pipe(Effect.orDie)
                  : Effect.void
              }),
              Stream.runCollect,
              Effect.map((all) => Array.from(all))
            )
            return { results, states }
          }).pipe(Effect.provide(Layer.provide(channelLayer(transport), Layer.succeed(Sim, sim))))
          assert.isUndefined(lastFailure(results))
          const events = meaningful(eventsOf(results))
          assertWhole(events)
          assert.deepStrictEqual(echoes(events), [[true, "while-down@example.com"]], "sent once, after the reconnect")
          assert.deepStrictEqual(opens(states), [0, 1])
        }), 90_000)
    }
  }
})
