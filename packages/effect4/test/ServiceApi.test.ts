/**
 * The service's contract, the case whose text is Effect 4's: the security schemes as Effect 4
 * names them (U12), and the statuses retrieval declares (U07). The cases that read the same on both lines are in `shared/ServiceApi.test.ts`.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Dialect from "../src/Dialect.js"
import { endpoints, spec, statuses } from "./shared/contract.js"

describe("ServiceApi", () => {
  describe("the contract per dialect", () => {
    it("U12 the security of every endpoint is the dialect's: Authorization Bearer, or an x-api-key header", () => {
      for (const endpoint of endpoints(Dialect.documented)) assert.deepStrictEqual(endpoint.security, ["Http"])
      for (const endpoint of endpoints(Dialect.observed)) assert.deepStrictEqual(endpoint.security, ["ApiKey"])
      assert.deepStrictEqual(spec(Dialect.documented).components.securitySchemes, {
        key: { type: "http", scheme: "Bearer" }
      })
      assert.deepStrictEqual(spec(Dialect.observed).components.securitySchemes, {
        key: { type: "apiKey", name: "x-api-key", in: "header" }
      })
    })

    it("U07 retrieval declares its error statuses", () => {
      assert.deepStrictEqual(statuses("/api/v1sessions/{sessionId}", "get"), ["200", "401", "403", "404", "413", "429", "503"])
    })
  })
})
