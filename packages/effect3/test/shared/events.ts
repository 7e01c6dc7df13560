/**
 * Shared fixtures for the event-channel tests (WebSocket and Server-Sent Events): wire frames,
 * a deterministic reconnect schedule, service set-up against the fake socket or the stubbed HTTP
 * client, stream collection, and log capture. Written once for both editions (see README.md here);
 * what the two lines write differently comes from `../helpers/line.ts`.
 */
import { assert } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as Credentials from "../../src/Credentials.js"
import type { EventStreamError } from "../../src/Errors.js"
import * as EventStream from "../../src/EventStream.js"
import { Sse } from "effect-agent-session-core"
import type * as SessionEvent from "../../src/SessionEvent.js"
import * as Wire from "../../src/Wire.js"
import { type FakeServer, layerFake, makeFakeServer } from "./FakeWebSocket.js"
import {
  captureLogs,
  collectOutcomes,
  failureIn,
  fast,
  type Outcome,
  type Running,
  successOf,
  withLogs,
  yieldNow
} from "../helpers/line.js"
import { makeStub, type Reply, type Stub } from "./StubHttpClient.js"

export { captureLogs, fast, withLogs }

/** The WebSocket base address the fake server answers. */
export const URL_BASE = "wss://agents.test"

/** The HTTP base address the stubbed client answers. */
export const HTTP_BASE = "https://agents.test"

/** One wire frame `{ event, data }`. */
export const frame = (event: string, data: unknown): string => JSON.stringify({ event, data })

/** The `started` frame of `session`. */
export const startedFrame = (session: string): string =>
  frame("started", { sessionId: session, start_url: "https://example.com" })

/** The `complete` frame of `session`. */
export const completeFrame = (session: string): string =>
  frame("complete", { response: "done", type: "STRING", total_cost: 1.5, session_id: session })

/** Action `i` of action session `as-1`. */
export const action = (i: number, content = `step ${i}`): string =>
  frame("action_run", { name: `click-${i}`, action_session_id: "as-1", content })

export const heartbeat = frame("heartbeat", {})
export const connected = frame("connected", {})
export const errorEvent = frame("error", { error: "the page did not load" })

/** The data of a request for user input, answered through action session `id`. */
export const requestData = (id: string, resourceType = "request_user_input") => ({
  resource_type: resourceType,
  reason: "needs an e-mail",
  action_session_id: id,
  field_name: "email"
})

/** A request for user input, answered through action session `id`. */
export const request = (id: string, resourceType = "request_user_input"): string =>
  frame("external_resource_requested", requestData(id, resourceType))

/** The event the engine hands out for {@link request}. */
export const receivedRequest = (id: string, resourceType = "request_user_input"): SessionEvent.ExternalResourceRequested => {
  const decoded = successOf(Wire.decodeFrame("event-data", request(id, resourceType)))
  return decoded?._tag === "ExternalResourceRequested" ? decoded : assert.fail("bad fixture")
}

export interface Setup {
  readonly server: FakeServer
  readonly service: EventStream.Service
}

/** A WebSocket event stream against a fresh fake server, with `key` as the default credentials. */
export const makeSetup = (key: string) =>
(
  options: Partial<EventStream.Options> = {},
  credentials: Credentials.Options = { apiKey: key }
): Effect.Effect<Setup> =>
  Effect.gen(function*() {
    const server = makeFakeServer()
    const layer = Layer.merge(layerFake(server), Credentials.layer(credentials))
    const service = yield* EventStream.make({ url: URL_BASE, reconnect: fast(5), ...options }).pipe(
      Effect.provide(layer)
    )
    return { server, service }
  })

export interface SseSetup {
  readonly stub: Stub
  readonly service: EventStream.Service
}

/** An SSE event stream over a stubbed HTTP client answering `reply`, authenticated with `key`. */
export const makeSseSetup = (key: string) =>
(
  reply: Reply,
  options: Partial<EventStream.Options> = {}
): Effect.Effect<SseSetup> =>
  Effect.gen(function*() {
    const stub = yield* makeStub(reply)
    const service = yield* EventStream.makeSse({ url: HTTP_BASE, reconnect: fast(3), ...options }).pipe(
      Effect.provide(Layer.merge(stub.layer, Credentials.layer({ apiKey: key })))
    )
    return { stub, service }
  })

/** An SSE body the test writes to. */
export const sseBody = () => {
  let controller: ReadableStreamDefaultController<Uint8Array> | undefined
  const encoder = new TextEncoder()
  const body = new ReadableStream<Uint8Array>({
    start: (c) => {
      controller = c
    }
  })
  return {
    response: new Response(body, { status: 200, headers: { "content-type": "text/event-stream" } }),
    send: (name: string, data: unknown) =>
      controller?.enqueue(encoder.encode(`event: ${name}\ndata: ${JSON.stringify(data)}\n\n`)),
    /** Raw text on the stream (a comment `: ping\n\n`, a piece of an event). */
    raw: (text: string) => controller?.enqueue(encoder.encode(text)),
    end: () => controller?.close()
  }
}

/** Lets other fibers (and the stubbed body's promises) run until `done` holds. */
export const until = (done: Effect.Effect<boolean>): Effect.Effect<void> =>
  Effect.gen(function*() {
    for (let i = 0; i < 10_000; i++) {
      if (yield* done) return
      yield* yieldNow()
    }
    return yield* Effect.die(new Error("the condition never held"))
  })

/** Runs the SSE parser over `chunks` and lists what it reported. */
export const parseAll = (chunks: ReadonlyArray<string>, maxData = 1000): Array<string> => {
  const seen: Array<string> = []
  const parser = new Sse.SseParser({
    event: (name, data) => {
      seen.push(`${name}=${data}`)
    },
    tooLarge: (size) => {
      seen.push(`too-large ${size}`)
    }
  }, maxData)
  for (const chunk of chunks) parser.feed(chunk)
  return seen
}

export type Results = ReadonlyArray<Outcome<SessionEvent.SessionEvent, EventStreamError>>

/** Forks a fiber collecting every event (and the final failure) of `connection`. */
export const collect = (connection: EventStream.Connection): Effect.Effect<Running<Results>, never, Scope.Scope> =>
  collectOutcomes(connection.events)

/** Event tags, with a failure as `!Tag`. */
export const tags = (results: Results): Array<string> =>
  results.map((r) => successOf(r)?._tag ?? `!${failureIn(r)?._tag}`)

/** The failure the stream ended with. */
export const failureOf = (results: Results): EventStreamError => {
  const last = results[results.length - 1]
  const failure = last === undefined ? undefined : failureIn(last)
  return failure ?? assert.fail("expected the stream to fail")
}

export const stateOf = (connection: EventStream.Connection) => SubscriptionRef.get(connection.state)

export const stateTag = (connection: EventStream.Connection) => Effect.map(stateOf(connection), (s) => s._tag)

/** The account key of the event channel's unit tests. */
export const KEY = "sk-unit-test-key-0001"

/** The session of the event channel's unit tests. */
export const SESSION = "session-1"

/** `started` and `complete` of {@link SESSION}. */
export const started = startedFrame(SESSION)
export const complete = completeFrame(SESSION)

/** The WebSocket and SSE set-ups authenticated with {@link KEY}. */
export const setup = makeSetup(KEY)
export const sseSetup = makeSseSetup(KEY)
