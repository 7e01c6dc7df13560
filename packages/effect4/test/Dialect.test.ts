import { assert, describe, it } from "@effect/vitest"
import * as Result from "effect/Result"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Dialect from "../src/Dialect.js"

describe("Dialect", () => {
  it("documented follows service-interface.md", () => {
    assert.deepStrictEqual(Dialect.documented, {
      name: "documented",
      auth: "bearer",
      onboardPath: "/agent/onboard",
      sessionsPath: "/api/v1sessions",
      createSessionBody: "documented",
      sessionResponse: "flat",
      retrieve: false,
      connectPath: "/v1/connect",
      handshake: "message",
      framing: "event-data",
      answerKey: "event",
      heartbeats: false,
      costSummary: false,
      replaysOnReconnect: false,
      sse: { connectPath: "/events/v1/connect", egressPath: "/events/v1/egress" }
    })
  })

  it("observed follows the service's own client (observed-dialect.md)", () => {
    assert.deepStrictEqual(Dialect.observed, {
      name: "observed",
      auth: "x-api-key",
      onboardPath: "/agent/onboard",
      sessionsPath: "/api/v1/sessions",
      createSessionBody: "observed",
      sessionResponse: "data-envelope",
      retrieve: true,
      connectPath: "/v1/connect",
      handshake: "query",
      framing: "event-data",
      answerKey: "type",
      heartbeats: true,
      costSummary: true,
      replaysOnReconnect: false,
      sse: { connectPath: "/events/v1/connect", egressPath: "/events/v1/egress" }
    })
  })

  it("the two dialects differ exactly where the documents differ", () => {
    const differing = (Object.keys(Dialect.documented) as Array<keyof Dialect.Dialect>)
      .filter((key) => JSON.stringify(Dialect.documented[key]) !== JSON.stringify(Dialect.observed[key]))
      .sort()
    assert.deepStrictEqual(differing, [
      "answerKey",
      "auth",
      "costSummary",
      "createSessionBody",
      "handshake",
      "heartbeats",
      "name",
      "retrieve",
      "sessionResponse",
      "sessionsPath"
    ])
  })

  it("U08 make overrides the documented dialect by default", () => {
    const mine = Dialect.make({ name: "mine", handshake: "both", framing: "flat" })
    assert.deepStrictEqual(mine, { ...Dialect.documented, name: "mine", handshake: "both", framing: "flat" })
    // The base is not changed.
    assert.strictEqual(Dialect.documented.handshake, "message")
    assert.strictEqual(Dialect.documented.name, "documented")
  })

  it("U09 make overrides another base, and the base key is not kept", () => {
    const mixed = Dialect.make({ base: Dialect.observed, name: "observed-typed", framing: "type-data", auth: "bearer" })
    assert.deepStrictEqual(mixed, { ...Dialect.observed, name: "observed-typed", framing: "type-data", auth: "bearer" })
    assert.notProperty(mixed, "base")
    assert.strictEqual(mixed.sessionsPath, "/api/v1/sessions")
  })

  it("U23 make changes paths: base URLs and paths are options", () => {
    const moved = Dialect.make({ sessionsPath: "/api/v2/sessions", connectPath: "/v2/connect" })
    assert.strictEqual(moved.sessionsPath, "/api/v2/sessions")
    assert.strictEqual(moved.connectPath, "/v2/connect")
    assert.strictEqual(moved.onboardPath, "/agent/onboard")
  })

  it("make with no choices is a copy of the documented dialect", () => {
    const copy = Dialect.make({})
    assert.deepStrictEqual(copy, Dialect.documented)
    assert.notStrictEqual(copy, Dialect.documented)
  })

  it.effect("config reads a dialect name from configuration, and refuses any other", () =>
    Effect.gen(function*() {
      const read = (value: string) =>
        Dialect.config("AGENT_SESSION_DIALECT").pipe(
          Effect.provideService(
            ConfigProvider.ConfigProvider,
            ConfigProvider.fromUnknown({ AGENT_SESSION_DIALECT: value })
          )
        )
      assert.strictEqual(yield* read("observed"), "observed")
      const error = yield* Effect.flip(read("chatty"))
      assert.strictEqual(error._tag, "ConfigError")
    }))

  it("fromName gives each dialect by name", () => {
    assert.strictEqual(Dialect.fromName("documented"), Dialect.documented)
    assert.strictEqual(Dialect.fromName("observed"), Dialect.observed)
  })

  it("DialectName accepts only the two names (AGENT_SESSION_DIALECT)", () => {
    const decode = Schema.decodeUnknownResult(Dialect.DialectName)
    assert.deepStrictEqual(decode("observed"), Result.succeed("observed"))
    assert.deepStrictEqual(decode("documented"), Result.succeed("documented"))
    assert.isTrue(Result.isFailure(decode("Observed")))
    assert.isTrue(Result.isFailure(decode("")))
  })
})
