/**
 * The contract tests' views of a dialect's contract, written once for both editions: its OpenAPI
 * document and its endpoints.
 */
import * as Dialect from "../../src/Dialect.js"
import * as ServiceApi from "../../src/ServiceApi.js"
import { HttpApi, HttpApiMiddleware, OpenApi } from "../helpers/line.js"

/** The OpenAPI document of a dialect's contract. */
export const spec = (dialect: Dialect.Dialect) => OpenApi.fromApi(ServiceApi.make(dialect).api)

/** Every endpoint of a contract as `METHOD path`, with the security of its middleware. */
export const endpoints = (dialect: Dialect.Dialect) => {
  const out: Array<{ readonly route: string; readonly security: ReadonlyArray<string> }> = []
  HttpApi.reflect(ServiceApi.make(dialect).api, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, middleware }) => {
      const security: Array<string> = []
      for (const tag of middleware) {
        if (HttpApiMiddleware.isSecurity(tag)) {
          for (const scheme of Object.values(tag.security)) security.push(scheme._tag)
        }
      }
      out.push({ route: `${endpoint.method} ${endpoint.path}`, security })
    }
  })
  return out
}

/** The statuses the documented contract declares for an endpoint, sorted. */
export const statuses = (path: string, method: "get" | "post"): ReadonlyArray<string> =>
  Object.keys(spec(Dialect.documented).paths[path]?.[method]?.responses ?? {}).sort()
