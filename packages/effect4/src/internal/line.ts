/**
 * The names of Effect 4 that the binding (the repository's `binding/`, Effect code written once
 * for both editions) uses where Effect 3 names the same thing differently. The Effect 3 edition's
 * `line.ts` exports the same names, bound to Effect 3: a binding module imports them from here
 * (`../src/internal/line.js`, relative to where its copy lies), never from the line's own module.
 */
import * as Duration from "effect/Duration"
import type * as HttpClientError from "effect/http/HttpClientError"
import * as Option from "effect/Option"

/** What a duration may be given as (`"5 seconds"`, millis, a `Duration`). */
export type DurationInput = Duration.Input

/** The `Duration` of an input (a malformed one is a defect: inputs are typed). */
export const durationOf: (input: DurationInput) => Duration.Duration = Duration.fromInputUnsafe

/** The platform's HTTP client failures (`HttpClientError.HttpClientError` is every one of them). */
export * as HttpClientError from "effect/http/HttpClientError"

/** An `Option` of a value that may be `null` or `undefined` (`None` for either). */
export const optionFromNullish: <A>(value: A) => Option.Option<NonNullable<A>> = Option.fromNullishOr

/**
 * What an HTTP client failure says of itself, as the protocol core's `Http.transportFailure`
 * reads it: the client's word for the failure (`Transport`, `Encode`, `InvalidUrl`, `StatusCode`,
 * `Decode`, `EmptyBody`), its description and cause, and the request's method and URL.
 */
export const httpFailureOf = (error: HttpClientError.HttpClientError): {
  readonly reason: string
  readonly description: string | undefined
  readonly cause: unknown
  readonly method: string
  readonly url: string
} => {
  const { _tag, cause, description, request } = error.reason
  return { reason: _tag.replace(/Error$/, ""), description, cause, method: request.method, url: request.url }
}
