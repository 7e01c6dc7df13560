import { assert, describe, it } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Dialect from "../src/Dialect.js"
import * as Session from "../src/Session.js"
import { json, makeApi, sessionBody, validSession } from "./shared/StubHttpClient.js"

const decodeInfo = Schema.decodeUnknownEither(Session.SessionInfo)

const info = (overrides: Record<string, unknown>): Session.SessionInfo => {
  const result = decodeInfo(sessionBody(overrides))
  if (Either.isLeft(result)) return assert.fail(String(result.left))
  return result.right
}

const iso = (dt: Option.Option<DateTime.Utc>): string | undefined => Option.getOrUndefined(Option.map(dt, DateTime.formatIso))

describe("Session", () => {
  describe("U20 CreateSessionRequest validation: InvalidRequest, nothing sent", () => {
    const invalid: ReadonlyArray<readonly [string, unknown]> = [
      ["a relative start_url", { ...validSession, start_url: "/pricing" }],
      ["an ftp: start_url", { ...validSession, start_url: "ftp://example.com/file" }],
      ["a start_url that is not a url", { ...validSession, start_url: "not a url" }],
      ["an empty start_url", { ...validSession, start_url: "" }],
      ["a javascript: start_url", { ...validSession, start_url: "javascript:alert(1)" }],
      ["max_actions 0", { ...validSession, max_actions: 0 }],
      ["max_actions -1", { ...validSession, max_actions: -1 }],
      ["max_actions 1.5", { ...validSession, max_actions: 1.5 }],
      ["max_actions NaN", { ...validSession, max_actions: Number.NaN }],
      ["max_actions Infinity", { ...validSession, max_actions: Number.POSITIVE_INFINITY }],
      ["max_actions as a string", { ...validSession, max_actions: "5" }],
      ["an empty goal", { ...validSession, goal: "" }],
      ["a blank goal", { ...validSession, goal: "   " }],
      ["a missing goal", { start_url: validSession.start_url, max_actions: 5 }],
      ["null", null]
    ]
    for (const dialect of [Dialect.documented, Dialect.observed]) {
      for (const [label, input] of invalid) {
        it.effect(`U20 rejects ${label} (${dialect.name})`, () =>
          Effect.gen(function*() {
            const { api, stub } = yield* makeApi(() => json(200, sessionBody()), { dialect })
            // Deliberately wrong input: the type system would refuse it, callers in JS may not.
            const error = yield* Effect.flip(api.createSession(input as Session.CreateSessionInput))
            assert.strictEqual(error._tag, "InvalidRequest")
            assert.isTrue(error._tag === "InvalidRequest" && error.subject === "CreateSessionRequest")
            assert.strictEqual(yield* stub.count, 0)
          }))
      }
    }

    it.effect("U20 the message names the field", () =>
      Effect.gen(function*() {
        const { api } = yield* makeApi(() => json(200, sessionBody()))
        const error = yield* Effect.flip(api.createSession({ ...validSession, max_actions: 0 }))
        assert.include(error.message, "max_actions")
        const url = yield* Effect.flip(api.createSession({ ...validSession, start_url: "ftp://x" }))
        assert.include(url.message, "start_url")
      }))

    it.effect("U20 the boundary values are accepted: max_actions 1, http and https URLs", () =>
      Effect.gen(function*() {
        const { api, stub } = yield* makeApi(() => json(200, sessionBody()))
        yield* api.createSession({ ...validSession, max_actions: 1 })
        yield* api.createSession({ ...validSession, start_url: "http://example.com" })
        yield* api.createSession({ ...validSession, start_url: "https://example.com:8443/a?b=c#d" })
        assert.strictEqual(yield* stub.count, 3)
      }))

    it.effect("U01 extra input fields are not sent", () =>
      Effect.gen(function*() {
        const { api, stub } = yield* makeApi(() => json(200, sessionBody()))
        yield* api.createSession({ ...validSession, extra: "x" } as Session.CreateSessionInput)
        const [request] = yield* stub.requests
        assert.deepStrictEqual(Object.keys(JSON.parse(request?.body ?? "{}")).sort(), [
          "goal",
          "max_actions",
          "start_url"
        ])
      }))
  })

  describe("SessionInfo", () => {
    it("U01 extra fields are ignored", () => {
      const session = info({ agent: { id: 1 }, cost: 3, links: [] })
      assert.strictEqual(session.session_id, "sess-1")
      assert.isFalse("cost" in session)
    })

    it("U02 ISO 8601 start_time: raw kept, parsed", () => {
      const session = info({ start_time: "2025-01-02T03:04:05Z" })
      assert.deepStrictEqual(session.start_time, Option.some("2025-01-02T03:04:05Z"))
      assert.strictEqual(iso(session.startedAt), "2025-01-02T03:04:05.000Z")
    })

    it("U02 ISO 8601 with an offset", () => {
      assert.strictEqual(iso(info({ start_time: "2025-01-02T05:04:05+02:00" }).startedAt), "2025-01-02T03:04:05.000Z")
    })

    it("U02 epoch seconds as a numeric string", () => {
      assert.strictEqual(iso(info({ start_time: "1735787045" }).startedAt), "2025-01-02T03:04:05.000Z")
    })

    it("U02 epoch seconds and milliseconds as JSON numbers", () => {
      const seconds = info({ start_time: 1735787045 })
      assert.deepStrictEqual(seconds.start_time, Option.some("1735787045"))
      assert.strictEqual(iso(seconds.startedAt), "2025-01-02T03:04:05.000Z")
      assert.strictEqual(iso(info({ end_time: 1735787045123 }).endedAt), "2025-01-02T03:04:05.123Z")
    })

    it("U02 epoch milliseconds as a numeric string", () => {
      assert.strictEqual(iso(info({ start_time: "1735787045123" }).startedAt), "2025-01-02T03:04:05.123Z")
    })

    it("U02 epoch seconds with a fraction", () => {
      assert.strictEqual(iso(info({ start_time: " 1735787045.5 " }).startedAt), "2025-01-02T03:04:05.500Z")
    })

    it("U02 garbage is None, not a failure (raw kept)", () => {
      for (const raw of ["yesterday", "", "  ", "2025-13-45T99:99:99Z", "12:30", "Jan 2 2025"]) {
        const session = info({ start_time: raw })
        assert.isTrue(Option.isNone(session.startedAt), raw)
        assert.deepStrictEqual(session.start_time, Option.some(raw))
      }
    })

    it("U02 a missing start_time is None; end_time parsed the same way", () => {
      const { start_time: _, ...rest } = sessionBody()
      const result = decodeInfo({ ...rest, end_time: "1735787045" })
      assert.isTrue(Either.isRight(result))
      if (Either.isRight(result)) {
        assert.isTrue(Option.isNone(result.right.startedAt))
        assert.strictEqual(iso(result.right.endedAt), "2025-01-02T03:04:05.000Z")
      }
    })

    it.effect("U02 epoch seconds over HTTP", () =>
      Effect.gen(function*() {
        const { api } = yield* makeApi(() => json(200, sessionBody({ start_time: "1735787045" })))
        const session = yield* api.createSession(validSession)
        assert.strictEqual(iso(session.startedAt), "2025-01-02T03:04:05.000Z")
      }))

    it("U05 the named statuses decode as themselves", () => {
      for (const status of ["started", "in_progress", "complete"] as const) {
        assert.deepStrictEqual(info({ status }).status, Option.some(status))
      }
    })

    it("U05 an unknown status is kept as Unrecognized { raw }", () => {
      const session = info({ status: "paused" })
      assert.deepStrictEqual(session.status, Option.some({ _tag: "Unrecognized" as const, raw: "paused" }))
      const encoded = Schema.encodeSync(Session.SessionInfo)(session)
      assert.strictEqual(encoded.status, "paused")
    })

    it.effect("U05 an unknown status over HTTP, in both dialects", () =>
      Effect.gen(function*() {
        const documented = yield* makeApi(() => json(200, sessionBody({ status: "queued" })))
        const a = yield* documented.api.createSession(validSession)
        assert.deepStrictEqual(a.status, Option.some({ _tag: "Unrecognized" as const, raw: "queued" }))
        const observed = yield* makeApi(() => json(200, { data: { sessionId: "s", status: "queued" } }), {
          dialect: Dialect.observed
        })
        const b = yield* observed.api.createSession(validSession)
        assert.deepStrictEqual(b.status, Option.some({ _tag: "Unrecognized" as const, raw: "queued" }))
      }))

    it("error and end_time are optional", () => {
      const session = info({ error: "agent crashed", end_time: "2025-01-02T03:05:00Z", status: "complete" })
      assert.deepStrictEqual(session.error, Option.some("agent crashed"))
      assert.isTrue(Option.isSome(session.endedAt))
      assert.isTrue(Option.isNone(info({}).error))
    })

    it("a missing session_id is a decode failure", () => {
      const { session_id: _, ...rest } = sessionBody()
      assert.isTrue(Either.isLeft(decodeInfo(rest)))
    })
  })
})
