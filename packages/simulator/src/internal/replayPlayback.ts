/**
 * The playback of a replay (see `replay.ts`): each connection a client opens is served the run's
 * next recorded connection, its frames with their recorded delays (divided by `speed`), the
 * client's answers compared with the recorded ones, then its recorded end.
 */
import { Recording as Format } from "effect-agent-session-core"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import { InvalidRecording } from "effect-agent-session/Errors"
import type { ReplayServerOptions, Run, Runs, Sink } from "./replayRuns.js"

/** The playback of the runs of a replay. */
export const makePlayback = (options: ReplayServerOptions, runs: Runs) => {
  const { attachRun, errorOf, finish, invalid, mismatch, nextAnswer } = runs

  const delay = (ms: number): Effect.Effect<void> =>
    ms <= 0 || !Number.isFinite(options.speed) ? Effect.void : Effect.sleep(Duration.millis(ms / options.speed))

  /** Plays the run's next recorded connection on a sink. */
  const play = (run: Run, sink: Sink): Effect.Effect<void> =>
    Effect.gen(function*() {
      let connect: Format.Numbered | undefined
      while (connect === undefined) {
        const next = run.reader.take()
        if (next._tag === "Invalid") {
          finish(run, Exit.fail(invalid(next.line, next.reason)))
          return sink.refuse(500, `replay: ${next.reason}`)
        }
        if (next._tag === "Done" || next.entry.type === "end") {
          finish(run, Exit.void)
          return sink.refuse(410, "replay: the recording has no more connections")
        }
        if (next.entry.type === "connect") connect = next
      }
      run.connections += 1
      const conn = connect.entry.type === "connect" ? connect.entry.conn : 0
      let at = connect.entry.t
      let opened = false
      while (true) {
        const next = run.reader.take()
        if (next._tag === "Invalid") {
          finish(run, Exit.fail(invalid(next.line, next.reason)))
          return opened ? sink.close(1011, "replay: the recording is not valid") : sink.refuse(500, "replay: the recording is not valid")
        }
        if (next._tag === "Done") {
          finish(run, Exit.fail(invalid(next.line, "the recording ends before its connection closed")))
          return opened ? sink.close(1011, "replay: the recording ends here") : sink.reset()
        }
        const { entry, line } = next
        yield* delay(entry.t - at)
        at = Math.max(at, entry.t)
        // An answer the recorded connection never holds (checked before its last line too).
        const unrecorded = Format.checkUnrecorded(entry, line, conn, run.reader.peek(), run.pending)
        if (unrecorded !== undefined) {
          const failure = errorOf(unrecorded)
          finish(run, Exit.fail(failure))
          return sink.close(1008, `replay: ${failure.message}`)
        }
        switch (entry.type) {
          case "open":
            if (!(yield* sink.accept())) return
            opened = true
            break
          case "frame":
            run.frames += 1
            sink.send(entry)
            break
          case "too-large":
            sink.tooLarge(entry.size)
            break
          case "alive":
            sink.alive()
            break
          case "answer": {
            const given = yield* Effect.timeoutTo(nextAnswer(run), {
              duration: options.answerTimeout,
              onSuccess: Option.some,
              onTimeout: Option.none
            })
            const expected = JSON.stringify(entry.data)
            const failure = Option.match(given, {
              onNone: () =>
                mismatch(
                  "answer",
                  line,
                  expected,
                  `no answer within ${Duration.format(options.answerTimeout)}`
                ),
              onSome: (data) => {
                const difference = Format.difference(entry.data, data)
                return difference.length === 0 ? undefined : mismatch("answer", line, expected, JSON.stringify(data), difference)
              }
            })
            if (failure !== undefined) {
              finish(run, Exit.fail(failure))
              return sink.close(1008, `replay: ${failure.message}`)
            }
            run.answers += 1
            break
          }
          case "close":
            return yield* end(run, sink, entry, line)
          default:
            finish(run, Exit.fail(invalid(line, `a ${entry.type} line before connection ${conn} closed`)))
            return sink.drop()
        }
      }
    })

  /** Ends a connection as the recorded one ended; the run ends after the last one. */
  const end = (run: Run, sink: Sink, close: Format.CloseEntry, line: number): Effect.Effect<void> =>
    Effect.gen(function*() {
      const last = run.reader.peek()
      const how = Format.serverEndOf(close)
      const holds = how._tag === "Hang" || how._tag === "TooLarge" || how._tag === "AwaitClient"
      // Held for the client to end it: an answer it sends meanwhile was never recorded.
      const unrecorded = holds
        ? Effect.flatMap(nextAnswer(run), (data) =>
          Effect.sync(() => {
            const failure = errorOf(Format.unrecordedAnswer(line, close.conn, data))
            finish(run, Exit.fail(failure))
            sink.close(1008, `replay: ${failure.message}`)
          }))
        : Effect.never
      if (!holds && (last._tag === "Done" || (last._tag === "Entry" && last.entry.type === "end"))) finish(run, Exit.void)
      const hold = Effect.timeout(Effect.raceFirst(sink.gone, unrecorded), options.holdTimeout).pipe(Effect.ignore)
      switch (how._tag) {
        case "Refuse":
          return sink.refuse(how.status, how.reason)
        case "Reset":
          return sink.reset()
        case "Hang":
          yield* hold
          return sink.reset()
        case "Close":
          return sink.close(how.code, how.reason)
        case "Drop":
          return sink.drop()
        case "EndStream":
          return sink.endStream()
        case "TooLarge":
          sink.tooLarge(how.size)
          yield* hold
          return sink.drop()
        case "AwaitClient":
          yield* hold
          return sink.drop()
      }
    }).pipe(Effect.ensuring(Effect.sync(() => {
      // The last recorded connection held: the run ends once the client went (if nothing failed it).
      const last = run.reader.peek()
      if (last._tag === "Done" || (last._tag === "Entry" && last.entry.type === "end")) finish(run, Exit.void)
    })))

  /** Starts the playback of a new connection, superseding one still playing. */
  const serve = (sink: Sink) => {
    const latest = runs.latest()
    const run = latest === undefined ? attachRun() : latest
    if (run === undefined) return sink.refuse(404, "replay: create the recorded session first")
    if (run instanceof InvalidRecording) return sink.refuse(500, `replay: ${run.message}`)
    if (run.finished) {
      // 410: the client stops (HandshakeRejected), with why in the reason.
      return sink.refuse(
        410,
        run.failure === undefined ? "replay: the recorded session has ended" : `replay: ${run.failure.message}`
      )
    }
    if (run.phase !== "events") return sink.refuse(404, "replay: create the recorded session first")
    const previous = run.playing
    const previousSink = run.sink
    run.sink = sink
    run.playing = options.runFork(
      Effect.zipRight(
        previous === undefined ? Effect.void : Fiber.interrupt(previous),
        Effect.zipRight(
          // A newer connection supersedes the one still playing, which is closed (4000).
          Effect.sync(() => previousSink?.close(4000, "superseded by a newer connection")),
          Effect.raceFirst(play(run, sink), sink.gone)
        )
      )
    )
  }

  return { serve } as const
}
