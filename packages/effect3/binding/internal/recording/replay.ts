/**
 * Replaying a recording in memory: an `AgentApi` whose `createSession` answers what was recorded,
 * and an `EventStream` whose connections are the edition's real engine over a transport that
 * plays the recorded connections, frame by frame, each after its recorded delay (`Effect.sleep`:
 * virtual time under the `TestClock`). The engine decodes, buffers, answers, reconnects and ends
 * exactly as it does over a socket, with the settings of the recorded dialect.
 *
 * One pass over the file serves one session: `createSession` reads the create lines, the
 * connections read on from there (each attempt of the engine plays the next recorded
 * connection). The application's answers are compared with the recorded ones where the
 * recording has them; a difference, or no answer within `answerTimeout`, ends the replay with
 * `ReplayMismatch`.
 *
 * The format, its validation and the line reader are the protocol core's (`Recording`), and so
 * are what to play next, what an attempt waits on, what the test kit is told and the replay's
 * errors (`KitReplay` over `MemoryReplay`: it plays the recorded lines into the transport's hooks
 * and decodes the recorded sessions and errors with the edition's schemas); what is here binds its
 * waits to sleeps, a latch and the answer timeout on the edition's Effect line, and its values to
 * the edition's schemas and errors.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import type { Recording as Format } from "effect-agent-session-core"
import { FileSource, KitReplay } from "effect-agent-session-shell"
import * as Fs from "node:fs"
import * as Credentials from "../../../src/Credentials.js"
import {
  AgentSessionError,
  type CreateSessionError,
  type EventStreamError,
  InvalidRecording,
  ReplayMismatch
} from "../../../src/Errors.js"
import type * as EventStream from "../../../src/EventStream.js"
import { CreateSessionRequest, SessionInfo } from "../../../src/Session.js"
import { makeEngine } from "../channel/engine.js"
import { resolveSettings } from "../channel/settings.js"
import { forkAttempt, type Hooks, type Io } from "../channel/transport.js"
import { closeLatchUnsafe, durationOf, makeLatch, openLatchUnsafe } from "../../../src/internal/line.js"
import type { ReplayOptions as ReplayKitOptions, World } from "../testing/kitTypes.js"
import { eventStreamOf } from "../testing/scriptedChannel.js"

/** Options of an in-memory replay: the file, and the kit's (the answer timeout, the longest line, `redact`). */
export interface ReplayOptions extends ReplayKitOptions {
  readonly path: string
}

const decodeError = Schema.decodeUnknownOption(AgentSessionError)
const decodeSession = Schema.decodeUnknownOption(SessionInfo)
const encodeRequest = Schema.encodeOption(CreateSessionRequest)

/** What the core's replay decodes the recorded sessions and errors with. */
const decoders = KitReplay.replayDecoders<SessionInfo, AgentSessionError, CreateSessionError, EventStreamError>({
  session: (session) => Option.getOrUndefined(decodeSession(session)),
  error: (error) => Option.getOrUndefined(decodeError(error))
})

/** This edition's errors of a replay. */
const errors: KitReplay.ReplayErrors<InvalidRecording, ReplayMismatch> = {
  invalid: (fields) => new InvalidRecording(fields),
  mismatch: (fields) => new ReplayMismatch(fields)
}

/** The in-memory replay of one recording: the core's `KitReplay` bound to the engine. */
export const make = (options: ReplayOptions, observer: World) =>
  Effect.gen(function*() {
    const { path } = options
    const credentials = yield* Credentials.Credentials
    const answerTimeout = durationOf(options.answerTimeout ?? KitReplay.defaultAnswerTimeoutMillis)
    // The header is checked when the layer is built: a foreign or damaged file fails it.
    const replay = KitReplay.Replay.open({ ...options, source: FileSource.fromFile(path, Fs), decoders, errors, observer })
    if (!(replay instanceof KitReplay.Replay)) return yield* Effect.fail(replay)
    yield* Effect.addFinalizer(() => Effect.sync(() => replay.close()))

    /** The recorded answer to a create request, or the error it got. */
    const createSession = (request: CreateSessionRequest): Effect.Effect<SessionInfo, CreateSessionError> =>
      Effect.flatMap(credentials.secrets, (secrets) => {
        // Compared as the recorder would have written it, with this application's keys scrubbed.
        const answer = replay.create(request, Option.getOrElse(encodeRequest(request), () => ({})), secrets)
        switch (answer._tag) {
          case "Session":
            return Effect.succeed(answer.session)
          case "Failed":
            return Effect.fail(answer.error)
          case "Unrecorded":
            // No create recorded here (a recording of `attach`): nothing to answer it with.
            return Effect.die(answer.error)
        }
      })

    const connect = (
      sessionId: string,
      connectOptions: EventStream.ConnectOptions = {}
    ): Effect.Effect<EventStream.Connection, never, Scope.Scope> =>
      Effect.gen(function*() {
        const pass = replay.connection(sessionId)
        const engine = yield* makeEngine({
          sessionId,
          settings: resolveSettings({}, connectOptions, replay.header.dialect),
          ...replay.channel,
          agent: connectOptions.agent,
          transport: (hooks) => forkAttempt(hooks, play(pass, sessionId, hooks))
        }).pipe(Effect.provideService(Credentials.Credentials, credentials))
        const connection = engine.connection
        // The engine's connection with its answers compared (its `events` and `state` read when read).
        return {
          sessionId: connection.sessionId,
          get events() {
            return connection.events
          },
          get state() {
            return connection.state
          },
          get opened() {
            return connection.opened
          },
          respond: (request, answer) =>
            Effect.tap(connection.respond(request, answer), () => Effect.sync(() => replay.answered(sessionId, request, answer))),
          close: connection.close,
          drain: connection.drain
        } satisfies EventStream.Connection
      })

    /**
     * Plays the pass's next recorded connection for one attempt of the engine: the core plays the
     * lines into the hooks and ends the attempt; here are its waits. A replay that cannot go on
     * ends the attempt with a defect carrying the `ReplayMismatch` / `InvalidRecording`: no
     * production channel can meet it, so no public error channel names it.
     */
    const play = (pass: Format.ReplayPass, sessionId: string, hooks: Hooks): Effect.Effect<void> =>
      Effect.gen(function*() {
        const woken = yield* makeLatch(false)
        const attempt = replay.attempt(pass, sessionId, hooks, () => openLatchUnsafe(woken))
        if (attempt === undefined) return
        hooks.attach({ ...attempt.flow, send: (_frame, data) => Effect.sync(() => attempt.send(data)) } satisfies Io)

        while (true) {
          const step = attempt.next()
          switch (step._tag) {
            case "Sleep":
              yield* Effect.sleep(Duration.millis(step.millis))
              attempt.slept()
              break
            case "Wait":
              closeLatchUnsafe(woken)
              if (!step.timeout) yield* woken.await
              else if (Option.isNone(yield* Effect.timeoutOption(woken.await, answerTimeout))) {
                attempt.noAnswer(Duration.format(answerTimeout))
              }
              break
            case "Done":
              return
          }
        }
      })

    return {
      createSession,
      getSession: (_sessionId: string): Effect.Effect<SessionInfo> => Effect.sync(() => replay.session()),
      eventStream: eventStreamOf(connect)
    }
  })
