/**
 * The implementation of `AgentApi`: the `HttpApiClient` derived from the contract, over the
 * `HttpClient` of one call (`agentApiCall.ts`: the auth header, the `User-Agent`, the
 * `Idempotency-Key`, every failure mapped to the SDK's typed errors in one place,
 * `httpErrors.ts`), each attempt under its time-out, the attempts on the retry schedule and the
 * create policy (`agentApiPolicy.ts`). The protocol's rules (which status is which error,
 * `Retry-After`, which failures may be sent again, body limits, keys out of text) are the
 * protocol core's `Http`, `Secrets` and `Url`, the call itself (its attempts counted, the create
 * policy, an unknown outcome, the span's attributes) the core shell's `HttpCall`; this module
 * binds them to Effect 4.
 */
import type { Options, Service } from "../AgentApi.js"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Headers from "effect/http/Headers"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpApiClient from "effect/http-api/HttpApiClient"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Result from "effect/Result"
import { Http, Url } from "effect-agent-session-core"
import { HttpBody, HttpCall, Telemetry } from "effect-agent-session-core/shell"
import { OnboardRequest } from "../Agent.js"
import * as Credentials from "../Credentials.js"
import * as Dialect from "../Dialect.js"
import {
  type AgentApiError,
  type CredentialsError,
  InsecureTransport,
  InvalidRequest,
  NotFound,
  OutcomeUnknown,
  RequestTimeout
} from "../Errors.js"
import * as Metrics from "../Metrics.js"
import * as ServiceApi from "../ServiceApi.js"
import { CreateSessionRequest, SessionId } from "../Session.js"
import { type AttemptError, CurrentCall, serviceClient, toAttemptError } from "./agentApiCall.js"
import {
  defaultMaxRetryAfter,
  defaultRetry,
  defaultTimeout,
  effectiveRetry,
  logRetry
} from "../../binding/internal/agentApiPolicy.js"
import { NonBlankString, validate } from "./schema.js"

export { defaultMaxRetryAfter, defaultRetry, defaultTimeout } from "../../binding/internal/agentApiPolicy.js"
export { defaultMaxResponseSize } from "./body.js"

/** An attempt counted under its outcome (`HttpCall.Attempt.outcome`; none: not counted). */
const recordAttempt = (operation: string, outcome: Metrics.HttpOutcome | undefined) =>
  outcome === undefined ? Effect.void : Metrics.recordHttpAttempt(operation, outcome)

const logFailure = (error: AgentApiError) =>
  Effect.logDebug(Telemetry.attemptFailedLog).pipe(
    Effect.annotateLogs(Telemetry.attemptFailedAnnotations(error))
  )

const validateOnboard = validate(OnboardRequest, "OnboardRequest")
const validateCreateSession = validate(CreateSessionRequest, "CreateSessionRequest")
const validateSessionId = validate(NonBlankString, "sessionId")

const normalizeBaseUrl = (
  baseUrl: string | URL,
  allowInsecure: boolean
): Result.Result<string, InvalidRequest | InsecureTransport> => {
  const checked = Url.checkBaseUrl(baseUrl, allowInsecure)
  switch (checked._tag) {
    case "Valid":
      return Result.succeed(checked.url)
    case "Invalid":
      return Result.fail(new InvalidRequest({ subject: "AgentApi.Options", message: checked.message }))
    case "Insecure":
      return Result.fail(new InsecureTransport({ url: checked.printable }))
  }
}

/** Builds the service. */
export const make = (
  options: Options
): Effect.Effect<Service, InsecureTransport | InvalidRequest, HttpClient.HttpClient | Credentials.Credentials> =>
  Effect.gen(function*() {
    const dialect = options.dialect ?? Dialect.documented
    const baseUrl = yield* Effect.fromResult(normalizeBaseUrl(options.baseUrl, options.allowInsecure ?? false))
    const timeout = Duration.fromInputUnsafe(options.timeout ?? defaultTimeout)
    const retrySchedule = options.retry ?? defaultRetry
    const maxRetryAfter = Duration.fromInputUnsafe(options.maxRetryAfter ?? defaultMaxRetryAfter)
    // What each operation sends again, the create policy among it: by default a creating call is
    // sent again only when the service cannot have acted; "idempotent" trusts the service to
    // honour Idempotency-Key.
    const retryable = HttpCall.retryable(options.createPolicy)
    const retriesOf = HttpCall.perOperation((operation) =>
      effectiveRetry(retrySchedule, maxRetryAfter, logRetry(operation), retryable[operation])
    )
    const credentials = yield* Credentials.Credentials
    const httpClient = yield* HttpClient.HttpClient
    const contract = ServiceApi.make(dialect)
    const client = yield* HttpApiClient.makeWith(contract.api, {
      httpClient: serviceClient(httpClient, dialect, HttpBody.limitOf(options.maxResponseSize)),
      baseUrl
    })

    /**
     * One call: per attempt, the key read afresh, the request, every failure mapped, the
     * time-out; the attempts on the retry schedule, counted by `call`.
     */
    const attemptsOf = <A, E, K extends CredentialsError>(
      call: HttpCall.Call,
      key: Effect.Effect<Redacted.Redacted<string>, K>,
      run: Effect.Effect<A, E>
    ): Effect.Effect<A, AttemptError | K> => {
      const { name, operation } = call
      const attempt = Effect.gen(function*() {
        const secret = yield* key
        const current = call.attempt(secret, Redacted.value, yield* credentials.secrets)
        const redacted = HttpCall.redactedHeaders(yield* Effect.service(Headers.CurrentRedactedNames))
        return yield* run.pipe(
          Effect.catch((error: E) => toAttemptError(error, current)),
          Effect.provideService(CurrentCall, current),
          Effect.provideService(Headers.CurrentRedactedNames, redacted),
          Effect.timeoutOrElse({
            duration: timeout,
            orElse: () => Effect.fail(new RequestTimeout({ operation: name, timeout }))
          }),
          Effect.tap(() => recordAttempt(operation, current.outcome())),
          Effect.tapError((error) => recordAttempt(operation, current.outcome(error)))
        )
      }).pipe(Effect.tapError(logFailure))
      return Effect.retry(attempt, retriesOf[operation])
    }

    /** A call that creates nothing (`getSession`): every attempt's error as it is. */
    const send = <A, E, K extends CredentialsError>(
      operation: keyof typeof retriesOf,
      key: Effect.Effect<Redacted.Redacted<string>, K>,
      run: Effect.Effect<A, E>
    ): Effect.Effect<A, AttemptError | K> => attemptsOf(new HttpCall.Call(operation, undefined), key, run)

    /**
     * A creating call (`onboard`, `createSession`): when its last attempt may have acted (a
     * time-out, always; a reset, a 500, 502, 504), it fails with `OutcomeUnknown`, with the key to
     * send it again; so it never fails with `RequestTimeout`.
     */
    const sendCreating = <A, E, K extends CredentialsError>(
      operation: keyof typeof retriesOf,
      key: Effect.Effect<Redacted.Redacted<string>, K>,
      run: Effect.Effect<A, E>,
      idempotencyKey: string
    ): Effect.Effect<A, Exclude<AttemptError, RequestTimeout> | K | OutcomeUnknown> => {
      const call = new HttpCall.Call(operation, idempotencyKey)
      return Effect.catch(attemptsOf(call, key, run), (error): Effect.Effect<never, Exclude<AttemptError, RequestTimeout> | K | OutcomeUnknown> =>
        call.outcomeKnown(error) ? Effect.fail(error) : Effect.fail(new OutcomeUnknown(call.outcomeUnknown(error))))
    }

    /** The key of one creating call: the caller's, else a fresh random one. */
    const idempotencyKeyOf = (given: string | undefined): Effect.Effect<string, InvalidRequest> =>
      Effect.suspend(() => {
        const key = HttpCall.idempotencyKey(given)
        return key === undefined
          ? Effect.fail(new InvalidRequest({ subject: "idempotencyKey", message: Http.idempotencyKeyMessage }))
          : Effect.succeed(key)
      })

    const spanAttributes = HttpCall.spanAttributes(dialect.name, baseUrl)

    const onboard: Service["onboard"] = (input, options) =>
      Effect.gen(function*() {
        const request = yield* Effect.fromResult(validateOnboard(input))
        const idempotencyKey = yield* idempotencyKeyOf(options?.idempotencyKey)
        const agent = yield* sendCreating(
          "onboard",
          credentials.keyFor("onboard"),
          client.agents.onboard({ payload: request }),
          idempotencyKey
        )
        yield* credentials.remember(Credentials.fromAgent(agent))
        yield* Effect.annotateCurrentSpan(Telemetry.spanAttributes.agentId, agent.agentId)
        return agent
      }).pipe(Effect.withSpan(Telemetry.apiSpans.onboard, { attributes: spanAttributes(undefined) }))

    const createSession: Service["createSession"] = (input, options) =>
      Effect.gen(function*() {
        const request = yield* Effect.fromResult(validateCreateSession(input))
        const idempotencyKey = yield* idempotencyKeyOf(options?.idempotencyKey)
        const session = yield* sendCreating(
          "createSession",
          credentials.keyFor("createSession", options?.agent),
          client.sessions.create({ payload: request }),
          idempotencyKey
        )
        yield* Effect.annotateCurrentSpan(Telemetry.spanAttributes.sessionId, session.session_id)
        return session
      }).pipe(
        Metrics.trackCreateSession,
        Effect.withSpan(Telemetry.apiSpans.createSession, { attributes: spanAttributes(options?.agent) })
      )

    const getSession: Service["getSession"] = (sessionId, options) =>
      Effect.gen(function*() {
        const id = yield* Effect.fromResult(validateSessionId(sessionId))
        if (!dialect.retrieve) {
          const operation = Telemetry.apiSpans.getSession
          return yield* new NotFound({ ...Http.noRetrieve(dialect.name), requestId: Option.none(), operation })
        }
        return yield* send(
          "getSession",
          credentials.keyFor("getSession", options?.agent),
          client.sessions.retrieve({ params: { sessionId: SessionId.make(id) } })
        )
      }).pipe(
        Effect.withSpan(Telemetry.apiSpans.getSession, { attributes: spanAttributes(options?.agent) })
      )

    return { onboard, createSession, getSession, canRetrieve: dialect.retrieve }
  })
