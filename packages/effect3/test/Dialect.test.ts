import { assert, describe, it } from "@effect/vitest"
import * as Either from "effect/Either"
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

  it("DialectName accepts only the two names (AGENT_SESSION_DIALECT)", () => {
    const decode = Schema.decodeUnknownEither(Dialect.DialectName)
    assert.deepStrictEqual(decode("observed"), Either.right("observed"))
    assert.deepStrictEqual(decode("documented"), Either.right("documented"))
    assert.isTrue(Either.isLeft(decode("Observed")))
    assert.isTrue(Either.isLeft(decode("")))
  })
})
