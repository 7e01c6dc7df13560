/**
 * The runs of a replay (see `replay.ts`): the settings, the run over the file (one replayed
 * session), what serves one of its connections (a `Sink`), and the ledger of runs: which is the
 * latest, how one starts and ends, the client's answers waiting for the playback, the result.
 */
import { Recording as Format } from "effect-agent-session-core"
import { FileSource } from "effect-agent-session-shell"
import * as Fs from "node:fs"
import * as Deferred from "effect/Deferred"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import { InvalidRecording, type ReplayError, ReplayMismatch } from "effect-agent-session/Errors"
import type { SessionInfo } from "effect-agent-session/Session"
import type * as Body from "./body.js"
import type { RunFork } from "./transport.js"

/** The settings of a replay server. */
export interface ReplayServerOptions {
  readonly path: string
  readonly header: Format.Header
  readonly accountKey: string
  /** Recorded delays are divided by this (`Infinity`: none). */
  readonly speed: number
  readonly answerTimeout: Duration.Duration
  /** How long a connection the client is expected to end is held open at most. */
  readonly holdTimeout: Duration.Duration
  readonly maxLineLength?: number | undefined
  readonly runFork: RunFork
  readonly limits: Body.BodyLimits
  readonly maxClientFrameBytes: number
  /** Told of every run's end. */
  readonly onRunEnd: (exit: Exit.Exit<Report, ReplayError>) => void
}

/** What a run did. */
export interface Report {
  readonly sessionId: string
  readonly connections: number
  readonly frames: number
  readonly answers: number
}

/** How one connection is served: the same playback over a WebSocket or an SSE response. */
export interface Sink {
  /** Opens the connection (upgrade, or the SSE headers, or the message handshake); false when it cannot. */
  readonly accept: () => Effect.Effect<boolean>
  readonly refuse: (status: number, reason: string) => void
  readonly reset: () => void
  readonly send: (entry: Format.FrameEntry) => void
  readonly tooLarge: (size: number) => void
  readonly alive: () => void
  readonly close: (code: number, reason: string) => void
  readonly drop: () => void
  readonly endStream: () => void
  /** Resolves once the client went away. */
  readonly gone: Effect.Effect<void>
}

/** A run over the file: one replayed session. */
export class Run {
  phase: "create" | "events" = "create"
  session: SessionInfo | undefined = undefined
  connections = 0
  frames = 0
  answers = 0
  failure: ReplayError | undefined = undefined
  finished = false
  /** The client's answers not compared yet, oldest first (64 at most). */
  readonly pending = new Format.GivenAnswers(64)
  /** The create lines answered so far. */
  creates = 0
  waiter: (() => void) | undefined = undefined
  playing: Fiber.RuntimeFiber<void> | undefined = undefined
  sink: Sink | undefined = undefined
  constructor(readonly reader: Format.Reader, readonly result: Deferred.Deferred<Report, ReplayError>) {}
}

/** The runs of a replay of the recording at `options.path`. */
export const makeRuns = (options: ReplayServerOptions) => {
  const { header, path } = options
  const runs: Array<Run> = []
  let started = 0
  let latest: Run | undefined
  /** Those waiting for a run to start (`result` before any client came). */
  const starting: Array<() => void> = []

  const invalid = (line: number, reason: string) => new InvalidRecording({ path, line, reason })

  const finish = (run: Run, exit: Exit.Exit<void, ReplayError>) => {
    if (run.finished) return
    run.finished = true
    run.reader.close()
    if (Exit.isFailure(exit) && exit.cause._tag === "Fail") run.failure = exit.cause.error
    const ended = Exit.map(exit, (): Report => ({
      sessionId: header.sessionId,
      connections: run.connections,
      frames: run.frames,
      answers: run.answers
    }))
    Deferred.unsafeDone(run.result, ended)
    options.onRunEnd(ended)
  }

  const newRun = (): Run | InvalidRecording => {
    const opened = Format.Reader.open(FileSource.fromFile(path, Fs), options.maxLineLength ?? Format.defaultMaxLineLength)
    if (!("reader" in opened)) return invalid(opened.line, opened.reason)
    const previous = latest
    if (previous !== undefined && !previous.finished) {
      if (previous.playing !== undefined) options.runFork(Fiber.interrupt(previous.playing))
      finish(previous, Exit.fail(mismatch("create", 0, "the recorded session to end", "another create before it ended")))
    }
    const run = new Run(opened.reader, Deferred.unsafeMake(FiberId.none))
    runs.push(run)
    started += 1
    // Older runs are finished (above): only their readers are closed with the server.
    if (runs.length > 16) runs.shift()
    latest = run
    for (const wake of starting.splice(0)) wake()
    return run
  }

  const mismatch = (subject: "answer" | "create" | "connection", line: number, expected: string, actual: string, difference?: string) =>
    new ReplayMismatch({
      path,
      line,
      subject,
      expected,
      actual,
      difference: difference ?? `expected ${expected}, got ${actual}`
    })

  /** A problem of the core's replay rules as this edition's error. */
  const errorOf = (problem: Format.ReplayProblem): ReplayError =>
    problem._tag === "Invalid"
      ? invalid(problem.line, problem.reason)
      : mismatch(problem.subject, problem.line, problem.expected, problem.actual, problem.difference)

  /** A run for a recording without a create (of `attach`): it starts at the first connection. */
  const attachRun = (): Run | InvalidRecording | undefined => {
    const first = Format.Reader.open(FileSource.fromFile(path, Fs), options.maxLineLength ?? Format.defaultMaxLineLength)
    if (!("reader" in first)) return invalid(first.line, first.reason)
    const next = first.reader.peek()
    first.reader.close()
    if (next._tag === "Entry" && next.entry.type === "create") return undefined
    const run = newRun()
    if (run instanceof InvalidRecording) return run
    run.phase = "events"
    return run
  }

  // The client's answers, kept for the playback in order (64 at most).

  const answered = (data: Format.AnswerData) => {
    const run = latest
    if (run === undefined || run.finished) return
    if (!run.pending.give(data)) return
    run.waiter?.()
  }

  const nextAnswer = (run: Run): Effect.Effect<Format.AnswerData> =>
    Effect.async<Format.AnswerData>((resume) => {
      const take = () => {
        const data = run.pending.take()
        if (data === undefined) return false
        run.waiter = undefined
        resume(Effect.succeed(data))
        return true
      }
      if (take()) return
      run.waiter = () => void take()
      return Effect.sync(() => {
        run.waiter = undefined
      })
    })

  /** The latest run's result, once it ends (waiting for one to start). */
  const result: Effect.Effect<Report, ReplayError> = Effect.suspend(() => {
    const run = latest
    if (run !== undefined) return Deferred.await(run.result)
    return Effect.zipRight(
      Effect.async<void>((resume) => {
        const wake = () => resume(Effect.void)
        starting.push(wake)
        return Effect.sync(() => {
          const at = starting.indexOf(wake)
          if (at >= 0) starting.splice(at, 1)
        })
      }),
      Effect.suspend(() => (latest === undefined ? Effect.never : Deferred.await(latest.result)))
    )
  })

  return {
    /** The run started last, if any. */
    latest: (): Run | undefined => latest,
    /** The runs started so far. */
    started: (): number => started,
    invalid,
    mismatch,
    errorOf,
    finish,
    newRun,
    attachRun,
    answered,
    nextAnswer,
    result,
    /** Closes the readers of the runs kept (with the server). */
    closeReaders: (): void => {
      for (const run of runs) run.reader.close()
    }
  } as const
}

/** The runs of a replay. */
export type Runs = ReturnType<typeof makeRuns>
