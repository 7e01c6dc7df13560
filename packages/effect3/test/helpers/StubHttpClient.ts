/**
 * A stub platform `HttpClient` for unit tests: records every request it receives and answers
 * with a scripted `Response`. Counting here proves "nothing was sent".
 */
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientError from "@effect/platform/HttpClientError"
import type * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Ref from "effect/Ref"
import * as AgentApi from "../../src/AgentApi.js"
import * as Credentials from "../../src/Credentials.js"
import { ACCOUNT_KEY } from "effect-agent-session-test-support/httpFixtures"

export { ACCOUNT_KEY, agentBody, json, sessionBody, text, validAgent, validSession } from "effect-agent-session-test-support/httpFixtures"

/** A request as the stub saw it. */
export interface Recorded {
  readonly method: string
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
}

/**
 * What the stub answers: a `Response`; an effect (that may never end); or `"refuse"`, a transport
 * failure whose cause mentions the key that was sent (to prove it is scrubbed), with the code
 * `ECONNREFUSED` (nothing was sent); or `"reset"`, the connection reset after the request was
 * written (`ECONNRESET`).
 */
export type Reply = (request: Recorded, attempt: number) => Response | Effect.Effect<Response> | "refuse" | "reset"

/** The stub and its record. */
export interface Stub {
  readonly layer: Layer.Layer<HttpClient.HttpClient>
  readonly requests: Effect.Effect<ReadonlyArray<Recorded>>
  readonly count: Effect.Effect<number>
}

const decoder = new TextDecoder()

const bodyText = (request: HttpClientRequest.HttpClientRequest): string => {
  switch (request.body._tag) {
    case "Uint8Array":
      return decoder.decode(request.body.body)
    case "Raw":
      return typeof request.body.body === "string" ? request.body.body : ""
    default:
      return ""
  }
}

/** A stub answering with `reply` (the attempt counts from 1). */
export const makeStub = (reply: Reply): Effect.Effect<Stub> =>
  Effect.gen(function*() {
    const record = yield* Ref.make<ReadonlyArray<Recorded>>([])
    const client = HttpClient.make((request, url) =>
      Effect.gen(function*() {
        const seen: Recorded = {
          method: request.method,
          url: url.toString(),
          headers: { ...request.headers },
          body: bodyText(request)
        }
        const all = yield* Ref.updateAndGet(record, (list) => [...list, seen])
        const answer = reply(seen, all.length)
        if (answer === "refuse") {
          return yield* new HttpClientError.RequestError({
            request,
            reason: "Transport",
            cause: Object.assign(
              new Error(`connect ECONNREFUSED while sending ${seen.headers["authorization"] ?? seen.headers["x-api-key"]}`),
              { code: "ECONNREFUSED" }
            )
          })
        }
        if (answer === "reset") {
          return yield* new HttpClientError.RequestError({
            request,
            reason: "Transport",
            cause: Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" })
          })
        }
        const response = answer instanceof Response ? answer : yield* answer
        return HttpClientResponse.fromWeb(request, response)
      })
    )
    return {
      layer: Layer.succeed(HttpClient.HttpClient, client),
      requests: Ref.get(record),
      count: Effect.map(Ref.get(record), (list) => list.length)
    }
  })

/** Builds an `AgentApi` over a stub and `Credentials`. */
export const makeApi = (
  reply: Reply,
  options: Partial<AgentApi.Options> & { readonly credentials?: Credentials.Options } = {}
) =>
  Effect.gen(function*() {
    const stub = yield* makeStub(reply)
    const { credentials, ...rest } = options
    const api = yield* AgentApi.make({ baseUrl: "https://agents.test", ...rest }).pipe(
      Effect.provide(
        Layer.merge(stub.layer, Credentials.layer(credentials ?? { apiKey: Redacted.make(ACCOUNT_KEY) }))
      ),
      Effect.orDie
    )
    return { api, stub }
  })
