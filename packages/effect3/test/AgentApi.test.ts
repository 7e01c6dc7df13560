/**
 * `AgentApi` over a stubbed `HttpClient`, the cases only the Effect 3 edition runs or whose text
 * differs from the Effect 4 edition's: the others are written once for both, in
 * `shared/AgentApi.test.ts`.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as TestClock from "effect/TestClock"
import type * as Tracer from "effect/Tracer"
import * as Dialect from "../src/Dialect.js"
import { Url } from "effect-agent-session-core"
import { checkAddress, printableUrl } from "../binding/internal/eventStream.js"
import { spying } from "./helpers/sdk.js"
import {
  agentBody,
  json,
  makeApi,
  sessionBody,
  validAgent,
  validSession
} from "./shared/StubHttpClient.js"

/** Advances virtual time in small steps, letting the forked request run between steps. */
const advance = (total: Duration.DurationInput, step: Duration.DurationInput = "100 millis") =>
  Effect.gen(function*() {
    const steps = Math.ceil(Duration.toMillis(total) / Duration.toMillis(step))
    for (let i = 0; i < steps; i++) yield* TestClock.adjust(step)
  })

describe("AgentApi", () => {
  describe("Idempotency-Key (issue 20: retries reuse it)", () => {
    const keysOf = (requests: ReadonlyArray<{ readonly headers: Readonly<Record<string, string>> }>) =>
      requests.map((request) => request.headers["idempotency-key"])

    it.effect("createSession: every retry sends the same Idempotency-Key; the next call a new one", () =>
      Effect.gen(function*() {
        const { api, stub } = yield* makeApi((_, attempt) =>
          attempt === 2 || attempt === 3 ? json(503, { error: "busy" }) : json(200, sessionBody())
        )
        const fiber = yield* Effect.fork(Effect.zip(api.createSession(validSession), api.createSession(validSession)))
        yield* advance("5 seconds")
        yield* Fiber.join(fiber)
        const keys = keysOf(yield* stub.requests)
        assert.strictEqual(keys.length, 4, "one call, then a second one retried twice")
        const [first, ...retried] = keys
        assert.match(first ?? "", /^[0-9a-f-]{36}$/, "a random key")
        assert.deepStrictEqual(retried, [retried[0], retried[0], retried[0]], "the three attempts of one call: one key")
        assert.notStrictEqual(retried[0], first, "another call: another key")
      }))

    it.effect("createSession: the caller's key is sent on every attempt", () =>
      Effect.gen(function*() {
        const { api, stub } = yield* makeApi((_, attempt) =>
          attempt <= 2 ? json(503, { error: "busy" }) : json(200, sessionBody())
        )
        const fiber = yield* Effect.fork(api.createSession(validSession, { idempotencyKey: "caller-key-1" }))
        yield* advance("5 seconds")
        yield* Fiber.join(fiber)
        assert.deepStrictEqual(keysOf(yield* stub.requests), ["caller-key-1", "caller-key-1", "caller-key-1"])
      }))

    it.effect("onboard: every retry sends the same Idempotency-Key", () =>
      Effect.gen(function*() {
        const { api, stub } = yield* makeApi((_, attempt) =>
          attempt <= 2 ? json(503, { error: "busy" }) : json(200, agentBody())
        )
        const fiber = yield* Effect.fork(api.onboard(validAgent))
        yield* advance("5 seconds")
        yield* Fiber.join(fiber)
        const keys = keysOf(yield* stub.requests)
        assert.strictEqual(keys.length, 3)
        assert.isString(keys[0])
        assert.deepStrictEqual(keys, [keys[0], keys[0], keys[0]])
      }))
  })



  describe("spans", () => {
    it.effect("createSession: one AgentApi.createSession span with the dialect, the address and the session id; the HTTP span under it", () =>
      Effect.gen(function*() {
        const spans: Array<Tracer.Span> = []
        const tracer = yield* spying(spans)
        const { api } = yield* makeApi(() => json(200, sessionBody()))
        yield* api.createSession(validSession).pipe(Effect.withTracer(tracer))
        const created = spans.filter((span) => span.name === "AgentApi.createSession")
        assert.strictEqual(created.length, 1)
        const span = created[0]!
        assert.strictEqual(span.attributes.get("agent_session.session_id"), "sess-1")
        assert.strictEqual(span.attributes.get("agent_session.dialect"), "documented")
        assert.isDefined(span.attributes.get("server.address"))
        const http = spans.filter((s) => s.name.startsWith("http.client"))
        assert.strictEqual(http.length, 1)
        assert.isTrue(
          Option.exists(http[0]!.parent, (parent) => parent.spanId === span.spanId),
          "the HTTP span is a child of the call's"
        )
      }))
  })


  describe("time-out (U22)", () => {
    it.effect("U22 getSession, which creates nothing, fails with RequestTimeout itself (issue 21)", () =>
      Effect.gen(function*() {
        const { api, stub } = yield* makeApi(() => Effect.never, { retry: Schedule.stop, dialect: Dialect.observed })
        const fiber = yield* Effect.fork(Effect.flip(api.getSession("sess-1")))
        yield* advance("31 seconds")
        const error = yield* Fiber.join(fiber)
        assert.strictEqual(error._tag, "RequestTimeout")
        assert.isTrue(error._tag === "RequestTimeout" && error.operation === "AgentApi.getSession")
        assert.strictEqual(yield* stub.count, 1)
      }))
  })


  describe("layers and transport security", () => {
    it("printableUrl drops credentials, query and fragment (what spans and logs of the event channel show)", () => {
      assert.strictEqual(printableUrl("ws://user:pass@127.0.0.1:1/v1/connect?apiKey=k#f"), "ws://127.0.0.1:1/v1/connect")
      assert.strictEqual(printableUrl("https://agents.example/events/v1/connect"), "https://agents.example/events/v1/connect")
    })

    it.effect("isLoopbackHost and checkAddress (a key in clear only to loopback, unless allowed)", () =>
      Effect.gen(function*() {
        for (const host of ["localhost", "LOCALHOST.", "a.localhost", "127.0.0.1", "127.255.0.9", "[::1]", "::1"]) {
          assert.isTrue(Url.isLoopbackHost(host), host)
        }
        assert.isTrue(Url.isLoopbackHost(new URL("http://[::ffff:127.0.0.1]/").hostname))
        for (const host of ["example.com", "128.0.0.1", "localhost.example.com", "10.0.0.1", "::2"]) {
          assert.isFalse(Url.isLoopbackHost(host), host)
        }
        assert.isTrue(Either.isRight(yield* Effect.either(checkAddress("wss://x.example/v1/connect", false))))
        assert.isTrue(Either.isRight(yield* Effect.either(checkAddress("ws://127.0.0.1:1/v1/connect", undefined))))
        const refused = yield* Effect.either(checkAddress("ws://x.example/v1/connect?apiKey=secret", false))
        assert.isTrue(Either.isLeft(refused))
        if (Either.isLeft(refused)) {
          assert.strictEqual(refused.left._tag, "InsecureTransport")
          assert.strictEqual(refused.left.url, "ws://x.example/v1/connect")
          assert.notInclude(refused.left.message, "secret")
        }
        assert.isTrue(Either.isRight(yield* Effect.either(checkAddress("ws://x.example/", true))))
        assert.isTrue(Either.isLeft(yield* Effect.either(checkAddress("not a url?apiKey=secret", true))))
      }))

  })
})
