/**
 * The names of Effect 3 that the tests written once for both editions (`test/shared/`) use where
 * Effect 4 names the same thing differently. The Effect 4 edition's `test/helpers/line.ts` exports
 * the same names, bound to Effect 4: a shared test imports them from here (`../helpers/line.js`),
 * never from the line's own modules.
 */
import { assert, it, type Vitest } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Chunk from "effect/Chunk"
import * as Context from "effect/Context"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Duration from "effect/Duration"
import * as Exit from "effect/Exit"
import type * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"
import type * as Tracer from "effect/Tracer"
import * as HttpClientError from "@effect/platform/HttpClientError"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as Socket from "@effect/platform/Socket"
import * as Dialect from "../../src/Dialect.js"
import type { SimInfo, SimOptions } from "../shared/e2e.js"
import { capture, spying } from "./sdk.js"

/** Written once with the child programs' names (`programLine.ts`, which loads no vitest). */
export { changesOf, spacedRetries } from "./programLine.js"

export * as HttpClient from "@effect/platform/HttpClient"
export type * as HttpClientRequest from "@effect/platform/HttpClientRequest"
export * as HttpClientResponse from "@effect/platform/HttpClientResponse"
export type * as Socket from "@effect/platform/Socket"
export { TestClock }

/** A test whose effect may use a `Scope`, closed when it ends (Effect 4's `it.effect` provides one). */
export const scoped = it.scoped

/** Runs an effect in a fiber of its own, a child of the current one. */
export const forkChild = Effect.fork

/** The fiber's exit when it is done, else `undefined` (it does not wait). */
export const pollNow = <A, E>(fiber: Fiber.RuntimeFiber<A, E>): Exit.Exit<A, E> | undefined => fiber.unsafePoll() ?? undefined

/** The success type of an effect. */
export type Success<T extends Effect.Effect<unknown, unknown, unknown>> = Effect.Effect.Success<T>

/** Lets the other fibers run once. */
export const yieldNow = (): Effect.Effect<void> => Effect.yieldNow()

/** The cause's first typed failure, if it has one. */
export const failureOf: <E>(cause: Cause.Cause<E>) => Option.Option<E> = Cause.failureOption

/** Whether the cause holds an interruption. */
export const interrupted: <E>(cause: Cause.Cause<E>) => boolean = Cause.isInterrupted

/** Whether the cause holds interruptions only. */
export const interruptedOnly: <E>(cause: Cause.Cause<E>) => boolean = Cause.isInterruptedOnly

/** Whether a log line's level is the warning level. */
export const isWarning = (level: LogLevel.LogLevel): boolean => level._tag === "Warning"

/** A layer that makes `logger` the only logger. */
export const loggerLayer = <Output>(logger: Logger.Logger<unknown, Output>): Layer.Layer<never> =>
  Logger.replace(Logger.defaultLogger, logger)

/** The typed failure an exit ends with; the test fails when it succeeded or died. */
export const typedFailure = <A, E>(exit: Exit.Exit<A, E>): E => {
  const failure = Exit.isFailure(exit) ? Cause.failureOption(exit.cause) : Option.none()
  return Option.isSome(failure) ? failure.value : assert.fail(`expected a typed failure, got ${String(exit)}`)
}

/** What a duration may be given as. */
export type DurationInput = Duration.DurationInput

/** An element of a stream that may fail, as collected: the element, or the failure it ended with. */
export type Outcome<A, E> = Either.Either<A, E>

/** The element an outcome holds; `undefined` for a failure. */
export const successOf = <A, E>(outcome: Outcome<A, E>): A | undefined =>
  Either.isRight(outcome) ? outcome.right : undefined

/** The failure an outcome holds; `undefined` for an element. */
export const failureIn = <A, E>(outcome: Outcome<A, E>): E | undefined =>
  Either.isLeft(outcome) ? outcome.left : undefined

/** A fiber forked by a test. */
export type Running<A, E = never> = Fiber.RuntimeFiber<A, E>

/** Forks a fiber that collects every element of `stream`, and the failure it ends with. */
export const collectOutcomes = <A, E>(
  stream: Stream.Stream<A, E>
): Effect.Effect<Running<ReadonlyArray<Outcome<A, E>>>, never, Scope.Scope> =>
  Effect.fork(Stream.runCollect(Stream.either(stream)).pipe(Effect.map(Chunk.toReadonlyArray)))

/** A deterministic schedule: 250 ms, 500 ms, 1 s, ... at most `n` retries. */
export const fast = (n: number) =>
  Schedule.exponential(Duration.millis(250), 2).pipe(Schedule.intersect(Schedule.recurs(n)))

/** Every log line (level, message and annotations) pushed to `lines`, as the only logger. */
export const captureLogs = (lines: Array<string>): Layer.Layer<never> =>
  Logger.replace(
    Logger.defaultLogger,
    Logger.make(({ annotations, logLevel, message }) => {
      lines.push(`${logLevel.label} ${String(message)} ${JSON.stringify(Object.fromEntries(annotations))}`)
    })
  )

/** Runs `effect` with every log line, at every level, captured into `lines`. */
export const withLogs = <A, E, R>(lines: Array<string>, effect: Effect.Effect<A, E, R>) =>
  effect.pipe(Effect.provide(captureLogs(lines)), Logger.withMinimumLogLevel(LogLevel.All))

/** A transport failure of `request` (nothing answered), caused by `cause`. */
export const transportFailure = (request: HttpClientRequest.HttpClientRequest, cause: Error) =>
  new HttpClientError.RequestError({ request, reason: "Transport", cause })

/** The client's sockets, made by `make`: the layer of the WebSocket constructor. */
export const webSocketConstructor = (
  make: (url: string) => globalThis.WebSocket
): Layer.Layer<Socket.WebSocketConstructor> => Layer.succeed(Socket.WebSocketConstructor, make)

/** The stream's elements, and the failure it ends with, as outcomes (it then ends). */
export const outcomes = <A, E, R>(stream: Stream.Stream<A, E, R>): Stream.Stream<Outcome<A, E>, never, R> =>
  Stream.either(stream)

/** The schema of a schema's decoded values (what `it.prop` draws values of). */
export const typeSchema: typeof Schema.typeSchema = Schema.typeSchema

/** The options of an `it.prop` property: `runs` draws from the seed `seed`. */
export const propRuns = (runs: number, seed: number) => ({ fastCheck: { numRuns: runs, seed } })

/** A schema of `A` values, whatever its encoded form (what a union's member is taken as). */
export type SchemaOf<A> = Schema.Schema<A, unknown>

/** Decodes an unknown value with a schema, as an outcome (the value, or the parse failure). */
export const decodeOutcome: typeof Schema.decodeUnknownEither = Schema.decodeUnknownEither

/** The failure of reading a configuration. */
export type { ConfigError } from "effect/ConfigError"

/** Provides the configuration `env` (a variable's name to its value) to an effect. */
export const withEnv = (env: Record<string, string>) =>
  Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env))))

/** Encodes a value with a schema, as an outcome (the encoded form, or the parse failure). */
export const encodeOutcome: typeof Schema.encodeUnknownEither = Schema.encodeUnknownEither

/** The HTTP API modules: the contract, its middleware and its OpenAPI document. */
export * as HttpApi from "@effect/platform/HttpApi"
export * as HttpApiMiddleware from "@effect/platform/HttpApiMiddleware"
export * as OpenApi from "@effect/platform/OpenApi"

/** Runs an effect on the cause of a failure (interruptions and defects included), keeping the failure. */
export const tapCause = Effect.tapErrorCause

/** Every typed failure the cause holds, in order. */
export const failuresOf = <E>(cause: Cause.Cause<E>): ReadonlyArray<E> => Chunk.toReadonlyArray(Cause.failures(cause))

/** A span as a spying tracer records it. */
export type RecordedSpan = Tracer.Span

/** A tracer, over the current one, that keeps every span it makes in `spans`. */
export const recordSpans: (spans: Array<RecordedSpan>) => Effect.Effect<Tracer.Tracer> = spying

/** Runs `effect` with every log line, at every level, pushed to `lines` twice: as logfmt and as structured JSON. */
export const withFormattedLogs = <A, E, R>(lines: Array<string>, effect: Effect.Effect<A, E, R>) =>
  effect.pipe(Effect.provide(Logger.replace(Logger.defaultLogger, capture(lines))), Logger.withMinimumLogLevel(LogLevel.All))

/**
 * Advances virtual time by `total`, waking every sleep due on the way (Effect 3's `adjust` does so
 * at once; `step` is how Effect 4's edition advances).
 */
export const advanceBy = (total: DurationInput, _step?: DurationInput): Effect.Effect<void> => TestClock.adjust(total)

/** Whether the cause holds a defect. */
export const died: <E>(cause: Cause.Cause<E>) => boolean = Cause.isDie

/** How `captureLogs` writes the warning level at the start of a line. */
export const warningLabel = "WARN"

/** A schedule that never retries: one try. */
export const noRetry = Schedule.stop

/** Runs `effect` under a tracer that keeps every span it makes in `spans`. */
export const withSpans = <A, E, R>(spans: Array<RecordedSpan>, effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.flatMap(recordSpans(spans), (tracer) => Effect.withTracer(effect, tracer))

/** A test that runs on the live clock, whose effect may use a `Scope` (Effect 4's `it.live` provides one). */
export const scopedLive = it.scopedLive

/**
 * The reference simulator on 127.0.0.1 (in this process), its address and account key; stopped with
 * the scope. Imported when first started, so that the tests that never start one do not load it.
 */
export const startSimulator = (): Effect.Effect<{ readonly baseUrl: string; readonly accountKey: string }, never, Scope.Scope> =>
  Effect.flatMap(
    Effect.promise(() => import("effect-agent-session-simulator/Simulator")),
    (Simulator) => Effect.orDie(Simulator.make())
  )

/** The name of the span the HTTP client makes for a request of `method`. */
export const httpSpanName = (method: string): string => `http.client ${method}`

/** What the HTTP client's span records of the authorization header: captured, and redacted. */
export const spanAuthorization: string | undefined = "<redacted>"

/** A POST request to `url`, as the line's HTTP client builds it. */
export const postRequest = (url: string): HttpClientRequest.HttpClientRequest => HttpClientRequest.post(url)

/** A test simulator as reached (`SimInfo`) and as started (`SimOptions`, `simulate`'s flags), declared once in `shared/e2e.ts`. */
export type { SimInfo, SimOptions } from "../shared/e2e.js"

/** The reference simulator of a describe block, as a service of its layer (`simLayer`). */
export class Sim extends Context.Tag("test/shared/Sim")<Sim, SimInfo>() {}

/**
 * The reference simulator on 127.0.0.1 (in this process) as `simulate` starts it with `options`'
 * flags (the same defaults: documented, 3 actions, asking nothing, 1 ms between frames, no
 * faults); its handshake time-out is its default (5 s). Stopped with the scope.
 */
export const startSimulatorIn = (options: SimOptions = {}): Effect.Effect<SimInfo, never, Scope.Scope> =>
  Effect.gen(function*() {
    const Simulator = yield* Effect.promise(() => import("effect-agent-session-simulator/Simulator"))
    const Simulate = yield* Effect.promise(() => import("effect-agent-session-cli/Simulate"))
    const faults = yield* Effect.orDieWith(Simulate.parseFaults(options.faults ?? []), (message) => new Error(message))
    const dialect = options.dialect ?? "documented"
    const sim = yield* Effect.orDie(Simulator.make({
      port: 0,
      dialect: Dialect.fromName(dialect),
      scenario: {
        actions: options.actions ?? 3,
        ask: options.ask ?? "none",
        frameDelay: Duration.millis(options.frameDelay ?? 1)
      },
      faults
    }))
    return { baseUrl: sim.baseUrl, wsUrl: sim.wsUrl, accountKey: sim.accountKey, dialect }
  })

/** The layer of `Sim`: a reference simulator started with `options` (`startSimulatorIn`), stopped with the layer. */
export const simLayer = (options: SimOptions = {}): Layer.Layer<Sim> => Layer.scoped(Sim, startSimulatorIn(options))

/** Runs an effect, its success or its typed failure as an outcome. */
export const outcomeOf: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<Outcome<A, E>, never, R> = Effect.either

/** A layer made by an effect (Effect 4's `Layer.unwrap`). */
export const unwrapLayer = Layer.unwrapEffect

/** The tests of a `layer(...)` block whose layer excludes the test services. */
export type LayerMethods<R> = Vitest.MethodsNonLive<R, true>
