/**
 * `AgentApi` over a stubbed `HttpClient`, the cases whose text differs from the Effect 3
 * edition's: the others are written once for both, in `test/shared/AgentApi.test.ts`.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { type Span, spying } from "./helpers/spans.js"
import { json, makeApi, sessionBody, validSession } from "./shared/StubHttpClient.js"

describe("AgentApi", () => {
  describe("spans", () => {
    it.effect("createSession: one AgentApi.createSession span with the dialect, the address and the session id; the HTTP span under it", () =>
      Effect.gen(function*() {
        const spans: Array<Span> = []
        const tracer = spying(spans)
        const { api } = yield* makeApi(() => json(200, sessionBody()))
        yield* api.createSession(validSession).pipe(Effect.withTracer(tracer))
        const created = spans.filter((span) => span.name === "AgentApi.createSession")
        assert.strictEqual(created.length, 1)
        const span = created[0]!
        assert.strictEqual(span.attributes.get("agent_session.session_id"), "sess-1")
        assert.strictEqual(span.attributes.get("agent_session.dialect"), "documented")
        assert.isDefined(span.attributes.get("server.address"))
        // Effect 4 names the HTTP client span after the method (`HttpClient.SpanNameGenerator`).
        const http = spans.filter((s) => s.kind === "client")
        assert.deepStrictEqual(http.map((s) => s.name), ["POST"])
        assert.strictEqual(http.length, 1)
        assert.isTrue(
          Option.exists(http[0]!.parent, (parent) => parent.spanId === span.spanId),
          "the HTTP span is a child of the call's"
        )
        // No header is captured by default; captured, the auth header's value is redacted.
        assert.isUndefined(http[0]!.attributes.get("http.request.header.authorization"))
      }))
  })
})
