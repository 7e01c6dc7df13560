/**
 * The implementation of `AgentApi`: the `HttpApiClient` derived from the contract, over the
 * platform `HttpClient` of one call (`agentApiCall.ts`: the auth header, the `User-Agent`, every
 * failure mapped to the SDK's typed errors in one place), each attempt under its time-out
 * (`timeout.ts`), the attempts on the retry schedule and the create policy (`agentApiPolicy.ts`).
 * The call itself (its attempts counted, the create policy, an unknown outcome, the span's
 * attributes) is the core shell's `HttpCall`; this module binds it to Effect 3.
 * Why the success path is shaped as it is, with its measurements: src/internal/README.md, "HTTP calls".
 */
import * as Headers from "@effect/platform/Headers"
import * as HttpApiClient from "@effect/platform/HttpApiClient"
import * as HttpClient from "@effect/platform/HttpClient"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as FiberRef from "effect/FiberRef"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { Http, Url } from "effect-agent-session-core"
import { HttpBody, HttpCall, Telemetry } from "effect-agent-session-core/shell"
import { OnboardRequest } from "../Agent.js"
import type { Options, Service } from "../AgentApi.js"
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
import { type AttemptError, currentCall, serviceClient, toAttemptError } from "./agentApiCall.js"
import {
  defaultMaxRetryAfter,
  defaultRetry,
  defaultTimeout,
  effectiveRetry,
  logRetry
} from "../../binding/internal/agentApiPolicy.js"
import { NonBlankString, validate } from "./schema.js"
import { timeoutFail } from "./timeout.js"

export { defaultMaxRetryAfter, defaultRetry, defaultTimeout } from "../../binding/internal/agentApiPolicy.js"

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
): Either.Either<string, InvalidRequest | InsecureTransport> => {
  const checked = Url.checkBaseUrl(baseUrl, allowInsecure)
  switch (checked._tag) {
    case "Valid":
      return Either.right(checked.url)
    case "Invalid":
      return Either.left(new InvalidRequest({ subject: "AgentApi.Options", message: checked.message }))
    case "Insecure":
      return Either.left(new InsecureTransport({ url: checked.printable }))
  }
}

/** Builds the service. */
export const make = (
  options: Options
): Effect.Effect<Service, InsecureTransport | InvalidRequest, HttpClient.HttpClient | Credentials.Credentials> =>
  Effect.gen(function*() {
    const dialect = options.dialect ?? Dialect.documented
    const baseUrl = yield* normalizeBaseUrl(options.baseUrl, options.allowInsecure ?? false)
    const timeout = Duration.decode(options.timeout ?? defaultTimeout)
    const retrySchedule = options.retry ?? defaultRetry
    const maxRetryAfter = Duration.decode(options.maxRetryAfter ?? defaultMaxRetryAfter)
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
        // The attempt runs in a fiber of its own (timeout.ts): the call and the redacted header
        // names are set there directly, with nothing to restore (Effect.provideService and
        // Effect.locallyWith would save and restore them around the attempt).
        const inFiber = Effect.zipRight(
          FiberRef.set(currentCall, current),
          FiberRef.update(Headers.currentRedactedNames, HttpCall.redactedHeaders)
        )
        return yield* Effect.zipRight(inFiber, run).pipe(
          Effect.catchAll((error) => toAttemptError(error, current)),
          (self) => timeoutFail(self, timeout, () => new RequestTimeout({ operation: name, timeout })),
          Effect.tapBoth({
            onSuccess: () => recordAttempt(operation, current.outcome()),
            onFailure: (error) => recordAttempt(operation, current.outcome(error))
          })
        )
      }).pipe(Effect.tapError(logFailure))
      // The schedule is started on the first failure only: a first attempt that succeeds
      // builds no schedule driver. The schedule sees the same inputs as `Effect.retry(attempt)`.
      return Effect.catchAll(attempt, (first) => {
        let replayed = false
        const again = Effect.suspend(() => {
          if (replayed) return attempt
          replayed = true
          return Effect.fail(first)
        })
        return Effect.retry(again, retries[operation])
      })
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
      return Effect.catchAll(attemptsOf(call, key, run), (error): Effect.Effect<never, Exclude<AttemptError, RequestTimeout> | K | OutcomeUnknown> =>
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
        const request = yield* validateOnboard(input)
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

    // `Effect.withSpan` spelled out (`useSpan` + `withParentSpan`) to hold the span: the session
    // id is set on it directly rather than through `annotateCurrentSpan`'s look-up.
    const createSession: Service["createSession"] = (input, options) =>
      Effect.useSpan(
        Telemetry.apiSpans.createSession,
        { attributes: spanAttributes(options?.agent) },
        (span) =>
          Effect.gen(function*() {
            const request = yield* validateCreateSession(input)
            const idempotencyKey = yield* idempotencyKeyOf(options?.idempotencyKey)
            const session = yield* sendCreating(
              "createSession",
              credentials.keyFor("createSession", options?.agent),
              client.sessions.create({ payload: request }),
              idempotencyKey
            )
            span.attribute(Telemetry.spanAttributes.sessionId, session.session_id)
            return session
          }).pipe(Metrics.trackCreateSession, Effect.withParentSpan(span))
      )

    const getSession: Service["getSession"] = (sessionId, options) =>
      Effect.gen(function*() {
        const id = yield* validateSessionId(sessionId)
        if (!dialect.retrieve) {
          const operation = Telemetry.apiSpans.getSession
          return yield* new NotFound({ ...Http.noRetrieve(dialect.name), requestId: Option.none(), operation })
        }
        return yield* send(
          "getSession",
          credentials.keyFor("getSession", options?.agent),
          client.sessions.retrieve({ path: { sessionId: SessionId.make(encodeURIComponent(id)) } })
        )
      }).pipe(
        Effect.withSpan(Telemetry.apiSpans.getSession, { attributes: spanAttributes(options?.agent) })
      )

    return { onboard, createSession, getSession, canRetrieve: dialect.retrieve }
  })
