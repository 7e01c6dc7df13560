/**
 * The SDK's Server-Sent Events transport against a hostile server: answer `POST`s never
 * answered, refusals with never-ending bodies, lines and events that never end, invalid UTF-8,
 * deep nesting, keys echoed, interruption at random points. Each case: a typed outcome, a time
 * bound (hang guard), a memory bound where memory is the risk, the key absent.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import type * as Http from "node:http"
import * as Answer from "../../src/Answer.js"
import * as Dialect from "../../src/Dialect.js"
import * as EventStream from "../../src/EventStream.js"
import { deepJson, endless, hostileServer, type HostileServer, type Script } from "./server.js"
import {
  answerEvery,
  assertHeapWithin,
  assertKeyAbsent,
  expectError,
  handles,
  handlesBackTo,
  KEY,
  liveHeap,
  observe,
  quick,
  sdk,
  subscribeAndDrop
} from "./sdk.js"
import { requestData } from "../helpers/events.js"

const SESSION = "hostile-session"

const sse = (event: string, data: unknown) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`
const started = sse("started", { sessionId: SESSION, start_url: "https://example.com" })
const requested = (id: string) => sse("external_resource_requested", requestData(id))

/** Opens an event stream response and writes `text`; it stays open. */
const openStream = (response: Http.ServerResponse, text = ""): void => {
  response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
  response.write(text)
}

const isGet = (request: Http.IncomingMessage) => request.method === "GET"

type EventOptions = NonNullable<Parameters<typeof sdk>[1]>["events"]

const sseSdk = (server: HostileServer, events: EventOptions = {}) =>
  sdk(server, { transport: "sse", dialect: Dialect.observed, events })

const allEvents = (server: HostileServer, events: EventOptions = {}) =>
  Effect.flatMap(EventStream.EventStream, (channel) => Stream.runCollect(channel.events(SESSION))).pipe(
    Effect.map(Chunk.toReadonlyArray),
    Effect.provide(sseSdk(server, events))
  )

const gets = (server: HostileServer) => server.requests.filter((r) => r.method === "GET").length

describe("hostile server: Server-Sent Events", () => {
  describe("defect 8: an answer POST never answered does not hold close or scope exit", () => {
    const neverAnswered: Script = {
      http: (request, response) => {
        if (isGet(request)) return openStream(response, started + requested("as-1"))
        // The answer POST: read, never answered.
        request.resume()
      }
    }

    it.scopedLive("U16 close returns within the answer time-out; the answer is reported unsent", () =>
      Effect.gen(function*() {
        const server = yield* hostileServer(neverAnswered)
        const program = Effect.gen(function*() {
          const channel = yield* EventStream.EventStream
          const connection = yield* channel.connect(SESSION)
          const consumer = yield* Effect.fork(answerEvery(connection, Answer.deny()))
          // Wait for the POST to be in flight.
          while (server.requests.filter((r) => r.method === "POST").length === 0) yield* Effect.sleep("10 millis")
          const start = Date.now()
          yield* connection.close
          const closeMillis = Date.now() - start
          yield* Fiber.join(consumer)
          return { closeMillis, state: yield* SubscriptionRef.get(connection.state) }
        }).pipe(Effect.scoped, Effect.provide(sseSdk(server, { answerTimeout: "500 millis" })))
        const seen = yield* observe(program, "20 seconds")
        assert.isTrue(Exit.isSuccess(seen.exit))
        if (Exit.isSuccess(seen.exit)) {
          assert.isBelow(seen.exit.value.closeMillis, 10_000, "close is bounded by the answer time-out")
          const state = seen.exit.value.state
          assert.deepStrictEqual(
            state,
            EventStream.ConnectionState.Closed({
              reason: "closed-by-caller",
              unsent: [{ actionSessionId: "as-1", resourceType: "request_user_input" }]
            })
          )
        }
        assertKeyAbsent(seen)
        assert.strictEqual(yield* server.drained(), 0, "the POST was aborted")
      }))

    it.scopedLive("U16 scope exit (interruption) with an answer POST in flight completes within a bound", () =>
      Effect.gen(function*() {
        const server = yield* hostileServer(neverAnswered)
        const program = Effect.gen(function*() {
          const channel = yield* EventStream.EventStream
          const connection = yield* channel.connect(SESSION)
          yield* Effect.fork(answerEvery(connection, Answer.deny()))
          while (server.requests.filter((r) => r.method === "POST").length === 0) yield* Effect.sleep("10 millis")
        }).pipe(Effect.scoped, Effect.provide(sseSdk(server, { answerTimeout: "500 millis" })))
        const seen = yield* observe(program, "20 seconds")
        assert.isTrue(Exit.isSuccess(seen.exit))
        assert.strictEqual(yield* server.drained(), 0)
      }))

    it.scopedLive("U16 an answer POST never answered times out and is sent again after the reconnect", () =>
      Effect.gen(function*() {
        let posts = 0
        const server = yield* hostileServer({
          http: (request, response, index) => {
            if (isGet(request)) {
              return openStream(response, index === 0 ? started + requested("as-1") : "")
            }
            posts += 1
            request.resume()
            if (posts === 1) return
            request.on("end", () => {
              response.writeHead(202).end("{}")
            })
          }
        })
        const program = Effect.gen(function*() {
          const channel = yield* EventStream.EventStream
          const connection = yield* channel.connect(SESSION)
          yield* Effect.fork(answerEvery(connection, Answer.deny()))
          while (posts < 2) yield* Effect.sleep("10 millis")
        }).pipe(Effect.scoped, Effect.provide(sseSdk(server, { answerTimeout: "300 millis" })))
        const seen = yield* observe(program, "20 seconds")
        assert.isTrue(Exit.isSuccess(seen.exit))
        assert.strictEqual(posts, 2, "written again after the time-out")
        assert.isAtLeast(gets(server), 2, "the connection was reopened")
        assertKeyAbsent(seen)
      }))

    it.scopedLive("an answer response with a never-ending body is not read", () =>
      Effect.gen(function*() {
        let confirmed = false
        const server = yield* hostileServer({
          http: (request, response) => {
            if (isGet(request)) return openStream(response, started + requested("as-1"))
            request.resume()
            confirmed = true
            endless(response, Buffer.alloc(64 * 1024, 0x20), 202)
          }
        })
        const before = liveHeap()
        const program = Effect.gen(function*() {
          const channel = yield* EventStream.EventStream
          const connection = yield* channel.connect(SESSION)
          yield* Effect.fork(answerEvery(connection, Answer.deny()))
          while (!confirmed) yield* Effect.sleep("10 millis")
          yield* Effect.sleep("300 millis")
          return yield* SubscriptionRef.get(connection.state)
        }).pipe(Effect.scoped, Effect.provide(sseSdk(server)))
        const seen = yield* observe(program)
        assert.isTrue(Exit.isSuccess(seen.exit))
        if (Exit.isSuccess(seen.exit)) assert.strictEqual(seen.exit.value._tag, "Open")
        assertHeapWithin(before, 32, "endless answer response")
        assert.strictEqual(yield* server.drained(), 0)
      }))
  })

  describe("defect 7: refusal and event bodies are read within bounds", () => {
    it.scopedLive("U08 a 401 refusal whose body never ends: HandshakeRejected with at most 4 KiB kept, memory bounded", () =>
      Effect.gen(function*() {
        const server = yield* hostileServer({
          http: (_request, response) => endless(response, `${KEY} `.repeat(2000), 401, { "content-type": "text/plain" })
        })
        const before = liveHeap()
        const seen = yield* observe(allEvents(server))
        const error = expectError(seen.exit, "HandshakeRejected")
        assert.strictEqual(error.code, 401)
        assert.isAtMost(error.reason.length, 4096)
        assert.strictEqual(gets(server), 1)
        assertHeapWithin(before, 16, "endless refusal")
        assertKeyAbsent(seen)
        assert.strictEqual(yield* server.drained(), 0)
      }))

    it.scopedLive("U22 a line that never ends: FrameTooLarge, memory bounded", () =>
      Effect.gen(function*() {
        const server = yield* hostileServer({
          http: (_request, response) => {
            openStream(response, started + "data: ")
            endless(response, Buffer.alloc(64 * 1024, 0x61))
          }
        })
        const before = liveHeap()
        const seen = yield* observe(allEvents(server))
        const error = expectError(seen.exit, "FrameTooLarge")
        assert.strictEqual(error.limit, 1024 * 1024)
        assertHeapWithin(before, 32, "endless line")
        assertKeyAbsent(seen)
        assert.strictEqual(yield* server.drained(), 0)
      }))

    it.scopedLive("U22 an event of endless short data lines never dispatched: FrameTooLarge", () =>
      Effect.gen(function*() {
        const server = yield* hostileServer({
          http: (_request, response) => {
            openStream(response, started + "event: thoughts_and_memories\n")
            endless(response, "data: xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n".repeat(1000))
          }
        })
        const before = liveHeap()
        const seen = yield* observe(allEvents(server))
        expectError(seen.exit, "FrameTooLarge")
        assertHeapWithin(before, 32, "endless event")
      }))

    it.scopedLive("U08 a refusal echoing the key from the URL in its body and status text is scrubbed", () =>
      Effect.gen(function*() {
        const server = yield* hostileServer({
          http: (request, response) => {
            response.statusMessage = `no ${KEY}`
            response.writeHead(403, { "x-request-id": KEY }).end(`you sent ${request.url}`)
          }
        })
        const seen = yield* observe(allEvents(server))
        const error = expectError(seen.exit, "HandshakeRejected")
        assert.strictEqual(error.code, 403)
        assert.notInclude(error.reason, KEY)
        assertKeyAbsent(seen)
      }))

    it.scopedLive("a 500 refusal with a huge body is retried, then NeverConnected, memory bounded", () =>
      Effect.gen(function*() {
        const server = yield* hostileServer({
          http: (_request, response) => endless(response, Buffer.alloc(64 * 1024, 0x62), 500)
        })
        const before = liveHeap()
        // Never open (issue 13): the first-connect schedule governs, not the reconnect one.
        const seen = yield* observe(allEvents(server, { reconnect: quick(5), firstConnect: quick(2) }))
        const error = expectError(seen.exit, "NeverConnected")
        assert.strictEqual(error.attempts, 3)
        assert.include(error.lastError, "500")
        assert.isAtMost(error.lastError.length, 4096)
        assert.strictEqual(gets(server), 3)
        assertHeapWithin(before, 16, "500 refusals")
        assertKeyAbsent(seen)
      }))
  })

  describe("invalid and deep events", () => {
    it.scopedLive("U09 invalid UTF-8 in an event: decoded with replacement characters, or a typed frame error", () =>
      Effect.gen(function*() {
        const server = yield* hostileServer({
          http: (_request, response) => {
            openStream(response, started)
            response.write(Buffer.concat([
              Buffer.from("event: thoughts_and_memories\ndata: {\"thought\":\""),
              Buffer.from([0xff, 0xfe, 0xc3, 0x28]),
              Buffer.from("\",\"memory\":\"m\"}\n\n")
            ]))
            response.write(sse("complete", { response: "ok", type: "STRING", total_cost: 1, session_id: SESSION }))
          }
        })
        const seen = yield* observe(allEvents(server))
        assert.isTrue(Exit.isSuccess(seen.exit))
        if (Exit.isSuccess(seen.exit)) {
          const thought = seen.exit.value.find((event) => event._tag === "ThoughtsAndMemories")
          assert.include(thought?._tag === "ThoughtsAndMemories" ? thought.thought : "", "\uFFFD")
        }
      }))

    it.scopedLive("U09 an event nested 3,000 deep: MalformedFrame before parsing", () =>
      Effect.gen(function*() {
        const server = yield* hostileServer({
          http: (_request, response) => openStream(response, started + `event: action_run\ndata: ${deepJson(3000)}\n\n`)
        })
        const seen = yield* observe(allEvents(server))
        // Deeper than Wire's maxDepth (64): refused as a frame error before JSON.parse.
        const error = expectError(seen.exit, "MalformedFrame")
        assert.include(error.message, "nested deeper than")
        assert.isAtMost(error.raw.length, 4096)
        assert.strictEqual(gets(server), 1, "a frame error is not retried")
        assertKeyAbsent(seen)
      }))
  })

  describe("defect 12: the key from the URL echoed in events", () => {
    it.scopedLive("U09 an undecodable event and an unknown event echoing the request URL: scrubbed", () =>
      Effect.gen(function*() {
        for (const [tag, strict] of [["EventDecodeError", false], ["UnknownEvent", true]] as const) {
          const server = yield* hostileServer({
            http: (request, response) =>
              openStream(
                response,
                started + (tag === "UnknownEvent"
                  ? `event: echo_${KEY}\ndata: ${JSON.stringify({ url: request.url })}\n\n`
                  : `event: action_run\ndata: ${JSON.stringify({ name: 1, url: request.url })}\n\n`)
              )
          })
          const seen = yield* observe(allEvents(server, { strict }))
          expectError(seen.exit, tag)
          assertKeyAbsent(seen)
        }
      }))
  })

  describe("interruption", () => {
    it.scopedLive("an SSE connection interrupted at 30 random points: no socket or timer left", () =>
      Effect.gen(function*() {
        const server = yield* hostileServer({
          http: (request, response, index) => {
            if (!isGet(request)) return void response.writeHead(202).end()
            switch (index % 3) {
              case 0: {
                openStream(response, started)
                const timer = setInterval(() => response.write(": keep-alive\n\n"), 3)
                response.on("close", () => clearInterval(timer))
                return
              }
              case 1:
                return void setTimeout(() => response.writeHead(503).end(), 10)
              default:
                return
            }
          }
        })
        const channel = yield* Effect.provide(
          EventStream.EventStream,
          sseSdk(server, { reconnect: quick(50), idleTimeout: "1 second" })
        )
        const before = handles()
        const seen = yield* subscribeAndDrop(channel, SESSION, 5)
        assert.isTrue(Exit.isSuccess(seen.exit))
        assertKeyAbsent(seen)
        assert.strictEqual(yield* server.drained(), 0, "every request closed")
        assert.deepStrictEqual(yield* handlesBackTo(before), {}, "no socket or timer left")
      }))
  })
})
