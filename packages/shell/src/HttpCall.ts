/**
 * One call of the service's HTTP API (`onboard`, `createSession`, `getSession`) as both editions
 * run it: the call and the attempts it sends, each attempt's context as the edition's HTTP client
 * reads it (the key, the secrets to scrub, the headers to send, the 2xx body kept for a decode
 * failure), what a response read within its limit becomes, what a failed attempt's error holds,
 * which failed attempts each operation sends again, and what the call's span and traces carry.
 * The rules are the protocol's (`Http`, `Failures`, `Dialect`, `Telemetry`); an edition binds
 * this to its `HttpClient`, its retry schedule and its error classes.
 *
 * @since 0.1.0
 */
import { Dialect, Failures, Http, Keys } from "effect-agent-session-core"
import * as HttpBody from "./HttpBody.js"
import * as Telemetry from "./Telemetry.js"

/**
 * The operations of the HTTP API.
 *
 * @since 0.1.0
 * @category models
 */
export type Operation = "onboard" | "createSession" | "getSession"

/**
 * The operations of the HTTP API, in order.
 *
 * @since 0.1.0
 * @category models
 */
export const operations: ReadonlyArray<Operation> = ["onboard", "createSession", "getSession"]

/**
 * A value per operation, built by `f` (an edition's retry schedule of each, ...).
 *
 * @since 0.1.0
 * @category constructors
 */
export const perOperation = <A>(f: (operation: Operation) => A): { readonly [O in Operation]: A } => ({
  onboard: f("onboard"),
  createSession: f("createSession"),
  getSession: f("getSession")
})

/**
 * A non-2xx response as the status mapping reads it (`Http.statusFailure`): its status, status
 * text, headers and whole body as text.
 *
 * @since 0.1.0
 * @category models
 */
export interface FailedResponse {
  readonly status: number
  readonly statusText: string
  readonly headers: Http.Headers
  readonly body: string
}

/**
 * What a response whose body was read within its limit becomes ({@link Attempt.receive}): a 2xx
 * is a success (its body kept on the attempt for a decode failure); any other status is a failure
 * for the status mapping.
 *
 * @since 0.1.0
 * @category models
 */
export type Received =
  | { readonly _tag: "Success" }
  | { readonly _tag: "Failure"; readonly response: FailedResponse }

const success: Received = { _tag: "Success" }

/**
 * What the error of a non-2xx response of an attempt holds ({@link Attempt.statusFailure}): the
 * fields of `Http.statusFailure` and the operation's name.
 *
 * @since 0.1.0
 * @category models
 */
export type StatusFailure = ReturnType<typeof Http.statusFailure> & { readonly operation: string }

/**
 * What a failure of the contract's schema in an attempt holds ({@link Attempt.contractFailure}):
 * the fields of `Http.contractFailure` and the operation's name.
 *
 * @since 0.1.0
 * @category models
 */
export type ContractFailure = ReturnType<typeof Http.contractFailure> & { readonly operation: string }

const textDecoder = new TextDecoder()

/**
 * One attempt of a call, as the HTTP client that sends it reads it: the operation's name, the key
 * (`K`: the edition's redacted form, revealed by `reveal` only where the header is written and for
 * scrubbing), every secret to scrub from what the peer sends back (the attempt's own key first,
 * then every other one known), the call's `Idempotency-Key`, and the 2xx body being decoded, kept
 * for a decode failure. Built by {@link Call.attempt}; used by the attempt alone.
 *
 * @since 0.1.0
 * @category models
 */
export class Attempt<K> {
  /**
   * The 2xx response being decoded, kept for a decode failure: set by {@link receive}, read by
   * the same attempt afterwards.
   */
  received: HttpBody.ReceivedBody | undefined = undefined

  /**
   * Every secret to scrub from what the peer sends back: the attempt's key (whether or not the
   * credentials know it: a key given with its agent is never remembered), then every one known.
   */
  readonly secrets: ReadonlyArray<string>

  constructor(
    /** The operation's name in errors and traces (`AgentApi.createSession`). */
    readonly operation: string,
    readonly key: K,
    private readonly reveal: (key: K) => string,
    known: ReadonlyArray<string>,
    /** The `Idempotency-Key` of a creating call: the same on each of its attempts. */
    readonly idempotencyKey: string | undefined
  ) {
    this.secrets = [reveal(key), ...known]
  }

  /**
   * The headers of the attempt's request (`Http.requestHeaders`): the attempt's key, revealed
   * here, in the dialect's auth header; the `User-Agent`; the call's `Idempotency-Key`.
   */
  requestHeaders(auth: Dialect.Dialect["auth"], userAgent: string): Record<string, string> {
    const key = this.reveal(this.key)
    return Http.requestHeaders({
      authHeader: Dialect.authHeader(auth, key),
      userAgent,
      idempotencyKey: this.idempotencyKey
    })
  }

  /**
   * What a response whose body was read (within its limit) becomes: a 2xx is a success, its body
   * kept for a decode failure (decoded to text only if asked); any other status is a failure,
   * its body decoded for the status mapping.
   */
  receive(status: number, headers: Http.Headers, bytes: Uint8Array): Received {
    if (Http.isSuccess(status)) {
      this.received = HttpBody.receivedBody(status, bytes)
      return success
    }
    return { _tag: "Failure", response: { status, statusText: "", headers, body: textDecoder.decode(bytes) } }
  }

  /** The status a successful attempt is counted under: the 2xx received (200 when none was read). */
  get status(): number {
    return this.received?.status ?? 200
  }

  /**
   * The outcome the attempt is counted under in the metrics: a success by its status
   * ({@link status}), a failure by `Failures.httpOutcome` (`undefined`: not counted).
   */
  outcome(failure?: Failures.Failure): Failures.HttpOutcome | undefined {
    return failure === undefined ? this.status : Failures.httpOutcome(failure)
  }

  /**
   * What the error of a non-2xx response holds (`Http.statusFailure`: its kind, status, message,
   * body, request id and `Retry-After` at `nowMillis`, the attempt's secrets scrubbed out), and
   * the operation.
   */
  statusFailure(response: FailedResponse, nowMillis: number): StatusFailure {
    return { ...Http.statusFailure(response, { secrets: this.secrets, nowMillis }), operation: this.operation }
  }

  /**
   * A failure of the contract's schema (`Http.contractFailure`), and the operation: before any
   * response, the payload refused; after a 2xx, that response (its body, when kept); `status`,
   * the status of a response whose body was not kept.
   */
  contractFailure(problem: string, status?: number): ContractFailure {
    const received = this.received ?? (status === undefined ? undefined : { status })
    return { ...Http.contractFailure(problem, received, this.secrets), operation: this.operation }
  }
}

/**
 * One call of an operation: its name, its `Idempotency-Key` (`I`: a `string` for a creating call,
 * `undefined` for one that creates nothing), and the attempts it has sent. Each attempt is built
 * by {@link attempt}, which counts it. A creating call's failure leaves its outcome unknown when
 * its last attempt may have acted ({@link outcomeKnown}).
 *
 * @since 0.1.0
 * @category models
 */
export class Call<I extends string | undefined = string | undefined> {
  /** The operation's name in errors and traces (`AgentApi.createSession`). */
  readonly name: string
  private sent = 0

  constructor(
    readonly operation: Operation,
    readonly idempotencyKey: I
  ) {
    this.name = Telemetry.apiOperation(operation)
  }

  /** The attempts sent so far. */
  get attempts(): number {
    return this.sent
  }

  /**
   * The next attempt, with the key read for it, how to reveal it, and every other secret known:
   * counted as sent.
   */
  attempt<K>(key: K, reveal: (key: K) => string, known: ReadonlyArray<string>): Attempt<K> {
    this.sent += 1
    return new Attempt(this.name, key, reveal, known, this.idempotencyKey)
  }

  /**
   * Whether a creating call that failed with `error` knows its outcome: its last attempt cannot
   * have acted (`Failures.mayHaveActed` does not hold), so nothing was created. A time-out never
   * leaves it known (the service may have acted on a request it got).
   */
  outcomeKnown<E extends Failures.Failure>(error: E): error is Exclude<E, { readonly _tag: "RequestTimeout" }> {
    return error._tag !== "RequestTimeout" && !Failures.mayHaveActed(error)
  }

  /**
   * The fields of `OutcomeUnknown` for a creating call whose last attempt, failed with `error`,
   * may have acted (`Failures.outcomeUnknown`): the key to send it again with, the attempts sent.
   */
  outcomeUnknown(
    this: Call<string>,
    error: { readonly _tag: string; readonly message: string }
  ): ReturnType<typeof Failures.outcomeUnknown> {
    return Failures.outcomeUnknown({
      operation: this.operation,
      idempotencyKey: this.idempotencyKey,
      attempts: this.sent,
      error
    })
  }
}

/**
 * Which failed attempts of a creating call are sent again under the caller's create policy
 * (`Failures.mayResend`), `"safe"` when none is given: only those the service cannot have acted
 * on.
 *
 * @since 0.1.0
 * @category constructors
 */
export const resendable = (policy: Failures.CreatePolicy | undefined): (error: Failures.Failure) => boolean => {
  const chosen = policy ?? "safe"
  return (error) => Failures.mayResend(chosen, error)
}

/** The operations that create something: the create policy, the `Idempotency-Key`. */
const CREATING: ReadonlySet<Operation> = new Set<Operation>(["onboard", "createSession"])

/**
 * Which failed attempts of each operation are sent again, under the caller's create policy
 * (`"safe"` when none is given): only a retryable failure (`Failures.isRetryable`: a transport
 * failure, a time-out, 408, 429, 5xx), and of a creating operation (`onboard`, `createSession`)
 * only one the policy resends ({@link resendable}).
 *
 * @since 0.1.0
 * @category constructors
 */
export const retryable = (
  policy: Failures.CreatePolicy | undefined
): { readonly [O in Operation]: (error: Failures.Failure) => boolean } => {
  const resend = resendable(policy)
  return perOperation((operation) =>
    CREATING.has(operation)
      ? (error: Failures.Failure) => Failures.isRetryable(error) && resend(error)
      : Failures.isRetryable
  )
}

/**
 * The `Idempotency-Key` of a creating call (`Http.idempotencyKeyFor`): the caller's when it may be
 * sent, a fresh random UUID when none is given, `undefined` when the caller's is refused.
 *
 * @since 0.1.0
 * @category constructors
 */
export const idempotencyKey = (given: string | undefined): string | undefined =>
  Http.idempotencyKeyFor(given, () => globalThis.crypto.randomUUID())

/**
 * The attributes of the spans of a client (`Telemetry.apiSpanAttributes`), by the agent whose key
 * a call uses: the dialect's name, the host of `baseUrl`, the agent's id when one is named.
 *
 * @since 0.1.0
 * @category constructors
 */
export const spanAttributes = (
  dialectName: string,
  baseUrl: string
): (agent: string | { readonly agentId: string } | undefined) => Record<string, string> => {
  const serverAddress = new URL(baseUrl).host
  return (agent) => Telemetry.apiSpanAttributes({ dialect: dialectName, serverAddress, agentId: Keys.agentIdOf(agent) })
}

/** The caller's last list of redacted names, and its extension. */
let lastRedacted: readonly [ReadonlyArray<string | RegExp>, ReadonlyArray<string | RegExp>] | undefined

/**
 * The header names to redact in traces for the caller's list (`Http.redactedHeaders`). The last
 * list extended and its extension are kept: the caller's list is the same on every call, so an
 * attempt builds nothing.
 *
 * @since 0.1.0
 * @category constructors
 */
export const redactedHeaders = (names: ReadonlyArray<string | RegExp>): ReadonlyArray<string | RegExp> => {
  if (lastRedacted !== undefined && lastRedacted[0] === names) return lastRedacted[1]
  const extended = Http.redactedHeaders(names)
  lastRedacted = [names, extended]
  return extended
}
