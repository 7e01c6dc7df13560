/**
 * The dialects, tested once for both editions: they are the core's, and a dialect's name is read
 * from configuration or decoded, the two names only. There is no edition's `Dialect.test.ts`: no
 * case differs between the lines.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { Dialect as Core } from "effect-agent-session-core"
import * as Dialect from "../../src/Dialect.js"
import { decodeOutcome, failureIn, successOf, withEnv } from "../helpers/line.js"

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
      const read = (value: string) => Dialect.config("AGENT_SESSION_DIALECT").pipe(withEnv({ AGENT_SESSION_DIALECT: value }))
      assert.strictEqual(yield* read("observed"), "observed")
      const error = yield* Effect.flip(read("chatty"))
      assert.strictEqual(error._tag, "ConfigError")
    }))

  it("DialectName accepts only the two names (AGENT_SESSION_DIALECT)", () => {
    const decode = decodeOutcome(Dialect.DialectName)
    assert.strictEqual(successOf(decode("observed")), "observed")
    assert.strictEqual(successOf(decode("documented")), "documented")
    assert.isDefined(failureIn(decode("Observed")))
    assert.isDefined(failureIn(decode("")))
  })
})
