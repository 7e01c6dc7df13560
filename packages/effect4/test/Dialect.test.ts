import { assert, describe, it } from "@effect/vitest"
import * as Result from "effect/Result"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { Dialect as Core } from "effect-agent-session-core"
import * as Dialect from "../src/Dialect.js"

describe("Dialect", () => {
  it("its dialects and make are the core's (their rules: packages/core/test/Dialect.test.ts)", () => {
    assert.strictEqual(Dialect.documented, Core.documented)
    assert.strictEqual(Dialect.observed, Core.observed)
    assert.strictEqual(Dialect.make, Core.make)
    assert.strictEqual(Dialect.fromName("documented"), Core.documented)
    assert.strictEqual(Dialect.fromName("observed"), Core.observed)
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

  it("DialectName accepts only the two names (AGENT_SESSION_DIALECT)", () => {
    const decode = Schema.decodeUnknownResult(Dialect.DialectName)
    assert.deepStrictEqual(decode("observed"), Result.succeed("observed"))
    assert.deepStrictEqual(decode("documented"), Result.succeed("documented"))
    assert.isTrue(Result.isFailure(decode("Observed")))
    assert.isTrue(Result.isFailure(decode("")))
  })
})
