/**
 * The names of Effect 3 that the binding (this package's `binding/`, Effect code written once
 * for both editions) uses where Effect 4 names the same thing differently. The Effect 4 edition's
 * `line.ts` exports the same names, bound to Effect 4: a binding module imports them from here
 * (`../src/internal/line.js`, relative to where it lies), never from the line's own module.
 */
import * as Arr from "effect/Array"
import type * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import type * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import * as FiberRef from "effect/FiberRef"
import * as HashMap from "effect/HashMap"
import * as Runtime from "effect/Runtime"
import type * as Scheduler from "effect/Scheduler"
import * as Scope from "effect/Scope"
import * as Tracer from "effect/Tracer"
import * as ScheduleDecision from "effect/ScheduleDecision"
import * as ScheduleIntervals from "effect/ScheduleIntervals"
import * as Headers from "@effect/platform/Headers"
import * as HttpClient from "@effect/platform/HttpClient"
import type * as HttpClientError from "@effect/platform/HttpClientError"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Config from "effect/Config"
import type * as ConfigErrors from "effect/ConfigError"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Predicate from "effect/Predicate"
import * as Schedule from "effect/Schedule"
import * as Sink from "effect/Sink"
import * as Chunk from "effect/Chunk"
import * as Channel from "effect/Channel"
import * as Stream from "effect/Stream"
import type { HttpCall } from "effect-agent-session-shell"
import { formatIssues } from "./schema.js"
import { timeoutFail as timeoutFailInOneFiber } from "./timeout.js"
import type * as Socket from "@effect/platform/Socket"
import * as Cause from "effect/Cause"
import { identity } from "effect/Function"
import * as Schema from "effect/Schema"
import type * as Redacted from "effect/Redacted"
import type { AttemptContext, LineShape, PullHandlers, Redact, Register } from "../../binding/internal/lineShape.js"

/** What a duration may be given as (`"5 seconds"`, millis, a `Duration`). */
export type DurationInput = Duration.DurationInput

/** The `Duration` of an input (a malformed one is a defect: inputs are typed). */
export const durationOf: (input: DurationInput) => Duration.Duration = Duration.decode

/** The tracer Effect runs with when no tracer was provided (its spans reach no exporter). */
export const builtInTracer: Tracer.Tracer = Effect.runSync(Effect.tracer)

/** A clock's time in nanoseconds, read synchronously. */
export const currentTimeNanos = (clock: Clock.Clock): bigint => clock.unsafeCurrentTimeNanos()

/**
 * A span under the current one with these attributes, made without capturing the caller's stack
 * (a stack trace per span is heap for nothing here).
 */
export const makeSpanNoStack = (name: string, attributes: Record<string, unknown>): Effect.Effect<Tracer.Span> =>
  Effect.makeSpan(name, { attributes, captureStackTrace: false })

/** A new `Deferred`, made outside any fiber. */
export const makeDeferredUnsafe = <A, E = never>(): Deferred.Deferred<A, E> => Deferred.unsafeMake<A, E>(FiberId.none)

/** Completes a `Deferred` with an effect (its waiters run it), outside any fiber. */
export const doneDeferredUnsafe: <A, E>(self: Deferred.Deferred<A, E>, effect: Effect.Effect<A, E>) => void =
  Deferred.unsafeDone

/** A clock's time in milliseconds, read synchronously. */
export const currentTimeMillis = (clock: Clock.Clock): number => clock.unsafeCurrentTimeMillis()

/**
 * What a fiber started from outside any fiber (a socket's callback) runs with, taken from a
 * running fiber: its Clock, logger, log annotations and services.
 */
export type RunContext = Runtime.Runtime<never>

/** The current fiber's {@link RunContext}. */
export const runContext: Effect.Effect<RunContext> = Effect.runtime<never>()

/** Drops the caller's log annotations and services, its span among them (the Clock and the logger are not services). */
const dropCaller: Effect.Effect<void> = Effect.zipRight(
  FiberRef.set(FiberRef.currentLogAnnotations, HashMap.empty()),
  FiberRef.set(FiberRef.currentContext, Context.empty())
)

/**
 * Runs an effect in a fiber of its own (not the caller's child) with `context`'s Clock and logger,
 * none of its log annotations, span or services: a fiber that serves many callers.
 */
export const forkDetached = (context: RunContext, effect: Effect.Effect<void>): void => {
  Runtime.runFork(context)(Effect.zipRight(dropCaller, effect))
}

/** A socket the line's `Socket.WebSocketConstructor` service makes. */
export type WebSocketLike = globalThis.WebSocket
/** The platform's HTTP client failures (`HttpClientError.HttpClientError` is every one of them). */
export * as HttpClientError from "@effect/platform/HttpClientError"

/** An `Option` of a value that may be `null` or `undefined` (`None` for either). */
export const optionFromNullish: <A>(value: A) => Option.Option<NonNullable<A>> = Option.fromNullable

/** What an HTTP client failure says of itself, as the protocol core's `Http.transportFailure` reads it. */
export const httpFailureOf: LineShape["httpFailureOf"] = (error) => ({
  reason: error.reason,
  description: error.description,
  cause: error.cause,
  method: error.request.method,
  url: error.request.url
})

/** The platform's HTTP client. */
export * as HttpClient from "@effect/platform/HttpClient"

/** Decodes unknown input with a schema, as an effect. */
export const decodeUnknownEffect = Schema.decodeUnknown

/** The platform's sockets (and the `WebSocketConstructor` service). */
export * as Socket from "@effect/platform/Socket"

/** A failure to read configuration. */
export type ConfigError = ConfigErrors.ConfigError

/** A string read from configuration under a name. */
export const configString: (name: string) => Config.Config<string> = Config.string

/** One of the given strings, read from configuration under a name. */
export const configLiterals = <const L extends ReadonlyArray<string>>(
  literals: L,
  name: string
): Config.Config<L[number]> => Config.literal(...literals)(name)

/** The layer an effect makes, built when that effect has run. */
export const unwrapLayer = Layer.unwrapEffect
/** What a WebSocket constructor is given beside the address: its subprotocols. */
export type WebSocketConstructorOptions = string | Array<string> | undefined

/** A WebSocket constructor: the service of `Socket.WebSocketConstructor`. */
export type WebSocketConstructorService = Context.Tag.Service<typeof Socket.WebSocketConstructor>

/** The subprotocols among a WebSocket constructor's options. */
export const protocolsOf: (options: WebSocketConstructorOptions) => string | Array<string> | undefined = identity

/** A latch: fibers wait on it while it is closed. */
export type Latch = Effect.Latch

/** Makes a latch, open or closed. */
export const makeLatch = Effect.makeLatch

/** Closes a latch at once, outside an effect. */
export const closeLatchUnsafe = (latch: Latch): void => latch.unsafeClose()

/** Opens a latch at once, outside an effect. */
export const openLatchUnsafe = (latch: Latch): void => latch.unsafeOpen()

/** What a pull of a stream's next element fails with: the stream's error, or the stream's end. */
export type PullFailure<E> = Option.Option<E>

/** Fails a pull with the stream's error. */
export const pullError = <E>(error: E): Effect.Effect<never, PullFailure<E>> => Effect.fail(Option.some(error))

/** Fails a pull with the stream's end: no element follows. */
export const pullDone = (): Effect.Effect<never, PullFailure<never>> => Effect.fail(Option.none())

/** The stream of a pull run again and again, until it fails with the stream's end. */
export const fromPull = Stream.repeatEffectOption

/** Runs a finalizer given how the stream ended, when it ends. */
export const streamOnExit = Stream.ensuringWith

/** The first failure of a cause, if it has one. */
export const failureOption = Cause.failureOption

/** The stream an effect makes, the effect's scope closed when the stream ends. */
export const unwrapScoped = Stream.unwrapScoped

/**
 * Declares a service's tag as a class: `class X extends ServiceTag<X, Service>()("key") {}`. The
 * class is the key a layer provides the service under and an effect reads it by.
 */
export const ServiceTag = <Self, Shape>() => <const Key extends string>(key: Key): Context.TagClass<Self, Key, Shape> =>
  Context.Tag(key)<Self, Shape>()

/** The effect that reads a service from the context by its tag. */
export const service: <Id, Shape>(tag: Context.Tag<Id, Shape>) => Effect.Effect<Shape, never, Id> = (tag) => tag

/** `Some` of a value, `None` of `null` or `undefined`. */
export const optionFromNullable: <A>(value: A) => Option.Option<NonNullable<A>> = Option.fromNullable

/**
 * A layer never shared by reference with the layers of another `Effect.provide`: each `provide`
 * builds its layers with a memo map of its own, so this is the layer itself.
 */
export const unshared = <A, E, R>(layer: Layer.Layer<A, E, R>): Layer.Layer<A, E, R> => layer

/** The schedule with every delay at most `max`. */
export const delaysCappedAt =
  (max: Duration.Duration) => <O, I, R>(self: Schedule.Schedule<O, I, R>): Schedule.Schedule<O, I, R> =>
    Schedule.modifyDelay(self, (_, delay) => Duration.min(delay, max))

/** The schedule, ending after at most `times` recurrences; its outputs are the schedule's. */
export const recurringUpTo =
  (times: number) => <O, I, R>(self: Schedule.Schedule<O, I, R>): Schedule.Schedule<O, I, R> =>
    Schedule.zipLeft(self, Schedule.recurs(times))

/**
 * A retry schedule: the schedule, only while `retryable` holds of the error it is fed, each
 * delay replaced by what `delayOf` makes of the error and that delay.
 */
export const retryingWhile: LineShape["retryingWhile"] = <E>(
  schedule: Schedule.Schedule<unknown, E>,
  retryable: (error: E) => boolean,
  delayOf: (error: E, delay: Duration.Duration) => Effect.Effect<Duration.Duration>
) =>
  Schedule.intersect(schedule, Schedule.identity<E>()).pipe(
    Schedule.whileInput(retryable),
    Schedule.modifyDelayEffect(([, error], delay) => delayOf(error, delay))
  )

/** The platform's HTTP headers. */
export * as Headers from "@effect/platform/Headers"

/** The platform's HTTP client requests. */
export * as HttpClientRequest from "@effect/platform/HttpClientRequest"

/** The platform's HTTP client responses. */
export * as HttpClientResponse from "@effect/platform/HttpClientResponse"

/** The platform's HTTP client derived from an `HttpApi` contract. */
export * as HttpApiClient from "@effect/platform/HttpApiClient"

/** The response an HTTP client failure came with; `undefined` for a failure without one. */
export const responseOf = (error: HttpClientError.HttpClientError): HttpClientResponse.HttpClientResponse | undefined =>
  error._tag === "RequestError" ? undefined : error.response

/** What went wrong reading a response, as an HTTP client failure words it. */
export const readFailureMessage = (error: HttpClientError.HttpClientError): string =>
  error.description ?? `${error.reason} error reading the response`

/** The message of a schema's decoding or encoding failure (`path: problem` lines); `undefined` for anything else. */
export const schemaFailureMessage = (error: unknown): string | undefined =>
  ParseResult.isParseError(error) ? formatIssues(error) : undefined

const API_ERROR_STATUS: Record<string, number> = {
  BadRequest: 400,
  Unauthorized: 401,
  Forbidden: 403,
  NotFound: 404,
  Conflict: 409,
  PayloadTooLarge: 413,
  RateLimited: 429,
  Unavailable: 503
}

/**
 * The response an error the contract declares stands for, when the derived client decoded one (its
 * status by its tag, its message as the body); `undefined` for anything else. Statuses are mapped
 * before the contract decodes a response, so none is expected.
 */
export const declaredErrorResponse = (error: unknown): HttpCall.FailedResponse | undefined => {
  if (!Predicate.hasProperty(error, "_tag")) return undefined
  const status = typeof error._tag === "string" ? API_ERROR_STATUS[error._tag] : undefined
  if (status === undefined) return undefined
  const message = Predicate.hasProperty(error, "error") && typeof error.error === "string" ? error.error : ""
  return { status, statusText: "", headers: Headers.empty, body: JSON.stringify({ error: message }) }
}

/**
 * An {@link AttemptContext}: `outside` is the defect's message for a read outside an attempt.
 * Each attempt runs in a fiber of its own (`timeout.ts`): the value (a fiber ref) and the
 * redacted header names are set there directly, with nothing to restore (`Effect.provideService`
 * and `Effect.locallyWith` would save and restore them around the attempt).
 */
export const attemptContext: LineShape["attemptContext"] = <C>(_key: string, outside: string, redact: Redact) => {
  const ref = FiberRef.unsafeMake<C | undefined>(undefined)
  const current = FiberRef.getWith(ref, (value) => value === undefined ? Effect.dieMessage(outside) : Effect.succeed(value))
  const run: AttemptContext<C>["run"] = (self, value, timeout, onTimeout) =>
    timeoutFailInOneFiber(
      Effect.zipRight(Effect.zipRight(FiberRef.set(ref, value), FiberRef.update(Headers.currentRedactedNames, redact)), self),
      timeout,
      onTimeout
    )
  return { current, run }
}

/** A success or a failure, as a value. */
export type Result<A, E> = Either.Either<A, E>

/** A {@link Result} that succeeded. */
export const resultSucceed: <A>(value: A) => Result<A, never> = Either.right

/** A {@link Result} that failed. */
export const resultFail: <E>(error: E) => Result<never, E> = Either.left

/** The effect that succeeds or fails as a {@link Result} did (the result itself: it is one). */
export const fromResult = <A, E>(result: Result<A, E>): Effect.Effect<A, E> => result

/** Recovers from any failure of an effect (not from defects). */
export const catchFailure = Effect.catchAll

/** Runs `onSuccess` on a success, `onFailure` on a failure (not a defect), then goes on with the outcome. */
export const tapBoth: LineShape["tapBoth"] = Effect.tapBoth

/**
 * `attempt`, run again on `schedule` after it has failed: what `Effect.retry(attempt, schedule)`
 * does, the schedule seeing the same inputs; it is started on the first failure only, so a first
 * attempt that succeeds builds no schedule driver.
 */
export const retryAfterFailure = <A, E, R, Out, R1>(
  attempt: Effect.Effect<A, E, R>,
  schedule: Schedule.Schedule<Out, E, R1>
): Effect.Effect<A, E, R | R1> =>
  Effect.catchAll(attempt, (first) => {
    let replayed = false
    const again = Effect.suspend(() => {
      if (replayed) return attempt
      replayed = true
      return Effect.fail(first)
    })
    return Effect.retry(again, schedule)
  })

/**
 * `body` in a span named `name`, handed a way to set an attribute of that span. The span is held
 * (`Effect.useSpan` and `Effect.withParentSpan`): an attribute is set on it directly rather than
 * through `Effect.annotateCurrentSpan`'s look-up.
 */
export const inSpan: LineShape["inSpan"] = (name, options, body) =>
  Effect.useSpan(name, options, (span) =>
    Effect.withParentSpan(body((key, value) => Effect.sync(() => span.attribute(key, value))), span))

/** A path parameter's value as the `HttpApiClient` must be given it: encoded (it sends it as it is). */
export const pathSegment: (value: string) => string = encodeURIComponent

/** The request argument of an `HttpApiClient` endpoint with path parameters. */
export const pathParams = <P>(params: P): { readonly path: P } => ({ path: params })

/**
 * A response body's stream opened and closed at once, reading as little as can be, so that the
 * request is released (a `fetch` body's connection closed). `Stream.take(stream, 0)` never opens
 * it; its first chunk (the transport's, bounded) is the least that does.
 */
export const releaseUnread = <E>(stream: Stream.Stream<Uint8Array, E>): Effect.Effect<unknown, E> =>
  Stream.runDrain(Stream.take(stream, 1))
/** The layer of the services in the context an effect makes, what the effect opens lasting as long as the layer. */
export const scopedContextLayer = Layer.scopedContext

/**
 * What a socket's attempt gives the socket as its listener: the attempt itself, an object whose
 * `handleEvent` the socket calls with every event (no function between the socket and it).
 */
export type SocketListener = EventListenerObject

/** The listener of a socket's attempt (the attempt itself: see {@link SocketListener}). */
export const socketListener = (attempt: EventListenerObject): SocketListener => attempt

/** A fiber of the line, as it is run: it can be interrupted, observed and polled. */
export type RunningFiber<A, E = never> = Fiber.RuntimeFiber<A, E>

/** Whether a fiber is over, read synchronously. */
export const fiberDone = (fiber: RunningFiber<unknown, unknown>): boolean => fiber.unsafePoll() !== null

/**
 * Runs an effect in a fiber of its own (not the caller's child) with a {@link RunContext}: its
 * Clock, logger, log annotations and services, the running fiber's that the context was taken from.
 */
export const forkWith = (context: RunContext): <A, E>(effect: Effect.Effect<A, E>) => RunningFiber<A, E> =>
  Runtime.runFork(context)

/** The {@link RunContext} of none: the line's default Clock and logger, no annotation, no service. */
export const emptyRunContext: RunContext = Runtime.defaultRuntime

/** A scope closed by hand. */
export type CloseableScope = Scope.CloseableScope

/** A new scope, made outside an effect. */
export const makeScopeUnsafe = (): CloseableScope => Effect.runSync(Scope.make())

/** What runs a task after the current callback, where a waiting fiber is woken: its scheduler. */
export type Dispatcher = Scheduler.Scheduler

/** The {@link Dispatcher} of a fiber's scheduler: the scheduler itself. */
export const dispatcherOf = (scheduler: Scheduler.Scheduler): Dispatcher => scheduler

/**
 * An effect that waits until `register` resumes it with an effect (at once, if it does so
 * synchronously); `register` is given the waiting fiber's scheduler and the fiber.
 */
export const callbackOnScheduler: LineShape["callbackOnScheduler"] = <A, E>(register: Register<A, E>) =>
  Effect.withFiberRuntime<A, E>((fiber) =>
    Effect.async<A, E>((resume) => {
      register(resume, fiber.currentScheduler, fiber)
    })
  )

/** A {@link Result} that succeeded. */
export type Success<A, E> = Either.Right<E, A>

/** Whether a {@link Result} succeeded. */
export const isSuccess: <A, E>(self: Result<A, E>) => self is Success<A, E> = Either.isRight

/**
 * The property a succeeded {@link Result} holds its value under (read by key where a function
 * call per value would cost: the frame path).
 */
export const successKey = "right" as const

/** The property a failed {@link Result} holds its error under (as {@link successKey}). */
export const failureKey = "left" as const

/** The platform's HTTP request bodies. */
export * as HttpBody from "@effect/platform/HttpBody"

/** A client whose requests make no span (the platform's span records the full URL, query included). */
export const untracedClient = (client: HttpClient.HttpClient): HttpClient.HttpClient =>
  HttpClient.withTracerDisabledWhen(client, () => true)

/** Fails with `onTimeout()` if the effect has not ended within `duration` (and interrupts it). */
export const timeoutFail = Effect.timeoutFail

/** Forks an effect in a fiber of its own that no scope or parent fiber ends. */
export const forkDaemon = Effect.forkDaemon

/** Whether a cause holds interruptions only (no failure, no defect). */
export const isInterruptedOnly = Cause.isInterruptedOnly

/** Runs an effect for each batch of a stream's elements (what one pull gave), in order. */
export const runForEachBatch: LineShape["runForEachBatch"] = Stream.runForEachChunk

/** Runs `f` on each value `pull` gives, in this fiber, until the pull ends (done) or fails. */
export const runPull: LineShape["runPull"] = <A, E, X, E2, R2>(
  pull: Pull<A, E>,
  f: (value: A) => Effect.Effect<X, E2, R2>
): Effect.Effect<void, E | E2, R2> => {
  const loop: Effect.Effect<void, E | E2, R2> = Effect.matchEffect(pull, {
    onFailure: Option.match({ onNone: () => Effect.void, onSome: Effect.fail }),
    onSuccess: (value) => Effect.flatMap(f(value), () => loop)
  })
  return loop
}

/** A secret read from the configuration (an environment variable by default), as `Redacted`. */
export const configRedacted: (name: string) => Config.Config<Redacted.Redacted<string>> = Config.redacted

/** The HTTP client over the runtime's `fetch`, and the `RequestInit` its requests are made with. */
export * as FetchHttpClient from "@effect/platform/FetchHttpClient"

/**
 * A string configuration checked by `predicate` when read: a value that fails it is a
 * `ConfigError` with `message`.
 */
export const configValidated: LineShape["configValidated"] = (predicate, message) =>
  Config.validate({ message, validation: predicate })

/** The layer `f` makes of a configuration, read when the layer is built. */
export const layerFromConfig: LineShape["layerFromConfig"] = (config, f) => Layer.unwrapEffect(Config.map(config, f))

/** The `Schema` names of this line (in their own module, which imports nothing of the edition). */
export * from "./lineSchema.js"

/** Runs an effect with `scope` as its `Scope` (what it adds to the scope lasts as long as the scope). */
export const provideScope = Scope.extend

/**
 * Runs an effect that needs a scope in the given scope: what it opens lasts until that scope
 * closes, not when the effect ends.
 */
export const inScope: <A, E, R>(self: Effect.Effect<A, E, R>, scope: Scope.Scope) => Effect.Effect<A, E, Exclude<R, Scope.Scope>> =
  Scope.extend

/**
 * Runs a stream to its end, `f` run on each of its elements in order; a chunk none of whose
 * elements `wanted` holds of is passed over whole, with no Effect run for it.
 */
export const runForEachWanted: LineShape["runForEachWanted"] = <A, E, R, E2, R2>(
  self: Stream.Stream<A, E, R>,
  wanted: (element: A) => boolean,
  f: (element: A) => Effect.Effect<void, E2, R2>
) => {
  // One channel stage: `Stream.runForEachChunk` would run an Effect per chunk.
  type Consume = Channel.Channel<never, Chunk.Chunk<A>, E2, never, void, unknown, R2>
  const consume: Consume = Channel.readWith({
    onInput: (chunk: Chunk.Chunk<A>): Consume =>
      Chunk.some(chunk, wanted)
        ? Channel.zipRight(Channel.fromEffect(Effect.forEach(chunk, f, { discard: true })), consume)
        : consume,
    onFailure: (error: never): Consume => Channel.fail(error),
    onDone: (): Consume => Channel.void
  })
  return Stream.run(self, Sink.fromChannel(consume))
}

/** Recovers from any failure, defect or interruption of an effect, given its cause. */
export const catchCause = Effect.catchAllCause

/**
 * One pull of a stream's elements: succeeds with the next elements, or fails with the stream's
 * error, or with the stream's end ({@link pullDone}).
 */
export type Pull<A, E> = Effect.Effect<A, PullFailure<E>>

/** The pull that fails with the stream's error `cause` (its elements end with it). */
export const pullFailCause = <E>(cause: Cause.Cause<E>): Pull<never, E> => Effect.failCause(Cause.map(cause, Option.some))

/** The stream whose elements `pull` gives, a non-empty batch per pull, until it ends or fails. */
export const streamFromPull = <A, E>(pull: Pull<Arr.NonEmptyReadonlyArray<A>, E>): Stream.Stream<A, E> =>
  Stream.repeatEffectChunkOption(Effect.map(pull, Chunk.unsafeFromNonEmptyArray))

/** The fiber running a pull, as {@link withFiber} hands it over. */
export type PullFiber = Fiber.RuntimeFiber<unknown, unknown>

/** The effect `f` makes of the fiber running it (read when it runs). */
export const withFiber: <A, E = never, R = never>(
  f: (fiber: PullFiber) => Effect.Effect<A, E, R>
) => Effect.Effect<A, E, R> = Effect.withFiberRuntime

/** The exit of an interruption by `fiber`. */
export const interruptExit = (fiber: PullFiber): Exit.Exit<never> => Exit.interrupt(fiber.id())

/**
 * Sets up the running fiber for a connection: its logs annotated with the session's id, its spans
 * under `span` (when there is one); the fiber's {@link RunContext}, what it runs with from then on.
 */
export const fiberSetUp = (sessionId: string, span: Tracer.Span | undefined): Effect.Effect<RunContext> =>
  Effect.zipRight(
    Effect.zipRight(
      FiberRef.update(FiberRef.currentLogAnnotations, HashMap.set<string, unknown>("sessionId", sessionId)),
      span === undefined ? Effect.void : FiberRef.update(FiberRef.currentContext, Context.add(Tracer.ParentSpan, span))
    ),
    Effect.runtime<never>()
  )

/**
 * A step of a schedule, stepped by hand: given the time (ms) and the input, the delay before the
 * next recurrence, or `undefined` once the schedule is done.
 */
export type ScheduleStep<In> = (now: number, input: In) => Effect.Effect<Duration.Duration | undefined>

/** A schedule's {@link ScheduleStep}, at its start (its state is the step's own). */
export const scheduleStep = <Out, In>(schedule: Schedule.Schedule<Out, In>): Effect.Effect<ScheduleStep<In>> =>
  Effect.sync(() => {
    let state: unknown = schedule.initial
    return (now, input) =>
      Effect.map(Effect.suspend(() => schedule.step(now, input, state)), ([next, , decision]) => {
        state = next
        return ScheduleDecision.isDone(decision)
          ? undefined
          : Duration.millis(Math.max(0, ScheduleIntervals.start(decision.intervals) - now))
      })
  })

/** Runs an effect with the services of a context (those it needs are no longer required of the caller). */
export const provideContext: LineShape["provideContext"] = Effect.provide

/**
 * The stream `f` makes of what a scoped effect gives: the effect run in the stream's scope when
 * the stream starts (what it opens closed when the stream ends), then that stream's elements
 * pulled as the stream's own.
 */
export const streamOfScoped: LineShape["streamOfScoped"] = (open, f) => Stream.unwrapScoped(Effect.map(open, f))

/** Whether a cause holds a defect (among whatever else it holds). */
export const hasDefect: LineShape["hasDefect"] = Cause.isDie

/** Whether an array has an element (and is then typed as a non-empty one). */
export const isNonEmptyArray: LineShape["isNonEmptyArray"] = Arr.isNonEmptyReadonlyArray

/**
 * A stream's pull, opened in `scope`, each of its outcomes handed in the same pull to `handlers`:
 * its elements a non-empty batch at a time (an empty batch is passed over), its failure, its end.
 * The stream is closed with its own exit as soon as it ends or fails, before `handlers` are told
 * (a finalizer of the stream sees how it ended, not what the handlers make of it); otherwise when
 * `scope` closes.
 */
export const pullEach: LineShape["pullEach"] = <A, E, B, E2>(
  stream: Stream.Stream<A, E>,
  scope: Scope.Scope,
  handlers: PullHandlers<A, E, B, E2>
) =>
  Effect.flatMap(Scope.fork(scope, ExecutionStrategy.sequential), (own) =>
    Effect.map(Scope.extend(Stream.toPull(stream), own), (upstream) => {
      // A failure with `None` is the stream's end (a defect or an interruption beside it wins).
      const onFailure = (cause: Cause.Cause<Option.Option<E>>): Pull<B, E2> =>
        Option.match(Cause.flipCauseOption(cause), {
          onNone: () => Effect.andThen(Scope.close(own, Exit.void), () => handlers.onDone()),
          onSome: (failure) => Effect.andThen(Scope.close(own, Exit.failCause(failure)), () => handlers.onFailure(failure))
        })
      const pull: Pull<B, E2> = Effect.matchCauseEffect(upstream, {
        onSuccess: (chunk) => {
          const batch = Chunk.toReadonlyArray(chunk)
          return Arr.isNonEmptyReadonlyArray(batch) ? handlers.onSuccess(batch) : pull
        },
        onFailure
      })
      return pull
    }))

/**
 * The stream whose elements the pull `open` makes gives, a non-empty batch per pull: `open` run
 * when the stream starts, given the stream's scope (closed with the stream's exit when it ends).
 */
export const streamFromScopedPull: LineShape["streamFromScopedPull"] = (open) =>
  Stream.fromChannel(Channel.acquireUseRelease(
    Scope.make(),
    (scope) => Channel.unwrap(Effect.map(open(scope), (pull) => Stream.toChannel(streamFromPull(pull)))),
    (scope, exit) => Scope.close(scope, exit)
  ))
