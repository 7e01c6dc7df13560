/**
 * The simulator's replay of a recorded session: a real server on loopback that
 * serves a recording (`Recording.layer`, `effect-agent-session run --record`) to any client,
 * over WebSocket and Server-Sent Events, in the recorded dialect, with the recorded timing (or
 * `speed` times faster), reconnects included.
 *
 * - **Create.** `POST {sessionsPath}` (with the account key) is compared with the recorded create
 *   request and answered with the recorded response (or the recorded error status and body). A
 *   request that differs is a 400 whose message shows the difference, and the run fails with
 *   `ReplayMismatch`.
 * - **Connections.** Each connection a client opens (`{connectPath}` over WebSocket, with the
 *   dialect's handshake; `GET {sse.connectPath}` over SSE) is served as the next recorded one:
 *   refused, reset or held as it was if it never opened; else its frames, each after its recorded
 *   delay divided by `speed`, then its end: the recorded close code, an abrupt drop (1006), the
 *   end of the SSE response, or, when the client ended it (after `complete`, an idle time-out),
 *   held until the client closes (at most `holdTimeout`). A frame recorded over one transport is
 *   served over the other in the dialect's framing. A newer connection supersedes one still
 *   playing (closed with 4000). With the message handshake, the first message is checked before
 *   a recorded connection is used; a refusal recorded at the upgrade is then a close (1008, 1011).
 * - **Answers.** Where the recording has an answer, the client's (WebSocket frame or SSE
 *   `POST {sse.egressPath}`) must be the same, within `answerTimeout`, compared in the order
 *   given; an answer the recorded connection ends without is a mismatch too (seen when it arrives
 *   before the connection's last line, or while it is held for the client: at `speed: Infinity`
 *   one still in flight when the connection ends can be missed). Else the connection is closed
 *   with 1008 and a reason that says so, and the run fails with `ReplayMismatch`.
 * - **Checked.** Each line is checked as it is read: a status the server cannot write, a close
 *   code it may not send, a frame too large over `Recording.MAX_TOO_LARGE_SIZE` (16 MiB) fail the
 *   run with `InvalidRecording` naming the line; the server stays up.
 * - **The result.** `result` waits for the current run to end: its report, or the
 *   `ReplayMismatch` / `InvalidRecording` that ended it. Each create starts a new run (a
 *   recording without a create starts one at the first connection).
 * - **Streamed.** The file is read line by line as each run goes; a file that is not a
 *   recording fails `make` with `InvalidRecording`.
 *
 * @example
 * ```ts
 * import { Replay } from "effect-agent-session-simulator"
 * import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
 *
 * const program = Effect.gen(function*() {
 *   const replay = yield* Replay.make({ path: "session.jsonl", speed: 10 })
 *   yield* Effect.log(`replaying on ${replay.baseUrl} (key ${replay.accountKey})`)
 *   const report = yield* replay.result
 *   yield* Effect.log(`${report.frames} frames over ${report.connections} connection(s)`)
 * }).pipe(Effect.scoped)
 * ```
 *
 * @since 0.1.0
 */
import { Recording as Format } from "effect-agent-session-core"
import { FileSource } from "effect-agent-session-shell"
import * as Fs from "node:fs"
import * as Http from "node:http"
import type * as NodeStream from "node:stream"
import type * as HttpServerError from "@effect/platform/HttpServerError"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as FiberSet from "effect/FiberSet"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as PubSub from "effect/PubSub"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as Dialect from "effect-agent-session/Dialect"
import { InvalidRecording, type ReplayError } from "effect-agent-session/Errors"
import * as Listen from "./internal/listen.js"
import * as Internal from "./internal/replay.js"
import { defaultAccountKey, defaultLimits, isLoopback, type Service as SimulatorService } from "./Simulator.js"

/**
 * Options of {@link make}.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** The recording to serve. */
  readonly path: string
  /** The port; 0 (the default) picks a free one. */
  readonly port?: number | undefined
  /** The address to listen on. Default `127.0.0.1`. */
  readonly host?: string | undefined
  /**
   * The key clients must use (the recording holds none). Default, as for the simulator:
   * `sim-account-key` on loopback, a random key beyond it (read it from `Service.accountKey`).
   */
  readonly accountKey?: string | undefined
  /** Recorded delays are divided by this: 1 (the default) is the recorded timing; `Infinity` sends at once. */
  readonly speed?: number | undefined
  /** How long a recorded answer waits for the client's (wall-clock time). Default 30 s. */
  readonly answerTimeout?: Duration.DurationInput | undefined
  /** How long a connection the client ended when it was recorded is held open for it to end. Default 60 s. */
  readonly holdTimeout?: Duration.DurationInput | undefined
  /** The longest line read; a longer one is `InvalidRecording`. Default 16 Mi characters. */
  readonly maxLineLength?: number | undefined
}

/**
 * What a run served.
 *
 * @since 0.1.0
 * @category models
 */
export interface Report {
  readonly sessionId: string
  /** The recorded connections served. */
  readonly connections: number
  /** The frames sent. */
  readonly frames: number
  /** The answers received that matched the recording. */
  readonly answers: number
}

/**
 * A running replay.
 *
 * @since 0.1.0
 * @category models
 */
export interface Service extends Pick<SimulatorService, "baseUrl" | "wsUrl" | "port" | "accountKey"> {
  /** The recorded dialect, which the replay speaks. */
  readonly dialect: Dialect.Dialect
  /** The recording's header. */
  readonly header: Format.Header
  /** The current run's end: its report, or the error that ended it (waits for a run to start). */
  readonly result: Effect.Effect<Report, ReplayError>
  /** The runs started so far. */
  readonly runs: Effect.Effect<number>
  /**
   * The end of every run from now on, as it ends: its report, or the error that ended it (the
   * last 16 kept for a slow reader).
   */
  readonly ends: Stream.Stream<Either.Either<Report, ReplayError>>
}

/**
 * The replay as a service.
 *
 * @since 0.1.0
 * @category tags
 */
export class Replay extends Context.Tag("effect-agent-session/simulator/Replay")<Replay, Service>() {}

const hostForUrl = (host: string): string => (host.includes(":") ? `[${host}]` : host)

/**
 * Starts a replay server in the current scope (closed with it). Fails with `InvalidRecording`
 * when the file is not a recording (its header is read first), or `ServeError` when the port
 * cannot be bound.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  options: Options
): Effect.Effect<Service, InvalidRecording | HttpServerError.ServeError, Scope.Scope> =>
  Effect.gen(function*() {
    const { path } = options
    const opened = Format.Reader.open(FileSource.fromFile(path, Fs), options.maxLineLength ?? Format.defaultMaxLineLength)
    if (!("reader" in opened)) {
      return yield* Effect.fail(new InvalidRecording({ path, line: opened.line, reason: opened.reason }))
    }
    opened.reader.close()
    const header = opened.header
    const host = options.host ?? "127.0.0.1"
    const accountKey = Listen.accountKeyFor(host, options.accountKey, isLoopback, defaultAccountKey)
    const speed = options.speed !== undefined && options.speed > 0 ? options.speed : 1
    const runFork = yield* FiberSet.makeRuntime<never, unknown, unknown>()
    const ends = yield* PubSub.sliding<Exit.Exit<Report, ReplayError>>(16)
    const replay = Internal.make({
      onRunEnd: (exit) => void runFork(PubSub.publish(ends, exit)),
      path,
      header,
      accountKey,
      speed,
      answerTimeout: Duration.decode(options.answerTimeout ?? Duration.seconds(30)),
      holdTimeout: Duration.decode(options.holdTimeout ?? Duration.seconds(60)),
      maxLineLength: options.maxLineLength,
      runFork,
      limits: {
        maxBodyBytes: defaultLimits.maxBodyBytes,
        maxDrainBytes: defaultLimits.maxDrainBytes,
        bodyTimeoutMillis: Duration.toMillis(Duration.decode(defaultLimits.bodyTimeout)),
        maxDepth: defaultLimits.maxDepth
      },
      maxClientFrameBytes: defaultLimits.maxClientFrameBytes
    })
    const server = yield* Listen.scoped(() => Http.createServer())
    // The channels close first (upgraded sockets are not the server's to close).
    yield* Effect.addFinalizer(() => replay.close)
    const port = yield* Listen.listen(server, options.port ?? 0, host)
    server.on("request", replay.onRequest)
    server.on("upgrade", replay.onUpgrade)
    server.on("clientError", (_error: Error, socket: NodeStream.Duplex) => socket.destroy())
    const hostname = hostForUrl(host)
    return Replay.of({
      baseUrl: `http://${hostname}:${port}`,
      wsUrl: `ws://${hostname}:${port}`,
      port,
      accountKey,
      dialect: header.dialect,
      header,
      result: replay.result,
      runs: replay.runs,
      ends: Stream.map(Stream.fromPubSub(ends), (exit) =>
        Exit.match(exit, {
          onSuccess: Either.right,
          onFailure: (cause) =>
            Either.left(Option.getOrElse(
              Cause.failureOption(cause),
              (): ReplayError => new InvalidRecording({ path, line: 0, reason: "the run ended without a reason" })
            ))
        }))
    })
  })

/**
 * A replay server for the lifetime of the layer.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options): Layer.Layer<Replay, InvalidRecording | HttpServerError.ServeError> =>
  Layer.scoped(Replay, make(options))
