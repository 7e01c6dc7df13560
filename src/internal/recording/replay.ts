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
import { type AttemptOutcome, End, Fatal, type Hooks, type Io, Retry, type Transport } from "../channel/transport.js"
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

/** The in-memory replay of one recording. */
export const make = (options: ReplayOptions, observer: Observer) =>
  Effect.gen(function*() {
    const { path } = options
    const credentials = yield* Credentials.Credentials
    const maxLineLength = options.maxLineLength ?? Format.defaultMaxLineLength
    const answerTimeout = Duration.decode(options.answerTimeout ?? defaultAnswerTimeout)
    const readers = new Set<Format.Reader>()
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        for (const reader of readers) reader.close()
        readers.clear()
      })
    )

    const open = (): Either.Either<{ readonly reader: Format.Reader; readonly header: Format.Header }, InvalidRecording> => {
      const opened = Format.Reader.open(path, Fs, maxLineLength)
      if ("reader" in opened) {
        readers.add(opened.reader)
        return Either.right(opened)
      }
      return Either.left(invalid(path, opened.line, opened.reason))
    }

    // The header is checked when the layer is built: a foreign or damaged file fails it.
    const first = open()
    if (Either.isLeft(first)) return yield* Effect.fail(first.left)
    const header = first.right.header
    first.right.reader.close()
    readers.delete(first.right.reader)

    const fallbackSession = SessionInfo.make({
      session_id: SessionId.make(header.sessionId),
      status: Option.none(),
      start_time: Option.none(),
      end_time: Option.none(),
      error: Option.none()
    })

    let current: Format.ReplayPass | undefined

    const newPass = (): Format.ReplayPass => {
      const opened = open()
      return Either.isLeft(opened)
        ? new Format.ReplayPass(undefined, { _tag: "Invalid", line: opened.left.line, reason: opened.left.reason })
        : new Format.ReplayPass(opened.right.reader)
    }

    /** The recorded answer to a create request, or the error it got. */
    const createSession = (request: CreateSessionRequest): Effect.Effect<SessionInfo, CreateSessionError> =>
      Effect.flatMap(credentials.secrets, (secrets) => {
        const pass = current !== undefined && current.phase === "create" ? current : newPass()
        current = pass
        const encoded = encodeRequest(request)
        // Compared as the recorder would have written it, with this application's keys scrubbed.
        const answer = pass.create(Either.isRight(encoded) ? encoded.right : {}, secrets)
        switch (answer._tag) {
          case "NotRecorded":
            return Effect.succeed(fallbackSession)
          case "Unrecorded":
            // No create recorded here (a recording of `attach`): nothing to answer it with.
            return Effect.die(errorOf(path, answer.problem))
          case "Created": {
            const session = decodeSession(answer.session)
            if (Either.isRight(session)) {
              sessions.set(pass, session.right)
              return Effect.succeed(session.right)
            }
            pass.fail({ _tag: "Invalid", line: answer.line, reason: "created: the session is not valid" })
            return Effect.succeed(fallbackSession)
          }
          case "CreateFailed": {
            const error = decodeError(answer.error)
            if (Either.isRight(error) && isCreateSessionError(error.right)) return Effect.fail(error.right)
            pass.fail({ _tag: "Invalid", line: answer.line, reason: "create-failed: the error is not one a create can fail with" })
            pass.phase = "events"
            return Effect.succeed(fallbackSession)
          }
        }
      })

    /** The session each pass created (for `getSession`). */
    const sessions = new WeakMap<Format.ReplayPass, SessionInfo>()

    /** The pass a connection plays: the session created last, else a fresh one from the first connection. */
    const passFor = (): Format.ReplayPass => {
      if (current !== undefined && current.phase === "events") return current
      const pass = newPass()
      pass.phase = "events"
      current = pass
      return pass
    }

    const connect = (
      sessionId: string,
      connectOptions: EventStream.ConnectOptions = {}
    ): Effect.Effect<EventStream.Connection, never, Scope.Scope> =>
      Effect.gen(function*() {
        yield* observer.connected(sessionId)
        const pass = passFor()
        const engine = yield* makeEngine({
          sessionId,
          settings: resolveSettings({}, connectOptions),
          dialect: header.dialect,
          agent: connectOptions.agent,
          printableUrl: `replay:${path}`,
          framing: header.transport === "sse" ? "event-data" : header.dialect.framing,
          transport: transport(pass, sessionId)
        }).pipe(Effect.provideService(Credentials.Credentials, credentials))
        const connection = engine.connection
        return {
          ...connection,
          respond: (request, answer) =>
            Effect.tap(connection.respond(request, answer), () => observer.answered(sessionId, request, answer))
        } satisfies EventStream.Connection
      })

    /** Plays the pass's next recorded connection for each attempt of the engine. */
    const transport = (pass: Format.ReplayPass, sessionId: string): Transport => (hooks) =>
      Effect.asVoid(Effect.forkScoped(play(pass, sessionId, hooks)))

    /** The recorded end as the engine's attempt outcome. */
    const outcomeOf = (recorded: Format.RecordedEnd, line: number): AttemptOutcome | InvalidRecording => {
      switch (recorded._tag) {
        case "End":
          return End(recorded.reason)
        case "Fatal": {
          const error = decodeError(recorded.error)
          return Either.isRight(error) && isEventStreamError(error.right)
            ? Fatal(error.right, recorded.reason)
            : invalid(path, line, "close: the error is not one of the event channel's")
        }
        case "Retry":
          return Retry(recorded.cause)
        case "RetryConnectTimeout": {
          const error = decodeError(recorded.error)
          return Either.isRight(error) && error.right._tag === "ConnectTimeout"
            ? Retry(error.right)
            : invalid(path, line, "close: the error is not one an attempt is retried for")
        }
        case "AwaitClose":
        case "Defect":
          return invalid(path, line, "close: not an end of the attempt")
      }
    }

    const play = (pass: Format.ReplayPass, sessionId: string, hooks: Hooks): Effect.Effect<void> =>
      Effect.gen(function*() {
        const end = (outcome: AttemptOutcome) => Effect.sync(() => hooks.end(outcome))
        // A replay that cannot go on ends the connection with a defect carrying the
        // `ReplayMismatch` / `InvalidRecording`: the application under test did what the
        // recording does not hold (as a stub layer dies on a call it does not implement), which
        // no production channel can meet, so no public error channel names it.
        const fail = (error: ReplayError) => Effect.sync(() => hooks.end(Exit.die(error)))
        const connectAt = pass.nextConnection(sessionId, header.sessionId)
        if (Format.isReplayProblem(connectAt)) return yield* fail(errorOf(path, connectAt))

        const given = new Format.GivenAnswers()
        const answered = yield* Effect.makeLatch(false)
        const flowing = yield* Effect.makeLatch(true)
        const written = header.transport === "sse" ? "confirmed" as const : "written" as const
        const io: Io = {
          send: (_frame, data) =>
            Effect.sync(() => {
              given.give(data)
              answered.unsafeOpen()
              return written
            }),
          pause: () => flowing.unsafeClose(),
          resume: () => flowing.unsafeOpen(),
          abort: () => {}
        }
        hooks.attach(io)

        const nextAnswer: Effect.Effect<Format.AnswerData> = Effect.suspend(() => {
          const answer = given.take()
          if (answer !== undefined) return Effect.succeed(answer)
          answered.unsafeClose()
          return Effect.zipRight(answered.await, nextAnswer)
        })

        let at = connectAt.entry.t
        const conn = connectAt.entry.type === "connect" ? connectAt.entry.conn : 0
        while (true) {
          const next = pass.nextInConnection(conn)
          if (Format.isReplayProblem(next)) return yield* fail(errorOf(path, next))
          const { entry, line } = next
          if (entry.t > at) yield* Effect.sleep(Duration.millis(entry.t - at))
          at = Math.max(at, entry.t)
          const unrecorded = pass.unrecorded(entry, line, conn, given)
          if (unrecorded !== undefined) return yield* fail(errorOf(path, unrecorded))
          switch (entry.type) {
            case "open":
              hooks.open()
              break
            case "frame":
              yield* flowing.await
              if ("text" in entry) hooks.frame(entry.text)
              else if ("base64" in entry) hooks.frame(new Uint8Array(Buffer.from(entry.base64, "base64")))
              else hooks.namedEvent(entry.event, entry.data)
              break
            case "too-large":
              hooks.tooLarge(entry.size)
              break
            case "alive":
              hooks.alive()
              break
            case "answer": {
              const given = yield* Effect.timeoutTo(nextAnswer, {
                duration: answerTimeout,
                onSuccess: (answer): Format.AnswerData | undefined => redactAnswer(answer, entry),
                onTimeout: () => undefined
              })
              const problem = Format.checkAnswer(entry, line, given, Duration.format(answerTimeout))
              if (problem !== undefined) return yield* fail(errorOf(path, problem))
              // A write that failed when it was recorded fails the connection again here.
              if (typeof entry.result === "object" && entry.result.retry) {
                return yield* end(Retry(`answer not written: ${entry.result.failed}`))
              }
              break
            }
            case "close": {
              const recorded = Format.recordedEnd(entry, line)
              if (Format.isReplayProblem(recorded)) return yield* fail(errorOf(path, recorded))
              if (recorded._tag === "AwaitClose") {
                // The application closes it: an answer it gives until then was never recorded.
                const late = yield* nextAnswer
                return yield* fail(errorOf(path, Format.unrecordedAnswer(line, conn, late)))
              }
              if (recorded._tag === "Defect") return yield* Effect.sync(() => hooks.end(Exit.die(new Error("replayed defect"))))
              const outcome = outcomeOf(recorded, line)
              if (outcome instanceof InvalidRecording) return yield* fail(outcome)
              return yield* end(outcome)
            }
            default:
              return yield* fail(invalid(path, line, `a ${entry.type} line before connection ${conn} closed`))
          }
        }
      })

    /** The application's answer as the recording would keep it (its `redact` applied). */
    const redactAnswer = (data: Format.AnswerData, recorded: Format.AnswerEntry): Format.AnswerData => {
      const entry: Format.AnswerEntry = { ...recorded, data }
      if (options.redact === undefined) return data
      const redacted = options.redact(entry)
      return redacted.type === "answer" ? redacted.data : data
    }

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
        Effect.sync(() => (current === undefined ? undefined : sessions.get(current)) ?? fallbackSession),
      eventStream
    }
  })
