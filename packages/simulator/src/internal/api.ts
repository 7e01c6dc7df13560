/**
 * The simulator's HTTP side: the contract of `ServiceApi.make(dialect)` served with
 * `HttpApiBuilder` (`handle`, never `handleRaw`), its authentication middleware, and an API-level
 * middleware that answers the contract's errors with `{ error }` bodies where the platform would
 * not (payload decode failures, bodies that are not JSON, bodies over the limit, unknown routes).
 */
import * as Crypto from "node:crypto"
import type * as Http from "node:http"
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApiError from "@effect/platform/HttpApiError"
import type * as HttpApp from "@effect/platform/HttpApp"
import type * as HttpServer from "@effect/platform/HttpServer"
import * as HttpServerError from "@effect/platform/HttpServerError"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import type * as HttpRouter from "@effect/platform/HttpRouter"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import { AgentId, Agent } from "effect-agent-session/Agent"
import type * as Dialect from "effect-agent-session/Dialect"
import * as ServiceApi from "effect-agent-session/ServiceApi"
import { SessionId, SessionInfo } from "effect-agent-session/Session"
import { IdempotencyCache, keyOf } from "./idempotency.js"
import type { Identity, Store } from "./store.js"
import { SessionState as SessionStateClass, type SessionState } from "./session.js"

/** The errors the simulator answers with, as the contract encodes them. */
export type ApiError =
  | ServiceApi.ApiBadRequest
  | ServiceApi.ApiUnauthorized
  | ServiceApi.ApiForbidden
  | ServiceApi.ApiNotFound
  | ServiceApi.ApiConflict
  | ServiceApi.ApiRequestTimeout
  | ServiceApi.ApiPayloadTooLarge
  | ServiceApi.ApiRateLimited
  | ServiceApi.ApiServerError
  | ServiceApi.ApiUnavailable

const ApiErrorSchema = Schema.Union(
  ServiceApi.ApiBadRequest,
  ServiceApi.ApiUnauthorized,
  ServiceApi.ApiForbidden,
  ServiceApi.ApiNotFound,
  ServiceApi.ApiConflict,
  ServiceApi.ApiRequestTimeout,
  ServiceApi.ApiPayloadTooLarge,
  ServiceApi.ApiRateLimited,
  ServiceApi.ApiServerError,
  ServiceApi.ApiUnavailable
)
const encodeApiError = Schema.encodeSync(ApiErrorSchema)

const statusOf = (error: ApiError): number => {
  switch (error._tag) {
    case "BadRequest":
      return 400
    case "Unauthorized":
      return 401
    case "Forbidden":
      return 403
    case "NotFound":
      return 404
    case "Conflict":
      return 409
    case "RequestTimeout":
      return 408
    case "PayloadTooLarge":
      return 413
    case "RateLimited":
      return 429
    case "ServerError":
      return 500
    case "Unavailable":
      return 503
  }
}

/** An error as the contract encodes it: its status and its JSON body (`{ _tag, error }`). */
export const errorResponse = (error: ApiError): { readonly status: number; readonly body: string } => ({
  status: statusOf(error),
  body: JSON.stringify(encodeApiError(error))
})

const respondError = (error: ApiError, headers?: Record<string, string>): HttpServerResponse.HttpServerResponse => {
  const { body, status } = errorResponse(error)
  return HttpServerResponse.text(body, {
    status,
    contentType: "application/json",
    ...(headers === undefined ? {} : { headers })
  })
}

const sessionInfo = (session: SessionState): SessionInfo =>
  new SessionInfo({
    session_id: SessionId.make(session.id),
    status: Option.some(session.status),
    start_time: Option.some(session.startTime),
    end_time: Option.fromNullable(session.endTime),
    error: Option.none()
  })

const identityOf = (store: Store) =>
  Effect.flatMap(ServiceApi.CallerKey, (key) =>
    Option.match(store.identify(Redacted.value(key)), {
      onNone: () => Effect.fail(new ServiceApi.ApiUnauthorized({ error: "missing or invalid API key" })),
      onSome: (identity: Identity) => Effect.succeed(identity)
    }))

/** A decode failure as `path: problem` lines. */
const describeIssues = (error: HttpApiError.HttpApiDecodeError): string =>
  error.issues.length === 0
    ? error.message
    : error.issues.map((issue) => issue.path.length > 0 ? `${issue.path.join(".")}: ${issue.message}` : issue.message)
      .join("; ")

/**
 * The bodies the simulator's Node handler read (under its bounds) before the contract runs, by
 * Node request: the contract reads the body from here, never from the socket.
 */
export type Bodies = WeakMap<Http.IncomingMessage, string>

/** The request with its body replaced by `text` (already read from the socket). */
const withBody = (request: HttpServerRequest.HttpServerRequest, text: string): HttpServerRequest.HttpServerRequest => {
  const headers = new Headers()
  for (const [name, value] of Object.entries(request.headers)) {
    if (!hopByHop.has(name)) headers.set(name, value)
  }
  return HttpServerRequest.fromWeb(
    new Request(new URL(request.url, "http://simulator"), { method: request.method, headers, body: text })
  )
}

const hopByHop: ReadonlySet<string> = new Set([
  "content-length",
  "transfer-encoding",
  "connection",
  "keep-alive",
  "upgrade",
  "expect",
  "host"
])

/** The settings of the contract's handlers. */
interface ApiLimits {
  readonly maxGoalLength: number
}

/**
 * The layer that serves the contract of `dialect` on the `HttpServer` it is given.
 */
export const layer = (
  store: Store,
  dialect: Dialect.Dialect,
  bodies: Bodies,
  limits: ApiLimits
): Layer.Layer<never, never, HttpServer.HttpServer | HttpRouter.HttpRouter.DefaultServices> => {
  const { Authentication, api } = ServiceApi.make(dialect)

  // --- Idempotency-Key: one agent / one session per key and body, per caller ---
  const onboards = new IdempotencyCache<Agent>()
  const creates = new IdempotencyCache<string>()
  const principalOf = (identity: Identity): string => identity._tag === "Account" ? "account" : identity.agent.agentId
  const mismatch = "this Idempotency-Key was used with another request body"
  const idempotent = <A, E, R, M>(
    cache: IdempotencyCache<A>,
    principal: string,
    fingerprint: string,
    act: Effect.Effect<A, E, R>,
    onMismatch: M
  ): Effect.Effect<A, E | M, R | HttpServerRequest.HttpServerRequest> =>
    Effect.gen(function*() {
      const key = keyOf((yield* HttpServerRequest.HttpServerRequest).headers)
      if (key === undefined) return yield* act
      const now = Date.now()
      // A digest of the body, not the body: an entry stays small whatever the request held.
      const digest = Crypto.createHash("sha256").update(fingerprint).digest("base64")
      const found = cache.lookup(principal, key, digest, now)
      if (found._tag === "Hit") return found.value
      if (found._tag === "Mismatch") {
        return yield* Effect.fail(onMismatch)
      }
      const value = yield* act
      cache.remember(principal, key, digest, value, now)
      return value
    })

  const AuthenticationLive = Layer.succeed(Authentication, {
    key: (token: Redacted.Redacted<string>) =>
      Effect.gen(function*() {
        if (dialect.auth === "bearer") {
          // The platform slices 7 characters off whatever `Authorization` holds: check the scheme.
          const request = yield* HttpServerRequest.HttpServerRequest
          if (!/^bearer /i.test(request.headers["authorization"] ?? "")) {
            return yield* Effect.fail(new ServiceApi.ApiUnauthorized({ error: "missing Authorization: Bearer key" }))
          }
        }
        if (Option.isNone(store.identify(Redacted.value(token)))) {
          return yield* Effect.fail(new ServiceApi.ApiUnauthorized({ error: "missing or invalid API key" }))
        }
        return token
      })
  })

  const AgentsLive = HttpApiBuilder.group(api, "agents", (handlers) =>
    handlers.handle("onboard", ({ payload }) =>
      Effect.gen(function*() {
        const identity = yield* identityOf(store)
        if (identity._tag !== "Account") {
          return yield* Effect.fail(new ServiceApi.ApiUnauthorized({ error: "onboarding needs the account key" }))
        }
        const fingerprint = JSON.stringify([payload.name, payload.website, payload.domain])
        return yield* idempotent(onboards, principalOf(identity), fingerprint, Effect.suspend((): Effect.Effect<
          Agent,
          ServiceApi.ApiConflict | ServiceApi.ApiForbidden
        > => {
          if (store.hasAgentNamed(payload.name)) {
            return Effect.fail(new ServiceApi.ApiConflict({ error: `an agent named "${payload.name}" exists` }))
          }
          const added = store.addAgent(payload)
          if ("_tag" in added) return Effect.fail(new ServiceApi.ApiForbidden({ error: added.reason }))
          const { agent, apiKey } = added
          return Effect.succeed(
            new Agent({
              agentId: AgentId.make(agent.agentId),
              name: payload.name,
              website: payload.website,
              domain: payload.domain,
              apiKey: Option.some(Redacted.make(apiKey))
            })
          )
        }), new ServiceApi.ApiConflict({ error: mismatch })).pipe(
          // Not in the contract's onboard errors: answered as a response of its own (403).
          Effect.catchIf(
            (error): error is ServiceApi.ApiForbidden => error instanceof ServiceApi.ApiForbidden,
            (error) => Effect.succeed(respondError(error))
          )
        )
      })))

  const SessionsLive = HttpApiBuilder.group(api, "sessions", (handlers) =>
    handlers
      .handle("create", ({ payload }) =>
        Effect.gen(function*() {
          const owner = yield* identityOf(store)
          if (payload.goal.length > limits.maxGoalLength) {
            return yield* Effect.fail(
              new ServiceApi.ApiBadRequest({ error: `goal: is over ${limits.maxGoalLength} characters` })
            )
          }
          const id = yield* idempotent(
            creates,
            principalOf(owner),
            JSON.stringify([payload.goal, payload.start_url, payload.max_actions]),
            Effect.suspend(() => {
              const session = store.addSession({
                owner,
                goal: payload.goal,
                startUrl: payload.start_url,
                maxActions: payload.max_actions
              })
              // Too many sessions with an open connection: come back when one has ended.
              return session instanceof SessionStateClass
                ? Effect.succeed(session.id)
                : Effect.fail(new ServiceApi.ApiRateLimited({ error: session.reason }))
            }),
            new ServiceApi.ApiBadRequest({ error: mismatch })
          )
          const session = store.sessions.get(id)
          if (session === undefined) {
            return yield* Effect.fail(new ServiceApi.ApiBadRequest({ error: "the session of this Idempotency-Key is gone" }))
          }
          return sessionInfo(session)
        }))
      .handle("retrieve", ({ path }) =>
        Effect.gen(function*() {
          if (!dialect.retrieve) {
            return yield* Effect.fail(new ServiceApi.ApiNotFound({ error: "no such route" }))
          }
          const key = yield* ServiceApi.CallerKey
          const access = store.access(Redacted.value(key), path.sessionId)
          switch (access._tag) {
            case "Ok":
              return sessionInfo(access.session)
            case "Unauthorized":
              return yield* Effect.fail(new ServiceApi.ApiUnauthorized({ error: access.reason }))
            case "Forbidden":
              return yield* Effect.fail(new ServiceApi.ApiForbidden({ error: access.reason }))
            case "NotFound":
            case "Conflict":
              return yield* Effect.fail(new ServiceApi.ApiNotFound({ error: access.reason }))
          }
        })))

  // Inside the API's error encoding: the body read by the Node handler is given to the contract,
  // and what the platform answers without an `{ error }` body is mapped to one.
  const Mapping = HttpApiBuilder.middleware((app: HttpApp.Default) =>
    Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const body = bodies.get(NodeHttpServerRequest.toIncomingMessage(request))
      const served = body === undefined
        ? app
        : Effect.provideService(app, HttpServerRequest.HttpServerRequest, withBody(request, body))
      return yield* served.pipe(
        Effect.catchAllCause((cause) => {
          const failure = Cause.failureOption(cause)
          if (Option.isSome(failure)) {
            const error: unknown = failure.value
            if (error instanceof HttpApiError.HttpApiDecodeError) {
              return Effect.succeed(respondError(new ServiceApi.ApiBadRequest({ error: describeIssues(error) })))
            }
            if (HttpServerError.isServerError(error) && error._tag === "RouteNotFound") {
              return Effect.succeed(respondError(new ServiceApi.ApiNotFound({ error: "no such route" })))
            }
            return Effect.failCause(cause)
          }
          if (Cause.isInterruptedOnly(cause)) return Effect.failCause(cause)
          const defect = Cause.dieOption(cause)
          if (Option.isSome(defect) && HttpServerError.isServerError(defect.value)) {
            // The platform failed to read or parse the body (a JSON syntax error).
            return Effect.succeed(respondError(new ServiceApi.ApiBadRequest({ error: "the body is not valid JSON" })))
          }
          // Anything else is a bug of the simulator: still an answer with a body, never an empty 500.
          return Effect.succeed(respondError(new ServiceApi.ApiServerError({ error: "internal error" })))
        })
      )
    }))

  const ApiLive = HttpApiBuilder.api(api).pipe(
    Layer.provide([AgentsLive, SessionsLive]),
    Layer.provide(AuthenticationLive)
  )
  return HttpApiBuilder.serve().pipe(Layer.provide(Mapping), Layer.provide(ApiLive))
}
