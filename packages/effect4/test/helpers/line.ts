/**
 * The names of Effect 4 that the tests written once for both editions (`test/shared/`, copied
 * from the Effect 3 edition by `scripts/binding.mjs`) use where Effect 3 names the same thing
 * differently: the Effect 3 edition's `test/helpers/line.ts` exports the same names.
 */
import { assert, it, type Vitest } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Duration from "effect/Duration"
import * as Exit from "effect/Exit"
import type * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import type * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import * as References from "effect/References"
import * as Result from "effect/Result"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { TestClock } from "effect/testing"
import type * as Tracer from "effect/Tracer"
import * as HttpClientError from "effect/http/HttpClientError"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as Socket from "effect/socket/Socket"
import { type Span, spying } from "./spans.js"
import type { SimInfo, SimOptions } from "../shared/e2e.js"
import { spawnSimulator } from "./simulator.js"

/** Written once with the child programs' names (`programLine.ts`, which loads no vitest). */
export { changesOf, spacedRetries } from "./programLine.js"

export * as HttpClient from "effect/http/HttpClient"
export type * as HttpClientRequest from "effect/http/HttpClientRequest"
export * as HttpClientResponse from "effect/http/HttpClientResponse"
export type * as Socket from "effect/socket/Socket"
export { TestClock }

/** A test whose effect may use a `Scope`, closed when it ends (Effect 4's `it.effect` provides one). */
export const scoped = it.effect

/** Runs an effect in a fiber of its own, a child of the current one. */
export const forkChild = Effect.forkChild

/** The fiber's exit when it is done, else `undefined` (it does not wait). */
export const pollNow = <A, E>(fiber: Fiber.Fiber<A, E>): Exit.Exit<A, E> | undefined => fiber.pollUnsafe()

/** The success type of an effect. */
export type Success<T extends Effect.Effect<unknown, unknown, unknown>> = Effect.Success<T>

/** Lets the other fibers run once. */
export const yieldNow = (): Effect.Effect<void> => Effect.yieldNow

/** The cause's first typed failure, if it has one. */
export const failureOf: <E>(cause: Cause.Cause<E>) => Option.Option<E> = Cause.findErrorOption

/** Whether the cause holds an interruption. */
export const interrupted: <E>(cause: Cause.Cause<E>) => boolean = Cause.hasInterrupts

/** Whether the cause holds interruptions only. */
export const interruptedOnly: <E>(cause: Cause.Cause<E>) => boolean = Cause.hasInterruptsOnly

/** Whether a log line's level is the warning level. */
export const isWarning = (level: LogLevel.LogLevel): boolean => level === "Warn"

/** A layer that makes `logger` the only logger. */
export const loggerLayer = <Output>(logger: Logger.Logger<unknown, Output>): Layer.Layer<never> =>
  Logger.layer([logger])

/** The typed failure an exit ends with; the test fails when it succeeded or died. */
export const typedFailure = <A, E>(exit: Exit.Exit<A, E>): E => {
  const failure = Exit.findErrorOption(exit)
  return Option.isSome(failure) ? failure.value : assert.fail(`expected a typed failure, got ${String(exit)}`)
}

/** What a duration may be given as. */
export type DurationInput = Duration.Input

/** An element of a stream that may fail, as collected: the element, or the failure it ended with. */
export type Outcome<A, E> = Result.Result<A, E>

/** The element an outcome holds; `undefined` for a failure. */
export const successOf = <A, E>(outcome: Outcome<A, E>): A | undefined =>
  Result.isSuccess(outcome) ? outcome.success : undefined

/** The failure an outcome holds; `undefined` for an element. */
export const failureIn = <A, E>(outcome: Outcome<A, E>): E | undefined =>
  Result.isFailure(outcome) ? outcome.failure : undefined

/** A fiber forked by a test. */
export type Running<A, E = never> = Fiber.Fiber<A, E>

/** Forks a fiber that collects every element of `stream`, and the failure it ends with. */
export const collectOutcomes = <A, E>(
  stream: Stream.Stream<A, E>
): Effect.Effect<Running<ReadonlyArray<Outcome<A, E>>>, never, Scope.Scope> =>
  Effect.forkScoped(Stream.runCollect(Stream.result(stream)))

/** A deterministic schedule: 250 ms, 500 ms, 1 s, ... at most `n` retries. */
export const fast = (n: number) =>
  Schedule.exponential(Duration.millis(250), 2).pipe(Schedule.upTo({ times: n }))

/** Every log line (level, message and annotations) pushed to `lines`, as the only logger. */
export const captureLogs = (lines: Array<string>): Layer.Layer<never> =>
  Logger.layer([
    Logger.make(({ fiber, logLevel, message }) => {
      const annotations = fiber.getRef(References.CurrentLogAnnotations)
      lines.push(`${logLevel} ${String(message)} ${JSON.stringify(annotations)}`)
    })
  ])

/** Runs `effect` with every log line, at every level, captured into `lines`. */
export const withLogs = <A, E, R>(lines: Array<string>, effect: Effect.Effect<A, E, R>) =>
  effect.pipe(Effect.provide(captureLogs(lines)), Effect.provideService(References.MinimumLogLevel, "All"))

/** A transport failure of `request` (nothing answered), caused by `cause`. */
export const transportFailure = (request: HttpClientRequest.HttpClientRequest, cause: Error) =>
  new HttpClientError.HttpClientError({ reason: new HttpClientError.TransportError({ request, cause }) })

/** The client's sockets, made by `make`: the layer of the WebSocket constructor. */
export const webSocketConstructor = (
  make: (url: string) => globalThis.WebSocket
): Layer.Layer<Socket.WebSocketConstructor> => Layer.succeed(Socket.WebSocketConstructor)(make)

/** The stream's elements, and the failure it ends with, as outcomes (it then ends). */
export const outcomes = <A, E, R>(stream: Stream.Stream<A, E, R>): Stream.Stream<Outcome<A, E>, never, R> =>
  Stream.result(stream)

/** The schema of a schema's decoded values (what `it.prop` draws values of). */
export const typeSchema: typeof Schema.toType = Schema.toType

/** The options of an `it.prop` property: `runs` draws from the seed `seed`. */
export const propRuns = (runs: number, seed: number) => ({ arbitrary: { runs, seed } })

/** A schema of `A` values, whatever its encoded form (what a union's member is taken as). */
export type SchemaOf<A> = Schema.Codec<A, unknown>

/** Decodes an unknown value with a schema, as an outcome (the value, or the parse failure). */
export const decodeOutcome: typeof Schema.decodeUnknownResult = Schema.decodeUnknownResult

/** The failure of reading a configuration. */
export type { ConfigError } from "effect/Config"

/** Provides the configuration `env` (a variable's name to its value) to an effect. */
export const withEnv = (env: Record<string, string>) =>
  Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromUnknown(env))

/** Encodes a value with a schema, as an outcome (the encoded form, or the parse failure). */
export const encodeOutcome: typeof Schema.encodeUnknownResult = Schema.encodeUnknownResult

/** The HTTP API modules: the contract, its middleware and its OpenAPI document. */
export * as HttpApi from "effect/http-api/HttpApi"
export * as HttpApiMiddleware from "effect/http-api/HttpApiMiddleware"
export * as OpenApi from "effect/http-api/OpenApi"

/** Runs an effect on the cause of a failure (interruptions and defects included), keeping the failure. */
export const tapCause = Effect.tapCause

/** Every typed failure the cause holds, in order. */
export const failuresOf = <E>(cause: Cause.Cause<E>): ReadonlyArray<E> =>
  cause.reasons.filter(Cause.isFailReason).map((reason) => reason.error)

/** A span as a spying tracer records it. */
export type RecordedSpan = Span

/** A tracer that keeps every span it makes in `spans`. */
export const recordSpans = (spans: Array<RecordedSpan>): Effect.Effect<Tracer.Tracer> => Effect.sync(() => spying(spans))

/** Runs `effect` with every log line, at every level, pushed to `lines` twice: as logfmt and as structured JSON. */
export const withFormattedLogs = <A, E, R>(lines: Array<string>, effect: Effect.Effect<A, E, R>) =>
  effect.pipe(
    Effect.provide(Logger.layer([
      Logger.make((options) => {
        lines.push(Logger.formatLogFmt.log(options))
        lines.push(JSON.stringify(Logger.formatStructured.log(options)))
      })
    ])),
    Effect.provideService(References.MinimumLogLevel, "All")
  )

/**
 * Advances virtual time by `total` in steps of `step`: Effect 4's `TestClock.adjust` lets a forked
 * program run once before it wakes the sleeps due (and follows the work each wake causes), so a
 * program that has not reached its first sleep yet needs the steps.
 */
export const advanceBy = (total: DurationInput, step: DurationInput = "1 second"): Effect.Effect<void> =>
  Effect.gen(function*() {
    const steps = Math.ceil(Duration.toMillis(Duration.fromInputUnsafe(total)) / Duration.toMillis(Duration.fromInputUnsafe(step)))
    for (let i = 0; i < steps; i++) yield* TestClock.adjust(step)
  })

/** Whether the cause holds a defect. */
export const died: <E>(cause: Cause.Cause<E>) => boolean = Cause.hasDies

/** How `captureLogs` writes the warning level at the start of a line. */
export const warningLabel = "Warn"

/** A schedule that never retries: one try. */
export const noRetry = Schedule.recurs(0)

/** Runs `effect` under a tracer that keeps every span it makes in `spans`. */
export const withSpans = <A, E, R>(spans: Array<RecordedSpan>, effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.flatMap(recordSpans(spans), (tracer) => Effect.withTracer(effect, tracer))

/** A test that runs on the live clock, whose effect may use a `Scope` (Effect 4's `it.live` provides one). */
export const scopedLive = it.live

/** The reference simulator on 127.0.0.1 (a child process), its address and account key; stopped with the scope. */
export const startSimulator = (): Effect.Effect<{ readonly baseUrl: string; readonly accountKey: string }, never, Scope.Scope> =>
  spawnSimulator()

/** The name of the span the HTTP client makes for a request of `method` (`HttpClient.SpanNameGenerator`). */
export const httpSpanName = (method: string): string => method

/** What the HTTP client's span records of the authorization header: nothing (no header is captured by default). */
export const spanAuthorization: string | undefined = undefined

/** A POST request to `url`, as the line's HTTP client builds it. */
export const postRequest = (url: string): HttpClientRequest.HttpClientRequest => HttpClientRequest.post(url)

/** A test simulator as reached (`SimInfo`) and as started (`SimOptions`, `simulate`'s flags), declared once in `shared/e2e.ts`. */
export type { SimInfo, SimOptions } from "../shared/e2e.js"

/** The reference simulator of a describe block, as a service of its layer (`simLayer`). */
export class Sim extends Context.Service<Sim, SimInfo>()("test/shared/Sim") {}

/**
 * The reference simulator on 127.0.0.1 (a child process) as `simulate` starts it with `options`'
 * flags (the same defaults: documented, 3 actions, asking nothing, 1 ms between frames, no
 * faults); its handshake time-out is its default (5 s). Stopped with the scope.
 */
export const startSimulatorIn = (options: SimOptions = {}): Effect.Effect<SimInfo, never, Scope.Scope> =>
  spawnSimulator(options)

/** The layer of `Sim`: a reference simulator started with `options` (`startSimulatorIn`), stopped with the layer. */
export const simLayer = (options: SimOptions = {}): Layer.Layer<Sim> => Layer.effect(Sim, startSimulatorIn(options))

/** Runs an effect, its success or its typed failure as an outcome. */
export const outcomeOf: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<Outcome<A, E>, never, R> = Effect.result

/** A layer made by an effect (Effect 3's `Layer.unwrapEffect`). */
export const unwrapLayer = Layer.unwrap

/** The tests of a `layer(...)` block whose layer excludes the test services. */
export type LayerMethods<R> = Vitest.MethodsNonLive<R>
