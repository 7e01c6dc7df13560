/**
 * Replaying a recording in memory, in the Effect 4 edition: an `AgentApi` whose
 * `createSession` answers what was recorded, and an `EventStream` whose connections are the
 * edition's real engine over a transport that plays the recorded connections, frame by frame,
 * each after its recorded delay (`Effect.sleep`: virtual time under the `TestClock`). The engine
 * decodes, buffers, answers, reconnects and ends exactly as it does over a socket.
 *
 * The format, its validation and the line reader are the protocol core's (`Recording`), shared
 * with the Effect 3 edition, and so is what to play next (`Recording.MemoryReplay` and its
 * `ReplayDriver`: it hands the engine the recorded lines through the transport's hooks and decodes
 * the recorded sessions and errors with this edition's schemas); what is here binds what it waits
 * on to sleeps, latches and the answer timeout, and its problems to errors.
 *
 * One pass over the file serves one session: `createSession` reads the create lines, the
 * connections read on from there (each attempt of the engine plays the next recorded
 * connection). The application's answers are compared with the recorded ones where the
 * recording has them; a difference, or no answer within `answerTimeout`, ends the replay with
 * `ReplayMismatch`.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Latch from "effect/Latch"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { Recording as Format } from "effect-agent-session-core"
import { FileSource } from "effect-agent-session-core/shell"
import * as Fs from "node:fs"
import type * as Answer from "../../Answer.js"
import * as Credentials from "../../Credentials.js"
import {
  AgentSessionError,
  type CreateSessionError,
  type EventStreamError,
  InvalidRecording,
  type ReplayError,
  ReplayMismatch
} from "../../Errors.js"
import type * as EventStream from "../../EventStream.js"
import { CreateSessionRequest, SessionId, SessionInfo } from "../../Session.js"
import type * as SessionEvent from "../../SessionEvent.js"
import { makeEngine } from "../channel/engine.js"
import { resolveSettings } from "../channel/settings.js"
import { Defect, type Hooks, type Io } from "../channel/transport.js"

/** Options of an in-memory replay: the file, and the core's (its longest line, `redact`) and the answer timeout. */
export interface ReplayOptions extends Pick<Format.MemoryReplayOptions, "maxLineLength" | "redact"> {
  readonly path: string
  /** How long a recorded answer waits for the application's (virtual time). Default 30 s. */
  readonly answerTimeout?: Duration.Input | undefined
}

/** What the test kit is told as the application goes. */
export interface Observer {
  readonly beforeCreate: Effect.Effect<void, CreateSessionError>
  readonly created: (request: CreateSessionRequest) => Effect.Effect<void>
  readonly connected: (sessionId: string) => Effect.Effect<void>
  readonly answered: (
    sessionId: string,
    request: SessionEvent.ExternalResourceRequested,
    answer: Answer.Answer
  ) => Effect.Effect<void>
}

/** The default `answerTimeout`: 30 s. */
export const defaultAnswerTimeout: Duration.Duration = Duration.seconds(30)

const decodeError = Schema.decodeUnknownResult(AgentSessionError)
const decodeSession = Schema.decodeUnknownResult(SessionInfo)
const encodeRequest = Schema.encodeResult(CreateSessionRequest)

/** What the core's replay decodes the recorded sessions and errors with. */
const decoders = Format.replayDecoders<SessionInfo, AgentSessionError, CreateSessionError, EventStreamError>({
  session: (session) => Result.getOrUndefined(decodeSession(session)),
  error: (error) => Result.getOrUndefined(decodeError(error))
})

const invalid = (path: string, line: number, reason: string) => new InvalidRecording({ path, line, reason })

/** A problem of the pass as this edition's error. */
const errorOf = (path: string, problem: Format.ReplayProblem): ReplayError => {
  if (problem._tag === "Invalid") return invalid(path, problem.line, problem.reason)
  const { _tag, ...mismatch } = problem
  return new ReplayMismatch({ ...mismatch, path })
}

/** The in-memory replay of one recording: the core's `MemoryReplay` bound to the engine. */
export const make = (options: ReplayOptions, observer: Observer) =>
  Effect.gen(function*() {
    const { path } = options
    const credentials = yield* Credentials.Credentials
    const answerTimeout = Duration.fromInputUnsafe(options.answerTimeout ?? defaultAnswerTimeout)
    // The header is checked when the layer is built: a foreign or damaged file fails it.
    const replay = Format.MemoryReplay.open({ source: FileSource.fromFile(path, Fs), maxLineLength: options.maxLineLength, redact: options.redact })
    if (!(replay instanceof Format.MemoryReplay)) return yield* Effect.fail(invalid(path, replay.line, replay.reason))
    yield* Effect.addFinalizer(() => Effect.sync(() => replay.close()))
    const header = replay.header

    const fallbackSession = new SessionInfo({
      session_id: SessionId.make(header.sessionId),
      status: Option.none(),
      start_time: Option.none(),
      end_time: Option.none(),
      error: Option.none()
    })

    /** The recorded answer to a create request, or the error it got. */
    const createSession = (request: CreateSessionRequest): Effect.Effect<SessionInfo, CreateSessionError> =>
      Effect.flatMap(credentials.secrets, (secrets) => {
        const encoded = encodeRequest(request)
        // Compared as the recorder would have written it, with this application's keys scrubbed.
        const answer = replay.answerCreate(Result.isSuccess(encoded) ? encoded.success : {}, secrets, decoders)
        switch (answer._tag) {
          case "Session":
            return Effect.succeed(answer.session ?? fallbackSession)
          case "Failed":
            return Effect.fail(answer.error)
          case "Unrecorded":
            // No create recorded here (a recording of `attach`): nothing to answer it with.
            return Effect.die(errorOf(path, answer.problem))
        }
      })

    const connect = (
      sessionId: string,
      connectOptions: EventStream.ConnectOptions = {}
    ): Effect.Effect<EventStream.Connection, never, Scope.Scope> =>
      Effect.gen(function*() {
        yield* observer.connected(sessionId)
        const pass = replay.connection()
        const engine = yield* makeEngine({
          sessionId,
          settings: resolveSettings({}, connectOptions, header.dialect),
          dialect: header.dialect,
          agent: connectOptions.agent,
          printableUrl: `replay:${path}`,
          framing: replay.framing,
          transport: (hooks) => Effect.asVoid(Effect.forkScoped(play(pass, sessionId, hooks)))
        }).pipe(Effect.provideService(Credentials.Credentials, credentials))
        const connection = engine.connection
        return {
          ...connection,
          respond: (request, answer) =>
            Effect.tap(connection.respond(request, answer), () => observer.answered(sessionId, request, answer))
        } satisfies EventStream.Connection
      })

    /** Plays the pass's next recorded connection for one attempt of the engine, step by step. */
    const play = (pass: Format.ReplayPass, sessionId: string, hooks: Hooks): Effect.Effect<void> =>
      Effect.gen(function*() {
        // A replay that cannot go on ends the connection with a defect carrying the
        // `ReplayMismatch` / `InvalidRecording`: the application under test did what the
        // recording does not hold (as a stub layer dies on a call it does not implement), which
        // no production channel can meet, so no public error channel names it.
        const fail = (problem: Format.ReplayProblem) => Effect.sync(() => hooks.end(Defect(errorOf(path, problem))))
        const driver = replay.drive(pass, sessionId, hooks, decoders)
        if (Format.isReplayProblem(driver)) return yield* fail(driver)

        const answered = yield* Latch.make(false)
        const flowing = yield* Latch.make(true)
        const io: Io = {
          send: (_frame, data) =>
            Effect.sync(() => {
              driver.answered(data)
              answered.openUnsafe()
              return replay.written
            }),
          pause: () => {
            flowing.closeUnsafe()
          },
          resume: () => {
            flowing.openUnsafe()
          },
          abort: () => {}
        }
        hooks.attach(io)

        while (true) {
          const step = driver.next()
          switch (step._tag) {
            case "Sleep":
              yield* Effect.sleep(Duration.millis(step.millis))
              driver.slept()
              break
            case "Frame":
              yield* flowing.await
              driver.deliver()
              break
            case "AwaitAnswer":
              answered.closeUnsafe()
              if (!step.timeout) yield* answered.await
              else if (Option.isNone(yield* Effect.timeoutOption(answered.await, answerTimeout))) {
                driver.noAnswer(Duration.format(answerTimeout))
              }
              break
            case "End": {
              const end = step.end
              return yield* Effect.sync(() => hooks.end(end))
            }
            case "Fail":
              return yield* fail(step.problem)
          }
        }
      })

    const eventStream: EventStream.Service = {
      connect: (sessionId, connectOptions) => connect(sessionId, connectOptions),
      events: (sessionId, connectOptions) =>
        Stream.unwrap(Effect.map(connect(sessionId, connectOptions), (connection) => connection.events))
    }

    return {
      header,
      createSession: (request: CreateSessionRequest) =>
        Effect.andThen(Effect.andThen(observer.beforeCreate, observer.created(request)), createSession(request)),
      getSession: (_sessionId: string): Effect.Effect<SessionInfo> =>
        Effect.sync(() => replay.recordedSession(decoders) ?? fallbackSession),
      eventStream
    }
  })
