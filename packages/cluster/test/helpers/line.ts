/**
 * The names of Effect 3 that the cluster's tests written once for both cluster editions
 * (`test/shared/`, copied to the Effect 4 edition's `cluster/test/shared/`) use where Effect 4
 * names the same thing differently; the Effect 4 cluster's `cluster/test/helpers/line.ts` exports
 * the same names, bound to Effect 4.
 */
import type * as MessageStorage from "@effect/cluster/MessageStorage"
import * as RunnerAddress from "@effect/cluster/RunnerAddress"
import * as Runners from "@effect/cluster/Runners"
import type * as ShardingConfig from "@effect/cluster/ShardingConfig"
import type * as Snowflake from "@effect/cluster/Snowflake"
import * as Socket from "@effect/platform/Socket"
import { it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Chunk from "effect/Chunk"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import * as Simulator from "effect-agent-session-simulator/Simulator"
import type { ReplyMailbox } from "../../src/internal/line.js"
import type { LogLine } from "../shared/fixtures/logLine.js"

/** The SDK edition's modules the tests build values with. */
export { type AgentSessions, type Answer, EventStream, Session, type SessionEvent } from "effect-agent-session"

/** Forks an effect as a child of the current fiber. */
export const forkChild = Effect.fork

/** Gives the scheduler a turn. */
export const yieldNow = (): Effect.Effect<void> => Effect.yieldNow()

/** Runs a scoped effect in `scope` (its finalizers run when `scope` closes). */
export const extendScope = (scope: Scope.Scope) => <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, Exclude<R, Scope.Scope>> =>
  Scope.extend(self, scope)

/** Takes what waits in a reply mailbox (waiting for one element when none does), and whether it has ended. */
export const takeAll = <A, E>(mailbox: ReplyMailbox<A, E>): Effect.Effect<readonly [ReadonlyArray<A>, boolean], E> =>
  Effect.map(mailbox.takeAll, ([chunk, done]) => [Chunk.toReadonlyArray(chunk), done] as const)

/** How many elements wait in a reply mailbox (-1 once it has ended). */
export const sizeOf = <A, E>(mailbox: ReplyMailbox<A, E>): Effect.Effect<number> =>
  Effect.map(mailbox.size, Option.getOrElse(() => -1))

/** Waits for a reply mailbox to end. */
export const awaitEnd = <A, E>(mailbox: ReplyMailbox<A, E>): Effect.Effect<void, E> => Effect.asVoid(mailbox.await)

/** The test clock. */
export * as TestClock from "effect/TestClock"

/** A test whose effect has a `Scope` (closed when the test ends). */
export const scoped = it.scoped

/** A real PostgreSQL server started in the scope (`url`, `port`), stopped when the scope closes. */
export { start as startPostgres } from "effect-agent-session-test-support/Postgres"

/** A free loopback port. */
export { freePort } from "effect-agent-session-test-support/Postgres"

/**
 * How the scenario of the cross-process tests' simulator is given: its scripted agent's actions,
 * what it asks and after how many actions, and the pause before each frame (milliseconds).
 */
export interface E2eScenario {
  readonly actions: number
  readonly ask: "permission" | "input" | "none"
  readonly askAfter?: number | undefined
  readonly frameDelay: number
}

/**
 * The simulator of the cross-process tests, as they reach it: its addresses and account key (for
 * the fixtures' environment), each session's script and answers, and the HTTP requests it received.
 * Here the simulator runs in the test's process (`effect-agent-session-simulator`).
 */
export { Simulator as E2eSimulator } from "effect-agent-session-simulator/Simulator"

/** What `E2eSimulator` gives. */
export type E2eSimulatorService = Simulator.Service

/** The layer of `E2eSimulator`: a simulator on a free loopback port with the scenario. */
export const e2eSimulatorLayer = (scenario: E2eScenario) =>
  Simulator.layer({ port: 0, scenario: { ...scenario, frameDelay: `${scenario.frameDelay} millis` } })

/** How the cross-process tests start a fixture of this edition (`processLine.ts`). */
export { fixtureCommand } from "./processLine.js"

/** The SDK's Node layer (`AgentSessions`, `AgentApi`, ...), for the cluster's runners in the tests. */
export { NodeAgentSessions } from "effect-agent-session"

/** Runs an effect with the configuration read from `env` (a map of variables) instead of the environment. */
export const withEnv = (env: Record<string, string>) => Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env))))

/** Runs an effect with only its error logs (and worse) written. */
export const errorLogsOnly = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> => Logger.withMinimumLogLevel(self, LogLevel.Error)

/** The cluster's errors, a runner's registration and the message ids' generator. */
export * as ClusterError from "@effect/cluster/ClusterError"
export * as Runner from "@effect/cluster/Runner"
export * as Snowflake from "@effect/cluster/Snowflake"
export type { RunnerAddress } from "@effect/cluster/RunnerAddress"

/** A runner's address. */
export const runnerAddress = (host: string, port: number): RunnerAddress.RunnerAddress => RunnerAddress.RunnerAddress.make({ host, port })

/** The cluster's `Runners` over the given transport (`send`, `notify`, `ping`, `onRunnerUnavailable`), as a layer. */
export const runnersLayer = (
  options: Omit<Runners.Runners["Type"], "sendLocal" | "notifyLocal">
): Layer.Layer<Runners.Runners, never, MessageStorage.MessageStorage | Snowflake.Generator | ShardingConfig.ShardingConfig> =>
  Layer.scoped(Runners.Runners, Runners.make(options))

/** A log line as a test keeps it (written once for both lines). */
export type { LogLine }

/** A layer whose logger (in place of the default one) hands every log line to `push`. */
export const captureLogLines = (push: (line: LogLine) => void): Layer.Layer<never> =>
  Logger.replace(
    Logger.defaultLogger,
    Logger.make(({ annotations, cause, logLevel, message }) => {
      push({
        level: logLevel.label,
        message: (Array.isArray(message) ? message : [message]).map(String).join(" "),
        annotations: JSON.stringify(Object.fromEntries(annotations)),
        withCause: !Cause.isEmpty(cause)
      })
    })
  )

/** Runs an effect with every log line written, at every level. */
export const allLogs = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> => Logger.withMinimumLogLevel(self, LogLevel.All)

/** `Effect.async`: an effect completed by a callback (`resume`), with an optional finalizer on interruption. */
export { callback } from "./processLine.js"

/** Echoes every chunk a socket reads back to it, handing each chunk's length to `onChunk`, until the socket ends. */
export const echoEach = (socket: Socket.Socket, onChunk: (bytes: number) => void): Effect.Effect<void, Socket.SocketError, Scope.Scope> =>
  Effect.gen(function*() {
    const write = yield* socket.writer
    yield* socket.runRaw((chunk) => {
      onChunk(chunk.length)
      return write(chunk)
    })
  })

/** Whether an error is this line's socket error for a connection that failed to open. */
export const isSocketOpenError = (error: unknown): boolean => error instanceof Socket.SocketGenericError && error.reason === "Open"

/** The serialization this line's runners speak (`NodeClusterSessions`), for a test's own dialer. */
export { runnerSerialization } from "./processLine.js"

/** A layer whose logger (in place of the default one) hands every log line's whole text (message, annotations, cause) to `push`. */
export const captureLogText = (push: (text: string) => void): Layer.Layer<never> =>
  Logger.replace(
    Logger.defaultLogger,
    Logger.make(({ annotations, cause, message }) => {
      push(JSON.stringify({ message, annotations: [...annotations] }) + Cause.pretty(cause))
    })
  )
