/**
 * The implementation of `AgentApi`: the `HttpApiClient` derived from the contract, over the
 * `HttpClient` with the auth header, the `User-Agent` and the `Idempotency-Key`, and every failure
 * mapped to the SDK's typed errors in one place (`httpErrors.ts`). The protocol's rules (which
 * status is which error, `Retry-After`, which failures may be sent again, body limits, keys out of
 * text) are the protocol core's `Http`, `Secrets` and `Url`; this module binds them to Effect 4.
 */
import type { AgentOption, Options, Service } from "../AgentApi.js"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Headers from "effect/http/Headers"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientError from "effect/http/HttpClientError"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as HttpClientResponse from "effect/http/HttpClientResponse"
import * as HttpApiClient from "effect/http-api/HttpApiClient"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as Redacted from "effect/Redacted"
import * as Result from "effect/Result"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { Dialect as CoreDialect, Failures, Http, Keys, Telemetry, Url } from "effect-agent-session-core"
import { OnboardRequest } from "../Agent.js"
import * as Credentials from "../Credentials.js"
import * as Dialect from "../Dialect.js"
import {
  type AgentApiError,
  type CredentialsError,
  type HttpStatusError,
  InsecureTransport,
  InvalidRequest,
  isAgentSessionError,
  isRetryable,
  NotFound,
  OutcomeUnknown,
  RequestTimeout,
  type ResponseDecodeError,
  ResponseTooLarge,
  type TransportError
} from "../Errors.js"
import * as Metrics from "../Metrics.js"
import * as ServiceApi from "../ServiceApi.js"
import { CreateSessionRequest, SessionId } from "../Session.js"
import { type DecodedResponse, fromDecodeFailure, fromRequestError, fromStatus, scrub } from "./httpErrors.js"
import { formatIssue, NonBlankString, validate } from "./schema.js"
import { userAgent } from "./version.js"

/**
 * What one attempt of a call can fail with, besides a missing key: the contract refused the
 * payload (`InvalidRequest`), a status, the transport, the time-out, the body.
 */
type AttemptError =
  | InvalidRequest
  | HttpStatusError
  | TransportError
  | RequestTimeout
  | ResponseDecodeError
  | ResponseTooLarge

/** The default request time-out (U22). */
export const defaultTimeout: Duration.Duration = Duration.millis(Http.defaults.timeoutMillis)

/** The default cap on a wait asked by `Retry-After` (U21). */
export const defaultMaxRetryAfter: Duration.Duration = Duration.millis(Http.defaults.maxRetryAfterMillis)

/** The default largest response body. */
export const defaultMaxResponseSize: number = Http.defaults.maxResponseSize

const { factor, initialMillis, maxDelayMillis, retries } = Http.defaults.retry

/** The protocol's default retry: 2 retries, exponential from 500 ms, factor 2, jittered, each wait capped at 8 s. */
export const defaultRetry: Schedule.Schedule<unknown, AgentApiError> = Schedule.exponential(
  Duration.millis(initialMillis),
  factor
).pipe(
  Schedule.jittered,
  Schedule.modifyDelay(({ duration }) => Effect.succeed(Duration.min(duration, Duration.millis(maxDelayMillis)))),
  Schedule.upTo({ times: retries }),
  Schedule.setInputType<AgentApiError>()
)

const retryAfterOf = (error: AgentApiError): number | undefined =>
  (error._tag === "RateLimited" || error._tag === "ServerError") && Option.isSome(error.retryAfter)
    ? Duration.toMillis(error.retryAfter.value)
    : undefined

/**
 * The schedule actually run: the caller's schedule, only while the error is retryable (U07),
 * each wait at least the `Retry-After` the service asked for, capped at `maxRetryAfter` (U21).
 * `onRetry` runs once per retry that will happen, with the error and the wait.
 */
export const effectiveRetry = (
  schedule: Schedule.Schedule<unknown, AgentApiError>,
  maxRetryAfter: Duration.Duration,
  onRetry: (error: AgentApiError, wait: Duration.Duration) => Effect.Effect<void> = () => Effect.void,
  retryable: (error: AgentApiError) => boolean = isRetryable
): Schedule.Schedule<unknown, AgentApiError> =>
  schedule.pipe(
    Schedule.while(({ input }) => isRetryable(input) && retryable(input)),
    Schedule.modifyDelay(({ duration, input }) => {
      const wait = Duration.millis(
        Http.retryWaitMillis(Duration.toMillis(duration), retryAfterOf(input), Duration.toMillis(maxRetryAfter))
      )
      return Effect.as(onRetry(input, wait), wait)
    })
  )

/** The metrics `status` attribute of a failed attempt. */
const outcomeOf: (error: AgentApiError) => Metrics.HttpOutcome | undefined = Failures.httpOutcome

// ---------------------------------------------------------------------------
// The per-call context read by the HttpClient
// ---------------------------------------------------------------------------

interface CallInfo {
  readonly operation: string
  readonly key: Redacted.Redacted<string>
  readonly secrets: ReadonlyArray<string>
  /**
   * The 2xx response being decoded, kept for `ResponseDecodeError`: set once by the attempt's
   * own fiber, read by it afterwards (a plain field: nothing else sees it).
   */
  received: Option.Option<DecodedResponse>
  /** The `Idempotency-Key` of a creating call (the same on each of its attempts). */
  readonly idempotencyKey: Option.Option<string>
}

/** The call of the attempt running in this fiber, read by the `HttpClient` below. */
const CurrentCall = Context.Reference<CallInfo | undefined>("effect-agent-session/internal/AgentApi/CurrentCall", {
  defaultValue: () => undefined
})

/** The call of this attempt (a request outside an attempt would be a bug of this module). */
const Call: Effect.Effect<CallInfo> = Effect.flatMap(
  Effect.service(CurrentCall),
  (call) => call === undefined ? Effect.die(new Error("AgentApi: a request outside an attempt")) : Effect.succeed(call)
)

// ---------------------------------------------------------------------------
// The create policy: at most one session per call
// ---------------------------------------------------------------------------

/**
 * Marks the `TransportError`s of requests that provably never reached the service: a hidden
 * property (not a field: it is not part of the error's data).
 */
const NotSent: unique symbol = Symbol.for("effect-agent-session/internal/AgentApi/NotSent")

/** Whether a transport failure happened before anything was written (no connection at all). */
const provablyNotSent = (error: HttpClientError.HttpClientError): boolean =>
  error.reason._tag === "InvalidUrlError" || Http.provablyNotSent(error.reason.cause)

/** Maps a failure without a response, remembering whether the request provably never left. */
const transportError = (error: HttpClientError.HttpClientError, call: CallInfo): TransportError => {
  const mapped = fromRequestError(error, call)
  if (provablyNotSent(error)) Object.defineProperty(mapped, NotSent, { value: true, enumerable: false })
  return mapped
}

/** Whether a transport failure was marked as a request that provably never left. */
const notSent = (error: AgentApiError): boolean => Predicate.hasProperty(error, NotSent) && error[NotSent] === true

/**
 * Whether the service cannot have acted on a failed attempt (`Failures.didNotAct`): the request
 * never left (no connection), or the service said it did not act (429, 503, 408).
 */
export const didNotAct = (error: AgentApiError): boolean => Failures.didNotAct(error, notSent(error))

/** Whether a failed attempt of a creating call may have created something (`Failures.mayHaveActed`). */
const mayHaveActed = (error: AgentApiError): boolean => Failures.mayHaveActed(error, notSent(error))

/** Whether a failed attempt of a creating call is sent again under the create policy (`Failures.mayResend`). */
const mayResend = (policy: Failures.CreatePolicy) => (error: AgentApiError): boolean =>
  Failures.mayResend(policy, error, notSent(error))

// ---------------------------------------------------------------------------
// Responses
// ---------------------------------------------------------------------------

/** A body over the limit: the bytes read (or announced) when reading stopped. */
interface OverLimit {
  readonly _tag: "OverLimit"
  readonly size: number
}

/**
 * Reads a body of at most `limit` bytes, as `Http.bodyPlan` says: refused unread when announced
 * over the limit, read whole when the transport frames it, else streamed and stopped at the first
 * byte past the limit. `truncate` keeps the first `limit` bytes of a longer body instead.
 */
export const readBounded = (
  response: HttpClientResponse.HttpClientResponse,
  limit: number,
  truncate: boolean
): Effect.Effect<Uint8Array, HttpClientError.HttpClientError | OverLimit> =>
  Effect.suspend(() => {
    const plan = Http.bodyPlan(response.headers, limit, truncate)
    if (plan._tag === "refuse") {
      // Not read at all: the stream is opened and closed at once so the request is released.
      return Effect.andThen(
        Stream.runDrain(Stream.take(response.stream, 0)),
        Effect.fail<OverLimit>({ _tag: "OverLimit", size: plan.size })
      )
    }
    if (plan._tag === "whole") {
      return Effect.flatMap(response.arrayBuffer, (buffer): Effect.Effect<Uint8Array, OverLimit> => {
        const bytes = new Uint8Array(buffer)
        const kept = Http.fitBody(bytes, limit, truncate)
        return kept === undefined ? Effect.fail({ _tag: "OverLimit", size: bytes.byteLength }) : Effect.succeed(kept)
      })
    }
    const body = new Http.BoundedBody(limit, truncate)
    return response.stream.pipe(
      Stream.runForEachWhile((bytes) =>
        Effect.suspend((): Effect.Effect<boolean, OverLimit> => {
          const next = body.push(bytes)
          return next === "over" ? Effect.fail({ _tag: "OverLimit", size: body.size }) : Effect.succeed(next === "more")
        })
      ),
      Effect.flatMap(() => Effect.sync(() => body.bytes()))
    )
  })

const textDecoder = new TextDecoder()

/**
 * What happens to every response before the contract decodes it: a non-2xx becomes its typed
 * error here (so the contract never sees a status it does not declare), and a 2xx is handed on
 * as a 200 (any 2xx is success, U07), its body read within the limit and kept for a possible
 * `ResponseDecodeError`.
 */
const handleResponse = (
  response: HttpClientResponse.HttpClientResponse,
  call: CallInfo,
  maxResponseSize: number
): Effect.Effect<HttpClientResponse.HttpClientResponse, AttemptError> => {
  const { headers, status } = response
  const success = Http.isSuccess(status)
  return Effect.matchEffect(readBounded(response, maxResponseSize, !success), {
    onFailure: (error): Effect.Effect<never, AttemptError> =>
      "_tag" in error && error._tag === "OverLimit"
        ? Effect.fail(new ResponseTooLarge({ operation: call.operation, status, size: error.size, limit: maxResponseSize }))
        : Effect.fail(
          fromRequestError(
            new HttpClientError.HttpClientError({
              reason: new HttpClientError.TransportError({
                request: response.request,
                cause: (error as HttpClientError.HttpClientError).reason.cause,
                description: Http.bodyReadFailed(status)
              })
            }),
            call
          )
        ),
    onSuccess: (bytes) => {
      if (!success) {
        return Effect.flatMap(Effect.clockWith((clock) => Effect.succeed(clock.currentTimeMillisUnsafe())), (nowMillis) =>
          Effect.fail(fromStatus({ status, statusText: "", headers, body: textDecoder.decode(bytes) }, { ...call, nowMillis })))
      }
      call.received = Option.some(Http.receivedBody(status, bytes))
      return Effect.succeed(
        HttpClientResponse.fromWeb(
          response.request,
          new Response(bytes.byteLength === 0 ? null : Http.ownArrayBuffer(bytes), { status: 200, headers })
        )
      )
    }
  })
}

/** The client with the auth header, the `User-Agent`, the `Idempotency-Key`, and the status mapping. */
const serviceClient = (httpClient: HttpClient.HttpClient, dialect: Dialect.Dialect, maxResponseSize: number) =>
  httpClient.pipe(
    HttpClient.mapRequestEffect((request) =>
      Effect.map(Call, (call) => {
        const headers = Http.requestHeaders({
          authHeader: CoreDialect.authHeader(dialect.auth, Redacted.value(call.key)),
          userAgent,
          idempotencyKey: Option.getOrUndefined(call.idempotencyKey)
        })
        return HttpClientRequest.setHeaders(request, headers)
      })
    ),
    HttpClient.transformResponse((effect) =>
      Effect.flatMap(Call, (call) =>
        Effect.matchEffect(effect, {
          onFailure: (error: HttpClientError.HttpClientError) =>
            error.response === undefined
              ? Effect.fail(transportError(error, call))
              // A client that filters statuses itself reports the response: map it the same way.
              : handleResponse(error.response, call, maxResponseSize),
          onSuccess: (response) => handleResponse(response, call, maxResponseSize)
        }))
    )
  )

/**
 * Everything the derived client can fail with, as an {@link AttemptError}: ours pass through; a
 * `SchemaError` before any response is a payload the contract refused (`InvalidRequest`), after a
 * 2xx a `ResponseDecodeError`; an `HttpClientError` is a `TransportError` or a
 * `ResponseDecodeError`. A decoded contract error cannot come (statuses are mapped first): it is
 * a defect.
 */
const toAttemptError = (error: unknown, call: CallInfo): Effect.Effect<never, AttemptError> => {
  // Only the client above fails with ours: a status, the transport or the body (handleResponse).
  if (isAgentSessionError(error)) return Effect.fail(error as AttemptError)
  if (Schema.isSchemaError(error)) {
    return Option.isNone(call.received)
      ? Effect.fail(new InvalidRequest({ subject: call.operation, message: scrub(formatIssue(error.issue), call.secrets) }))
      : Effect.fail(fromDecodeFailure(formatIssue(error.issue), call.received, call))
  }
  if (HttpClientError.isHttpClientError(error)) {
    return error.response === undefined
      ? Effect.fail(transportError(error, call))
      : Effect.fail(fromDecodeFailure(error.message, call.received, call))
  }
  return Effect.die(error)
}

const logFailure = (error: AgentApiError) =>
  Effect.logDebug(Telemetry.attemptFailedLog).pipe(
    Effect.annotateLogs(Telemetry.attemptFailedAnnotations(error, isRetryable(error)))
  )

const logRetry = (operation: string) => (error: AgentApiError, wait: Duration.Duration) =>
  Effect.andThen(
    Effect.logDebug(Telemetry.retryLog(operation, Duration.format(wait))).pipe(
      Effect.annotateLogs({ error: error._tag })
    ),
    Option.match(Option.fromNullishOr(outcomeOf(error)), {
      onNone: () => Effect.void,
      onSome: (outcome) => Metrics.recordHttpRetry(operation, outcome)
    })
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
    // The create policy: by default a creating call is sent again only when the service cannot
    // have acted; "idempotent" trusts the service to honour Idempotency-Key.
    const creating = mayResend(options.createPolicy ?? "safe")
    const retriesOf = {
      onboard: effectiveRetry(retrySchedule, maxRetryAfter, logRetry("onboard"), creating),
      createSession: effectiveRetry(retrySchedule, maxRetryAfter, logRetry("createSession"), creating),
      getSession: effectiveRetry(retrySchedule, maxRetryAfter, logRetry("getSession"))
    }
    const credentials = yield* Credentials.Credentials
    const httpClient = yield* HttpClient.HttpClient
    const contract = ServiceApi.make(dialect)
    const client = yield* HttpApiClient.makeWith(contract.api, {
      httpClient: serviceClient(httpClient, dialect, Http.limitOf(options.maxResponseSize)),
      baseUrl
    })

    /**
     * One operation: per attempt, the key read afresh, the request, every failure mapped, the
     * time-out; the attempts on the retry schedule. `attempts` counts the attempts sent.
     */
    const attemptsOf = <A, E, K extends CredentialsError>(
      operation: keyof typeof retriesOf,
      key: Effect.Effect<Redacted.Redacted<string>, K>,
      run: Effect.Effect<A, E>,
      idempotencyKey: Option.Option<string>
    ): { readonly retried: Effect.Effect<A, AttemptError | K>; readonly attempts: () => number } => {
      const name = Telemetry.apiOperation(operation)
      let attempts = 0
      const attempt = Effect.gen(function*() {
        const secret = yield* key
        const secrets = [Redacted.value(secret), ...(yield* credentials.secrets)]
        const call: CallInfo = { operation: name, key: secret, secrets, received: Option.none(), idempotencyKey }
        attempts += 1
        const redacted = Http.redactedHeaders(yield* Effect.service(Headers.CurrentRedactedNames))
        return yield* run.pipe(
          Effect.catch((error: E) => toAttemptError(error, call)),
          Effect.provideService(CurrentCall, call),
          Effect.provideService(Headers.CurrentRedactedNames, redacted),
          Effect.timeoutOrElse({
            duration: timeout,
            orElse: () => Effect.fail(new RequestTimeout({ operation: name, timeout }))
          }),
          Effect.onExit((exit) =>
            Exit.isSuccess(exit)
              ? Metrics.recordHttpAttempt(operation, Option.match(call.received, { onNone: () => 200, onSome: (_) => _.status }))
              : Option.match(Option.flatMapNullishOr(Exit.findErrorOption(exit), outcomeOf), {
                onNone: () => Effect.void,
                onSome: (outcome) => Metrics.recordHttpAttempt(operation, outcome)
              })
          )
        )
      }).pipe(Effect.tapError(logFailure))
      return { retried: Effect.retry(attempt, retriesOf[operation]), attempts: () => attempts }
    }

    /** A call that creates nothing (`getSession`): every attempt's error as it is. */
    const send = <A, E, K extends CredentialsError>(
      operation: keyof typeof retriesOf,
      key: Effect.Effect<Redacted.Redacted<string>, K>,
      run: Effect.Effect<A, E>
    ): Effect.Effect<A, AttemptError | K> => attemptsOf(operation, key, run, Option.none()).retried

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
      const { attempts, retried } = attemptsOf(operation, key, run, Option.some(idempotencyKey))
      return Effect.catch(retried, (error): Effect.Effect<never, Exclude<AttemptError, RequestTimeout> | K | OutcomeUnknown> =>
        // `mayHaveActed` holds for every time-out: the first test only tells the compiler so.
        error._tag === "RequestTimeout" || mayHaveActed(error)
          ? Effect.fail(new OutcomeUnknown(Failures.outcomeUnknown({ operation, idempotencyKey, attempts: attempts(), error })))
          : Effect.fail(error))
    }

    /** The key of one creating call: the caller's, else a fresh random one. */
    const idempotencyKeyOf = (given: string | undefined): Effect.Effect<string, InvalidRequest> =>
      Effect.suspend(() => {
        const key = Http.idempotencyKeyFor(given, () => globalThis.crypto.randomUUID())
        return key === undefined
          ? Effect.fail(new InvalidRequest({ subject: "idempotencyKey", message: Http.idempotencyKeyMessage }))
          : Effect.succeed(key)
      })

    const serverAddress = new URL(baseUrl).host
    const spanAttributes = (agent: AgentOption["agent"]) =>
      Telemetry.apiSpanAttributes({
        dialect: dialect.name,
        serverAddress,
        agentId: Keys.agentIdOf(agent)
      })

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
          return yield* new NotFound({
            status: 404,
            message: Http.noRetrieveMessage(dialect.name),
            body: "",
            requestId: Option.none(),
            operation: Telemetry.apiSpans.getSession
          })
        }
        return yield* send(
          "getSession",
          credentials.keyFor("getSession", options?.agent),
          client.sessions.retrieve({ params: { sessionId: SessionId.make(id) } })
        )
      }).pipe(
        Effect.withSpan(Telemetry.apiSpans.getSession, { attributes: spanAttributes(options?.agent) })
      )

    return { onboard, createSession, getSession }
  })
