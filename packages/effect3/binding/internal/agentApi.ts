/**
 * The implementation of `AgentApi`: the `HttpApiClient` derived from the contract, over the
 * platform `HttpClient` of one call (`agentApiCall.ts`: the auth header, the `User-Agent`, the
 * `Idempotency-Key`, every failure mapped to the SDK's typed errors in one place,
 * `httpErrors.ts`), each attempt under its time-out, the attempts on the retry schedule and the
 * create policy (`agentApiPolicy.ts`). The protocol's rules (which status is which error,
 * `Retry-After`, which failures may be sent again, body limits, keys out of text) are the
 * protocol core's `Http`, `Secrets` and `Url`, the call itself (its attempts counted, the create
 * policy, an unknown outcome, the span's attributes) the core shell's `HttpCall`; this module
 * binds them to the edition's Effect line.
 * Why the success path is shaped as it is, with its measurements: src/internal/README.md, "HTTP calls".
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { Http, Url } from "effect-agent-session-core"
import { HttpBody, HttpCall, Telemetry } from "effect-agent-session-shell"
import { OnboardRequest } from "../../src/Agent.js"
import type { Options, Service } from "../../src/AgentApi.js"
import * as Credentials from "../../src/Credentials.js"
import * as Dialect from "../../src/Dialect.js"
import {
  type AgentApiError,
  type CredentialsError,
  InsecureTransport,
  InvalidRequest,
  NotFound,
  OutcomeUnknown,
  RequestTimeout
} from "../../src/Errors.js"
import {
  catchFailure,
  durationOf,
  fromResult,
  HttpApiClient,
  HttpClient,
  inSpan,
  pathParams,
  pathSegment,
  type Result,
  resultFail,
  resultSucceed,
  retryAfterFailure,
  tapBoth
} from "../../src/internal/line.js"
import { NonBlankString, validate } from "../../src/internal/schema.js"
import * as Metrics from "../../src/Metrics.js"
import * as ServiceApi from "../../src/ServiceApi.js"
import { CreateSessionRequest, SessionId } from "../../src/Session.js"
import { type AttemptError, CurrentCall, serviceClient, toAttemptError } from "./agentApiCall.js"
import {
  defaultMaxRetryAfter,
  defaultRetry,
  defaultTimeout,
  effectiveRetry,
  logRetry
} from "./agentApiPolicy.js"

export { defaultMaxResponseSize } from "./body.js"
export { defaultMaxRetryAfter, defaultRetry, defaultTimeout } from "./agentApiPolicy.js"

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
): Result<string, InvalidRequest | InsecureTransport> => {
  const checked = Url.checkBaseUrl(baseUrl, allowInsecure)
  switch (checked._tag) {
    case "Valid":
      return resultSucceed(checked.url)
    case "Invalid":
      return resultFail(new InvalidRequest({ subject: "AgentApi.Options", message: checked.message }))
    case "Insecure":
      return resultFail(new InsecureTransport({ url: checked.printable }))
  }
}

/** Builds the service. */
export const make = (
  options: Options
): Effect.Effect<Service, InsecureTransport | InvalidRequest, HttpClient.HttpClient | Credentials.Credentials> =>
  Effect.gen(function*() {
    const dialect = options.dialect ?? Dialect.documented
    const baseUrl = yield* fromResult(normalizeBaseUrl(options.baseUrl, options.allowInsecure ?? false))
    const timeout = durationOf(options.timeout ?? defaultTimeout)
    const retrySchedule = options.retry ?? defaultRetry
    const maxRetryAfter = durationOf(options.maxRetryAfter ?? defaultMaxRetryAfter)
    // What each operation sends again, the create policy among it: by default a creating call is
    // sent again only when the service cannot have acted; "idempotent" trusts the service to
    // honour Idempotency-Key.
    const retryable = HttpCall.retryable(options.createPolicy)
    const retries = HttpCall.perOperation((operation) =>
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
        // The call and its redacted header names are set for the attempt (`CurrentCall`).
        const timed = CurrentCall.run(
          catchFailure(run, (error: E) => toAttemptError(error, current)),
          current,
          timeout,
          () => new RequestTimeout({ operation: name, timeout })
        )
        return yield* tapBoth(timed, {
          onSuccess: () => recordAttempt(operation, current.outcome()),
          onFailure: (error) => recordAttempt(operation, current.outcome(error))
        })
      }).pipe(Effect.tapError(logFailure))
      return retryAfterFailure(attempt, retries[operation])
    }

    /** A call that creates nothing (`getSession`): every attempt's error as it is. */
    const send = <A, E, K extends CredentialsError>(
      operation: keyof typeof retries,
      key: Effect.Effect<Redacted.Redacted<string>, K>,
      run: Effect.Effect<A, E>
    ): Effect.Effect<A, AttemptError | K> => attemptsOf(new HttpCall.Call(operation, undefined), key, run)

    /**
     * A creating call (`onboard`, `createSession`): when its last attempt may have acted (a
     * time-out, always; a reset, a 500, 502, 504), it fails with `OutcomeUnknown`, with the key to
     * send it again; so it never fails with `RequestTimeout`.
     */
    const sendCreating = <A, E, K extends CredentialsError>(
      operation: keyof typeof retries,
      key: Effect.Effect<Redacted.Redacted<string>, K>,
      run: Effect.Effect<A, E>,
      idempotencyKey: string
    ): Effect.Effect<A, Exclude<AttemptError, RequestTimeout> | K | OutcomeUnknown> => {
      const call = new HttpCall.Call(operation, idempotencyKey)
      return catchFailure(attemptsOf(call, key, run), (error): Effect.Effect<never, Exclude<AttemptError, RequestTimeout> | K | OutcomeUnknown> =>
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
        const request = yield* fromResult(validateOnboard(input))
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

    // The span held where the line can (`inSpan`): the session id is set on it directly.
    const createSession: Service["createSession"] = (input, options) =>
      inSpan(
        Telemetry.apiSpans.createSession,
        { attributes: spanAttributes(options?.agent) },
        (annotate) =>
          Effect.gen(function*() {
            const request = yield* fromResult(validateCreateSession(input))
            const idempotencyKey = yield* idempotencyKeyOf(options?.idempotencyKey)
            const session = yield* sendCreating(
              "createSession",
              credentials.keyFor("createSession", options?.agent),
              client.sessions.create({ payload: request }),
              idempotencyKey
            )
            yield* annotate(Telemetry.spanAttributes.sessionId, session.session_id)
            return session
          }).pipe(Metrics.trackCreateSession)
      )

    const getSession: Service["getSession"] = (sessionId, options) =>
      Effect.gen(function*() {
        const id = yield* fromResult(validateSessionId(sessionId))
        if (!dialect.retrieve) {
          const operation = Telemetry.apiSpans.getSession
          return yield* new NotFound({ ...Http.noRetrieve(dialect.name), requestId: Option.none(), operation })
        }
        return yield* send(
          "getSession",
          credentials.keyFor("getSession", options?.agent),
          client.sessions.retrieve(pathParams({ sessionId: SessionId.make(pathSegment(id)) }))
        )
      }).pipe(
        Effect.withSpan(Telemetry.apiSpans.getSession, { attributes: spanAttributes(options?.agent) })
      )

    return { onboard, createSession, getSession, canRetrieve: dialect.retrieve }
  })
