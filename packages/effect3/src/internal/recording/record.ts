/**
 * Recording a session: the wrappers of `AgentApi` and `EventStream` that note what
 * happens, and the writer that puts it in the file.
 *
 * The event path only appends to an in-memory queue (one object per frame, from the socket's
 * callback, no Effect); one writer fiber scrubs, encodes and writes what is queued, batch by
 * batch. The queue is bounded in bytes: a writer that falls that far behind (a full or stalled
 * disk) stops the recording with `RecordingFailed`, and the session goes on untouched.
 *
 * The queue, its bound, the batches (scrubbed, redacted, checked for keys), the header, the
 * session claimed and the connections' numbers are the protocol core's (the shell's
 * `Journal`); what is here binds them to the file, the writer fiber, the clock and
 * this edition's schemas and errors.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import type * as AgentApi from "../../AgentApi.js"
import * as Credentials from "../../Credentials.js"
import * as Dialect from "../../Dialect.js"
import { AgentSessionError, RecordingFailed } from "../../Errors.js"
import type * as EventStream from "../../EventStream.js"
import { CreateSessionRequest, SessionInfo } from "../../Session.js"
import { type ChannelTap, currentTap, outcomeOf } from "../channel/tap.js"
import { version } from "../version.js"
import { Recording as Format } from "effect-agent-session-core"
import { Journal } from "effect-agent-session-shell"

/** The options of a recorder. */
export interface RecorderOptions {
  readonly path: string
  readonly redact?: ((entry: Format.Entry) => Format.Entry) | undefined
  readonly bufferSize?: number | undefined
  readonly dialect?: Dialect.Dialect | undefined
  readonly transport?: Format.Transport | undefined
}

/** How long closing the recording waits for the last records to be written. */
const CLOSE_FLUSH_MS = 10_000

const encodeError = Schema.encodeUnknownEither(AgentSessionError)
const encodeRequest = Schema.encodeUnknownEither(CreateSessionRequest)
const decodeRequest = Schema.decodeUnknownEither(CreateSessionRequest)
const encodeSession = Schema.encodeUnknownEither(SessionInfo)

/** An error as the format keeps it: its encoded form, else its tag and message. */
export const encodedError = (error: unknown): Format.EncodedError => {
  const encoded = encodeError(error)
  if (Either.isRight(encoded)) return encoded.right as unknown as Format.EncodedError
  const tag = typeof error === "object" && error !== null && "_tag" in error ? String(error._tag) : "Error"
  const message = typeof error === "object" && error !== null && "message" in error ? String(error.message) : String(error)
  return { _tag: tag, message }
}

const describe = (cause: unknown): string =>
  typeof cause === "object" && cause !== null && "message" in cause ? String(cause.message) : String(cause)

/** The outcome of a connection as the format keeps it. */
const outcomeEntry = (exit: Exit.Exit<unknown, unknown>): Format.Outcome => {
  const outcome = outcomeOf(exit)
  if (outcome === "interrupted") return { _tag: "Interrupted" }
  if (outcome === "defect") {
    return { _tag: "Defect", message: Exit.isFailure(exit) ? describe(exit.cause) : "the attempt ended without an outcome" }
  }
  return Journal.outcomeEntry(outcome, encodedError)
}

/** A recorder: the wrappers, and what the public `Recorder` service exposes. */
export interface Recorder {
  readonly path: string
  readonly flush: Effect.Effect<void, RecordingFailed>
  readonly failure: Effect.Effect<Option.Option<RecordingFailed>>
  readonly wrapApi: (api: AgentApi.Service) => AgentApi.Service
  readonly wrapEvents: (events: EventStream.Service) => EventStream.Service
}

/** Opens the file and starts the writer in the scope; closing the scope writes what is left. */
export const make = (
  options: RecorderOptions
): Effect.Effect<Recorder, RecordingFailed, Scope.Scope | FileSystem.FileSystem | Credentials.Credentials> =>
  Effect.gen(function*() {
    const { path } = options
    const fs = yield* FileSystem.FileSystem
    const credentials = yield* Credentials.Credentials
    const clock = yield* Effect.clock
    const file = yield* fs.open(path, { flag: "w" }).pipe(
      Effect.mapError((error) => new RecordingFailed({ path, message: `cannot open the file: ${error.message}`, written: 0 }))
    )
    const encoder = new TextEncoder()
    const latch = yield* Effect.makeLatch(false)
    const journal = new Journal.Journal({ bufferSize: options.bufferSize, redact: options.redact })

    let failed: RecordingFailed | undefined
    const waiters: Array<Deferred.Deferred<void, RecordingFailed>> = []

    const now = (): number => journal.time(clock.unsafeCurrentTimeMillis())

    /** The journal stopped the recording: the error made, the waiters failed, the writer woken. */
    const stopped = () => {
      if (failed !== undefined || journal.failure === undefined) return
      failed = new RecordingFailed({ path, message: journal.failure, written: journal.written })
      for (const waiter of waiters.splice(0)) Deferred.unsafeDone(waiter, Exit.fail(failed))
      latch.unsafeOpen()
    }

    const fail = (message: string) => {
      journal.fail(message)
      stopped()
    }

    const push = (entry: Format.Entry): void => {
      if (journal.push(entry)) return stopped()
      if (journal.failure === undefined) latch.unsafeOpen()
    }

    const headerOf = (info: Journal.HeaderInfo): Format.Header =>
      Journal.headerOf(info, version, clock.unsafeCurrentTimeMillis())

    /** Writes what is queued; the header first (a default one when `force` and none is known yet). */
    const writeBatch = (force: boolean): Effect.Effect<void> =>
      Effect.gen(function*() {
        if (failed !== undefined || !journal.ready(force)) return
        const secrets = yield* credentials.secrets
        const lines = journal.batch(secrets, () =>
          headerOf({
            sessionId: journal.claimed ?? "",
            dialect: options.dialect ?? Dialect.documented,
            transport: options.transport ?? "websocket"
          }))
        if (lines === undefined) return stopped()
        if (lines.length === 0) return
        const result = yield* Effect.either(file.writeAll(encoder.encode(lines.join("\n") + "\n")))
        if (Either.isLeft(result)) return fail(`cannot write the file: ${Format.scrub(result.left.message, secrets)}`)
        journal.wrote(lines.length)
      })

    const settle = () => {
      if (journal.settled) {
        for (const waiter of waiters.splice(0)) Deferred.unsafeDone(waiter, Exit.void)
      }
    }

    // The writer: waits for records, writes them, and again.
    yield* Effect.forkScoped(Effect.forever(
      Effect.gen(function*() {
        yield* latch.await
        latch.unsafeClose()
        yield* writeBatch(waiters.length > 0)
        settle()
      })
    ))

    const flush: Effect.Effect<void, RecordingFailed> = Effect.flatMap(
      Deferred.make<void, RecordingFailed>(),
      (waiter) =>
        Effect.suspend(() => {
          if (failed !== undefined) return Effect.fail(failed)
          waiters.push(waiter)
          latch.unsafeOpen()
          return Deferred.await(waiter)
        })
    )

    // Closing: what is queued is written (bounded in time), then the file closes (its own finalizer).
    yield* Effect.addFinalizer(() =>
      Effect.zipRight(
        writeBatch(true),
        Effect.suspend(() => (journal.pending > 0 ? writeBatch(true) : Effect.void))
      ).pipe(
        Effect.timeout(CLOSE_FLUSH_MS),
        Effect.catchAll(() => Effect.sync(() => fail("the last records were not written in time"))),
        Effect.zipRight(Effect.suspend(() =>
          failed === undefined
            ? Effect.void
            : Effect.logWarning(`The recording ${path} is incomplete: ${failed.message}`)
        ))
      )
    )

    /** Whether this session is the one recorded (the first one seen claims the recording). */
    const claim = (sessionId: string): Effect.Effect<boolean> =>
      Effect.suspend(() => {
        const claim = journal.claim(sessionId)
        if (claim !== "warn") return Effect.succeed(claim === "recorded")
        return Effect.as(
          Effect.logWarning(`${path} records session ${journal.claimed} only: session ${sessionId} is not recorded`),
          false
        )
      })

    const wrapApi = (api: AgentApi.Service): AgentApi.Service => ({
      ...api,
      createSession: (input, createOptions) =>
        Effect.suspend(() => {
          if (journal.claimed !== undefined) return api.createSession(input, createOptions)
          const request = Either.flatMap(decodeRequest(input), (valid) => encodeRequest(valid))
          // Input that does not validate fails before anything is sent: nothing to record.
          if (Either.isLeft(request)) return api.createSession(input, createOptions)
          push({ type: "create", t: now(), request: request.right as unknown as Format.JsonObject })
          return Effect.onExit(api.createSession(input, createOptions), (exit) => {
            if (Exit.isSuccess(exit)) {
              const session = encodeSession(exit.value)
              push({
                type: "created",
                t: now(),
                session: Either.getOrElse(session, () => ({ session_id: exit.value.session_id })) as Format.JsonObject
              })
              return Effect.asVoid(claim(exit.value.session_id))
            }
            return Effect.sync(() => {
              if (exit.cause._tag === "Fail") push({ type: "create-failed", t: now(), error: encodedError(exit.cause.error) })
            })
          })
        })
    })

    /** The tap of one connection: its attempts get the recording's connection numbers. */
    const tapFor = (): ChannelTap => {
      const tap = new Journal.JournalTap(journal)
      const conn = (local: number) => tap.conn(local)
      return {
        started: (info) => {
          journal.header ??= headerOf(info)
          latch.unsafeOpen()
        },
        connect: (local) => push({ type: "connect", t: now(), conn: tap.connect(local) }),
        open: (local) => push({ type: "open", t: now(), conn: conn(local) }),
        frame: (local, data) => push(Journal.frameEntry(now(), conn(local), data)),
        namedEvent: (local, event, data) => push({ type: "frame", t: now(), conn: conn(local), event, data }),
        tooLarge: (local, size) => push({ type: "too-large", t: now(), conn: conn(local), size }),
        alive: (local) => {
          const t = now()
          if (tap.alive(local, t)) push({ type: "alive", t, conn: conn(local) })
        },
        sent: (local, data, result) =>
          push({ type: "answer", t: now(), conn: conn(local), data, result: Journal.answerResult(result) }),
        ended: (local, opened, exit) =>
          push({ type: "close", t: now(), conn: conn(local), opened, outcome: outcomeEntry(exit) })
      }
    }

    const endEntry = (connection: EventStream.Connection, exit: Exit.Exit<unknown, unknown> | undefined) =>
      Effect.map(SubscriptionRef.get(connection.state), (state): Format.EndEntry | undefined => {
        if (state._tag !== "Closed") return undefined
        const error = exit !== undefined && Exit.isFailure(exit) && exit.cause._tag === "Fail" ? exit.cause.error : undefined
        return {
          type: "end",
          t: now(),
          reason: state.reason,
          ...(error === undefined ? {} : { error: encodedError(error) }),
          ...(state.unsent === undefined ? {} : { unsent: state.unsent })
        }
      })

    const wrapEvents = (events: EventStream.Service): EventStream.Service => {
      const connect: EventStream.Service["connect"] = (sessionId, connectOptions) =>
        Effect.gen(function*() {
          if (!(yield* claim(sessionId))) return yield* events.connect(sessionId, connectOptions)
          const connection = yield* Effect.locally(events.connect(sessionId, connectOptions), currentTap, tapFor())
          let ended = false
          const end = (exit: Exit.Exit<unknown, unknown> | undefined) =>
            Effect.flatMap(endEntry(connection, exit), (entry) =>
              Effect.sync(() => {
                if (ended || entry === undefined) return
                ended = true
                push(entry)
              }))
          // The end is noted when the events end; else (never consumed, or left early) when the
          // connection closes.
          yield* Effect.addFinalizer(() => Effect.zipRight(connection.close, end(undefined)))
          // Not a spread: a connection's state, respond and drain are getters of its class.
          const recorded: EventStream.Connection = {
            sessionId: connection.sessionId,
            events: Stream.ensuringWith(connection.events, end),
            get state() {
              return connection.state
            },
            get opened() {
              return connection.opened
            },
            get respond() {
              return connection.respond
            },
            close: connection.close,
            get drain() {
              return connection.drain
            }
          }
          return recorded
        })
      return {
        connect,
        events: (sessionId, connectOptions) =>
          Stream.unwrapScoped(Effect.map(connect(sessionId, connectOptions), (connection) => connection.events))
      }
    }

    return {
      path,
      flush,
      failure: Effect.sync(() => Option.fromNullable(failed)),
      wrapApi,
      wrapEvents
    }
  })
