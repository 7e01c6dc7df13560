/**
 * The service's HTTP contract, written once as an `HttpApi`: the SDK's client is derived from it
 * (`HttpApiClient`). The reference simulator, one implementation for both editions, serves the
 * Effect 3 edition's contract of the same paths, bodies and statuses.
 *
 * The contract depends on the {@link Dialect.Dialect}: the paths, the auth header and the
 * create-session body and response differ between the documented and the observed dialect.
 * `ServiceApi.make(dialect)` builds the contract of a dialect; `ServiceApi.documented` is the
 * document's.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as HttpApi from "effect/http-api/HttpApi"
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiMiddleware from "effect/http-api/HttpApiMiddleware"
import * as HttpApiSecurity from "effect/http-api/HttpApiSecurity"
import type * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as SchemaTransformation from "effect/SchemaTransformation"
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
export class ApiBadRequest extends Schema.TaggedError<ApiBadRequest>("effect-agent-session/ServiceApi/BadRequest")(
  "BadRequest",
  errorFields,
  { httpApiStatus: 400 }
) {}

/**
 * 401: the key is missing, empty or unknown.
 *
 * @since 0.1.0
 * @category errors
 */
export class ApiUnauthorized
  extends Schema.TaggedError<ApiUnauthorized>("effect-agent-session/ServiceApi/Unauthorized")(
    "Unauthorized",
    errorFields,
    { httpApiStatus: 401 }
  )
{}

/**
 * 403: the key may not do this.
 *
 * @since 0.1.0
 * @category errors
 */
export class ApiForbidden extends Schema.TaggedError<ApiForbidden>("effect-agent-session/ServiceApi/Forbidden")(
  "Forbidden",
  errorFields,
  { httpApiStatus: 403 }
) {}

/**
 * 404: no such resource.
 *
 * @since 0.1.0
 * @category errors
 */
export class ApiNotFound extends Schema.TaggedError<ApiNotFound>("effect-agent-session/ServiceApi/NotFound")(
  "NotFound",
  errorFields,
  { httpApiStatus: 404 }
) {}

/**
 * 409: the agent name is taken.
 *
 * @since 0.1.0
 * @category errors
 */
export class ApiConflict extends Schema.TaggedError<ApiConflict>("effect-agent-session/ServiceApi/Conflict")(
  "Conflict",
  errorFields,
  { httpApiStatus: 409 }
) {}

/**
 * 413: the body is over the size limit.
 *
 * @since 0.1.0
 * @category errors
 */
export class ApiPayloadTooLarge
  extends Schema.TaggedError<ApiPayloadTooLarge>("effect-agent-session/ServiceApi/PayloadTooLarge")(
    "PayloadTooLarge",
    errorFields,
    { httpApiStatus: 413 }
  )
{}

/**
 * 429: rate limited (the `Retry-After` header says when to come back).
 *
 * @since 0.1.0
 * @category errors
 */
export class ApiRateLimited
  extends Schema.TaggedError<ApiRateLimited>("effect-agent-session/ServiceApi/RateLimited")(
    "RateLimited",
    errorFields,
    { httpApiStatus: 429 }
  )
{}

/**
 * 503: the service is unavailable for now.
 *
 * @since 0.1.0
 * @category errors
 */
export class ApiUnavailable
  extends Schema.TaggedError<ApiUnavailable>("effect-agent-session/ServiceApi/Unavailable")(
    "Unavailable",
    errorFields,
    { httpApiStatus: 503 }
  )
{}

/** The errors any endpoint of the service may answer. */
const serviceErrors = [ApiPayloadTooLarge, ApiRateLimited, ApiUnavailable] as const

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
 * the schema does not name are ignored.
 *
 * @since 0.1.0
 * @category models
 */
export const ObservedCreateSessionBody = Schema.Struct({
  goal: NonBlankString,
  url: Schema.optional(Schema.NullOr(HttpUrlString)),
  max_actions: Schema.optional(Schema.NullOr(Schema.Int.check(Schema.isGreaterThanOrEqualTo(Model.minMaxActions)))),
  auto_trigger: Schema.optional(Schema.NullOr(AutoTrigger))
})

const ObservedCreateSession = ObservedCreateSessionBody.pipe(
  Schema.decodeTo(
    Schema.toType(CreateSessionRequest),
    SchemaTransformation.transform({
      decode: (body): CreateSessionRequest => new CreateSessionRequest(Model.fromObservedCreateBody(body)),
      encode: (request): typeof ObservedCreateSessionBody.Type => Model.toObservedCreateBody(request)
    })
  )
)

/**
 * The create-session response of the observed dialect: `{ data: { sessionId, ... } }`.
 *
 * @since 0.1.0
 * @category models
 */
export const ObservedSessionEnvelope = Schema.Struct({
  data: Schema.Struct({
    sessionId: Schema.String,
    status: Schema.optionalKey(Schema.toEncoded(SessionStatus)),
    start_time: Schema.optionalKey(Schema.Union([Schema.String, Schema.Number])),
    end_time: Schema.optionalKey(Schema.Union([Schema.String, Schema.Number])),
    error: Schema.optionalKey(Schema.String)
  })
})

const ObservedSession = ObservedSessionEnvelope.pipe(
  Schema.decodeTo(
    Schema.toEncoded(SessionInfo),
    SchemaTransformation.transform({
      decode: (envelope): typeof SessionInfo.Encoded => Model.fromObservedSession(envelope),
      encode: (info): typeof ObservedSessionEnvelope.Type => Model.toObservedSession(info)
    })
  ),
  Schema.decodeTo(SessionInfo)
)

/**
 * The wire shape of a body: a JSON object.
 *
 * @since 0.1.0
 * @category models
 */
export type JsonObject = { readonly [x: string]: unknown }

const JsonObject = Schema.Record(Schema.String, Schema.Unknown)

const asJsonObject = <A>(schema: Schema.Codec<A, unknown>): Schema.Codec<A, JsonObject> =>
  JsonObject.pipe(Schema.decodeTo(schema, SchemaTransformation.passthrough({ strict: false })))

/**
 * The create-session body schema of a dialect (decodes to {@link CreateSessionRequest}).
 *
 * @since 0.1.0
 * @category models
 */
export const createSessionBody = (dialect: Dialect.Dialect): Schema.Codec<CreateSessionRequest, JsonObject> =>
  dialect.createSessionBody === "observed" ? asJsonObject(ObservedCreateSession) : asJsonObject(CreateSessionRequest)

/**
 * The session response schema of a dialect (decodes to {@link SessionInfo}).
 *
 * @since 0.1.0
 * @category models
 */
export const sessionResponse = (dialect: Dialect.Dialect): Schema.Codec<SessionInfo, JsonObject> =>
  dialect.sessionResponse === "data-envelope" ? asJsonObject(ObservedSession) : asJsonObject(SessionInfo)

// ---------------------------------------------------------------------------
// Security
// ---------------------------------------------------------------------------

/**
 * The key a request was authenticated with (provided to a server's handlers).
 *
 * @since 0.1.0
 * @category tags
 */
export class CallerKey extends Context.Service<CallerKey, Redacted.Redacted<string>>()(
  "effect-agent-session/ServiceApi/CallerKey"
) {}

/**
 * The security scheme of a dialect: `Authorization: Bearer` or `x-api-key`.
 *
 * @since 0.1.0
 * @category models
 */
export const security = (dialect: Dialect.Dialect): HttpApiSecurity.Http | HttpApiSecurity.ApiKey =>
  dialect.auth === "bearer" ? HttpApiSecurity.bearer : HttpApiSecurity.apiKey({ key: "x-api-key", in: "header" })

/**
 * The identity of the contract's authentication middleware.
 *
 * @since 0.1.0
 * @category tags
 */
export interface Authentication {
  // The key `HttpApiMiddleware.Service` gives its classes' instances (not exported by effect 4.1).
  readonly "~effect/http-api/HttpApiMiddleware": {
    readonly provides: CallerKey
    readonly requires: never
    readonly error: typeof ApiUnauthorized
    readonly clientError: never
    readonly requiredForClient: false
  }
}

/**
 * The authentication middleware of a dialect's contract: a 401 (`ApiUnauthorized`) on failure,
 * the caller's key provided as {@link CallerKey}. A server implements it; the SDK's client
 * writes the header itself, so clients need no implementation of it.
 *
 * @since 0.1.0
 * @category tags
 */
export type AuthenticationService = HttpApiMiddleware.ServiceClass<Authentication, string, {
  requires: never
  provides: CallerKey
  error: typeof ApiUnauthorized
  clientError: never
  requiredForClient: false
  security: { readonly key: HttpApiSecurity.Http | HttpApiSecurity.ApiKey }
}>

const makeAuthentication = (dialect: Dialect.Dialect): AuthenticationService => {
  return HttpApiMiddleware.Service<Authentication, { provides: CallerKey }>()(
    Contract.authenticationKey(dialect.name),
    { error: ApiUnauthorized, security: { key: security(dialect) } }
  )
}

// ---------------------------------------------------------------------------
// The contract
// ---------------------------------------------------------------------------

const makeApi = (dialect: Dialect.Dialect) => {
  // The authentication middleware of the contract, with the dialect's scheme. A server
  // implements it; the SDK's client writes the header itself.
  const Authentication = makeAuthentication(dialect)
  const api = HttpApi.make("AgentSessionService")
    .add(
      HttpApiGroup.make("agents")
        .add(
          HttpApiEndpoint.post("onboard", dialect.onboardPath, {
            payload: OnboardRequest,
            success: Agent,
            error: [ApiBadRequest, ApiConflict, ...serviceErrors]
          })
        )
        .middleware(Authentication)
    )
    .add(
      HttpApiGroup.make("sessions")
        .add(
          HttpApiEndpoint.post("create", dialect.sessionsPath, {
            payload: createSessionBody(dialect),
            success: sessionResponse(dialect),
            error: [ApiBadRequest, ApiForbidden, ...serviceErrors]
          })
        )
        .add(
          HttpApiEndpoint.get("retrieve", `${dialect.sessionsPath}/:sessionId`, {
            params: { sessionId: SessionId },
            success: sessionResponse(dialect),
            error: [ApiForbidden, ApiNotFound, ...serviceErrors]
          })
        )
        .middleware(Authentication)
    )
  return { api, Authentication, dialect } as const
}

/**
 * The contract of a dialect: the `HttpApi`, its authentication middleware, and the dialect.
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
