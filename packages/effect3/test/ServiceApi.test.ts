/**
 * The service's contract, the cases whose text is Effect 3's: the security schemes as the Effect 3
 * platform names them (U12), and the statuses of the error bodies (U07). The cases that read the
 * same on both lines are in `shared/ServiceApi.test.ts`.
 */
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import { assert, describe, it } from "@effect/vitest"
import * as Dialect from "../src/Dialect.js"
import * as ServiceApi from "../src/ServiceApi.js"
import { endpoints, spec, statuses } from "./shared/contract.js"

describe("ServiceApi", () => {
  describe("the contract per dialect", () => {
    it("U12 documented security is Authorization: Bearer on every endpoint", () => {
      for (const endpoint of endpoints(Dialect.documented)) assert.deepStrictEqual(endpoint.security, ["Bearer"])
      assert.deepStrictEqual(spec(Dialect.documented).components.securitySchemes, {
        key: { type: "http", scheme: "bearer" }
      })
      assert.strictEqual(ServiceApi.security(Dialect.documented)._tag, "Bearer")
    })

    it("U12 observed security is an x-api-key header on every endpoint", () => {
      for (const endpoint of endpoints(Dialect.observed)) assert.deepStrictEqual(endpoint.security, ["ApiKey"])
      assert.deepStrictEqual(spec(Dialect.observed).components.securitySchemes, {
        key: { type: "apiKey", name: "x-api-key", in: "header" }
      })
      const scheme = ServiceApi.security(Dialect.observed)
      if (scheme._tag !== "ApiKey") return assert.fail(scheme._tag)
      assert.strictEqual(scheme.key, "x-api-key")
      assert.strictEqual(scheme.in, "header")
    })

    it("U07 error bodies carry their statuses", () => {
      const bodies = [
        [ServiceApi.ApiBadRequest, 400],
        [ServiceApi.ApiUnauthorized, 401],
        [ServiceApi.ApiForbidden, 403],
        [ServiceApi.ApiNotFound, 404],
        [ServiceApi.ApiConflict, 409],
        [ServiceApi.ApiPayloadTooLarge, 413],
        [ServiceApi.ApiRateLimited, 429],
        [ServiceApi.ApiUnavailable, 503]
      ] as const
      for (const [schema, status] of bodies) assert.strictEqual(HttpApiSchema.getStatusError(schema), status, schema.name)
      // Retrieval declares 400 too: the Effect 3 platform's refusal of a path parameter.
      assert.deepStrictEqual(statuses("/api/v1sessions/{sessionId}", "get"), ["200", "400", "401", "403", "404", "413", "429", "503"])
    })
  })
})
