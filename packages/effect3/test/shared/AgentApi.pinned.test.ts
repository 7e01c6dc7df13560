/**
 * Pinned HTTP client behaviours (issue 16), written once for both editions: each test here fails
 * against a planted bug that the rest of the suite let through (test/README.md, test/mutants/).
 * No case differs between the lines, so neither edition keeps an `AgentApi.pinned.test.ts` of its own.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as AgentApi from "../../src/AgentApi.js"
import * as Credentials from "../../src/Credentials.js"
import { ACCOUNT_KEY, json, makeApi, sessionBody, text, validAgent, validSession } from "./StubHttpClient.js"
import { HttpClient, noRetry, transportFailure, typedFailure } from "../helpers/line.js"

describe("AgentApi (pinned behaviours)", () => {
  // Guards: the 2xx range off by one (300 taken for success and decoded).
  it.effect("U07 300 is UnexpectedStatus: success ends at 299", () =>
    Effect.gen(function*() {
      const redirected = yield* makeApi(() => json(300, sessionBody()), { retry: noRetry })
      const exit = yield* Effect.exit(redirected.api.createSession(validSession))
      assert.isTrue(Exit.isFailure(exit), "300 is not success")
      const error = typedFailure(exit)
      assert.strictEqual(error._tag, "UnexpectedStatus")
      assert.isTrue("status" in error && error.status === 300)
      const ok = yield* makeApi(() => json(299, sessionBody()), { retry: noRetry })
      assert.strictEqual((yield* ok.api.createSession(validSession)).session_id, "sess-1")
    }))

  // Guards: a Bearer token the service echoes (not one of ours) no longer scrubbed.
  it.effect("U18 a Bearer token echoed in an error body is scrubbed from the message and the body", () =>
    Effect.gen(function*() {
      const { api } = yield* makeApi(() => text(401, "token Bearer abc.DEF-123_x~ expired"), { retry: noRetry })
      const error = yield* Effect.flip(api.onboard(validAgent))
      assert.strictEqual(error._tag, "Unauthorized")
      assert.strictEqual(error.message, "token Bearer <redacted> expired")
      assert.isTrue("body" in error && error.body === "token Bearer <redacted> expired")
      assert.notInclude(JSON.stringify(error), "abc.DEF")
    }))

  // Guards: the message read from a blank member (whitespace only) instead of the next one.
  it.effect("U18 a whitespace-only error member is skipped: the next field gives the message", () =>
    Effect.gen(function*() {
      const { api } = yield* makeApi(() => json(400, { error: "   ", message: "name is required" }), {
        retry: noRetry
      })
      const error = yield* Effect.flip(api.onboard(validAgent))
      assert.strictEqual(error.message, "name is required")
    }))

  // Guards: the chain of causes of a transport failure cut after its first link.
  it.effect("U07 a transport failure's chain of causes is described (fetch failed: connect ECONNREFUSED), key scrubbed", () =>
    Effect.gen(function*() {
      const refused = new Error(`connect ECONNREFUSED 127.0.0.1:9 while sending ${ACCOUNT_KEY}`)
      const failing = Layer.succeed(
        HttpClient.HttpClient,
        HttpClient.make((request) =>
          Effect.fail(
            transportFailure(
              request,
              new TypeError("fetch failed", { cause: Object.assign(refused, { code: "ECONNREFUSED" }) })
            )
          )
        )
      )
      const api = yield* AgentApi.make({ baseUrl: "https://agents.test", retry: noRetry }).pipe(
        Effect.provide(Layer.merge(failing, Credentials.layer({ apiKey: Redacted.make(ACCOUNT_KEY) }))),
        Effect.orDie
      )
      const error = yield* Effect.flip(api.createSession(validSession))
      assert.strictEqual(error._tag, "TransportError")
      assert.include(error.message, "fetch failed")
      assert.include(error.message, "connect ECONNREFUSED 127.0.0.1:9 while sending <redacted>")
      assert.notInclude(error.message, ACCOUNT_KEY)
    }))
})
