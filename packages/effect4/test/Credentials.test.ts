/**
 * The credentials, the case whose text is Effect 4's: `layerConfig` reads the variable afresh for
 * every request, through a configuration provider over a live object. The cases that read the same
 * on both lines are in `shared/Credentials.test.ts`.
 */
import { assert, describe, it } from "@effect/vitest"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as Credentials from "../src/Credentials.js"

describe("Credentials", () => {
  describe("layers", () => {
    it.effect("layerConfig reads the variable afresh for every request (rotation)", () =>
      Effect.gen(function*() {
        const env: Record<string, string> = { AGENT_SESSION_API_KEY: "key-1" }
        const provider = ConfigProvider.fromUnknown(env)
        const service = yield* Effect.service(Credentials.Credentials).pipe(Effect.provide(Credentials.layerConfig()))
        const read = Effect.map(service.keyFor("onboard"), Redacted.value).pipe(
          Effect.provideService(ConfigProvider.ConfigProvider, provider)
        )
        assert.strictEqual(yield* read, "key-1")
        env.AGENT_SESSION_API_KEY = "key-2"
        assert.strictEqual(yield* read, "key-2")
      }))
  })
})
