/**
 * What the binding asks of an Effect line where both lines give it the same type: the signature
 * of each such name, declared once. Each edition's `src/internal/line.ts` binds the name to its
 * own line under this type (`export const inSpan: LineShape["inSpan"] = ...`), so the two lines
 * cannot drift apart and a third line knows what to provide. Names whose types differ between
 * the lines (a module's path, a type's arity) are declared by each `line.ts` alone.
 */
import type * as Arr from "effect/Array"
import type * as Cause from "effect/Cause"
import type * as Config from "effect/Config"
import type * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import type * as Schedule from "effect/Schedule"
import type * as Scheduler from "effect/Scheduler"
import type * as Scope from "effect/Scope"
import type * as Stream from "effect/Stream"
import type { ConfigError, HttpClientError, Pull, RunningFiber } from "../../src/internal/line.js"

/**
 * What an HTTP client failure says of itself, as the protocol core's `Http.transportFailure`
 * reads it: the client's word for the failure (`Transport`, `Encode`, `InvalidUrl`, `StatusCode`,
 * `Decode`, `EmptyBody`), its description and cause, and the request's method and URL.
 */
export interface HttpFailure {
  readonly reason: string
  readonly description: string | undefined
  readonly cause: unknown
  readonly method: string
  readonly url: string
}

/**
 * A value set for each attempt of an HTTP call and read by the requests the attempt makes, with
 * the header names the attempt redacts; the attempt run under its time-out.
 */
export interface AttemptContext<C> {
  /** The value of the attempt running (read outside an attempt: a defect). */
  readonly current: Effect.Effect<C>
  /**
   * `self` as one attempt with `value`, the header names redacted as `redact` extends them,
   * failed with `onTimeout()` once `timeout` has passed without it ending (it is then interrupted).
   */
  readonly run: <A, E, R, E1>(
    self: Effect.Effect<A, E, R>,
    value: C,
    timeout: Duration.Duration,
    onTimeout: () => E1
  ) => Effect.Effect<A, E | E1, R>
}

/** What an attempt makes of the header names it redacts (it extends them). */
export type Redact = (names: ReadonlyArray<string | RegExp>) => ReadonlyArray<string | RegExp>

/** What `callbackOnScheduler` is given: how to resume the waiting fiber, its scheduler and the fiber. */
export type Register<A, E> = (
  resume: (effect: Effect.Effect<A, E>) => void,
  scheduler: Scheduler.Scheduler,
  fiber: RunningFiber<unknown, unknown> | undefined
) => void

/**
 * What `pullEach` does with each outcome of a stream's pull, in that pull: a non-empty batch of
 * elements, the stream's failure (after every element before it), the stream's end.
 */
export interface PullHandlers<A, E, B, E2> {
  readonly onSuccess: (batch: Arr.NonEmptyReadonlyArray<A>) => Pull<B, E2>
  readonly onFailure: (cause: Cause.Cause<E>) => Pull<B, E2>
  readonly onDone: () => Pull<B, E2>
}

/** The names each line binds with these types (their meaning: each `line.ts`'s doc comments). */
export interface LineShape {
  readonly httpFailureOf: (error: HttpClientError.HttpClientError) => HttpFailure
  readonly retryingWhile: <E>(
    schedule: Schedule.Schedule<unknown, E>,
    retryable: (error: E) => boolean,
    delayOf: (error: E, delay: Duration.Duration) => Effect.Effect<Duration.Duration>
  ) => Schedule.Schedule<unknown, E>
  readonly attemptContext: <C>(key: string, outside: string, redact: Redact) => AttemptContext<C>
  readonly tapBoth: <A, E, R, R2, R3>(
    self: Effect.Effect<A, E, R>,
    options: {
      readonly onFailure: (error: E) => Effect.Effect<unknown, never, R2>
      readonly onSuccess: (value: A) => Effect.Effect<unknown, never, R3>
    }
  ) => Effect.Effect<A, E, R | R2 | R3>
  readonly inSpan: <A, E, R>(
    name: string,
    options: { readonly attributes: Record<string, unknown> },
    body: (annotate: (key: string, value: unknown) => Effect.Effect<void>) => Effect.Effect<A, E, R>
  ) => Effect.Effect<A, E, R>
  readonly callbackOnScheduler: <A, E>(register: Register<A, E>) => Effect.Effect<A, E>
  readonly runForEachBatch: <A, X, E2, R2>(
    f: (batch: Iterable<A>) => Effect.Effect<X, E2, R2>
  ) => <E, R>(self: Stream.Stream<A, E, R>) => Effect.Effect<void, E | E2, R | R2>
  readonly configValidated: (
    predicate: (value: string) => boolean,
    message: string
  ) => (self: Config.Config<string>) => Config.Config<string>
  readonly layerFromConfig: <A, ROut, E, RIn>(
    config: Config.Config<A>,
    f: (value: A) => Layer.Layer<ROut, E, RIn>
  ) => Layer.Layer<ROut, E | ConfigError, RIn>
  readonly runPull: <A, E, X, E2, R2>(
    pull: Pull<A, E>,
    f: (value: A) => Effect.Effect<X, E2, R2>
  ) => Effect.Effect<void, E | E2, R2>
  readonly runForEachWanted: <A, E, R, E2, R2>(
    self: Stream.Stream<A, E, R>,
    wanted: (element: A) => boolean,
    f: (element: A) => Effect.Effect<void, E2, R2>
  ) => Effect.Effect<void, E | E2, R | R2>
  readonly hasDefect: (cause: Cause.Cause<unknown>) => boolean
  readonly isNonEmptyArray: <A>(self: ReadonlyArray<A>) => self is Arr.NonEmptyReadonlyArray<A>
  readonly pullEach: <A, E, B, E2>(
    stream: Stream.Stream<A, E>,
    scope: Scope.Scope,
    handlers: PullHandlers<A, E, B, E2>
  ) => Effect.Effect<Pull<B, E2>>
  readonly streamFromScopedPull: <A, E>(
    open: (scope: Scope.Scope) => Effect.Effect<Pull<Arr.NonEmptyReadonlyArray<A>, E>>
  ) => Stream.Stream<A, E>
  readonly provideContext: <R2>(
    context: Context.Context<R2>
  ) => <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E, Exclude<R, R2>>
  readonly streamOfScoped: <A, E, R, B, E2, R2>(
    open: Effect.Effect<A, E, R>,
    f: (value: A) => Stream.Stream<B, E2, R2>
  ) => Stream.Stream<B, E | E2, Exclude<R, Scope.Scope> | R2>
}
