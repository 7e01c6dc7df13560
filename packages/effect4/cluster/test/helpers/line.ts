/**
 * The names of Effect 4 that the cluster's tests written once for both cluster editions
 * (`shared/`, copied from `packages/cluster/test/shared/`) use where Effect 3 names the same thing
 * differently: this edition's test names (`test/helpers/line.ts`); the Effect 3 cluster's
 * `test/helpers/line.ts` exports the same names, bound to Effect 3.
 */
import * as ChildProcess from "node:child_process"
import * as Path from "node:path"
import * as Cause from "effect/Cause"
import type * as MessageStorage from "effect/cluster/MessageStorage"
import * as RunnerAddress from "effect/cluster/RunnerAddress"
import * as Runners from "effect/cluster/Runners"
import type * as ShardingConfig from "effect/cluster/ShardingConfig"
import type * as Snowflake from "effect/cluster/Snowflake"
import * as RpcSerialization from "effect/rpc/RpcSerialization"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Queue from "effect/Queue"
import * as References from "effect/References"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import * as Socket from "effect/socket/Socket"
import { SessionEvent as SessionEventModule, timeoutFail, type ReplyMailbox } from "../../src/internal/line.js"
import { freePort as freePortPromise, startServer } from "effect-agent-session-test-support/postgresServer"
import { readLines } from "../shared/fixtures/lines.js"
import type { LogLine } from "../shared/fixtures/logLine.js"

export { forkChild, scoped, TestClock, yieldNow } from "../../../test/helpers/line.js"

/** The SDK edition's modules the tests build values with. */
export type * as AgentSessions from "../../../src/AgentSessions.js"
export type * as Answer from "../../../src/Answer.js"
export * as EventStream from "../../../src/EventStream.js"
export * as Session from "../../../src/Session.js"
export type * as SessionEvent from "../../../src/SessionEvent.js"

/** Runs a scoped effect in `scope` (its finalizers run when `scope` closes). */
export const extendScope = (scope: Scope.Scope) => <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, Exclude<R, Scope.Scope>> =>
  Scope.provide(self, scope)

/** Takes what waits in a reply mailbox (waiting for one element when none does), and whether it has ended. */
export const takeAll = <A, E>(mailbox: ReplyMailbox<A, E>): Effect.Effect<readonly [ReadonlyArray<A>, boolean], E> =>
  Queue.takeAll(mailbox).pipe(
    Effect.map((taken): readonly [ReadonlyArray<A>, boolean] => [taken, false]),
    Effect.catchIf(Cause.isDone, () => Effect.succeed([[], true] as const))
  ) as Effect.Effect<readonly [ReadonlyArray<A>, boolean], E>

/** How many elements wait in a reply mailbox (0 once it has ended). */
export const sizeOf = <A, E>(mailbox: ReplyMailbox<A, E>): Effect.Effect<number> => Queue.size(mailbox)

/** Waits for a reply mailbox to end (polled: a test's wait). */
export const awaitEnd = <A, E>(mailbox: ReplyMailbox<A, E>): Effect.Effect<void, E> =>
  Effect.suspend(() => mailbox.state._tag === "Done" ? Effect.void : Effect.andThen(Effect.yieldNow, awaitEnd(mailbox)))

/**
 * A real PostgreSQL server started in the scope (`url`, `port`; `restart`: stopped, every
 * connection cut, and started again on the same port and data), stopped when the scope closes.
 */
export const startPostgres: Effect.Effect<
  { readonly url: string; readonly port: number; readonly restart: Effect.Effect<void, Error> },
  Error,
  Scope.Scope
> = Effect.map(
  Effect.acquireRelease(
    Effect.tryPromise({ try: startServer, catch: (error) => error instanceof Error ? error : new Error(String(error)) }),
    (server) => Effect.promise(server.stop)
  ),
  (server) => ({
    url: server.url,
    port: server.port,
    restart: Effect.tryPromise({ try: server.restart, catch: (error) => error instanceof Error ? error : new Error(String(error)) })
  })
)

/** A free loopback port. */
export const freePort: Effect.Effect<number> = Effect.promise(freePortPromise)

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
 * What the simulator of the cross-process tests gives them: its addresses and account key (for
 * the fixtures' environment), each session's script and answers, and the HTTP requests it received.
 */
export interface E2eSimulatorService {
  readonly baseUrl: string
  readonly wsUrl: string
  readonly accountKey: string
  readonly script: (sessionId: string) => Effect.Effect<ReadonlyArray<SessionEventModule.SessionEvent>>
  readonly answers: (sessionId: string) => Effect.Effect<ReadonlyArray<unknown>>
  readonly httpRequests: Effect.Effect<number>
}

/**
 * The simulator of the cross-process tests. The simulator is one implementation, on Effect 3: here
 * it runs as a process (`packages/cluster/test/fixtures/simulator.ts`, tsx from the repository's
 * root), asked over its stdin.
 */
export class E2eSimulator extends Context.Service<E2eSimulator, E2eSimulatorService>()("cluster/test/E2eSimulator") {}

const repositoryRoot = Path.resolve(import.meta.dirname, "..", "..", "..", "..", "..")
const decodeScript = Schema.decodeUnknownSync(Schema.Array(SessionEventModule.SessionEvent))

/** The layer of `E2eSimulator`: the simulator process with the scenario, killed with the layer. */
export const e2eSimulatorLayer = (scenario: E2eScenario): Layer.Layer<E2eSimulator> =>
  Layer.effect(
    E2eSimulator,
    Effect.gen(function*() {
      const child = yield* Effect.acquireRelease(
        Effect.sync(() =>
          ChildProcess.spawn(process.execPath, ["--import", "tsx", Path.join("packages", "cluster", "test", "fixtures", "simulator.ts")], {
            cwd: repositoryRoot,
            env: {
              ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("AGENT_SESSION_"))),
              SCENARIO: JSON.stringify(scenario)
            },
            stdio: ["pipe", "pipe", "pipe"]
          })
        ),
        (child) =>
          Effect.promise(() =>
            new Promise<void>((resolve) => {
              if (child.exitCode !== null || child.signalCode !== null) return resolve()
              child.once("exit", () => resolve())
              child.kill("SIGKILL")
            })
          )
      )
      let stderr = ""
      child.stderr.on("data", (chunk: Buffer) => {
        stderr = (stderr + chunk.toString("utf8")).slice(-20_000)
      })
      const out = readLines(child.stdout)
      const listening = JSON.parse(
        yield* out.nextLine((line) => line.includes(`"type":"listening"`)).pipe(
          timeoutFail("120 seconds", () => new Error(`the simulator did not start: ${stderr}`)),
          Effect.orDie
        )
      ) as { readonly baseUrl: string; readonly wsUrl: string; readonly accountKey: string }
      let asked = 0
      const ask = (question: string): Effect.Effect<unknown> =>
        Effect.suspend(() => {
          const n = ++asked
          child.stdin.write(`${n} ${question}\n`)
          return out.nextLine((line) => line.startsWith(`{"type":"reply","n":${n},`)).pipe(
            Effect.map((line) => (JSON.parse(line) as { readonly value: unknown }).value)
          )
        })
      return E2eSimulator.of({
        ...listening,
        script: (sessionId) => Effect.map(ask(`script ${sessionId}`), decodeScript),
        answers: (sessionId) => Effect.map(ask(`answers ${sessionId}`), (value) => value as ReadonlyArray<unknown>),
        httpRequests: Effect.map(ask("httpRequests"), Number)
      })
    })
  )

/** How the cross-process tests start a fixture of this edition (`processLine.ts`). */
export { fixtureCommand } from "./processLine.js"

/** The SDK's Node layer (`AgentSessions`, `AgentApi`, ...), for the cluster's runners in the tests. */
export * as NodeAgentSessions from "../../../src/NodeAgentSessions.js"

/** Runs an effect with the configuration read from `env` (a map of variables) instead of the environment. */
export { withEnv } from "../../../test/helpers/line.js"

/** Runs an effect with only its error logs (and worse) written. */
export const errorLogsOnly = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.provideService(self, References.MinimumLogLevel, "Error")

/** The cluster's errors, a runner's registration and the message ids' generator. */
export * as ClusterError from "effect/cluster/ClusterError"
export * as Runner from "effect/cluster/Runner"
export * as Snowflake from "effect/cluster/Snowflake"
export type { RunnerAddress } from "effect/cluster/RunnerAddress"

/** A runner's address. */
export const runnerAddress = (host: string, port: number): RunnerAddress.RunnerAddress => RunnerAddress.make(host, port)

/**
 * The cluster's `Runners` over the given transport (`send`, `notify`, `ping`, `onRunnerUnavailable`),
 * as a layer; messages encoded as JSON where the transport would serialize them.
 */
export const runnersLayer = (
  options: Omit<Runners.Runners["Service"], "sendLocal" | "notifyLocal">
): Layer.Layer<Runners.Runners, never, MessageStorage.MessageStorage | Snowflake.Generator | ShardingConfig.ShardingConfig> =>
  Layer.effect(Runners.Runners, Runners.make({ ...options, codecFor: RpcSerialization.json.codecFor }))

/** A log line as a test keeps it (written once for both lines). */
export type { LogLine }

/** A layer whose logger (in place of the default ones) hands every log line to `push`. */
export const captureLogLines = (push: (line: LogLine) => void): Layer.Layer<never> =>
  Logger.layer([
    Logger.make(({ cause, fiber, logLevel, message }) => {
      push({
        level: logLevel.toUpperCase(),
        message: (Array.isArray(message) ? message : [message]).map(String).join(" "),
        annotations: JSON.stringify(fiber.getRef(References.CurrentLogAnnotations)),
        withCause: cause.reasons.length > 0
      })
    })
  ])

/** Runs an effect with every log line written, at every level. */
export const allLogs = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.provideService(self, References.MinimumLogLevel, "All")

/** `Effect.callback`: an effect completed by a callback (`resume`), with an optional finalizer on interruption. */
export { callback } from "./processLine.js"

/** Echoes every chunk a socket reads back to it, handing each chunk's length to `onChunk`, until the socket ends. */
export const echoEach = (socket: Socket.Socket, onChunk: (bytes: number) => void) =>
  Effect.gen(function*() {
    const reader = yield* socket.reader
    const writer = yield* socket.writer
    while (true) {
      const chunks = yield* reader.pull
      for (const chunk of chunks) onChunk(chunk.length)
      yield* writer.writeAll(chunks)
    }
  })

/** Whether an error is this line's socket error for a connection that failed to open. */
export const isSocketOpenError = (error: unknown): boolean =>
  error instanceof Socket.SocketError && error.reason._tag === "SocketOpenError"

/** The serialization this line's runners speak (`NodeClusterSessions`), for a test's own dialer. */
export { runnerSerialization } from "./processLine.js"

/** A layer whose logger (in place of the default ones) hands every log line's whole text (message, annotations, cause) to `push`. */
export const captureLogText = (push: (text: string) => void): Layer.Layer<never> =>
  Logger.layer([
    Logger.make(({ cause, fiber, message }) => {
      push(JSON.stringify({ message, annotations: fiber.getRef(References.CurrentLogAnnotations) }) + Cause.pretty(cause))
    })
  ])
