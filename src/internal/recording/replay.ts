/**
 * Replaying a recording in memory (issue 23): an `AgentApi` whose `createSession` answers what
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

/** The tags a create can fail with (`CreateSessionError`: a time-out of a create is `OutcomeUnknown`). */
const createTags: ReadonlySet<string> = new Set([
  "InvalidRequest",
  "MissingCredentials",
  "MissingAgentKey",
  "BadRequest",
  "Unauthorized",
  "Forbidden",
  "NotFound",
  "Conflict",
  "PayloadTooLarge",
  "RateLimited",
  "ServerError",
  "UnexpectedStatus",
  "TransportError",
  "ResponseDecodeError",
  "OutcomeUnknown",
  "ResponseTooLarge"
])

const eventStreamTags: ReadonlySet<string> = new Set([
  "MalformedFrame",
  "EventDecodeError",
  "FrameTooLarge",
  "UnknownEvent",
  "MissingCredentials",
  "MissingAgentKey",
  "HandshakeRejected",
  "Superseded",
  "ConnectTimeout",
  "ConnectionLost",
  "NeverConnected"
])

const closeReasons: ReadonlySet<string> = new Set([
  "complete",
  "closed-by-caller",
  "closed-by-service",
  "error-event",
  "connection-lost",
  "handshake-rejected",
  "superseded",
  "failed"
])

const isCreateSessionError = (error: AgentSessionError): error is CreateSessionError => createTags.has(error._tag)
const isEventStreamError = (error: AgentSessionError): error is EventStreamError => eventStreamTags.has(error._tag)

/** One pass over the file: one replayed session. */
class Pass {
  /** `create`: the create lines are next; `events`: the connections are. */
  phase: "create" | "events" = "create"
  /** What ends the first connection (a create that differed, a line not valid). */
  failure: ReplayError | undefined = undefined
  session: SessionInfo | undefined = undefined
  /** No reader: the file could not be opened again; every connection fails with `failure`. */
  constructor(readonly reader: Format.Reader | undefined) {}
}

const invalid = (path: string, line: number, reason: string) => new InvalidRecording({ path, line, reason })

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

    let current: Pass | undefined

    const newPass = (): Pass | InvalidRecording => {
      const opened = open()
      return Either.isLeft(opened) ? opened.left : new Pass(opened.right.reader)
    }

    /** The recorded answer to a create request, or the error it got. */
    const createSession = (request: CreateSessionRequest): Effect.Effect<SessionInfo, CreateSessionError> =>
      Effect.suspend(() => {
        const pass = current !== undefined && current.phase === "create" ? current : newPass()
        if (pass instanceof InvalidRecording) {
          // The file changed since the layer was built: the events say so.
          const broken = newPassWith(pass)
          current = broken
          return Effect.succeed(fallbackSession)
        }
        current = pass
        const reader = pass.reader
        if (reader === undefined) return Effect.succeed(fallbackSession)
        const next = reader.peek()
        if (next._tag !== "Entry" || next.entry.type !== "create") {
          // A recording without a create (of `attach`): the recorded session, as it is.
          pass.phase = "events"
          if (next._tag === "Invalid") pass.failure = invalid(path, next.line, next.reason)
          return Effect.succeed(fallbackSession)
        }
        reader.take()
        const encoded = encodeRequest(request)
        const actual: unknown = Either.isRight(encoded) ? encoded.right : {}
        const difference = Format.difference(next.entry.request, actual)
        if (difference.length > 0) {
          pass.failure = new ReplayMismatch({
            path,
            line: next.line,
            subject: "create",
            expected: JSON.stringify(next.entry.request),
            actual: JSON.stringify(actual),
            difference
          })
        }
        const result = reader.take()
        if (result._tag === "Entry" && result.entry.type === "created") {
          const session = decodeSession(result.entry.session)
          pass.phase = "events"
          if (Either.isLeft(session)) {
            pass.failure ??= invalid(path, result.line, "created: the session is not valid")
            return Effect.succeed(fallbackSession)
          }
          pass.session = session.right
          return Effect.succeed(session.right)
        }
        if (result._tag === "Entry" && result.entry.type === "create-failed") {
          const error = decodeError(result.entry.error)
          if (Either.isRight(error) && isCreateSessionError(error.right)) {
            // The application may create again: the next create line answers it.
            return Effect.fail(error.right)
          }
          pass.failure ??= invalid(path, result.line, "create-failed: the error is not one a create can fail with")
        } else {
          pass.failure ??= result._tag === "Invalid"
            ? invalid(path, result.line, result.reason)
            : invalid(path, result.line, "a create line without its result (created or create-failed)")
        }
        pass.phase = "events"
        return Effect.succeed(fallbackSession)
      })

    /** A pass that only fails (the file could not be opened again). */
    const newPassWith = (error: InvalidRecording): Pass => {
      const pass = new Pass(undefined)
      pass.phase = "events"
      pass.failure = error
      return pass
    }

    /** The pass a connection plays: the session created last, else a fresh one from the first connection. */
    const passFor = (): Pass => {
      if (current !== undefined && current.phase === "events") return current
      const pass = newPass()
      if (pass instanceof InvalidRecording) return newPassWith(pass)
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
    const transport = (pass: Pass, sessionId: string): Transport => (hooks) =>
      Effect.asVoid(Effect.forkScoped(play(pass, sessionId, hooks)))

    const mismatch = (line: number, expected: string, actual: string) =>
      new ReplayMismatch({ path, line, subject: "connection", expected, actual, difference: `expected ${expected}, got ${actual}` })

    /** The recorded outcome as the engine's. */
    const outcomeOf = (
      entry: Format.CloseEntry,
      line: number
    ): AttemptOutcome | InvalidRecording | "await-close" | "defect" => {
      const outcome = entry.outcome
      const decoded = (error: Format.EncodedError) => {
        const result = decodeError(error)
        return Either.isRight(result) && isEventStreamError(result.right) ? result.right : undefined
      }
      const broken = (reason: string) => invalid(path, line, `close: ${reason}`)
      switch (outcome._tag) {
        case "End":
          return closeReasons.has(outcome.reason)
            ? End(outcome.reason as EventStream.CloseReason)
            : broken(`unknown reason "${outcome.reason}"`)
        case "Fatal": {
          const error = decoded(outcome.error)
          return error === undefined || !closeReasons.has(outcome.reason)
            ? broken("the error is not one of the event channel's")
            : Fatal(error, outcome.reason as EventStream.CloseReason)
        }
        case "Retry": {
          if (outcome.cause !== undefined) return Retry(outcome.cause)
          const error = outcome.error === undefined ? undefined : decodeError(outcome.error)
          return error !== undefined && Either.isRight(error) && error.right._tag === "ConnectTimeout"
            ? Retry(error.right)
            : broken("the error is not one an attempt is retried for")
        }
        case "Interrupted":
          return "await-close"
        case "Defect":
          return "defect"
      }
    }

    const play = (pass: Pass, sessionId: string, hooks: Hooks): Effect.Effect<void> =>
      Effect.gen(function*() {
        const end = (outcome: AttemptOutcome) => Effect.sync(() => hooks.end(outcome))
        // A replay that cannot go on ends the connection with a defect carrying the
        // `ReplayMismatch` / `InvalidRecording`: the application under test did what the
        // recording does not hold (as a stub layer dies on a call it does not implement), which
        // no production channel can meet, so no public error channel names it.
        const fail = (error: ReplayError) => Effect.sync(() => hooks.end(Exit.die(error)))
        const reader = pass.reader
        if (pass.failure !== undefined || reader === undefined) {
          const failure = pass.failure ?? invalid(path, 0, "the recording cannot be read again")
          if (reader !== undefined) pass.failure = undefined
          return yield* fail(failure)
        }
        if (sessionId !== header.sessionId) {
          return yield* fail(mismatch(1, `a connection to session ${header.sessionId}`, `one to ${sessionId}`))
        }
        // The next recorded connection (what is left of the previous one was not played: the
        // engine ended it itself, as it did when it was recorded).
        let connectAt: Format.Numbered | undefined
        while (connectAt === undefined) {
          const next = reader.take()
          if (next._tag === "Invalid") return yield* fail(invalid(path, next.line, next.reason))
          if (next._tag === "Done" || next.entry.type === "end") {
            return yield* fail(
              mismatch(next.line, "no more connections (the recording ends here)", "the application connected again")
            )
          }
          switch (next.entry.type) {
            case "connect":
              connectAt = next
              break
            case "frame":
            case "answer":
            case "too-large":
              return yield* fail(
                mismatch(next.line, "the recorded connection to go on here", "the application's connection ended before it")
              )
            default:
              // `close`, `alive`, `open` of a connection the engine ended: nothing to play.
              break
          }
        }

        const answers: Array<Format.AnswerData> = []
        const answered = yield* Effect.makeLatch(false)
        const flowing = yield* Effect.makeLatch(true)
        const written = header.transport === "sse" ? "confirmed" as const : "written" as const
        const io: Io = {
          send: (_frame, data) =>
            Effect.sync(() => {
              answers.push(data)
              answered.unsafeOpen()
              return written
            }),
          pause: () => flowing.unsafeClose(),
          resume: () => flowing.unsafeOpen(),
          abort: () => {}
        }
        hooks.attach(io)

        const nextAnswer: Effect.Effect<Format.AnswerData> = Effect.suspend(() => {
          const answer = answers.shift()
          if (answer !== undefined) return Effect.succeed(answer)
          answered.unsafeClose()
          return Effect.zipRight(answered.await, nextAnswer)
        })

        let at = connectAt.entry.t
        const conn = connectAt.entry.type === "connect" ? connectAt.entry.conn : 0
        while (true) {
          const next = reader.take()
          if (next._tag === "Invalid") return yield* fail(invalid(path, next.line, next.reason))
          if (next._tag === "Done") {
            return yield* fail(invalid(path, next.line, "the recording ends before its connection closed"))
          }
          const { entry, line } = next
          if (entry.t > at) yield* Effect.sleep(Duration.millis(entry.t - at))
          at = Math.max(at, entry.t)
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
                onSuccess: Option.some,
                onTimeout: Option.none
              })
              const expected = JSON.stringify(entry.data)
              if (Option.isNone(given)) {
                return yield* fail(
                  new ReplayMismatch({
                    path,
                    line,
                    subject: "answer",
                    expected,
                    actual: `no answer within ${Duration.format(answerTimeout)}`,
                    difference: `expected the answer ${expected}, got no answer within ${Duration.format(answerTimeout)}`
                  })
                )
              }
              const actual = redactAnswer(given.value, entry)
              const difference = Format.difference(entry.data, actual)
              if (difference.length > 0) {
                return yield* fail(
                  new ReplayMismatch({ path, line, subject: "answer", expected, actual: JSON.stringify(actual), difference })
                )
              }
              // A write that failed when it was recorded fails the connection again here.
              if (typeof entry.result === "object" && entry.result.retry) {
                return yield* end(Retry(`answer not written: ${entry.result.failed}`))
              }
              break
            }
            case "close": {
              const outcome = outcomeOf(entry, line)
              if (outcome === "await-close") return yield* Effect.never
              if (outcome instanceof InvalidRecording) return yield* fail(outcome)
              if (outcome === "defect") return yield* Effect.sync(() => hooks.end(Exit.die(new Error("replayed defect"))))
              return yield* end(outcome)
            }
            case "connect":
            case "end":
            case "create":
            case "created":
            case "create-failed":
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
        Effect.sync(() => current?.session ?? fallbackSession),
      eventStream
    }
  })
