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
 * What to play next is the protocol core's (`Recording.MemoryReplay`, a step iterator shared with
 * the Effect 4 edition); what is here maps its steps to the engine, sleeps, schemas and errors.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
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
import { type AttemptOutcome, End, Fatal, type Hooks, type Io, Retry } from "../channel/transport.js"
import { Recording as Format } from "effect-agent-session-core"
import * as Fs from "node:fs"

/** Options of an in-memory replay. */
export interface ReplayOptions {
  readonly path: string
  /** How long a recorded answer waits for the application's (virtual time). Default 30 s. */
  readonly answerTimeout?: Duration.DurationInput | undefined
  /** Applied to the application's answers before they are compared (the recording's `redact`). */
  readonly redact?: ((entry: Format.Entry) => Format.Entry) | undefined
  /** The longest line read. Default 16 Mi characters. */
  readonly maxLineLength?: number | undefined
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

const invalid = (path: string, line: number, reason: string) => new InvalidRecording({ path, line, reason })

const isCreateSessionError = (error: AgentSessionError): error is CreateSessionError =>
  Format.createErrorTags.has(error._tag)
const isEventStreamError = (error: AgentSessionError): error is EventStreamError =>
  Format.eventChannelErrorTags.has(error._tag)

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
    const replay = Format.MemoryReplay.open({ path, fs: Fs, maxLineLength: options.maxLineLength, redact: options.redact })
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
        const answer = replay.create(Either.isRight(encoded) ? encoded.right : {}, secrets)
        switch (answer._tag) {
          case "NotRecorded":
            return Effect.succeed(fallbackSession)
          case "Unrecorded":
            // No create recorded here (a recording of `attach`): nothing to answer it with.
            return Effect.die(errorOf(path, answer.problem))
          case "Created": {
            const session = decodeSession(answer.session)
            if (Either.isRight(session)) return Effect.succeed(session.right)
            replay.notDecoded(answer)
            return Effect.succeed(fallbackSession)
          }
          case "CreateFailed": {
            const error = decodeError(answer.error)
            if (Either.isRight(error) && isCreateSessionError(error.right)) return Effect.fail(error.right)
            replay.notDecoded(answer)
            return Effect.succeed(fallbackSession)
          }
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

    /** The recorded end as the engine's attempt outcome (`undefined`: its error does not decode). */
    const outcomeOf = (
      recorded: Extract<Format.ReplayStep, { _tag: "End" }>["end"]
    ): AttemptOutcome | Exit.Exit<AttemptOutcome> | undefined => {
      switch (recorded._tag) {
        case "End":
          return End(recorded.reason)
        case "Fatal": {
          const error = decodeError(recorded.error)
          return Either.isRight(error) && isEventStreamError(error.right) ? Fatal(error.right, recorded.reason) : undefined
        }
        case "Retry":
          return Retry(recorded.cause)
        case "RetryConnectTimeout": {
          const error = decodeError(recorded.error)
          return Either.isRight(error) && error.right._tag === "ConnectTimeout" ? Retry(error.right) : undefined
        }
        case "Defect":
          return Exit.die(new Error("replayed defect"))
      }
    }

    /** Plays the pass's next recorded connection for one attempt of the engine, step by step. */
    const play = (pass: Format.ReplayPass, sessionId: string, hooks: Hooks): Effect.Effect<void> =>
      Effect.gen(function*() {
        // A replay that cannot go on ends the connection with a defect carrying the
        // `ReplayMismatch` / `InvalidRecording`: the application under test did what the
        // recording does not hold (as a stub layer dies on a call it does not implement), which
        // no production channel can meet, so no public error channel names it.
        const fail = (problem: Format.ReplayProblem) => Effect.sync(() => hooks.end(Exit.die(errorOf(path, problem))))
        const attempt = replay.attempt(pass, sessionId)
        if (Format.isReplayProblem(attempt)) return yield* fail(attempt)

        const answered = yield* Effect.makeLatch(false)
        const flowing = yield* Effect.makeLatch(true)
        const io: Io = {
          send: (_frame, data) =>
            Effect.sync(() => {
              attempt.answered(data)
              answered.unsafeOpen()
              return replay.written
            }),
          pause: () => flowing.unsafeClose(),
          resume: () => flowing.unsafeOpen(),
          abort: () => {}
        }
        hooks.attach(io)

        while (true) {
          const step = attempt.poll()
          switch (step._tag) {
            case "Sleep":
              yield* Effect.sleep(Duration.millis(step.millis))
              attempt.slept()
              break
            case "Open":
              hooks.open()
              break
            case "Text":
            case "Binary":
            case "NamedEvent":
              yield* flowing.await
              if (step._tag === "NamedEvent") hooks.namedEvent(step.event, step.data)
              else hooks.frame(step._tag === "Text" ? step.text : step.bytes)
              break
            case "TooLarge":
              hooks.tooLarge(step.size)
              break
            case "Alive":
              hooks.alive()
              break
            case "AwaitAnswer":
              answered.unsafeClose()
              if (!step.timeout) yield* answered.await
              else if (Option.isNone(yield* Effect.timeoutOption(answered.await, answerTimeout))) {
                attempt.noAnswer(Duration.format(answerTimeout))
              }
              break
            case "End": {
              const outcome = outcomeOf(step.end)
              if (outcome !== undefined) return yield* Effect.sync(() => hooks.end(outcome))
              attempt.notDecoded()
              break
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
        Effect.sync(() => {
          const recorded = replay.session()
          const session = recorded === undefined ? undefined : decodeSession(recorded)
          return session !== undefined && Either.isRight(session) ? session.right : fallbackSession
        }),
      eventStream
    }
  })
