/**
 * The event channel end to end over real sockets against the simulator (the root's command line
 * as a child process, `simulate --port 0`): over WebSocket (the SDK's `ws` constructor) and over
 * Server-Sent Events (undici), in both dialects, with the simulator's faults. The simulator's
 * script is deterministic: a client that got every event exactly once, in order, sees the actions
 * `1..n` once each, in order (`helpers/sdk.ts`).
 */
import { assert, describe, layer, type Vitest } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Result from "effect/Result"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as AgentApi from "../../src/AgentApi.js"
import * as Answer from "../../src/Answer.js"
import type * as Credentials from "../../src/Credentials.js"
import type { EventStreamError } from "../../src/Errors.js"
import * as EventStream from "../../src/EventStream.js"
import type * as SessionEvent from "../../src/SessionEvent.js"
import {
  actionNumbers,
  channelLayer,
  meaningful,
  type Sim,
  simLayer,
  stepNumbers,
  type TransportName,
  upTo
} from "../helpers/sdk.js"
import type { SimulatorOptions } from "../helpers/simulator.js"

const request = { start_url: "https://example.com/", max_actions: 6, goal: "Find the opening hours" }

type Received = Result.Result<SessionEvent.SessionEvent, EventStreamError>

const eventsOf = (results: ReadonlyArray<Received>) => results.flatMap((r) => (Result.isSuccess(r) ? [r.success] : []))
const failureOf = (results: ReadonlyArray<Received>) => {
  const last = results.at(-1)
  return last !== undefined && Result.isFailure(last) ? last.failure : undefined
}

const createSession = (input: typeof request = request) =>
  Effect.flatMap(Effect.service(AgentApi.AgentApi), (api) => api.createSession(input)).pipe(
    Effect.map((session) => session.session_id),
    Effect.orDie
  )

/** Consumes a connection's events, answering every request with `answer`, until the stream ends. */
const drain = (connection: EventStream.Connection, answer: Answer.Answer = Answer.grant("jane@example.com")) =>
  Stream.result(connection.events).pipe(
    Stream.tap((result) =>
      Result.isSuccess(result) && result.success._tag === "ExternalResourceRequested"
        ? Effect.orDie(connection.respond(result.success, answer))
        : Effect.void
    ),
    Stream.runCollect
  )

/** Connects to a new session and drains it. */
const session = (options?: EventStream.ConnectOptions) =>
  Effect.gen(function*() {
    const channel = yield* EventStream.EventStream
    const sessionId = yield* createSession()
    const connection = yield* channel.connect(sessionId, options)
    const states: Array<EventStream.ConnectionState> = []
    yield* Effect.forkScoped(
      Stream.runForEach(SubscriptionRef.changes(connection.state), (s) => Effect.sync(() => states.push(s)))
    )
    const results = yield* drain(connection)
    return { results, states, connection }
  })

const base: SimulatorOptions = { actions: 5, ask: "input", frameDelay: 2 }

const suite = (
  transport: TransportName,
  dialect: "documented" | "observed",
  name: string,
  simulator: SimulatorOptions,
  tests: (it: Vitest.MethodsNonLive<Sim | AgentApi.AgentApi | EventStream.EventStream | Credentials.Credentials>) => void
) =>
  describe(`EventStream end to end (${transport}, ${dialect} dialect): ${name}`, () => {
    layer(
      Layer.provideMerge(channelLayer(transport), simLayer({ ...base, ...simulator, dialect })),
      { excludeTestServices: true, timeout: "90 seconds" }
    )(tests)
  })

for (const transport of ["websocket", "sse"] as const) {
  for (const dialect of ["documented", "observed"] as const) {
    suite(transport, dialect, "no fault", {}, (it) => {
      it.effect("U08 a whole session arrives in order, the answer delivered, the state Closed(complete)", () =>
        Effect.gen(function*() {
          const { connection, results } = yield* session()
          assert.isUndefined(failureOf(results))
          const events = meaningful(eventsOf(results))
          assert.strictEqual(events[0]?._tag, "Started", "subscribe-then-connect: the first event arrives")
          assert.strictEqual(events.at(-1)?._tag, "Complete")
          assert.deepStrictEqual(actionNumbers(events), upTo(5))
          assert.deepStrictEqual(stepNumbers(events), upTo(5))
          const granted = events.find((e) => e._tag === "ExternalResourceGranted")
          assert.deepStrictEqual(
            granted?._tag === "ExternalResourceGranted" ? [granted.granted, Option.getOrUndefined(granted.input)] : [],
            [true, "jane@example.com"],
            "the answer reached the simulator (its echo)"
          )
          assert.deepStrictEqual(
            yield* SubscriptionRef.get(connection.state),
            EventStream.ConnectionState.Closed({ reason: "complete" })
          )
        }))
    })
  }
}

