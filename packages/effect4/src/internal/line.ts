/**
 * The names of Effect 4 that the binding (the repository's `binding/`, Effect code written once
 * for both editions) uses where Effect 3 names the same thing differently. The Effect 3 edition's
 * `line.ts` exports the same names, bound to Effect 3: a binding module imports them from here
 * (`../src/internal/line.js`, relative to where its copy lies), never from the line's own module.
 */
import * as Arr from "effect/Array"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as References from "effect/References"
import * as Scheduler from "effect/Scheduler"
import * as Scope from "effect/Scope"
import * as Tracer from "effect/Tracer"
import type * as Socket from "effect/socket/Socket"
import * as Config from "effect/Config"
import * as Headers from "effect/http/Headers"
import * as HttpClient from "effect/http/HttpClient"
import type * as HttpClientError from "effect/http/HttpClientError"
import type * as HttpClientResponse from "effect/http/HttpClientResponse"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as PullModule from "effect/Pull"
import * as Result_ from "effect/Result"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import type { HttpCall } from "effect-agent-session-shell"
import { formatIssue } from "./schema.js"
import * as Cause from "effect/Cause"
import * as Channel from "effect/Channel"
import * as Exit from "effect/Exit"
import * as LatchModule from "effect/Latch"
import type * as Redacted from "effect/Redacted"
import type { AttemptContext, LineShape, Redact, Register } from "../../binding/internal/lineShape.js"

/** What a duration may be given as (`"5 seconds"`, millis, a `Duration`). */
export type DurationInput = Duration.Input

/** The `Duration` of an input (a malformed one is a defect: inputs are typed). */
export const durationOf: (input: DurationInput) => Duration.Duration = Duration.fromInputUnsafe

/** The tracer Effect runs with when no tracer was provided (its spans reach no exporter). */
export const builtInTracer: Tracer.Tracer = Tracer.nativeTracer

/** A clock's time in nanoseconds, read synchronously. */
export const currentTimeNanos = (clock: Clock.Clock): bigint => clock.currentTimeNanosUnsafe()

/**
 * A span under the current one with these attributes, made without capturing the caller's stack
 * (a stack trace per span is heap for nothing here).
 */
export const makeSpanNoStack = (name: string, attributes: Record<string, unknown>): Effect.Effect<Tracer.Span> =>
  Effect.makeSpan(name, { attributes })

/** A new `Deferred`, made outside any fiber. */
export const makeDeferredUnsafe: <A, E = never>() => Deferred.Deferred<A, E> = Deferred.makeUnsafe

/** Completes a `Deferred` with an effect (its waiters run it), outside any fiber. */
export const doneDeferredUnsafe: <A, E>(self: Deferred.Deferred<A, E>, effect: Effect.Effect<A, E>) => void =
  Deferred.doneUnsafe

/** A clock's time in milliseconds, read synchronously. */
export const currentTimeMillis = (clock: Clock.Clock): number => clock.currentTimeMillisUnsafe()

/**
 * What a fiber started from outside any fiber (a socket's callback) runs with, taken from a
 * running fiber: its Clock, logger, log annotations and services.
 */
export type RunContext = Context.Context<never>

/** The current fiber's {@link RunContext}. */
export const runContext: Effect.Effect<RunContext> = Effect.context<never>()

/** What a detached fiber keeps of its starter's context: the Clock, the loggers and the scheduler. */
const keptByDetached: (context: Context.Context<never>) => Context.Context<never> = Context.pick(
  Clock.Clock,
  Scheduler.Scheduler,
  References.CurrentLoggers,
  References.MinimumLogLevel,
  References.LogToStderr
)

/**
 * Runs an effect in a fiber of its own (not the caller's child) with `context`'s Clock and logger,
 * none of its log annotations, span or services: a fiber that serves many callers.
 */
export const forkDetached = (context: RunContext, effect: Effect.Effect<void>): void => {
  Effect.runForkWith(keptByDetached(context))(effect)
}

/** A socket the line's `Socket.WebSocketConstructor` service makes. */
export type WebSocketLike = Socket.WebSocketLike
/** The platform's HTTP client failures (`HttpClientError.HttpClientError` is every one of them). */
export * as HttpClientError from "effect/http/HttpClientError"

/** An `Option` of a value that may be `null` or `undefined` (`None` for either). */
export const optionFromNullish: <A>(value: A) => Option.Option<NonNullable<A>> = Option.fromNullishOr

/** What an HTTP client failure says of itself, as the protocol core's `Http.transportFailure` reads it. */
export const httpFailureOf: LineShape["httpFailureOf"] = (error) => {
  const { _tag, cause, description, request } = error.reason
  return { reason: _tag.replace(/Error$/, ""), description, cause, method: request.method, url: request.url }
}

/** The platform's HTTP client. */
export * as HttpClient from "effect/http/HttpClient"

/** Decodes unknown input with a schema, as an effect. */
export const decodeUnknownEffect = Schema.decodeUnknownEffect

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
/** What a WebSocket constructor is given beside the address: its subprotocols, or options with headers. */
export type WebSocketConstructorOptions = Socket.WebSocketConstructorOptions | undefined

/** A WebSocket constructor: the service of `Socket.WebSocketConstructor`. */
export type WebSocketConstructorService = Socket.WebSocketConstructor["Service"]

/** The subprotocols among a WebSocket constructor's options (an options object's headers are not among them). */
export const protocolsOf = (options: WebSocketConstructorOptions): string | Array<string> | undefined =>
  options === undefined || typeof options === "string" || Array.isArray(options) ? options : options.protocols

/** A latch: fibers wait on it while it is closed. */
export type Latch = LatchModule.Latch

/** Makes a latch, open or closed. */
export const makeLatch = LatchModule.make

/** Closes a latch at once, outside an effect. */
export const closeLatchUnsafe = (latch: Latch): void => {
  latch.closeUnsafe()
}

/** Opens a latch at once, outside an effect. */
export const openLatchUnsafe = (latch: Latch): void => {
  latch.openUnsafe()
}

/** What a pull of a stream's next element fails with: the stream's error, or the stream's end. */
export type PullFailure<E> = E | Cause.Done

/** Fails a pull with the stream's error. */
export const pullError: <E>(error: E) => Effect.Effect<never, PullFailure<E>> = Effect.fail

/** Fails a pull with the stream's end: no element follows. */
export const pullDone = (): Effect.Effect<never, PullFailure<never>> => Cause.done()

/** The stream of a pull run again and again, until it fails with the stream's end. */
export const fromPull = Stream.fromEffectRepeat

/** Runs a finalizer given how the stream ended, when it ends. */
export const streamOnExit = Stream.onExit

/** The first failure of a cause, if it has one. */
export const failureOption = Cause.findErrorOption

/** The stream an effect makes, the effect's scope closed when the stream ends. */
export const unwrapScoped = Stream.unwrap

/**
 * Declares a service's tag as a class: `class X extends ServiceTag<X, Service>()("key") {}`. The
 * class is the key a layer provides the service under and an effect reads it by.
 */
export const ServiceTag: <Self, Shape>() => <const Key extends string>(key: Key) => Context.ServiceClass<Self, Key, Shape> =
  Context.Service

/** The effect that reads a service from the context by its tag. */
export const service: <Id, Shape>(tag: Context.Key<Id, Shape>) => Effect.Effect<Shape, never, Id> = Effect.service

/** `Some` of a value, `None` of `null` or `undefined`. */
export const optionFromNullable: <A>(value: A) => Option.Option<NonNullable<A>> = Option.fromNullishOr

/**
 * A layer never shared by reference with the layers of another `Effect.provide`: built with a memo
 * map of its own, where the layers of one program are otherwise memoized across its `provide`s.
 */
export const unshared: <A, E, R>(layer: Layer.Layer<A, E, R>) => Layer.Layer<A, E, R> = Layer.fresh

/** The schedule with every delay at most `max`. */
export const delaysCappedAt =
  (max: Duration.Duration) => <O, I, E, R>(self: Schedule.Schedule<O, I, E, R>): Schedule.Schedule<O, I, E, R> =>
    Schedule.modifyDelay(self, ({ duration }) => Effect.succeed(Duration.min(duration, max)))

/** The schedule, ending after at most `times` recurrences; its outputs are the schedule's. */
export const recurringUpTo =
  (times: number) => <O, I, E, R>(self: Schedule.Schedule<O, I, E, R>): Schedule.Schedule<O, I, E, R> =>
    Schedule.upTo(self, { times })

/**
 * A retry schedule: the schedule, only while `retryable` holds of the error it is fed, each
 * delay replaced by what `delayOf` makes of the error and that delay.
 */
export const retryingWhile: LineShape["retryingWhile"] = (schedule, retryable, delayOf) =>
  schedule.pipe(
    Schedule.while(({ input }) => retryable(input)),
    Schedule.modifyDelay(({ duration, input }) => delayOf(input, duration))
  )

/** The platform's HTTP headers. */
export * as Headers from "effect/http/Headers"

/** The platform's HTTP client requests. */
export * as HttpClientRequest from "effect/http/HttpClientRequest"

/** The platform's HTTP client responses. */
export * as HttpClientResponse from "effect/http/HttpClientResponse"

/** The platform's HTTP client derived from an `HttpApi` contract. */
export * as HttpApiClient from "effect/http-api/HttpApiClient"

/** The response an HTTP client failure came with; `undefined` for a failure without one. */
export const responseOf = (error: HttpClientError.HttpClientError): HttpClientResponse.HttpClientResponse | undefined =>
  error.response

/** What went wrong reading a response, as an HTTP client failure words it. */
export const readFailureMessage = (error: HttpClientError.HttpClientError): string => error.message

/** The message of a schema's decoding or encoding failure (`path: problem` lines); `undefined` for anything else. */
export const schemaFailureMessage = (error: unknown): string | undefined =>
  Schema.isSchemaError(error) ? formatIssue(error.issue) : undefined

/**
 * The response an error the contract declares stands for, when the derived client decoded one;
 * `undefined` for anything else. Statuses are mapped before the contract decodes a response: a
 * decoded contract error cannot come, and is a defect where it would.
 */
export const declaredErrorResponse = (_error: unknown): HttpCall.FailedResponse | undefined => undefined

/**
 * An {@link AttemptContext}: the value a context reference under `key`, provided to the attempt
 * with the redacted header names; `outside` is the defect's message for a read outside an attempt.
 */
export const attemptContext: LineShape["attemptContext"] = <C>(key: string, outside: string, redact: Redact) => {
  const ref = Context.Reference<C | undefined>(key, { defaultValue: () => undefined })
  const current = Effect.flatMap(
    Effect.service(ref),
    (value) => value === undefined ? Effect.die(new Error(outside)) : Effect.succeed(value)
  )
  const run: AttemptContext<C>["run"] = (self, value, timeout, onTimeout) =>
    Effect.flatMap(Effect.service(Headers.CurrentRedactedNames), (names) =>
      self.pipe(
        Effect.provideService(ref, value),
        Effect.provideService(Headers.CurrentRedactedNames, redact(names)),
        Effect.timeoutOrElse({ duration: timeout, orElse: () => Effect.fail(onTimeout()) })
      ))
  return { current, run }
}

/** A success or a failure, as a value. */
export type Result<A, E> = Result_.Result<A, E>

/** A {@link Result} that succeeded. */
export const resultSucceed: <A>(value: A) => Result<A, never> = Result_.succeed

/** A {@link Result} that failed. */
export const resultFail: <E>(error: E) => Result<never, E> = Result_.fail

/** The effect that succeeds or fails as a {@link Result} did. */
export const fromResult: <A, E>(result: Result<A, E>) => Effect.Effect<A, E> = Effect.fromResult

/** Recovers from any failure of an effect (not from defects). */
export const catchFailure = Effect.catch

/** Runs `onSuccess` on a success, `onFailure` on a failure (not a defect), then goes on with the outcome. */
export const tapBoth: LineShape["tapBoth"] = (self, options) =>
  self.pipe(Effect.tap(options.onSuccess), Effect.tapError(options.onFailure))

/** `attempt`, run again on `schedule` after it has failed (`Effect.retry`). */
export const retryAfterFailure = <A, E, R, Out, R1>(
  attempt: Effect.Effect<A, E, R>,
  schedule: Schedule.Schedule<Out, E, never, R1>
): Effect.Effect<A, E, R | R1> => Effect.retry(attempt, schedule)

/** `body` in a span named `name`, handed a way to set an attribute of that span (`Effect.annotateCurrentSpan`). */
export const inSpan: LineShape["inSpan"] = (name, options, body) =>
  Effect.withSpan(body((key, value) => Effect.annotateCurrentSpan(key, value)), name, options)

/** A path parameter's value as the `HttpApiClient` must be given it: as it is (the client encodes it). */
export const pathSegment = (value: string): string => value

/** The request argument of an `HttpApiClient` endpoint with path parameters. */
export const pathParams = <P>(params: P): { readonly params: P } => ({ params })

/**
 * A response body's stream opened (its reader taken) and closed at once, nothing read, so that
 * the request is released; `Stream.take(stream, 0)` never opens it, which leaves a `fetch` body's
 * connection open.
 */
export const releaseUnread = <E>(stream: Stream.Stream<Uint8Array, E>): Effect.Effect<unknown, E> =>
  Effect.scoped(Stream.toPull(stream))
/** The layer of the services in the context an effect makes, what the effect opens lasting as long as the layer. */
export const scopedContextLayer = Layer.effectContext

/**
 * What a socket's attempt gives the socket as its listener: one function for every event (the
 * socket takes no listener object), handing it to the attempt's `handleEvent`.
 */
export type SocketListener = (event: Socket.WebSocketEvent) => void

/** The listener of a socket's attempt: made once per attempt (see {@link SocketListener}). */
export const socketListener = (attempt: { handleEvent(event: Socket.WebSocketEvent): void }): SocketListener => (event) =>
  attempt.handleEvent(event)

/** A fiber of the line, as it is run: it can be interrupted, observed and polled. */
export type RunningFiber<A, E = never> = Fiber.Fiber<A, E>

/** Whether a fiber is over, read synchronously. */
export const fiberDone = (fiber: RunningFiber<unknown, unknown>): boolean => fiber.pollUnsafe() !== undefined

/**
 * Runs an effect in a fiber of its own (not the caller's child) with a {@link RunContext}: its
 * Clock, logger, log annotations and services, the running fiber's that the context was taken from.
 */
export const forkWith: (context: RunContext) => <A, E>(effect: Effect.Effect<A, E>) => RunningFiber<A, E> =
  Effect.runForkWith

/** The {@link RunContext} of none: the line's default Clock and logger, no annotation, no service. */
export const emptyRunContext: RunContext = Context.empty()

/** A scope closed by hand. */
export type CloseableScope = Scope.Closeable

/** A new scope, made outside an effect. */
export const makeScopeUnsafe = (): CloseableScope => Scope.makeUnsafe()

/** What runs a task after the current callback, where a waiting fiber is woken: its scheduler's dispatcher. */
export type Dispatcher = Scheduler.SchedulerDispatcher

/** The dispatchers made, one per scheduler (the buffer that wakes a fiber has no fiber to take one from). */
const dispatchers = new WeakMap<Scheduler.Scheduler, Scheduler.SchedulerDispatcher>()

/** The {@link Dispatcher} of a fiber's scheduler (one per scheduler). */
export const dispatcherOf = (scheduler: Scheduler.Scheduler): Dispatcher => {
  let dispatcher = dispatchers.get(scheduler)
  if (dispatcher === undefined) {
    dispatcher = scheduler.makeDispatcher()
    dispatchers.set(scheduler, dispatcher)
  }
  return dispatcher
}

/**
 * An effect that waits until `register` resumes it with an effect (at once, if it does so
 * synchronously); `register` is given the waiting fiber's scheduler and the fiber.
 */
export const callbackOnScheduler: LineShape["callbackOnScheduler"] = <A, E>(register: Register<A, E>) =>
  // The fiber's scheduler is the callback's `this`.
  Effect.callback<A, E>(function(resume) {
    register(resume, this, Fiber.getCurrent())
  })

/** A {@link Result} that succeeded. */
export type Success<A, E> = Result_.Success<A, E>

/** Whether a {@link Result} succeeded. */
export const isSuccess: <A, E>(self: Result<A, E>) => self is Success<A, E> = Result_.isSuccess

/**
 * The property a succeeded {@link Result} holds its value under (read by key where a function
 * call per value would cost: the frame path).
 */
export const successKey = "success" as const

/** The property a failed {@link Result} holds its error under (as {@link successKey}). */
export const failureKey = "failure" as const

/** The platform's HTTP request bodies. */
export * as HttpBody from "effect/http/HttpBody"

/** A client whose requests make no span (the platform's span records the full URL, query included). */
export const untracedClient = (client: HttpClient.HttpClient): HttpClient.HttpClient =>
  HttpClient.transformResponse(client, Effect.provideService(HttpClient.TracerDisabledWhen, () => true))

/** Fails with `onTimeout()` if the effect has not ended within `duration` (and interrupts it). */
export const timeoutFail = <E1>(options: {
  readonly duration: DurationInput
  readonly onTimeout: () => E1
}) =>
<A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E | E1, R> =>
  Effect.timeoutOrElse(self, { duration: options.duration, orElse: () => Effect.fail(options.onTimeout()) })

/** Forks an effect in a fiber of its own that no scope or parent fiber ends. */
export const forkDaemon = Effect.forkDetach

/** Whether a cause holds interruptions only (no failure, no defect). */
export const isInterruptedOnly = Cause.hasInterruptsOnly

/** Runs an effect for each batch of a stream's elements (what one pull gave), in order. */
export const runForEachBatch: LineShape["runForEachBatch"] = Stream.runForEachArray

/** Runs `f` on each value `pull` gives, in this fiber, until the pull ends (done) or fails. */
export const runPull: LineShape["runPull"] = <A, E, X, E2, R2>(
  pull: Pull<A, E>,
  f: (value: A) => Effect.Effect<X, E2, R2>
): Effect.Effect<void, E | E2, R2> => {
  const loop: Effect.Effect<void, E | E2, R2> = PullModule.matchEffect(pull, {
    onSuccess: (value) => Effect.flatMap(f(value), () => loop),
    onFailure: Effect.failCause,
    onDone: () => Effect.void
  })
  return loop
}

/** A secret read from the configuration (an environment variable by default), as `Redacted`. */
export const configRedacted: (name: string) => Config.Config<Redacted.Redacted<string>> = Config.Redacted

/** The HTTP client over the runtime's `fetch`, and the `RequestInit` its requests are made with. */
export * as FetchHttpClient from "effect/http/FetchHttpClient"

/**
 * A string configuration checked by `predicate` when read: a value that fails it is a
 * `ConfigError` with `message`.
 */
export const configValidated: LineShape["configValidated"] = (predicate, message) => {
  const schema = Schema.String.check(Schema.makeFilter(predicate, { message }))
  return Config.mapEffect((value: string) =>
    Effect.mapError(Schema.decodeUnknownEffect(schema)(value), (error) => new Config.ConfigError(error))
  )
}

/** The layer `f` makes of a configuration, read when the layer is built. */
export const layerFromConfig: LineShape["layerFromConfig"] = (config, f) =>
  Layer.unwrap(
    Effect.gen(function*() {
      return f(yield* config)
    })
  )

/** The `Schema` names of this line (in their own module, which imports nothing of the edition). */
export * from "./lineSchema.js"

/** Runs an effect with `scope` as its `Scope` (what it adds to the scope lasts as long as the scope). */
export const provideScope = Scope.provide

/**
 * Runs an effect that needs a scope in the given scope: what it opens lasts until that scope
 * closes, not when the effect ends.
 */
export const inScope: <A, E, R>(self: Effect.Effect<A, E, R>, scope: Scope.Scope) => Effect.Effect<A, E, Exclude<R, Scope.Scope>> =
  Scope.provide

/**
 * Runs a stream to its end, `f` run on each of its elements in order; a chunk none of whose
 * elements `wanted` holds of is passed over whole, with no Effect run for it.
 */
export const runForEachWanted: LineShape["runForEachWanted"] = (self, wanted, f) =>
  Stream.runForEachArray(self, (chunk) => chunk.some(wanted) ? Effect.forEach(chunk, f, { discard: true }) : Effect.void)

/** Recovers from any failure, defect or interruption of an effect, given its cause. */
export const catchCause = Effect.catchCause

/**
 * One pull of a stream's elements: succeeds with the next elements, or fails with the stream's
 * error, or with the stream's end ({@link pullDone}).
 */
export type Pull<A, E> = Effect.Effect<A, PullFailure<E>>

/** The pull that fails with the stream's error `cause` (its elements end with it). */
export const pullFailCause: <E>(cause: Cause.Cause<E>) => Pull<never, E> = Effect.failCause

/** The stream whose elements `pull` gives, a non-empty batch per pull, until it ends or fails. */
export const streamFromPull = <A, E>(pull: Pull<Arr.NonEmptyReadonlyArray<A>, E>): Stream.Stream<A, E> =>
  Stream.fromChannel(Channel.fromTransform(() => Effect.succeed(pull)))

/** The fiber running a pull, as {@link withFiber} hands it over. */
export type PullFiber = Fiber.Fiber<unknown, unknown>

/** The effect `f` makes of the fiber running it (read when it runs). */
export const withFiber: <A, E = never, R = never>(
  f: (fiber: PullFiber) => Effect.Effect<A, E, R>
) => Effect.Effect<A, E, R> = Effect.withFiber

/** The exit of an interruption by `fiber`. */
export const interruptExit = (fiber: PullFiber): Exit.Exit<never> => Exit.interrupt(fiber.id)

/**
 * Sets up the running fiber for a connection: its logs annotated with the session's id, its spans
 * under `span` (when there is one); the fiber's {@link RunContext}, what it runs with from then on.
 */
export const fiberSetUp = (sessionId: string, span: Tracer.Span | undefined): Effect.Effect<RunContext> =>
  Effect.withFiber((fiber) => {
    let context = Context.add(fiber.context, References.CurrentLogAnnotations, {
      ...fiber.getRef(References.CurrentLogAnnotations),
      sessionId
    })
    if (span !== undefined) context = Context.add(context, Tracer.ParentSpan, span)
    fiber.setContext(context)
    return Effect.succeed(context)
  })

/**
 * A step of a schedule, stepped by hand: given the time (ms) and the input, the delay before the
 * next recurrence, or `undefined` once the schedule is done.
 */
export type ScheduleStep<In> = (now: number, input: In) => Effect.Effect<Duration.Duration | undefined>

/** A schedule's {@link ScheduleStep}, at its start (its state is the step's own). */
export const scheduleStep = <Out, In>(schedule: Schedule.Schedule<Out, In>): Effect.Effect<ScheduleStep<In>> =>
  Effect.map(Schedule.toStep(schedule), (step) => (now, input) =>
    Effect.map(Effect.result(step(now, input)), (decided) => Result_.isSuccess(decided) ? decided.success[1] : undefined))

/** Runs an effect with the services of a context (those it needs are no longer required of the caller). */
export const provideContext: LineShape["provideContext"] = Effect.provideContext

/**
 * The stream `f` makes of what a scoped effect gives: the effect run in the stream's scope when
 * the stream starts (what it opens closed when the stream ends), then that stream's elements
 * pulled as the stream's own: its pull is the stream's, with no layer between them per pull (as
 * `Stream.unwrap` would add).
 */
export const streamOfScoped: LineShape["streamOfScoped"] = (open, f) =>
  Stream.fromChannel(Channel.fromTransform((upstream, scope) =>
    Effect.flatMap(
      Scope.provide(open, scope),
      (value) => Channel.toTransform(Stream.toChannel(f(value)))(upstream, scope)
    )
  ))

/** Whether a cause holds a defect (among whatever else it holds). */
export const hasDefect: LineShape["hasDefect"] = Cause.hasDies

/** Whether an array has an element (and is then typed as a non-empty one). */
export const isNonEmptyArray: LineShape["isNonEmptyArray"] = Arr.isReadonlyArrayNonEmpty

/**
 * A stream's pull, opened in `scope`, each of its outcomes handed in the same pull to `handlers`:
 * its elements a non-empty batch at a time, its failure, its end. The stream is closed with its
 * own exit as soon as it ends or fails, before `handlers` are told (a finalizer of the stream sees
 * how it ended, not what the handlers make of it); otherwise when `scope` closes.
 */
export const pullEach: LineShape["pullEach"] = (stream, scope, handlers) =>
  Effect.map(Channel.toPullScoped(Stream.toChannel(stream), scope), (upstream) => PullModule.matchEffect(upstream, handlers))

/**
 * The stream whose elements the pull `open` makes gives, a non-empty batch per pull: `open` run
 * when the stream starts, given the stream's scope (closed with the stream's exit when it ends);
 * the pull is the stream's own, with no layer between them per pull.
 */
export const streamFromScopedPull: LineShape["streamFromScopedPull"] = (open) =>
  Stream.fromChannel(Channel.fromTransform((_, scope) => open(scope)))
