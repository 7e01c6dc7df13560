/**
 * Pinned engine behaviours over Server-Sent Events (issue 16): each test here fails against a
 * planted bug that the rest of the suite let through (test/README.md, test/mutants/).
 * Answers over SSE are confirmed by the POST's 2xx, never by a frame, so the keep-alive rule of
 * the WebSocket (EventStream.pinned.test.ts) has no SSE counterpart; its tests here pin the
 * POST's own confirmation instead.
 */
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientError from "@effect/platform/HttpClientError"
import { assert, describe, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as TestClock from "effect/TestClock"
import * as Answer from "../src/Answer.js"
import * as Credentials from "../src/Credentials.js"
import type { RespondError } from "../src/Errors.js"
import * as EventStream from "../src/EventStream.js"
import * as Sse from "../binding/internal/sse.js"
import { settle } from "./shared/FakeWebSocket.js"
import {
  collect,
  failureOf,
  fast,
  HTTP_BASE,
  makeSseSetup,
  parseAll,
  receivedRequest,
  requestData,
  sseBody,
  stateTag,
  tags,
  until,
  withLogs
} from "./shared/events.js"
import { makeStub, text } from "./shared/StubHttpClient.js"

const KEY = "sk-pinned-sse-key-90c2"
const SESSION = "session-sse-pin"
const layerOf = (client: Layer.Layer<HttpClient.HttpClient>) => Layer.merge(client, Credentials.layer({ apiKey: KEY }))
const sseSetup = makeSseSetup(KEY)

const sendStarted = (body: ReturnType<typeof sseBody>) =>
  body.send("started", { sessionId: SESSION, start_url: "https://example.com" })
const sendAction = (body: ReturnType<typeof sseBody>, i: number) =>
  body.send("action_run", { name: `click-${i}`, action_session_id: "as-1", content: `step ${i}` })
const sendComplete = (body: ReturnType<typeof sseBody>) =>
  body.send("complete", { response: "ok", type: "STRING", total_cost: 2, session_id: SESSION })

/** Why a second `respond` was refused (`accepted` if it was not). */
const refusalOf = (result: Either.Either<void, RespondError>): string =>
  Either.isRight(result)
    ? "accepted"
    : result.left._tag === "RequestNotPending"
    ? result.left.reason
    : result.left._tag

describe("EventStream over SSE (pinned behaviours, issue 16)", () => {
  describe("a refusal or failure that echoes the key", () => {
    // Guards: the key no longer scrubbed from a refused event stream's body (sseTransport).
    it.scoped("U12 HTTP 401 whose body echoes the key: HandshakeRejected.reason says <redacted>", () =>
      Effect.gen(function*() {
        const lines: Array<string> = []
        const error = yield* withLogs(
          lines,
          Effect.gen(function*() {
            const { service } = yield* sseSetup(() => text(401, `bad key ${KEY}`))
            const connection = yield* service.connect(SESSION)
            return failureOf(yield* Fiber.join(yield* collect(connection)))
          })
        )
        assert.deepStrictEqual(
          error._tag === "HandshakeRejected" ? [error.code, error.reason] : [],
          [401, "bad key <redacted>"]
        )
        assert.notInclude(JSON.stringify(error), KEY)
        for (const line of lines) assert.notInclude(line, KEY)
      }))

    // Guards: the key no longer scrubbed from an open failure's message (sseTransport).
    it.scoped("U22 open failures that echo the key (and the keyed URL): NeverConnected.lastError and logs say <redacted>", () =>
      Effect.gen(function*() {
        // A channel that never opened is NeverConnected (issue 13), retried by `firstConnect`.
        const lines: Array<string> = []
        let requests = 0
        const refusing = Layer.succeed(
          HttpClient.HttpClient,
          HttpClient.make((request, url) => {
            requests += 1
            return Effect.fail(
              new HttpClientError.RequestError({
                request,
                reason: "Transport",
                description: `connect ECONNRESET ${url.toString()} (key ${KEY})`
              })
            )
          })
        )
        const { error, state } = yield* withLogs(
          lines,
          Effect.gen(function*() {
            const service = yield* EventStream.makeSse({ url: HTTP_BASE, reconnect: fast(1), firstConnect: fast(1) }).pipe(
              Effect.provide(layerOf(refusing))
            )
            const connection = yield* service.connect(SESSION)
            const fiber = yield* collect(connection)
            yield* until(Effect.sync(() => requests === 1))
            const state = yield* SubscriptionRef.get(connection.state)
            yield* TestClock.adjust("250 millis")
            const error = failureOf(yield* Fiber.join(fiber))
            return { error, state }
          })
        )
        assert.strictEqual(requests, 2)
        assert.notInclude(JSON.stringify(state), KEY)
        assert.strictEqual(error._tag, "NeverConnected")
        if (error._tag === "NeverConnected") {
          assert.strictEqual(error.attempts, 2)
          assert.include(error.lastError, "ECONNRESET")
          assert.include(error.lastError, "<redacted>", error.lastError)
          assert.notInclude(error.lastError, KEY)
        }
        assert.notInclude(JSON.stringify(error), KEY)
        assert.isTrue(lines.some((line) => line.includes("<redacted>")), lines.join("\n"))
        for (const line of lines) assert.notInclude(line, KEY)
      }))
  })

  describe("idle time-out during back-pressure", () => {
    // Guards: the idle timer no longer skipping a stream paused because the buffer is full.
    it.scoped("U22 bufferSize 2 and a consumer blocked for 62 s: no idle time-out, no second GET, nothing lost", () =>
      Effect.gen(function*() {
        const first = sseBody()
        const stub = yield* makeStub((_, attempt) => (attempt === 1 ? first.response : sseBody().response))
        const engine = yield* Sse.connectEngine({ url: HTTP_BASE, reconnect: fast(3) }, SESSION, { bufferSize: 2 }).pipe(
          Effect.provide(layerOf(stub.layer))
        )
        const connection = engine.connection
        const firstSeen = yield* Deferred.make<void>()
        const fiber = yield* connection.events.pipe(
          Stream.mapEffect((event) =>
            event._tag === "Started"
              ? Deferred.succeed(firstSeen, undefined).pipe(Effect.zipRight(Effect.sleep("62 seconds")), Effect.as(event._tag))
              : Effect.succeed(event._tag)
          ),
          Stream.runCollect,
          Effect.map(Chunk.toReadonlyArray),
          Effect.fork
        )
        yield* until(Effect.map(stateTag(connection), (tag) => tag === "Open"))
        sendStarted(first)
        yield* Deferred.await(firstSeen)
        for (let i = 1; i <= 5; i++) sendAction(first, i)
        // The consumer is blocked: the buffer fills (2) and reading pauses.
        yield* until(Effect.sync(() => engine.buffered() >= 2))
        for (let second = 0; second < 61; second++) {
          yield* TestClock.adjust("1 second")
          yield* settle(5)
        }
        assert.strictEqual(yield* stub.count, 1, "no second GET while the consumer is slow")
        assert.strictEqual(yield* stateTag(connection), "Open")
        yield* TestClock.adjust("1 second")
        sendComplete(first)
        const results = yield* Fiber.join(fiber)
        assert.deepStrictEqual(results, [
          "Started",
          "ActionRun",
          "ActionRun",
          "ActionRun",
          "ActionRun",
          "ActionRun",
          "Complete"
        ])
        assert.strictEqual(yield* stub.count, 1)
      }))
  })

  describe("comments keep the stream alive (issue 20)", () => {
    // Guards: an SSE comment (`: ping`) not counted as a sign of life, so a stream of comments
    // only is dropped and reopened every idle time-out.
    it.scoped("U22 an SSE stream of only comments (`: ping` every 30 s) is alive: no idle time-out, no second GET", () =>
      Effect.gen(function*() {
        const first = sseBody()
        const stub = yield* makeStub((_, attempt) => (attempt === 1 ? first.response : sseBody().response))
        const service = yield* EventStream.makeSse({ url: HTTP_BASE, reconnect: fast(3) }).pipe(
          Effect.provide(layerOf(stub.layer))
        )
        const connection = yield* service.connect(SESSION)
        const fiber = yield* collect(connection)
        yield* until(Effect.map(stateTag(connection), (tag) => tag === "Open"))
        for (let n = 0; n < 10; n++) {
          yield* TestClock.adjust("30 seconds")
          first.raw(": ping\n\n")
          yield* settle(20)
        }
        assert.strictEqual(yield* stub.count, 1, "one GET all along")
        assert.strictEqual(yield* stateTag(connection), "Open")
        sendComplete(first)
        assert.deepStrictEqual(tags(yield* Fiber.join(fiber)), ["Complete"], "comments are no events")
        assert.strictEqual(yield* stub.count, 1)
      }))
  })

  describe("answers are confirmed by the POST, not by frames", () => {
    // Guards: a 202 (any 2xx) taken as a refusal of the answer (send: status === 200 only).
    it.scoped("U16 an answer POST answered 202 is confirmed: the request is answered, not pending again", () =>
      Effect.gen(function*() {
        const body = sseBody()
        const { service, stub } = yield* sseSetup((request) =>
          request.method === "GET" ? body.response : new Response(null, { status: 202 })
        )
        const lines: Array<string> = []
        const again = yield* withLogs(
          lines,
          Effect.gen(function*() {
            const connection = yield* service.connect(SESSION)
            const fiber = yield* collect(connection)
            yield* until(Effect.map(stateTag(connection), (tag) => tag === "Open"))
            body.send("external_resource_requested", requestData("as-1"))
            yield* until(
              Effect.map(Effect.either(connection.respond(receivedRequest("as-1"), Answer.grant("x"))), Either.isRight)
            )
            yield* until(Effect.map(stub.count, (n) => n === 2))
            yield* settle()
            const again = yield* Effect.either(connection.respond(receivedRequest("as-1"), Answer.grant("y")))
            sendComplete(body)
            assert.deepStrictEqual(tags(yield* Fiber.join(fiber)), ["ExternalResourceRequested", "Complete"])
            return again
          })
        )
        assert.strictEqual(refusalOf(again), "already-answered")
        assert.strictEqual(yield* stub.count, 2, "one GET, one POST")
        assert.isFalse(lines.some((line) => line.includes("refused an answer")), lines.join("\n"))
      }))

    for (const status of [500, 503]) {
      // Guards: the retry bound of a failed answer POST (5xx kept queued) narrowed (> 500).
      it.scoped(`U16 an answer POST answered ${status} stays queued, reopens the stream and is POSTed again`, () =>
        Effect.gen(function*() {
          const first = sseBody()
          const second = sseBody()
          let gets = 0
          const { service, stub } = yield* sseSetup((request) => {
            if (request.method === "GET") {
              gets += 1
              return gets === 1 ? first.response : second.response
            }
            return gets === 1 ? text(status, "try later") : new Response(null, { status: 202 })
          })
          const connection = yield* service.connect(SESSION)
          const fiber = yield* collect(connection)
          yield* until(Effect.map(stateTag(connection), (tag) => tag === "Open"))
          first.send("external_resource_requested", requestData("as-1"))
          yield* until(
            Effect.map(Effect.either(connection.respond(receivedRequest("as-1"), Answer.grant("x"))), Either.isRight)
          )
          yield* until(Effect.map(stateTag(connection), (tag) => tag === "Reconnecting"))
          const pending = yield* Effect.flip(connection.respond(receivedRequest("as-1"), Answer.grant("y")))
          assert.strictEqual(pending._tag === "RequestNotPending" ? pending.reason : pending._tag, "already-answered")
          yield* TestClock.adjust("250 millis")
          yield* until(Effect.map(stub.count, (n) => n === 4))
          sendComplete(second)
          assert.deepStrictEqual(tags(yield* Fiber.join(fiber)), ["ExternalResourceRequested", "Complete"])
          const posts = (yield* stub.requests).filter((r) => r.method === "POST")
          assert.deepStrictEqual(posts.map((r) => JSON.parse(r.body).data.input), ["x", "x"])
        }))
    }
  })

  // Guards: a request asked again while its answer is still being sent made pending again (accept).
  it.scoped("U16 a request asked again while its answer is still being sent stays answered: one POST", () =>
    Effect.gen(function*() {
      const body = sseBody()
      const gate = yield* Deferred.make<void>()
      const { service, stub } = yield* sseSetup((request) =>
        request.method === "GET"
          ? body.response
          : Effect.as(Deferred.await(gate), new Response(null, { status: 202 }))
      )
      const connection = yield* service.connect(SESSION)
      let asked = 0
      const fiber = yield* connection.events.pipe(
        Stream.tap((event) =>
          Effect.sync(() => {
            if (event._tag === "ExternalResourceRequested") asked += 1
          })
        ),
        Stream.runCollect,
        Effect.map((chunk) => Chunk.toReadonlyArray(chunk).map((event) => event._tag)),
        Effect.fork
      )
      yield* until(Effect.map(stateTag(connection), (tag) => tag === "Open"))
      body.send("external_resource_requested", requestData("as-1"))
      yield* until(
        Effect.map(Effect.either(connection.respond(receivedRequest("as-1"), Answer.grant("x"))), Either.isRight)
      )
      yield* until(Effect.map(stub.count, (n) => n === 2))
      // The POST is in flight; the service asks again (a redelivery).
      body.send("external_resource_requested", requestData("as-1"))
      yield* until(Effect.sync(() => asked === 2))
      const again = yield* Effect.either(connection.respond(receivedRequest("as-1"), Answer.grant("y")))
      // The POST is let through before asserting: an answer in flight is never abandoned, so a
      // failed assertion with the gate shut would hang the scope's close instead of reporting.
      yield* Deferred.succeed(gate, undefined)
      assert.strictEqual(refusalOf(again), "already-answered")
      yield* settle()
      sendComplete(body)
      assert.deepStrictEqual(yield* Fiber.join(fiber), ["ExternalResourceRequested", "ExternalResourceRequested", "Complete"])
      const posts = (yield* stub.requests).filter((r) => r.method === "POST")
      assert.deepStrictEqual(posts.map((r) => JSON.parse(r.body).data.input), ["x"])
    }))

  describe("the SSE parser's bound", () => {
    // Guards: the data bound off by one (an event of exactly maxFrameSize dropped, or one more kept).
    it("U22 data of exactly maxData characters is delivered; one more is too large", () => {
      assert.deepStrictEqual(parseAll([`data: ${"x".repeat(20)}\n\n`], 20), [`message=${"x".repeat(20)}`])
      assert.deepStrictEqual(parseAll([`data: ${"x".repeat(21)}\n\n`], 20), ["too-large 21"])
      // Two data lines count their joining newline.
      assert.deepStrictEqual(parseAll([`data: ${"a".repeat(9)}\ndata: ${"b".repeat(10)}\n\n`], 20), [
        `message=${"a".repeat(9)}\n${"b".repeat(10)}`
      ])
      assert.deepStrictEqual(parseAll([`data: ${"a".repeat(10)}\ndata: ${"b".repeat(10)}\n\n`], 20), ["too-large 21"])
    })
  })
})
