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
import { Dialect as CoreDialect, Http, Url } from "effect-agent-session-core"
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
const outcomeOf = (error: AgentApiError): Metrics.HttpOutcome | undefined => {
  switch (error._tag) {
    case "TransportError":
      return "transport"
    case "RequestTimeout":
      return "timeout"
    case "ResponseDecodeError":
    case "ResponseTooLarge":
      return "decode"
    case "InvalidRequest":
    case "MissingCredentials":
    case "MissingAgentKey":
    case "OutcomeUnknown":
      return undefined
    default:
      return error.status
  }
}

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

/**
 * Whether the service cannot have acted on a failed attempt: the request never left (no
 * connection), or the service said it did not act (`Http.didNotActStatus`).
 */
export const didNotAct = (error: AgentApiError): boolean => {
  switch (error._tag) {
    case "TransportError":
      return Predicate.hasProperty(error, NotSent) && error[NotSent] === true
    case "RateLimited":
    case "ServerError":
    case "UnexpectedStatus":
      return Http.didNotActStatus(error.status)
    default:
      return false
  }
}

/** Whether a failed attempt of a creating call may have created something. */
const mayHaveActed = (error: AgentApiError): boolean => isRetryable(error) && !didNotAct(error)

// ---------------------------------------------------------------------------
// Responses
// ---------------------------------------------------------------------------

/** A body over the limit: the bytes read (or announced) when reading stopped. */
interface OverLimit {
  readonly _tag: "OverLimit"
  readonly size: number
}

const concat = (chunks: ReadonlyArray<Uint8Array>, size: number): Uint8Array => {
  if (chunks.length === 1 && chunks[0] !== undefined) return chunks[0]
  const out = new Uint8Array(size)
  let offset = 0
  for (const chunk of chunks) {
    out.set(chunk, offset)
    offset += chunk.length
  }
  return out
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
        if (bytes.byteLength <= limit) return Effect.succeed(bytes)
        return truncate ? Effect.succeed(bytes.subarray(0, limit)) : Effect.fail({ _tag: "OverLimit", size: bytes.byteLength })
      })
    }
    const chunks: Array<Uint8Array> = []
    let size = 0
    return response.stream.pipe(
      Stream.runForEachWhile((bytes) =>
        Effect.suspend((): Effect.Effect<boolean, OverLimit> => {
          if (size + bytes.length > limit) {
            if (truncate) {
              chunks.push(bytes.subarray(0, limit - size))
              size = limit
              return Effect.succeed(false)
            }
            size += bytes.length
            return Effect.fail({ _tag: "OverLimit", size })
          }
          chunks.push(bytes)
          size += bytes.length
          return Effect.succeed(size < limit || !truncate)
        })
      ),
      Effect.flatMap(() => Effect.sync(() => concat(chunks, size)))
    )
  })

const textDecoder = new TextDecoder()

/** The bytes as an `ArrayBuffer` of their own (the backing buffer itself when it is exactly theirs). */
const toArrayBuffer = (bytes: Uint8Array): ArrayBuffer => {
  const { buffer } = bytes
  if (buffer instanceof ArrayBuffer && bytes.byteOffset === 0 && bytes.byteLength === buffer.byteLength) return buffer
  const copy = new ArrayBuffer(bytes.byteLength)
  new Uint8Array(copy).set(bytes)
  return copy
}

/** A 2xx response as kept for `ResponseDecodeError`: its text decoded only if that error happens. */
const receivedOf = (status: number, bytes: Uint8Array): DecodedResponse => {
  let text: string | undefined
  return {
    status,
    get body() {
      return text ??= textDecoder.decode(bytes)
    }
  }
}

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
                description: `reading the ${status} response body failed`
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
      call.received = Option.some(receivedOf(status, bytes))
      return Effect.succeed(
        HttpClientResponse.fromWeb(
          response.request,
          new Response(bytes.byteLength === 0 ? null : toArrayBuffer(bytes), { status: 200, headers })
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
        const [name, value] = CoreDialect.authHeader(dialect.auth, Redacted.value(call.key))
        const headers: Record<string, string> = { [name]: value, "user-agent": userAgent, accept: "application/json" }
        if (Option.isSome(call.idempotencyKey)) headers["idempotency-key"] = call.idempotencyKey.value
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
  Effect.logDebug("AgentApi request failed").pipe(
    Effect.annotateLogs({
      error: error._tag,
      message: error.message,
      retryable: isRetryable(error),
      ...("status" in error ? { status: error.status } : {})
    })
  )

const logRetry = (operation: string) => (error: AgentApiError, wait: Duration.Duration) =>
  Effect.andThen(
    Effect.logDebug(`AgentApi.${operation} retrying in ${Duration.format(wait)}`).pipe(
      Effect.annotateLogs({ error: error._tag })
    ),
    Option.match(Option.fromNullishOr(outcomeOf(error)), {
      onNone: () => Effect.void,
      onSome: (outcome) => Metrics.recordHttpRetry(operation, outcome)
    })
  )

/** The headers that carry a key are redacted in traces whatever the caller configured. */
const AUTH_HEADERS = ["authorization", "x-api-key", "idempotency-key"] as const

/**
 * Every header value in traces (when the caller captures headers at all, `TracerHeaderFilter`):
 * a response header's value is the peer's to choose, and a service may echo the key in any of
 * them. The names stay visible.
 */
const EVERY_HEADER = /^/

const withAuthHeaders = (names: ReadonlyArray<string | RegExp>): ReadonlyArray<string | RegExp> => {
  const missing = AUTH_HEADERS.filter((name) => !names.includes(name))
  return [...names, ...missing, EVERY_HEADER]
}

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
    const creating = (options.createPolicy ?? "safe") === "idempotent" ? isRetryable : didNotAct
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
      const name = `AgentApi.${operation}`
      let attempts = 0
      const attempt = Effect.gen(function*() {
        const secret = yield* key
        const secrets = [Redacted.value(secret), ...(yield* credentials.secrets)]
        const call: CallInfo = { operation: name, key: secret, secrets, received: Option.none(), idempotencyKey }
        attempts += 1
        const redacted = withAuthHeaders(yield* Effect.service(Headers.CurrentRedactedNames))
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
          ? Effect.fail(
            new OutcomeUnknown({
              operation: `AgentApi.${operation}`,
              idempotencyKey,
              attempts: attempts(),
              reason: error._tag,
              detail: error.message
            })
          )
          : Effect.fail(error))
    }

    /** The key of one creating call: the caller's, else a fresh random one. */
    const idempotencyKeyOf = (given: string | undefined): Effect.Effect<string, InvalidRequest> =>
      given === undefined
        ? Effect.sync(() => globalThis.crypto.randomUUID())
        : Http.isIdempotencyKey(given)
        ? Effect.succeed(given)
        : Effect.fail(
          new InvalidRequest({
            subject: "idempotencyKey",
            message: "idempotencyKey: 1 to 255 printable ASCII characters, no spaces"
          })
        )

    const serverAddress = new URL(baseUrl).host
    const spanAttributes = (extra: Record<string, unknown>) => ({
      "agent_session.dialect": dialect.name,
      "server.address": serverAddress,
      ...extra
    })

    const agentIdOf = (agent: AgentOption["agent"]): Record<string, string> =>
      agent === undefined ? {} : { "agent_session.agent_id": typeof agent === "string" ? agent : agent.agentId }

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
        yield* Effect.annotateCurrentSpan("agent_session.agent_id", agent.agentId)
        return agent
      }).pipe(Effect.withSpan("AgentApi.onboard", { attributes: spanAttributes({}) }))

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
        yield* Effect.annotateCurrentSpan("agent_session.session_id", session.session_id)
        return session
      }).pipe(
        Metrics.trackCreateSession,
        Effect.withSpan("AgentApi.createSession", { attributes: spanAttributes(agentIdOf(options?.agent)) })
      )

    const getSession: Service["getSession"] = (sessionId, options) =>
      Effect.gen(function*() {
        const id = yield* Effect.fromResult(validateSessionId(sessionId))
        if (!dialect.retrieve) {
          return yield* new NotFound({
            status: 404,
            message: `The ${dialect.name} dialect has no retrieve operation (U10): nothing was sent`,
            body: "",
            requestId: Option.none(),
            operation: "AgentApi.getSession"
          })
        }
        return yield* send(
          "getSession",
          credentials.keyFor("getSession", options?.agent),
          client.sessions.retrieve({ params: { sessionId: SessionId.make(id) } })
        )
      }).pipe(
        Effect.withSpan("AgentApi.getSession", { attributes: spanAttributes(agentIdOf(options?.agent)) })
      )

    return { onboard, createSession, getSession }
  })
