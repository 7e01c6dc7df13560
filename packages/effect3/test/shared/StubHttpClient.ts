/**
 * A stub `HttpClient` for the layer-swapped tests: records every request it receives and answers
 * with a scripted `Response`. Counting here proves "nothing was sent". Written once for both
 * editions: the HTTP modules and the transport failure are each edition's `../helpers/line.ts`.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Ref from "effect/Ref"
import * as AgentApi from "../../src/AgentApi.js"
import * as Credentials from "../../src/Credentials.js"
import { ACCOUNT_KEY } from "effect-agent-session-test-support/httpFixtures"
import { HttpClient, type HttpClientRequest, HttpClientResponse, transportFailure } from "../helpers/line.js"

export { ACCOUNT_KEY, agentBody, json, sessionBody, text, validAgent, validSession } from "effect-agent-session-test-support/httpFixtures"

/** A request as the stub saw it. */
export interface Recorded {
  readonly method: string
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
}

/**
 * What the stub answers: a `Response`; an effect (that may never end); `"refuse"`, a transport
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
          const sent = seen.headers["authorization"] ?? seen.headers["x-api-key"]
          return yield* transportFailure(
            request,
            Object.assign(new Error(`connect ECONNREFUSED while sending ${sent}`), { code: "ECONNREFUSED" })
          )
        }
        if (answer === "reset") {
          return yield* transportFailure(request, Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" }))
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
