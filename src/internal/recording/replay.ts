/**
 * Replaying a recording in memory: an `AgentApi` whose `createSession` answers what
 * was recorded, and an `EventStream` whose connections are the SDK's real engine over a
 * transport that plays the recorded connections, frame by frame, each after its recorded delay
 * (`Effect.sleep`: virtual time under the `TestClock`). The engine decodes, buffers, answers,
 * reconnects and ends exactly as it does over a socket.
 *
 * One pass over the file serves one session: `createSession` reads the create lines, the
 * connections read on from there (each attempt of the engine plays the next recorded
 * connection). The application's answers are compared with the recorded ones where the
 * recording has them; a difference, or no answer within `answerTimeout`, ends the replay with
 * `ReplayMismatch`.
 *
 * What to play next is the protocol core's (`Recording.MemoryReplay` and its `ReplayDriver`, shared
 * with the Effect 4 edition: it hands the engine the recorded lines through the transport's hooks
 * and decodes the recorded sessions and errors with this edition's schemas); what is here binds
 * what it waits on to sleeps, latches and the answer timeout, and its problems to errors.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
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
import { Recording as Format } from "effect-agent-session-core"
import { FileSource } from "effect-agent-session-core/shell"
import * as Fs from "node:fs"

/** Options of an in-memory replay: the file, and the core's (its longest line, `redact`) and the answer timeout. */
export interface ReplayOptions extends Pick<Format.MemoryReplayOptions, "maxLineLength" | "redact"> {
  readonly path: string
  /** How long a recorded answer waits for the application's (virtual time). Default 30 s. */
  readonly answerTimeout?: Duration.DurationInput | undefined
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

const decodeError = Schema.decodeUnknownEither(AgentSessionError)
const decodeSession = Schema.decodeUnknownEither(SessionInfo)
const encodeRequest = Schema.encodeEither(CreateSessionRequest)

/** What the core's replay decodes the recorded sessions and errors with. */
const decoders = Format.replayDecoders<SessionInfo, AgentSessionError, CreateSessionError, EventStreamError>({
  session: (session) => Either.getOrUndefined(decodeSession(session)),
  error: (error) => Either.getOrUndefined(decodeError(error))
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
    const answerTimeout = Duration.decode(options.answerTimeout ?? defaultAnswerTimeout)
    // The header is checked when the layer is built: a foreign or damaged file fails it.
    const replay = Format.MemoryReplay.open({ source: FileSource.fromFile(path, Fs), maxLineLength: options.maxLineLength, redact: options.redact })
    if (!(replay instanceof Format.MemoryReplay)) return yield* Effect.fail(invalid(path, replay.line, replay.reason))
    yield* Effect.addFinalizer(() => Effect.sync(() => replay.close()))
    const header = replay.header

    const fallbackSession = SessionInfo.make({
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
        const answer = replay.answerCreate(Either.isRight(encoded) ? encoded.right : {}, secrets, decoders)
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
          settings: resolveSettings({}, connectOptions),
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

        const answered = yield* Effect.makeLatch(false)
        const flowing = yield* Effect.makeLatch(true)
        const io: Io = {
          send: (_frame, data) =>
            Effect.sync(() => {
              driver.answered(data)
              answered.unsafeOpen()
              return replay.written
            }),
          pause: () => flowing.unsafeClose(),
          resume: () => flowing.unsafeOpen(),
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
              answered.unsafeClose()
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
        Stream.unwrapScoped(Effect.map(connect(sessionId, connectOptions), (connection) => connection.events))
    }

    return {
      header,
      createSession: (request: CreateSessionRequest) =>
        Effect.zipRight(Effect.zipRight(observer.beforeCreate, observer.created(request)), createSession(request)),
      getSession: (_sessionId: string): Effect.Effect<SessionInfo> =>
        Effect.sync(() => replay.recordedSession(decoders) ?? fallbackSession),
      eventStream
    }
  })
