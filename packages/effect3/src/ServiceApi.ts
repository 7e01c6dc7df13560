/**
 * The service's HTTP contract, written once as an `HttpApi`: the SDK's client is derived from it
 * (`HttpApiClient`) and the simulator serves it (`HttpApiBuilder`).
 *
 * The contract depends on the {@link Dialect.Dialect}: the paths, the auth header and the
 * create-session body and response differ between the documented and the observed dialect.
 * `ServiceApi.make(dialect)` builds the contract of a dialect; `ServiceApi.documented` is the
 * document's.
 *
 * @since 0.1.0
 */
import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiMiddleware from "@effect/platform/HttpApiMiddleware"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as HttpApiSecurity from "@effect/platform/HttpApiSecurity"
import * as Context from "effect/Context"
import type * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import { Model } from "effect-agent-session-core"
import { Contract } from "effect-agent-session-shell"
import { Agent, OnboardRequest } from "./Agent.js"
import * as Dialect from "./Dialect.js"
import { HttpUrlString, NonBlankString } from "./internal/schema.js"
import { AutoTrigger, CreateSessionRequest, SessionId, SessionInfo, SessionStatus } from "./Session.js"

// ---------------------------------------------------------------------------
// Error bodies (what the service answers on failure; the client reads them)
// ---------------------------------------------------------------------------

const errorFields = { error: Schema.String }

/**
 * 400: the body did not decode.
 *
 * @since 0.1.0
 * @category errors
 */
export class ApiBadRequest extends Schema.TaggedError<ApiBadRequest>()("BadRequest", errorFields, HttpApiSchema.annotations({
  status: 400
})) {}

/**
 * 401: the key is missing, empty or unknown.
 *
 * @since 0.1.0
 * @category errors
 */
export class ApiUnauthorized extends Schema.TaggedError<ApiUnauthorized>()("Unauthorized", errorFields, HttpApiSchema.annotations({
  status: 401
})) {}

/**
 * 403: the key may not do this.
 *
 * @since 0.1.0
 * @category errors
 */
export class ApiForbidden extends Schema.TaggedError<ApiForbidden>()("Forbidden", errorFields, HttpApiSchema.annotations({
  status: 403
})) {}

/**
 * 404: no such resource.
 *
 * @since 0.1.0
 * @category errors
 */
export class ApiNotFound extends Schema.TaggedError<ApiNotFound>()("NotFound", errorFields, HttpApiSchema.annotations({
  status: 404
})) {}

/**
 * 409: the agent name is taken.
 *
 * @since 0.1.0
 * @category errors
 */
export class ApiConflict extends Schema.TaggedError<ApiConflict>()("Conflict", errorFields, HttpApiSchema.annotations({
  status: 409
})) {}

/**
 * 408: the request body did not arrive within the server's time-out.
 *
 * @since 0.1.0
 * @category errors
 */
export class ApiRequestTimeout extends Schema.TaggedError<ApiRequestTimeout>()("RequestTimeout", errorFields, HttpApiSchema.annotations({
  status: 408
})) {}

/**
 * 413: the body is over the size limit.
 *
 * @since 0.1.0
 * @category errors
 */
export class ApiPayloadTooLarge extends Schema.TaggedError<ApiPayloadTooLarge>()("PayloadTooLarge", errorFields, HttpApiSchema.annotations({
  status: 413
})) {}

/**
 * 429: rate limited (the `Retry-After` header says when to come back).
 *
 * @since 0.1.0
 * @category errors
 */
export class ApiRateLimited extends Schema.TaggedError<ApiRateLimited>()("RateLimited", errorFields, HttpApiSchema.annotations({
  status: 429
})) {}

/**
 * 500: the server failed on a request it should have answered (a bug of the server).
 *
 * @since 0.1.0
 * @category errors
 */
export class ApiServerError extends Schema.TaggedError<ApiServerError>()("ServerError", errorFields, HttpApiSchema.annotations({
  status: 500
})) {}

/**
 * 503: the service is unavailable for now.
 *
 * @since 0.1.0
 * @category errors
 */
export class ApiUnavailable extends Schema.TaggedError<ApiUnavailable>()("Unavailable", errorFields, HttpApiSchema.annotations({
  status: 503
})) {}

// ---------------------------------------------------------------------------
// Bodies per dialect
// ---------------------------------------------------------------------------

/**
 * The defaults the observed dialect's server applies when its create-session body leaves
 * `url` or `max_actions` out (that client sends neither by default).
 *
 * @since 0.1.0
 * @category models
 */
export const observedDefaults: typeof Model.observedDefaults = Model.observedDefaults

/**
 * The create-session body of the observed dialect: `goal`, optional `url` (the start page),
 * optional `auto_trigger`. The SDK also sends `max_actions`, which that server may use; without
 * it the server applies {@link observedDefaults}. As that dialect's own client sends them,
 * `auto_trigger: null` (no schedule), `url: null` and `max_actions: null` mean absent, and fields
 * the schema does not name (`connectStrategy`, `withAutoTrigger`, any other input of the
 * caller's) are ignored.
 *
 * @since 0.1.0
 * @category models
 */
export const ObservedCreateSessionBody = Schema.Struct({
  goal: NonBlankString,
  url: Schema.optional(Schema.NullOr(HttpUrlString)),
  max_actions: Schema.optional(Schema.NullOr(Schema.Int.pipe(Schema.greaterThanOrEqualTo(Model.minMaxActions)))),
  auto_trigger: Schema.optional(Schema.NullOr(AutoTrigger))
})

const ObservedCreateSession = Schema.transform(ObservedCreateSessionBody, Schema.typeSchema(CreateSessionRequest), {
  strict: true,
  decode: (body) => CreateSessionRequest.make(Model.fromObservedCreateBody(body)),
  encode: (request) => Model.toObservedCreateBody(request)
})

/**
 * The create-session response of the observed dialect: `{ data: { sessionId, ... } }`.
 *
 * @since 0.1.0
 * @category models
 */
export const ObservedSessionEnvelope = Schema.Struct({
  data: Schema.Struct({
    sessionId: Schema.String,
    status: Schema.optional(Schema.encodedSchema(SessionStatus)),
    start_time: Schema.optional(Schema.Union(Schema.String, Schema.Number)),
    end_time: Schema.optional(Schema.Union(Schema.String, Schema.Number)),
    error: Schema.optional(Schema.String)
  })
})

const ObservedSession = Schema.transform(ObservedSessionEnvelope, SessionInfo, {
  strict: true,
  decode: Model.fromObservedSession,
  encode: Model.toObservedSession
})

/** The JSON object a body is on the wire, whatever its fields. */
const JsonObject = Schema.Record({ key: Schema.String, value: Schema.Unknown })

/**
 * The wire shape of a body: a JSON object.
 *
 * @since 0.1.0
 * @category models
 */
export type JsonObject = typeof JsonObject.Type

const asJsonObject = <A, I>(schema: Schema.Schema<A, I>): Schema.Schema<A, JsonObject> =>
  Schema.compose(JsonObject, schema, { strict: false })

/**
 * The create-session body schema of a dialect (decodes to {@link CreateSessionRequest}).
 *
 * @since 0.1.0
 * @category models
 */
export const createSessionBody = (dialect: Dialect.Dialect): Schema.Schema<CreateSessionRequest, JsonObject> =>
  dialect.createSessionBody === "observed" ? asJsonObject(ObservedCreateSession) : asJsonObject(CreateSessionRequest)

/**
 * The session response schema of a dialect (decodes to {@link SessionInfo}).
 *
 * @since 0.1.0
 * @category models
 */
export const sessionResponse = (dialect: Dialect.Dialect): Schema.Schema<SessionInfo, JsonObject> =>
  dialect.sessionResponse === "data-envelope" ? asJsonObject(ObservedSession) : asJsonObject(SessionInfo)

// ---------------------------------------------------------------------------
// Security
// ---------------------------------------------------------------------------

/**
 * The key a request was authenticated with (provided to the server's handlers).
 *
 * @since 0.1.0
 * @category tags
 */
export class CallerKey extends Context.Tag("effect-agent-session/ServiceApi/CallerKey")<
  CallerKey,
  Redacted.Redacted<string>
>() {}

/**
 * The security scheme of a dialect: `Authorization: Bearer` or `x-api-key`.
 *
 * @since 0.1.0
 * @category models
 */
export const security = (dialect: Dialect.Dialect): HttpApiSecurity.Bearer | HttpApiSecurity.ApiKey =>
  dialect.auth === "bearer" ? HttpApiSecurity.bearer : HttpApiSecurity.apiKey({ key: "x-api-key", in: "header" })

/**
 * The identity of the contract's authentication middleware.
 *
 * @since 0.1.0
 * @category tags
 */
export interface Authentication {
  readonly [HttpApiMiddleware.TypeId]: {
    readonly provides: CallerKey
    readonly failure: ApiUnauthorized
    readonly failureContext: never
  }
}

/**
 * The options of the authentication middleware: a 401 on failure, the caller's key provided.
 *
 * @since 0.1.0
 * @category models
 */
export interface AuthenticationOptions {
  readonly failure: typeof ApiUnauthorized
  readonly provides: typeof CallerKey
  readonly security: { readonly key: HttpApiSecurity.Bearer | HttpApiSecurity.ApiKey }
}

/**
 * The authentication middleware tag of a dialect's contract. The simulator implements it; the
 * SDK's client writes the header itself.
 *
 * @since 0.1.0
 * @category tags
 */
export type AuthenticationTag = HttpApiMiddleware.TagClass<Authentication, string, AuthenticationOptions>

const makeAuthentication = (dialect: Dialect.Dialect): AuthenticationTag => {
  return HttpApiMiddleware.Tag<Authentication>()(
    Contract.authenticationKey(dialect.name),
    {
      failure: ApiUnauthorized,
      provides: CallerKey,
      security: { key: security(dialect) }
    } satisfies AuthenticationOptions as AuthenticationOptions
  )
}

// ---------------------------------------------------------------------------
// The contract
// ---------------------------------------------------------------------------

const makeApi = (dialect: Dialect.Dialect) => {
  // The authentication middleware of the contract, with the dialect's scheme. The simulator
  // implements it; the SDK's client writes the header itself.
  const Authentication = makeAuthentication(dialect)
  const api = HttpApi.make("AgentSessionService")
    .add(
      HttpApiGroup.make("agents")
        .add(
          HttpApiEndpoint.post("onboard", dialect.onboardPath)
            .setPayload(OnboardRequest)
            .addSuccess(Agent)
            .addError(ApiBadRequest)
            .addError(ApiConflict)
        )
        .middleware(Authentication)
    )
    .add(
      HttpApiGroup.make("sessions")
        .add(
          HttpApiEndpoint.post("create", dialect.sessionsPath)
            .setPayload(createSessionBody(dialect))
            .addSuccess(sessionResponse(dialect))
            .addError(ApiBadRequest)
            .addError(ApiForbidden)
        )
        .add(
          HttpApiEndpoint.get("retrieve", `${dialect.sessionsPath}/:sessionId`)
            .setPath(Schema.Struct({ sessionId: SessionId }))
            .addSuccess(sessionResponse(dialect))
            .addError(ApiForbidden)
            .addError(ApiNotFound)
        )
        .middleware(Authentication)
    )
    .addError(ApiUnauthorized)
    .addError(ApiPayloadTooLarge)
    .addError(ApiRateLimited)
    .addError(ApiUnavailable)
  return { api, Authentication, dialect } as const
}

/**
 * The contract of a dialect: the `HttpApi`, its authentication middleware tag, and the dialect.
 *
 * @since 0.1.0
 * @category models
 */
export type ServiceApi = ReturnType<typeof makeApi>

/**
 * The contract of a dialect (built once per dialect value, held weakly: `Contract.perDialect`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: (dialect: Dialect.Dialect) => ServiceApi = Contract.perDialect(makeApi)

/**
 * The contract of the document (`Dialect.documented`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const documented: ServiceApi = make(Dialect.documented)
