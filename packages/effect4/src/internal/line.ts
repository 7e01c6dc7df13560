/**
 * The names of Effect 4 that the binding (the repository's `binding/`, Effect code written once
 * for both editions) uses where Effect 3 names the same thing differently. The Effect 3 edition's
 * `line.ts` exports the same names, bound to Effect 3: a binding module imports them from here
 * (`../src/internal/line.js`, relative to where its copy lies), never from the line's own module.
 */
import * as Config from "effect/Config"
import * as Duration from "effect/Duration"
import type * as HttpClientError from "effect/http/HttpClientError"
import * as Layer from "effect/Layer"
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

/** The platform's HTTP client. */
export * as HttpClient from "effect/http/HttpClient"

/** The platform's sockets (and the `WebSocketConstructor` service). */
export * as Socket from "effect/socket/Socket"

/** A failure to read configuration. */
export type ConfigError = Config.ConfigError

/** A string read from configuration under a name. */
export const configString: (name: string) => Config.Config<string> = Config.String

/** One of the given strings, read from configuration under a name. */
export const configLiterals: <const L extends ReadonlyArray<string>>(literals: L, name: string) => Config.Config<L[number]> =
  Config.Literals

/** The layer an effect makes, built when that effect has run. */
export const unwrapLayer = Layer.unwrap

/**
 * A layer never shared by reference with the layers of another `Effect.provide`: built with a memo
 * map of its own, where the layers of one program are otherwise memoized across its `provide`s.
 */
export const unshared: <A, E, R>(layer: Layer.Layer<A, E, R>) => Layer.Layer<A, E, R> = Layer.fresh
