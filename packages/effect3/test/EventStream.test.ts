/**
 * The event channel's shell under the `TestClock`, the cases whose text differs from the Effect 4
 * edition's: the others are written once for both, in `shared/EventStream.test.ts`.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Chunk from "effect/Chunk"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as TestClock from "effect/TestClock"
import * as Answer from "../src/Answer.js"
import * as Credentials from "../src/Credentials.js"
import * as Dialect from "../src/Dialect.js"
import * as EventStream from "../src/EventStream.js"
import * as internal from "../binding/internal/eventStream.js"
import * as Wire from "../src/Wire.js"
import { awaitSocket, layerFake, makeFakeServer, settle } from "./shared/FakeWebSocket.js"
import {
  action,
  captureLogs,
  collect,
  complete,
  failureOf,
  frame,
  KEY,
  receivedRequest,
  request,
  SESSION,
  setup,
  sseBody,
  sseSetup,
  started,
  stateOf,
  tags,
  until,
  URL_BASE
} from "./shared/events.js"
import { text } from "./shared/StubHttpClient.js"

describe("EventStream", () => {
  describe("handshake (U08)", () => {
    it.scoped("keys never appear in logs, even with the key in the query", () =>
      Effect.gen(function*() {
        const lines: Array<string> = []
        yield* Effect.gen(function*() {
          const { server, service } = yield* setup({ dialect: Dialect.observed, failOnFrameError: false })
          const connection = yield* service.connect(SESSION)
          const fiber = yield* collect(connection)
          const first = yield* awaitSocket(server, 1)
          first.fail(`connect ECONNREFUSED ${first.url}`)
          yield* settle()
          yield* TestClock.adjust("250 millis")
          const second = yield* awaitSocket(server, 2)
          second.open()
          second.message(started, `{"apiKey":"${KEY}" not json`, complete)
          yield* Fiber.join(fiber)
        }).pipe(Effect.provide(captureLogs(lines)), Logger.withMinimumLogLevel(LogLevel.All))
        assert.isAbove(lines.length, 3)
        assert.isTrue(lines.some((line) => line.includes("apiKey=<redacted>")), lines.join("\n"))
        assert.isTrue(lines.some((line) => line.includes("Skipped a frame")), lines.join("\n"))
        for (const line of lines) assert.notInclude(line, KEY)
        assert.isTrue(lines.every((line) => line.includes(SESSION)), "every line carries the sessionId")
      }))
  })

  describe("subscribe-then-connect", () => {
    it.scoped("events(sessionId) is a plain stream that connects, runs and closes", () =>
      Effect.gen(function*() {
        const { server, service } = yield* setup()
        const fiber = yield* Effect.fork(Stream.runCollect(service.events(SESSION)))
        const socket = yield* awaitSocket(server, 1)
        socket.open()
        socket.message(started, complete)
        const events = Chunk.toReadonlyArray(yield* Fiber.join(fiber))
        assert.deepStrictEqual(events.map((e) => e._tag), ["Started", "Complete"])
        assert.strictEqual(socket.closedByClientWith, 1000)
      }))
  })

  describe("ending", () => {
    it.scoped("close racing the end after complete still ends events and reaches Closed", () =>
      Effect.gen(function*() {
        const { server, service } = yield* setup()
        const connection = yield* service.connect(SESSION)
        const fiber = yield* collect(connection)
        const socket = yield* awaitSocket(server, 1)
        socket.open()
        yield* settle()
        // Hold the state's lock, so that the engine's own end stops half-way (setting Closed).
        const gate = yield* Deferred.make<void>()
        yield* Effect.fork(SubscriptionRef.updateEffect(connection.state, (s) => Effect.as(Deferred.await(gate), s)))
        yield* settle()
        socket.message(started, complete)
        yield* settle()
        // The caller closes while the engine is ending.
        const closing = yield* Effect.fork(connection.close)
        yield* settle()
        yield* Deferred.succeed(gate, undefined)
        yield* Fiber.join(closing)
        yield* settle()
        const results = yield* Fiber.poll(fiber)
        assert.isTrue(Option.isSome(results), "events never ended")
        if (Option.isSome(results) && Exit.isSuccess(results.value)) {
          assert.deepStrictEqual(tags(results.value.value), ["Started", "Complete"])
        }
        assert.strictEqual((yield* stateOf(connection))._tag, "Closed")
      }))

    it.scoped("a defect of the transport ends events with that defect instead of hanging", () =>
      Effect.gen(function*() {
        const engine = yield* internal.makeEngine({
          sessionId: SESSION,
          settings: internal.resolveSettings({}, {}),
          dialect: Dialect.documented,
          agent: undefined,
          printableUrl: URL_BASE,
          transport: () => Effect.dieMessage("a bug in the transport")
        }).pipe(Effect.provide(Credentials.layer({ apiKey: KEY })))
        const fiber = yield* Effect.fork(Stream.runDrain(engine.connection.events))
        yield* settle()
        const exit = yield* Fiber.poll(fiber)
        assert.isTrue(Option.isSome(exit), "events never ended")
        if (Option.isSome(exit)) {
          assert.isTrue(Exit.isFailure(exit.value) && Cause.isDie(exit.value.cause))
        }
        assert.deepStrictEqual(yield* stateOf(engine.connection), EventStream.ConnectionState.Closed({ reason: "failed" }))
      }))
  })

  describe("reconnect (U22)", () => {
    it.scoped("issue 13: the first-connect retry is an option (Schedule.stop: one try)", () =>
      Effect.gen(function*() {
        const { server, service } = yield* setup({ firstConnect: Schedule.stop })
        const connection = yield* service.connect(SESSION)
        const fiber = yield* collect(connection)
        ;(yield* awaitSocket(server, 1)).fail("getaddrinfo ENOTFOUND nowhere.invalid")
        const error = failureOf(yield* Fiber.join(fiber))
        assert.strictEqual(error._tag, "NeverConnected")
        assert.strictEqual(server.sockets.length, 1)
      }))
  })

  describe("insecure transport", () => {
    it.scoped("ws:// to a host that is not loopback fails with InsecureTransport", () =>
      Effect.gen(function*() {
        const { service } = yield* setup({ url: "ws://example.com" })
        const exit = yield* Effect.exit(service.connect(SESSION))
        assert.isTrue(Exit.isFailure(exit))
        if (Exit.isFailure(exit)) {
          const error = exit.cause._tag === "Fail" ? exit.cause.error : undefined
          assert.strictEqual(error?._tag, "InsecureTransport")
          assert.strictEqual(error?.url, "ws://example.com/")
        }
        const stream = yield* Effect.either(Stream.runDrain(service.events(SESSION)))
        assert.isTrue(Either.isLeft(stream) && stream.left._tag === "InsecureTransport")
      }))

    it.scoped("ws:// to loopback, or with allowInsecure, is allowed", () =>
      Effect.gen(function*() {
        const loopback = yield* setup({ url: "ws://127.0.0.1:8080" })
        assert.strictEqual((yield* loopback.service.connect(SESSION)).sessionId, SESSION)
        const allowed = yield* setup({ url: "ws://example.com", allowInsecure: true })
        assert.strictEqual((yield* allowed.service.connect(SESSION)).sessionId, SESSION)
      }))
  })

  describe("frames (U09, U22)", () => {
    it.scoped("U09 with failOnFrameError: false, bad frames are logged, counted and skipped", () =>
      Effect.gen(function*() {
        const lines: Array<string> = []
        const server = makeFakeServer()
        const engine = yield* internal.connectEngine(
          { url: URL_BASE, failOnFrameError: false, strict: true, maxFrameSize: 300 },
          SESSION
        ).pipe(Effect.provide(Layer.merge(layerFake(server), Credentials.layer({ apiKey: KEY }))))
        const results = yield* Effect.gen(function*() {
          const fiber = yield* collect(engine.connection)
          const socket = yield* awaitSocket(server, 1)
          socket.open()
          socket.message(started, "{oops", frame("surprise", {}), action(1, "y".repeat(400)), action(2), complete)
          return yield* Fiber.join(fiber)
        }).pipe(Effect.provide(captureLogs(lines)))
        assert.deepStrictEqual(tags(results), ["Started", "ActionRun", "Complete"])
        assert.strictEqual(engine.skipped(), 3)
        const warnings = lines.filter((line) => line.startsWith("WARN"))
        assert.strictEqual(warnings.length, 3, lines.join("\n"))
        assert.include(warnings[0], "MalformedFrame")
      }))
  })

  describe("answers (U16)", () => {
    it.scoped("U16 RequestNotPending for a request never received, and for one already answered", () =>
      Effect.gen(function*() {
        const { server, service } = yield* setup()
        const connection = yield* service.connect(SESSION)
        const fiber = yield* collect(connection)
        const never = yield* Effect.flip(connection.respond(receivedRequest("as-0"), Answer.deny()))
        assert.deepStrictEqual(
          [never._tag, never._tag === "RequestNotPending" ? never.reason : ""],
          ["RequestNotPending", "never-received"]
        )
        const socket = yield* awaitSocket(server, 1)
        socket.open()
        socket.message(request("as-1"))
        yield* settle()
        yield* connection.respond(receivedRequest("as-1"), Answer.grant("jane@example.com"))
        const again = yield* Effect.flip(connection.respond(receivedRequest("as-1"), Answer.deny()))
        assert.deepStrictEqual(
          [again._tag, again._tag === "RequestNotPending" ? again.reason : ""],
          ["RequestNotPending", "already-answered"]
        )
        // Same action session, other resource type: a different request, never received.
        const other = yield* Effect.flip(
          connection.respond(receivedRequest("as-1", "admin_permission_request"), Answer.grant())
        )
        assert.strictEqual(other._tag === "RequestNotPending" ? other.reason : "", "never-received")
        yield* settle()
        const answers = socket.sent.slice(1).map((s) => Wire.decodeClientFrame(s))
        assert.strictEqual(answers.length, 1)
        const first = answers[0]
        assert.isTrue(first !== undefined && Either.isRight(first) && first.right._tag === "Answer")
        if (first !== undefined && Either.isRight(first) && first.right._tag === "Answer") {
          assert.deepStrictEqual(first.right.data, {
            granted: true,
            resource_type: "request_user_input",
            action_session_id: "as-1",
            field_name: "email",
            input: "jane@example.com"
          })
        }
        socket.message(complete)
        yield* Fiber.join(fiber)
      }))
  })

  describe("back-pressure", () => {
    it.scoped("a slow consumer of 100k frames: at most bufferSize frames wait, reading pauses, nothing is lost", () =>
      Effect.gen(function*() {
        const server = makeFakeServer()
        const bufferSize = 256
        const engine = yield* internal.connectEngine({ url: URL_BASE }, SESSION, { bufferSize }).pipe(
          Effect.provide(Layer.merge(layerFake(server), Credentials.layer({ apiKey: KEY })))
        )
        const total = 100_000
        const padding = "p".repeat(1024)
        // The live heap (after a collection, where the suite exposes gc): garbage is not held.
        const gc = (globalThis as { gc?: () => void }).gc
        const liveHeap = () => {
          gc?.()
          return process.memoryUsage().heapUsed
        }
        let peakHeap = 0
        const before = liveHeap()
        const fiber = yield* engine.connection.events.pipe(
          // Slow: every element yields to the scheduler, so the socket outruns the consumer.
          Stream.tap(() => Effect.yieldNow()),
          Stream.runFold({ count: 0, ordered: true, last: "" }, (acc, event) => {
            if (acc.count % 5000 === 0) peakHeap = Math.max(peakHeap, liveHeap())
            if (event._tag !== "ActionRun") return { ...acc, count: acc.count + 1, last: event._tag }
            return {
              count: acc.count + 1,
              ordered: acc.ordered && event.name === `click-${acc.count}`,
              last: event._tag
            }
          }),
          Effect.fork
        )
        const socket = yield* awaitSocket(server, 1)
        socket.open()
        socket.stream((function*() {
          for (let i = 0; i < total; i++) yield action(i, padding)
          yield complete
        })())
        const result = yield* Fiber.join(fiber)
        assert.deepStrictEqual(result, { count: total + 1, ordered: true, last: "Complete" })
        assert.isAtMost(engine.peakBuffered(), bufferSize)
        assert.isAbove(socket.pauses, 10)
        // Holding all 100k frames (over 1 KiB each) would take well over 100 MB.
        assert.isBelow(peakHeap - before, (gc === undefined ? 96 : 24) * 1024 * 1024)
      }))
  })

  describe("layers", () => {
    it.scoped("layerConfig reads AGENT_SESSION_WS_URL and AGENT_SESSION_DIALECT", () =>
      Effect.gen(function*() {
        const server = makeFakeServer()
        const provider = ConfigProvider.fromMap(
          new Map([["AGENT_SESSION_WS_URL", "wss://config.test/base"], ["AGENT_SESSION_DIALECT", "observed"]])
        )
        const service = yield* EventStream.EventStream.pipe(
          Effect.provide(
            EventStream.layerConfig().pipe(
              Layer.provide(Layer.merge(layerFake(server), Credentials.layer({ apiKey: KEY }))),
              Layer.provide(Layer.setConfigProvider(provider))
            )
          )
        )
        const connection = yield* service.connect(SESSION)
        yield* collect(connection)
        const socket = yield* awaitSocket(server, 1)
        const url = new URL(socket.url)
        assert.strictEqual(`${url.origin}${url.pathname}`, "wss://config.test/base/v1/connect")
        assert.strictEqual(url.searchParams.get("sessionId"), SESSION)
      }))

    it.effect("layerConfig fails with a ConfigError without AGENT_SESSION_WS_URL", () =>
      Effect.gen(function*() {
        const exit = yield* EventStream.EventStream.pipe(
          Effect.provide(
            EventStream.layerConfig().pipe(
              Layer.provide(Layer.merge(layerFake(makeFakeServer()), Credentials.layer({ apiKey: KEY }))),
              Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map())))
            )
          ),
          Effect.exit
        )
        assert.isTrue(Exit.isFailure(exit))
      }))
  })

  describe("Server-Sent Events", () => {
    it.scoped("events arrive in order; the answer is POSTed to the egress path as {event, data}", () =>
      Effect.gen(function*() {
        const body = sseBody()
        const { service, stub } = yield* sseSetup((request) =>
          request.method === "GET" ? body.response : new Response("{}", { status: 202 })
        )
        const connection = yield* service.connect(SESSION)
        const fiber = yield* collect(connection)
        yield* settle()
        body.send("started", { sessionId: SESSION, start_url: "https://example.com" })
        body.send("external_resource_requested", {
          resource_type: "admin_permission_request",
          reason: "pay",
          action_session_id: "as-9"
        })
        yield* until(
          Effect.map(Effect.either(connection.respond(receivedRequest("as-9", "admin_permission_request"), Answer.deny())), Either.isRight)
        )
        yield* until(Effect.map(stub.count, (n) => n === 2))
        body.send("complete", { response: "ok", type: "STRING", total_cost: 2, session_id: SESSION })
        body.end()
        const results = yield* Fiber.join(fiber)
        assert.deepStrictEqual(tags(results), ["Started", "ExternalResourceRequested", "Complete"])
        const requests = yield* stub.requests
        const get = requests[0]
        const post = requests.find((r) => r.method === "POST")
        assert.isDefined(get)
        assert.isDefined(post)
        const getUrl = new URL(get?.url ?? "")
        assert.strictEqual(getUrl.pathname, "/events/v1/connect")
        assert.strictEqual(getUrl.searchParams.get("apiKey"), KEY)
        assert.strictEqual(getUrl.searchParams.get("sessionId"), SESSION)
        assert.strictEqual(get?.headers["accept"], "text/event-stream")
        assert.strictEqual(new URL(post?.url ?? "").pathname, "/events/v1/egress")
        assert.deepStrictEqual(JSON.parse(post?.body ?? "null"), {
          event: "external_resource_granted",
          data: {
            granted: false,
            resource_type: "admin_permission_request",
            action_session_id: "as-9",
            field_name: "email"
          }
        })
        // The channel is closed by now (complete): the reason says so (issue 12, defect 14).
        const again = yield* Effect.flip(connection.respond(receivedRequest("as-9", "admin_permission_request"), Answer.deny()))
        assert.strictEqual(again._tag === "RequestNotPending" ? again.reason : "", "channel-closed")
      }))

    it.scoped("U12 HTTP 401 on the event stream is HandshakeRejected, exactly one request", () =>
      Effect.gen(function*() {
        const { service, stub } = yield* sseSetup(() => text(401, "invalid key"))
        const connection = yield* service.connect(SESSION)
        const error = failureOf(yield* Fiber.join(yield* collect(connection)))
        assert.deepStrictEqual(
          error._tag === "HandshakeRejected" ? [error.code, error.reason] : [],
          [401, "invalid key"]
        )
        yield* TestClock.adjust("1 minute")
        assert.strictEqual(yield* stub.count, 1)
      }))

    it.scoped("U22 a stream that ends before complete is reopened on the schedule", () =>
      Effect.gen(function*() {
        const first = sseBody()
        const second = sseBody()
        const { service, stub } = yield* sseSetup((_, attempt) => (attempt === 1 ? first.response : second.response))
        const connection = yield* service.connect(SESSION)
        const fiber = yield* collect(connection)
        yield* settle()
        first.send("started", { sessionId: SESSION, start_url: "https://example.com" })
        first.end()
        yield* connection.state.changes.pipe(Stream.filter((s) => s._tag === "Reconnecting"), Stream.runHead)
        assert.strictEqual(yield* stub.count, 1)
        yield* TestClock.adjust("250 millis")
        yield* connection.state.changes.pipe(Stream.filter((s) => s._tag === "Open"), Stream.runHead)
        second.send("complete", { response: "ok", type: "STRING", total_cost: 2, session_id: SESSION })
        const results = yield* Fiber.join(fiber)
        assert.deepStrictEqual(tags(results), ["Started", "Complete"])
        assert.strictEqual(yield* stub.count, 2)
      }))

    it.scoped("U16 an answer the service refuses (HTTP 400) leaves the request pending again", () =>
      Effect.gen(function*() {
        const body = sseBody()
        const { service, stub } = yield* sseSetup((request) =>
          request.method === "GET" ? body.response : text(400, "bad answer")
        )
        const connection = yield* service.connect(SESSION)
        yield* collect(connection)
        yield* settle()
        body.send("external_resource_requested", {
          resource_type: "request_user_input",
          reason: "email",
          action_session_id: "as-1"
        })
        yield* until(
          Effect.map(Effect.either(connection.respond(receivedRequest("as-1"), Answer.grant("x"))), Either.isRight)
        )
        yield* until(Effect.map(stub.count, (n) => n === 2))
        // Refused, so it can be answered again.
        yield* until(
          Effect.map(Effect.either(connection.respond(receivedRequest("as-1"), Answer.grant("y"))), Either.isRight)
        )
        yield* until(Effect.map(stub.count, (n) => n === 3))
        assert.strictEqual((yield* stateOf(connection))._tag, "Open")
      }))
  })
})
