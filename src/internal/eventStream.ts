/**
 * The event channel's engine: one `Connection` over a transport (WebSocket here, Server-Sent
 * Events in `sse.ts`) with the reconnect schedule, idle time-out, bounded buffer with read
 * pausing, and the answer queue. A transport only opens one attempt and reports how it ended.
 */
import * as Socket from "@effect/platform/Socket"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Mailbox from "effect/Mailbox"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as Redacted from "effect/Redacted"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import type * as Answer from "../Answer.js"
import * as Credentials from "../Credentials.js"
import * as Dialect from "../Dialect.js"
import {
  AnswerBufferFull,
  ConnectionLost,
  ConnectTimeout,
  EventDecodeError,
  NeverConnected,
  type EventStreamError,
  type FrameError,
  FrameTooLarge,
  HandshakeRejected,
  type InsecureTransport,
  MalformedFrame,
  redactSecrets,
  RequestNotPending,
  type RespondError,
  truncateRaw,
  UnknownEvent
} from "../Errors.js"
import type * as EventStream from "../EventStream.js"
import * as Metrics from "../Metrics.js"
import * as SessionEvent from "../SessionEvent.js"
import * as Wire from "../Wire.js"
import { inSession } from "./orphan.js"
import { checkSecureUrl, printableUrl } from "./url.js"

// ---------------------------------------------------------------------------
// Public values (re-exported by EventStream.ts)
// ---------------------------------------------------------------------------

/** @internal */
export const ConnectionState = Data.taggedEnum<EventStream.ConnectionState>()

/** @internal */
export const defaultReconnectSchedule: Schedule.Schedule<Duration.Duration, unknown> = Schedule.exponential(
  Duration.millis(250),
  2
).pipe(
  Schedule.jittered,
  Schedule.modifyDelay((delay) => Duration.min(delay, Duration.seconds(10))),
  Schedule.intersect(Schedule.recurs(10)),
  Schedule.map(([delay]) => delay)
)

/**
 * The default retry of a channel that has never been open (issue 13): 2 more tries, 250 ms then
 * 500 ms apart, so a wrong address fails in about a second (plus one connect time-out at most)
 * with `NeverConnected`, not after the reconnect schedule's minute.
 * @internal
 */
export const defaultFirstConnectSchedule: Schedule.Schedule<unknown, unknown> = Schedule.exponential(
  Duration.millis(250),
  2
).pipe(Schedule.intersect(Schedule.recurs(2)))

/** How long a socket found closing may take to report its close before the attempt is dropped. */
const CLOSING_GRACE = Duration.seconds(2)

/** The close codes that mean "your credentials were refused" (U08, U12): never retried. */
export const rejectionCloseCodes: ReadonlySet<number> = new Set([1008, 4001, 4003, 4401, 4403])

/**
 * The HTTP statuses of a refused upgrade that are final: the credentials (401, 403) or the
 * session (400, 404, 410: no such session, or the wrong path for this dialect) were refused.
 * Retrying cannot help, so they fail at once with `HandshakeRejected`.
 */
export const rejectionStatuses: ReadonlySet<number> = new Set([400, 401, 403, 404, 410])

// ---------------------------------------------------------------------------
// Settings
// ---------------------------------------------------------------------------

/** Every option of a connection, with its default applied. */
export interface Settings {
  readonly reconnect: Schedule.Schedule<unknown, EventStreamError | string>
  readonly firstConnect: Schedule.Schedule<unknown, EventStreamError | string>
  readonly idleTimeout: Duration.Duration
  readonly connectTimeout: Duration.Duration
  readonly answerTimeout: Duration.Duration
  readonly bufferSize: number
  readonly answerBufferSize: number
  readonly maxFrameSize: number
  readonly strict: boolean
  readonly endOnError: boolean
  readonly failOnFrameError: boolean
  readonly pendingRequests: ReadonlyArray<SessionEvent.ExternalResourceRequested>
}

const positiveInt = (value: number | undefined, fallback: number): number =>
  value !== undefined && Number.isFinite(value) && value >= 1 ? Math.floor(value) : fallback

/** The settings of one connection: its own options over the layer's, over the defaults. */
export const resolveSettings = (
  layer: Omit<EventStream.ConnectOptions, "agent">,
  own: EventStream.ConnectOptions
): Settings => ({
  reconnect: own.reconnect ?? layer.reconnect ?? defaultReconnectSchedule,
  firstConnect: own.firstConnect ?? layer.firstConnect ?? defaultFirstConnectSchedule,
  idleTimeout: Duration.decode(own.idleTimeout ?? layer.idleTimeout ?? Duration.seconds(60)),
  connectTimeout: Duration.decode(own.connectTimeout ?? layer.connectTimeout ?? Duration.seconds(10)),
  answerTimeout: Duration.decode(own.answerTimeout ?? layer.answerTimeout ?? Duration.seconds(10)),
  bufferSize: positiveInt(own.bufferSize ?? layer.bufferSize, 1024),
  answerBufferSize: positiveInt(own.answerBufferSize ?? layer.answerBufferSize, 64),
  maxFrameSize: positiveInt(own.maxFrameSize ?? layer.maxFrameSize, Wire.defaultMaxFrameSize),
  pendingRequests: own.pendingRequests ?? [],
  strict: own.strict ?? layer.strict ?? false,
  endOnError: own.endOnError ?? layer.endOnError ?? false,
  failOnFrameError: own.failOnFrameError ?? layer.failOnFrameError ?? true
})

// ---------------------------------------------------------------------------
// Transports
// ---------------------------------------------------------------------------

/** How one attempt ended. */
export type AttemptOutcome =
  /** The connection ended for good, normally. */
  | { readonly _tag: "End"; readonly reason: EventStream.CloseReason }
  /** The connection ended for good with an error that retrying cannot fix. */
  | { readonly _tag: "Fatal"; readonly error: EventStreamError; readonly reason: EventStream.CloseReason }
  /** The attempt failed or dropped: the schedule decides whether to try again. */
  | { readonly _tag: "Retry"; readonly error: EventStreamError | string }

/** @internal */
export const End = (reason: EventStream.CloseReason): AttemptOutcome => ({ _tag: "End", reason })
/** @internal */
export const Fatal = (error: EventStreamError, reason: EventStream.CloseReason): AttemptOutcome => ({
  _tag: "Fatal",
  error,
  reason
})
/** @internal */
export const Retry = (error: EventStreamError | string): AttemptOutcome => ({ _tag: "Retry", error })

/** What an open transport lets the engine do. */
export interface Io {
  /**
   * Writes one answer: `"confirmed"` when the service acknowledged it (an HTTP 2xx), `"written"`
   * when it was handed to an open socket (confirmed later by a frame, else sent again after a
   * reconnect). A failure with `retry` keeps it queued and reopens the connection; without,
   * the service refused it: the request is pending again.
   */
  readonly send: (frame: string, data: Wire.AnswerData) => Effect.Effect<"confirmed" | "written", SendFailure>
  /** Stops reading (back-pressure); frames already received may still arrive. */
  readonly pause: () => void
  /** Reads again. */
  readonly resume: () => void
  /** Drops the connection at once (idle time-out). */
  readonly abort: () => void
}

/** Why an answer was not delivered. */
export interface SendFailure {
  readonly retry: boolean
  readonly message: string
  /**
   * The connection is already closing: the answer stays queued and the transport's own outcome
   * (a clean 1000 end, or a drop to reconnect from) decides what happens, not this write.
   */
  readonly closing?: boolean | undefined
}

/** What the engine gives a transport for one attempt. */
export interface Hooks {
  /** The key, read afresh for this attempt. */
  readonly key: Redacted.Redacted<string>
  /** To call as soon as the connection exists (before it opens): frames may be paused from then on. */
  readonly attach: (io: Io) => void
  /** To call once open (and the handshake sent): starts the answer writer and the idle timer. */
  readonly opened: Effect.Effect<void>
  /** One raw frame of the dialect's framing. Synchronous; may return a (rare) Effect to run. */
  readonly frame: (data: string | Uint8Array) => Effect.Effect<void> | void
  /** One named event with its JSON payload text (Server-Sent Events). */
  readonly namedEvent: (name: string, data: string) => Effect.Effect<void> | void
  /** An event larger than the limit, discarded while it was being read (Server-Sent Events). */
  readonly tooLarge: (size: number) => Effect.Effect<void> | void
  /** Bytes arrived that carry no event (an SSE comment): the connection is not idle. */
  readonly alive: () => void
}

/** One attempt: opens, runs until the connection ends by itself, and says how it ended. */
export type Transport = (hooks: Hooks) => Effect.Effect<AttemptOutcome, never, Scope.Scope>

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

/** A short readable description of a failure cause (a message, an error event, or the value). */
export const describeCause = (cause: unknown): string => {
  if (Predicate.hasProperty(cause, "message") && typeof cause.message === "string" && cause.message.length > 0) {
    return cause.message
  }
  if (Predicate.hasProperty(cause, "error") && Predicate.hasProperty(cause.error, "message")) {
    return String(cause.error.message)
  }
  if (Predicate.hasProperty(cause, "type") && typeof cause.type === "string") return `${cause.type} event`
  return String(cause)
}

/** Text safe to keep: no key, no key-bearing query parameter. */
export const scrub = (text: string, key: Redacted.Redacted<string>): string =>
  Wire.redactUrl(redactSecrets(text, [Redacted.value(key)]))

/** A frame error without the key, should the service ever echo it in a frame. */
const scrubFrameError = (error: FrameError, key: Redacted.Redacted<string>): FrameError => {
  const secret = Redacted.value(key)
  if (secret.length === 0) return error
  switch (error._tag) {
    case "FrameTooLarge":
      return error
    case "MalformedFrame":
      return error.raw.includes(secret) || error.message.includes(secret)
        ? new MalformedFrame({ raw: redactSecrets(error.raw, [secret]), message: redactSecrets(error.message, [secret]) })
        : error
    case "EventDecodeError":
      return error.raw.includes(secret) || error.message.includes(secret)
        ? new EventDecodeError({
          event: error.event,
          raw: redactSecrets(error.raw, [secret]),
          message: redactSecrets(error.message, [secret])
        })
        : error
    case "UnknownEvent":
      return error.raw.includes(secret) || error.event.includes(secret)
        ? new UnknownEvent({ event: redactSecrets(error.event, [secret]), raw: redactSecrets(error.raw, [secret]) })
        : error
  }
}

const describeError = (error: EventStreamError | string): string => typeof error === "string" ? error : error.message

/** The key a request is answered by: its action session and raw resource type (U16). */
export const requestKey = (actionSessionId: string, resourceType: string): string => `${actionSessionId}\u0000${resourceType}`

/**
 * A request's answer: `pending` (none yet), `queued` (accepted, not written), `unconfirmed`
 * (written; re-sent after a reconnect unless a later frame shows the connection outlived it),
 * `sent`.
 */
type RequestStatus = "pending" | "queued" | "unconfirmed" | "sent"

interface QueuedAnswer {
  readonly key: string
  readonly frame: string
  readonly data: Wire.AnswerData
}

// ---------------------------------------------------------------------------
// Replays (issue 12 defect 10): what counts as a new event
// ---------------------------------------------------------------------------

/** How many delivered events are remembered to recognise a replay after a reconnect. */
export const REPLAY_WINDOW = 4096

/** The most frame text remembered for that (UTF-16 code units): the memory bound per connection. */
export const REPLAY_WINDOW_CHARS = 1024 * 1024

/**
 * The identity of a frame for replay detection: its text. A binary frame (rare) is fingerprinted
 * (two 32-bit FNV-1a variants and the length) instead of copied.
 */
export const frameKey = (data: string | Uint8Array): string => {
  if (typeof data === "string") return data
  let a = 0x811c9dc5
  let b = 0x01000193
  for (let i = 0; i < data.length; i++) {
    const c = data[i] ?? 0
    a = Math.imul(a ^ c, 0x01000193)
    b = Math.imul(b ^ c, 0x5bd1e995) ^ (b >>> 15)
  }
  return `\u0000binary:${(a >>> 0).toString(36)}.${(b >>> 0).toString(36)}.${data.length}`
}

/**
 * The texts of the last events delivered (at most {@link REPLAY_WINDOW} of them and
 * {@link REPLAY_WINDOW_CHARS} in all), kept as references in a ring: recording costs nothing per
 * frame; the set to look replays up in is built once per reconnect.
 */
class Delivered {
  private readonly ring: Array<string | undefined> = []
  private head = 0
  private count = 0
  private chars = 0
  add(key: string): void {
    if (key.length > REPLAY_WINDOW_CHARS) return
    while (this.count > 0 && (this.count >= REPLAY_WINDOW || this.chars + key.length > REPLAY_WINDOW_CHARS)) {
      const oldest = this.ring[this.head]
      this.ring[this.head] = undefined
      this.head = (this.head + 1) % REPLAY_WINDOW
      this.count -= 1
      this.chars -= oldest?.length ?? 0
    }
    this.ring[(this.head + this.count) % REPLAY_WINDOW] = key
    this.count += 1
    this.chars += key.length
  }
  snapshot(): ReadonlySet<string> {
    const set = new Set<string>()
    for (let i = 0; i < this.count; i++) {
      const key = this.ring[(this.head + i) % REPLAY_WINDOW]
      if (key !== undefined) set.add(key)
    }
    return set
  }
}

// ---------------------------------------------------------------------------
// The engine
// ---------------------------------------------------------------------------

/** Everything a connection needs besides its transport. */
export interface EngineOptions {
  readonly sessionId: string
  readonly settings: Settings
  readonly dialect: Dialect.Dialect
  readonly agent: Credentials.AgentKeyRef | string | undefined
  /** The address for logs and spans, without any key. */
  readonly printableUrl: string
  readonly transport: Transport
  /** The framing of the frames the transport hands over (default: the dialect's). */
  readonly framing?: Dialect.Framing | undefined
}

/** A connection and the engine's internals that tests observe. */
export interface Engine {
  readonly connection: EventStream.Connection
  /** Frames received and not yet taken by the consumer. */
  readonly buffered: () => number
  /** The largest `buffered` seen. */
  readonly peakBuffered: () => number
  /** Frames skipped with a warning (`failOnFrameError: false`). */
  readonly skipped: () => number
}

/**
 * Builds a connection in the current scope. Nothing is opened until `events` is consumed.
 */
export const makeEngine = (
  options: EngineOptions
): Effect.Effect<Engine, never, Scope.Scope | Credentials.Credentials> =>
  Effect.gen(function*() {
    const { dialect, sessionId, settings } = options
    const credentials = yield* Credentials.Credentials
    const scope = yield* Effect.scope
    const clock = yield* Effect.clock
    const state = yield* SubscriptionRef.make<EventStream.ConnectionState>(ConnectionState.Connecting())
    const mailbox = yield* Mailbox.make<SessionEvent.SessionEvent, EventStreamError>()
    const decode = Wire.makeDecoder(options.framing ?? dialect.framing, {
      maxFrameSize: settings.maxFrameSize,
      strict: settings.strict
    })
    const bufferSize = settings.bufferSize
    const lowWater = Math.floor(bufferSize / 2)
    const idleMillis = Duration.toMillis(settings.idleTimeout)

    // --- connection-wide state (single-threaded JavaScript: plain variables) ---
    let started = false
    let finished = false
    let runner: Fiber.RuntimeFiber<void> | undefined
    let held = 0
    let peak = 0
    let skipped = 0
    const requests = new Map<string, RequestStatus>()
    // Requests received on an earlier connection (another process's) that are still unanswered.
    for (const request of settings.pendingRequests) {
      requests.set(requestKey(request.action_session_id, SessionEvent.resourceTypeRaw(request.resource_type)), "pending")
    }
    const outbox: Array<QueuedAnswer> = []
    // Written on the current connection, waiting for a later frame that shows they got through.
    const unconfirmed: Array<QueuedAnswer> = []

    // --- per-attempt state ---
    interface Current {
      readonly outcome: Deferred.Deferred<AttemptOutcome>
      readonly key: Redacted.Redacted<string>
      io: Io | undefined
      paused: boolean
      ended: boolean
      opened: boolean
      gotFrame: boolean
      /** A reopened connection, still sending events already delivered (a replay): their texts. */
      replaying: ReadonlySet<string> | undefined
      lastFrameAt: number
      writing: boolean
      scope: Scope.Scope | undefined
    }
    let current: Current | undefined

    const endAttempt = (attempt: Current, outcome: AttemptOutcome): void => {
      if (attempt.ended) return
      attempt.ended = true
      Deferred.unsafeDone(attempt.outcome, Exit.succeed(outcome))
    }

    const pauseIfFull = (attempt: Current): void => {
      if (!attempt.paused && held >= bufferSize && attempt.io !== undefined) {
        attempt.paused = true
        attempt.io.pause()
      }
    }

    const taken = (count: number): void => {
      held -= count
      const attempt = current
      if (attempt !== undefined && attempt.paused && held <= lowWater && !attempt.ended) {
        attempt.paused = false
        attempt.lastFrameAt = clock.unsafeCurrentTimeMillis()
        attempt.io?.resume()
      }
    }

    const skip = (error: FrameError): Effect.Effect<void> => {
      skipped += 1
      const raw = "raw" in error ? truncateRaw(error.raw) : ""
      return Effect.logWarning(`Skipped a frame: ${error.message}`).pipe(
        Effect.annotateLogs({ sessionId, frameError: error._tag, skipped, raw })
      )
    }

    const accept = (
      result: Either.Either<SessionEvent.SessionEvent, FrameError>,
      print?: string
    ): Effect.Effect<void> | void => {
      const attempt = current
      if (attempt === undefined || attempt.ended) return
      attempt.lastFrameAt = clock.unsafeCurrentTimeMillis()
      // Progress is a new event (issue 12 defect 10). Keep-alives (`connected`, `heartbeat`) and
      // frame errors prove the socket, not progress; and on a reopened connection, an event
      // already delivered (the same frame text, among the last REPLAY_WINDOW / REPLAY_WINDOW_CHARS delivered) is a
      // replay: dropped, so no event is delivered twice, and not progress, so a server that
      // sends the same events and drops every connection exhausts the reconnect schedule
      // (ConnectionLost) instead of looping forever. The replay ends at the first new event: from
      // then on every frame of that connection is delivered, repeats included. A request asked
      // again after its answer went through is not a replay (it is pending again), and does not
      // end the replay.
      if (Either.isRight(result) && result.right._tag !== "Heartbeat" && result.right._tag !== "Connected") {
        if (print !== undefined && attempt.replaying !== undefined && attempt.replaying.has(print)) {
          // A replayed request already answered is delivered (pending again), and the replay goes on.
          if (!askedAgain(result.right)) {
            replayed += 1
            return
          }
        } else {
          attempt.replaying = undefined
        }
        if (print !== undefined) delivered.add(print)
        attempt.gotFrame = true
      }
      if (Either.isLeft(result)) {
        const error = scrubFrameError(result.left, attempt.key)
        if (settings.failOnFrameError) return endAttempt(attempt, Fatal(error, "failed"))
        return skip(error)
      }
      const event = result.right
      // The service went on talking after the answers were written: they got through.
      if (unconfirmed.length > 0 && event._tag !== "Heartbeat" && event._tag !== "Connected") confirmAnswers()
      if (event._tag === "ExternalResourceRequested") {
        const key = requestKey(event.action_session_id, SessionEvent.resourceTypeRaw(event.resource_type))
        // Asked again after its answer went through: pending again. An answer still waiting to
        // be written (or confirmed) keeps it answered.
        const status = requests.get(key)
        if (status !== "queued" && status !== "unconfirmed") requests.set(key, "pending")
      }
      mailbox.unsafeOffer(event)
      held += 1
      if (held > peak) peak = held
      if (event._tag === "Complete") return endAttempt(attempt, End("complete"))
      if (event._tag === "AgentError" && settings.endOnError) return endAttempt(attempt, End("error-event"))
      pauseIfFull(attempt)
    }

    const delivered = new Delivered()
    let replayed = 0
    let deliveredAny = false
    const askedAgain = (event: SessionEvent.SessionEvent): boolean =>
      event._tag === "ExternalResourceRequested" &&
      requests.get(requestKey(event.action_session_id, SessionEvent.resourceTypeRaw(event.resource_type))) === "sent"

    const frame = (data: string | Uint8Array) => accept(decode(data), frameKey(data))

    const confirmAnswers = (): void => {
      for (const answer of unconfirmed) {
        if (requests.get(answer.key) === "unconfirmed") requests.set(answer.key, "sent")
      }
      unconfirmed.length = 0
    }

    /** The connection dropped: answers it may have lost are written again first after the reconnect. */
    const requeueUnconfirmed = (): number => {
      const count = unconfirmed.length
      for (const answer of unconfirmed) requests.set(answer.key, "queued")
      outbox.unshift(...unconfirmed)
      unconfirmed.length = 0
      return count
    }

    // Server-Sent Events: the engine is built with the `event-data` framing for them, and the
    // same decoder reads the `{event,data}` frame rebuilt from the SSE event.
    const namedEvent = (name: string, data: string) => {
      const text = `{"event":${JSON.stringify(name)},"data":${data.length === 0 ? "{}" : data}}`
      return accept(decode(text), text)
    }

    const tooLarge = (size: number) => accept(Either.left(new FrameTooLarge({ size, limit: settings.maxFrameSize })))

    const alive = (): void => {
      const attempt = current
      if (attempt !== undefined && !attempt.ended) attempt.lastFrameAt = clock.unsafeCurrentTimeMillis()
    }

    /**
     * Writes the oldest queued answer and records what became of it. Uninterruptible: an answer
     * in flight (an SSE `POST` the service may already have processed) is never abandoned
     * half-way, which would send it twice.
     */
    const writeHead = (attempt: Current, io: Io): Effect.Effect<boolean> =>
      Effect.uninterruptible(Effect.gen(function*() {
        const head = outbox[0]
        if (head === undefined) return true
        const sent = yield* Effect.either(io.send(head.frame, head.data))
        if (Either.isLeft(sent)) {
          if (sent.left.closing === true) {
            // The socket is closing: its close (1000 ends, else reconnect) decides. Should no
            // close event follow within a grace period, the attempt is given up as a drop.
            const message = sent.left.message
            if (attempt.scope !== undefined) {
              yield* Effect.forkIn(
                Effect.interruptible(Effect.delay(
                  Effect.sync(() => endAttempt(attempt, Retry(`answer not written: ${message}`))),
                  CLOSING_GRACE
                )),
                attempt.scope
              )
            }
            return false
          }
          if (sent.left.retry) {
            endAttempt(attempt, Retry(`answer not written: ${sent.left.message}`))
            return false
          }
          outbox.shift()
          requests.set(head.key, "pending")
          yield* Effect.logError(`The service refused an answer (${sent.left.message}): the request is pending again`)
          return true
        }
        outbox.shift()
        if (sent.right === "confirmed") {
          requests.set(head.key, "sent")
        } else {
          // Handed to the open socket; a later frame on this connection confirms it.
          unconfirmed.push(head)
          requests.set(head.key, "unconfirmed")
        }
        yield* Metrics.recordAnswer({ _tag: head.data.granted ? "Grant" : "Deny" })
        return true
      }))

    // --- the answer writer of an open attempt ---
    const writer = (attempt: Current, io: Io): Effect.Effect<void> =>
      Effect.gen(function*() {
        attempt.writing = true
        while (outbox.length > 0 && !attempt.ended) {
          if (!(yield* writeHead(attempt, io))) break
        }
        attempt.writing = false
      })

    // --- the idle timer of an open attempt ---
    const idleTimer = (attempt: Current): Effect.Effect<void> =>
      Effect.suspend(function loop(): Effect.Effect<void> {
        if (attempt.ended) return Effect.void
        const now = clock.unsafeCurrentTimeMillis()
        if (attempt.paused) {
          // A paused socket reads nothing: that is not the service's silence.
          return Effect.zipRight(Effect.sleep(settings.idleTimeout), Effect.suspend(loop))
        }
        const left = attempt.lastFrameAt + idleMillis - now
        if (left <= 0) {
          attempt.io?.abort()
          endAttempt(attempt, Retry(`no frame for ${Duration.format(settings.idleTimeout)} (idle time-out)`))
          return Effect.void
        }
        return Effect.zipRight(Effect.sleep(Duration.millis(left)), Effect.suspend(loop))
      })

    // --- reconnect bookkeeping ---
    let reconnects = 0
    let everOpen = false
    let downSince: number | undefined

    const attemptOnce: Effect.Effect<{ readonly outcome: AttemptOutcome; readonly alive: boolean; readonly opened: boolean }> =
      Effect.scoped(
        Effect.gen(function*() {
          const key = yield* Effect.either(credentials.keyFor("connect", options.agent))
          if (Either.isLeft(key)) {
            return { outcome: Fatal(key.left, "failed"), alive: false, opened: false }
          }
          const attemptScope = yield* Effect.scope
          const attempt: Current = {
            outcome: yield* Deferred.make<AttemptOutcome>(),
            key: key.right,
            io: undefined,
            paused: false,
            ended: false,
            opened: false,
            gotFrame: false,
            replaying: deliveredAny ? delivered.snapshot() : undefined,
            lastFrameAt: clock.unsafeCurrentTimeMillis(),
            writing: false,
            scope: attemptScope
          }
          current = attempt
          const attach = (io: Io): void => {
            attempt.io = io
            pauseIfFull(attempt)
          }
          const opened: Effect.Effect<void> = Effect.gen(function*() {
              const io = attempt.io
              if (attempt.ended || io === undefined) return
              attempt.opened = true
              attempt.lastFrameAt = clock.unsafeCurrentTimeMillis()
              const now = clock.unsafeCurrentTimeMillis()
              const downtime = downSince === undefined
                ? Option.none<Duration.Duration>()
                : Option.some(Duration.millis(now - downSince))
              if (everOpen) {
                reconnects += 1
                yield* Metrics.recordReconnect
              }
              everOpen = true
              downSince = undefined
              yield* SubscriptionRef.set(state, ConnectionState.Open({ reconnects, downtime }))
              yield* Effect.logDebug(reconnects === 0 ? "Event channel open" : "Event channel reopened").pipe(
                Effect.annotateLogs({ reconnects })
              )
              pauseIfFull(attempt)
              // At most one writer per attempt: claim it before the fork, so a `respond` racing with
              // the fork's start does not start a second one.
              if (outbox.length > 0 && !attempt.writing) {
                attempt.writing = true
                yield* Effect.forkIn(writer(attempt, io), attemptScope)
              }
              yield* Effect.forkIn(idleTimer(attempt), attemptScope)
            })
          const hooks: Hooks = { key: key.right, attach, opened, frame, namedEvent, tooLarge, alive }
          yield* options.transport(hooks).pipe(
            Effect.exit,
            Effect.flatMap((exit) =>
              Effect.sync(() => {
                if (Exit.isSuccess(exit)) return endAttempt(attempt, exit.value)
                // A defect (a bug) of the transport ends the connection with it instead of
                // leaving the attempt, and so `events`, waiting forever.
                if (!attempt.ended && !Cause.isInterruptedOnly(exit.cause)) {
                  attempt.ended = true
                  Deferred.unsafeDone(attempt.outcome, exit)
                }
              })
            ),
            Effect.forkIn(attemptScope)
          )
          const outcome = yield* Deferred.await(attempt.outcome)
          attempt.ended = true
          if (attempt.gotFrame) deliveredAny = true
          if (replayed > 0) {
            yield* Effect.logDebug(`${replayed} event(s) sent again after the reconnect were dropped (a replay)`)
            replayed = 0
          }
          return { outcome, alive: attempt.gotFrame, opened: attempt.opened }
        })
      )

    type Final = { readonly reason: EventStream.CloseReason; readonly exit: Exit.Exit<void, EventStreamError> }

    const loop: Effect.Effect<Final> = Effect.gen(function*() {
      // What the schedules' decisions report (issue 13 item 5): the state says `Reconnecting`
      // only once the schedule has decided that a retry will happen, so the attempts reported
      // (state, metrics, logs) are exactly the tries made.
      let retries = 0
      let lastError = ""
      const announce = (decision: { readonly _tag: string }) =>
        Effect.suspend(() => {
          if (decision._tag !== "Continue") return Effect.void
          retries += 1
          return Effect.zipRight(
            SubscriptionRef.set(state, ConnectionState.Reconnecting({ attempt: retries, lastError })),
            Metrics.recordReconnectAttempt
          )
        })
      const driver = yield* Schedule.driver(
        Schedule.onDecision(settings.reconnect, (_, decision) => announce(decision))
      )
      // A channel never open (issue 13 item 3): its own short schedule; the state stays
      // `Connecting` (nothing was lost: nothing was ever open).
      const firstDriver = yield* Schedule.driver(settings.firstConnect)
      // Attempts in this bout: since the connection last delivered a new event.
      let attempts = 0
      while (true) {
        attempts += 1
        const { alive, opened, outcome } = yield* attemptOnce.pipe(
          Effect.withSpan("EventStream.attempt", {
            attributes: { sessionId, attempt: attempts, url: options.printableUrl }
          })
        )
        if (outcome._tag === "End") {
          confirmAnswers()
          return { reason: outcome.reason, exit: Exit.void }
        }
        if (outcome._tag === "Fatal") return { reason: outcome.reason, exit: Exit.fail(outcome.error) }
        const resend = requeueUnconfirmed()
        if (resend > 0) {
          yield* Effect.logInfo(`${resend} answer(s) written just before the drop will be sent again`)
        }
        if (opened) downSince = clock.unsafeCurrentTimeMillis()
        lastError = describeError(outcome.error)
        if (!everOpen) {
          // Never open: retry quickly a few times, then say so. An attempt that used a whole
          // connect time-out is not tried again: the bound is one connect time-out plus the short
          // retry, whatever the address does.
          const timedOut = typeof outcome.error !== "string" && outcome.error._tag === "ConnectTimeout"
          yield* Effect.logInfo(`Event channel not open yet: ${lastError}`).pipe(Effect.annotateLogs({ attempts }))
          const next = timedOut ? Either.left(undefined) : yield* Effect.either(firstDriver.next(outcome.error))
          if (Either.isLeft(next)) {
            return {
              reason: "connection-lost",
              exit: Exit.fail(new NeverConnected({ sessionId, attempts, lastError }))
            }
          }
          continue
        }
        if (alive) {
          // It delivered new events: a fresh bout, a fresh schedule.
          attempts = 1
          retries = 0
          yield* driver.reset
        }
        yield* Effect.logInfo(`Event channel attempt ended: ${lastError}`).pipe(Effect.annotateLogs({ attempts }))
        const next = yield* Effect.either(driver.next(outcome.error))
        if (Either.isLeft(next)) {
          return { reason: "connection-lost", exit: Exit.fail(new ConnectionLost({ attempts, lastError })) }
        }
      }
    })

    // Uninterruptible: once `finished` is set, `state` must reach Closed and the mailbox must end,
    // even when `close` interrupts the runner while it is ending by itself (else `events` hangs).
    const finish = (final: Final): Effect.Effect<void> =>
      Effect.uninterruptible(Effect.suspend(() => {
        if (finished) return Effect.void
        finished = true
        // A clean end: what was written before it was read (the close comes after it on the wire).
        if (final.reason !== "connection-lost" && final.reason !== "failed" && final.reason !== "handshake-rejected") {
          confirmAnswers()
        }
        const unsentAnswers = [...unconfirmed, ...outbox].map((answer): EventStream.UnsentAnswer => {
          const cut = answer.key.indexOf("\u0000")
          return { actionSessionId: answer.key.slice(0, cut), resourceType: answer.key.slice(cut + 1) }
        })
        const unsent = unsentAnswers.length
        outbox.length = 0
        unconfirmed.length = 0
        requests.clear()
        return Effect.all([
          SubscriptionRef.set(
            state,
            ConnectionState.Closed(unsent > 0 ? { reason: final.reason, unsent: unsentAnswers } : { reason: final.reason })
          ),
          unsent > 0
            ? Effect.logWarning(`${unsent} answer(s) not sent (or not confirmed): the event channel closed (${final.reason})`)
            : Effect.void,
          Effect.logDebug(`Event channel closed: ${final.reason}`),
          // Issue 13: the session's id, and whether it may still be running, on every error.
          mailbox.done(Exit.mapError(final.exit, (error) => inSession(error, sessionId)))
        ], { discard: true })
      }))

    const closedByCaller: Final = { reason: "closed-by-caller", exit: Exit.void }

    const run: Effect.Effect<void> = loop.pipe(
      Effect.catchAllDefect((defect): Effect.Effect<Final> => Effect.succeed({ reason: "failed", exit: Exit.die(defect) })),
      Effect.flatMap(finish),
      Effect.onInterrupt(() => finish(closedByCaller)),
      Effect.annotateLogs({ sessionId }),
      Effect.withSpan("EventStream.connection", { attributes: { sessionId, url: options.printableUrl } })
    )

    const start = Effect.suspend(() => {
      if (started) return Effect.void
      started = true
      if (finished) return Effect.void
      return Effect.forkIn(run, scope).pipe(Effect.tap((fiber) => {
        runner = fiber
      }))
    })

    const events: Stream.Stream<SessionEvent.SessionEvent, EventStreamError> = Stream.unwrap(
      Effect.as(
        start,
        Mailbox.toStream(mailbox).pipe(Stream.mapChunksEffect((chunk) => {
          taken(chunk.length)
          // Metrics: one update per chunk and event tag, not per frame.
          return Effect.as(Metrics.recordEvents(chunk), chunk)
        }))
      )
    )

    const close: Effect.Effect<void> = Effect.suspend(() => {
      if (runner === undefined) {
        started = true
        return finish(closedByCaller)
      }
      return Effect.asVoid(Fiber.interrupt(runner))
    })

    const respond = (
      request: SessionEvent.ExternalResourceRequested,
      answer: Answer.Answer
    ): Effect.Effect<void, RespondError> =>
      Effect.suspend((): Effect.Effect<void, RespondError> => {
        const resourceType = SessionEvent.resourceTypeRaw(request.resource_type)
        const key = requestKey(request.action_session_id, resourceType)
        if (finished) {
          // The connection is closed: nothing can be sent any more, whatever was asked (U16).
          return Effect.fail(
            new RequestNotPending({ resourceType, actionSessionId: request.action_session_id, reason: "channel-closed" })
          )
        }
        const status = requests.get(key)
        if (status === undefined) {
          return Effect.fail(
            new RequestNotPending({ resourceType, actionSessionId: request.action_session_id, reason: "never-received" })
          )
        }
        if (status !== "pending") {
          return Effect.fail(
            new RequestNotPending({
              resourceType,
              actionSessionId: request.action_session_id,
              reason: "already-answered"
            })
          )
        }
        if (outbox.length >= settings.answerBufferSize) {
          return Effect.fail(new AnswerBufferFull({ limit: settings.answerBufferSize }))
        }
        requests.set(key, "queued")
        outbox.push({
          key,
          frame: Wire.encodeAnswer(dialect.answerKey, request, answer),
          data: Wire.answerData(request, answer)
        })
        const attempt = current
        if (attempt !== undefined && attempt.opened && !attempt.ended && !attempt.writing && attempt.io !== undefined && attempt.scope !== undefined) {
          attempt.writing = true
          return Effect.asVoid(Effect.forkIn(writer(attempt, attempt.io), attempt.scope))
        }
        return Effect.void
      })

    yield* Effect.addFinalizer(() => close)

    const connection: EventStream.Connection = { sessionId, events, state, respond, close }
    return {
      connection,
      buffered: () => held,
      peakBuffered: () => peak,
      skipped: () => skipped
    }
  })

// ---------------------------------------------------------------------------
// WebSocket transport
// ---------------------------------------------------------------------------

/** The HTTP answer to a refused upgrade. */
export interface UpgradeRejection {
  readonly status: number
  readonly reason: string
}

const rejections = new WeakMap<object, UpgradeRejection>()

/** Records the HTTP status with which the server refused a socket's upgrade (`webSocket.ts`). */
export const recordRejection = (ws: object, rejection: UpgradeRejection): void => {
  rejections.set(ws, rejection)
}

/** The refused upgrade recorded for a socket by the SDK's own constructor. */
export const rejectionOf = (ws: object): Option.Option<UpgradeRejection> => Option.fromNullable(rejections.get(ws))

const UNEXPECTED_RESPONSE = /Unexpected server response: (\d{3})/

/**
 * The refused upgrade status found in an open error of any `ws`-based socket (`ws` reports
 * `Unexpected server response: 401` when no one handles `unexpected-response`).
 */
export const rejectionFromError = (cause: unknown): Option.Option<UpgradeRejection> => {
  const match = UNEXPECTED_RESPONSE.exec(describeCause(cause))
  return match?.[1] === undefined ? Option.none() : Option.some({ status: Number(match[1]), reason: match[0] })
}

/** A constructor that can bound the size of one message while it is read (`ws`'s `maxPayload`). */
export type SizedConstructor = (url: string, maxPayload: number) => globalThis.WebSocket

const sizedConstructors = new WeakMap<object, SizedConstructor>()

/**
 * Registers the bounded form of a `Socket.WebSocketConstructor` (`webSocket.ts` does for its
 * own): the engine then opens every socket with `maxPayload` = its `maxFrameSize`, so a frame
 * over it is refused while it is read instead of being read whole first.
 */
export const registerSizedConstructor = (constructor: object, sized: SizedConstructor): void => {
  sizedConstructors.set(constructor, sized)
}

/**
 * The largest message a socket reads: `maxFrameSize`. With `failOnFrameError: false` a frame
 * over it is read to be skipped, up to {@link SKIPPABLE_FRAME_SIZE} (16 MiB, or `maxFrameSize`
 * when larger); past that the stream fails with `FrameTooLarge` all the same.
 */
export const maxPayloadOf = (settings: Settings): number =>
  settings.failOnFrameError ? settings.maxFrameSize : Math.max(settings.maxFrameSize, SKIPPABLE_FRAME_SIZE)

/** The largest frame read (to be skipped) with `failOnFrameError: false`. */
export const SKIPPABLE_FRAME_SIZE = 16 * 1024 * 1024

/** The `code` of a `ws` error (in an `ErrorEvent`'s `error`), if any. */
const wsErrorCode = (cause: unknown): string | undefined => {
  const error = Predicate.hasProperty(cause, "error") ? cause.error : cause
  return Predicate.hasProperty(error, "code") && typeof error.code === "string" ? error.code : undefined
}

/** `ws` refused a message over `maxPayload` (it then closes with 1009). */
const isPayloadTooLarge = (cause: unknown): boolean =>
  wsErrorCode(cause) === "WS_ERR_UNSUPPORTED_MESSAGE_LENGTH" ||
  describeCause(cause).includes("Max payload size exceeded")

/** A socket whose reading can be paused (the `ws` package's sockets can). */
interface Pausable {
  readonly pause: () => void
  readonly resume: () => void
}

const isPausable = (ws: object): ws is Pausable =>
  Predicate.hasProperty(ws, "pause") && typeof ws.pause === "function" &&
  Predicate.hasProperty(ws, "resume") && typeof ws.resume === "function"

/** Drops the connection at once when the socket can (`ws`'s `terminate()`), else closes it. */
const terminate = (ws: globalThis.WebSocket): void => {
  if (Predicate.hasProperty(ws, "terminate") && typeof ws.terminate === "function") {
    ws.terminate()
  } else {
    ws.close()
  }
}

const OPEN = 1
const CLOSING = 2

const noop = (): void => {}

const closeQuietly = (ws: globalThis.WebSocket): void => {
  // `ws` emits `error` when a socket still connecting is closed: keep it from being unhandled.
  ws.addEventListener("error", noop)
  // Closing already (after a read error, or a close the peer may never complete): nothing
  // polite is left to do, and a hostile peer would hold the socket until `ws`'s close time-out.
  if (ws.readyState === CLOSING) return terminate(ws)
  if (ws.readyState <= OPEN) {
    try {
      ws.close(1000)
    } catch {
      terminate(ws)
    }
  }
}

const socketIo = (ws: globalThis.WebSocket): Io => {
  const pausable = isPausable(ws) ? ws : undefined
  return {
    send: (frame) =>
      Effect.suspend(() => {
        // Closing or closed: how the socket ended (1000 or a drop) decides, when it arrives.
        if (ws.readyState !== OPEN) return Effect.fail({ retry: true, closing: true, message: "the socket is not open" })
        try {
          ws.send(frame)
          return Effect.succeed("written" as const)
        } catch (cause) {
          return Effect.fail({ retry: true, message: describeCause(cause) })
        }
      }),
    pause: () => pausable?.pause(),
    resume: () => pausable?.resume(),
    abort: () => terminate(ws)
  }
}

/** Maps how the platform socket's run ended to the attempt's outcome. */
const socketOutcome = (
  error: Socket.SocketError,
  ws: globalThis.WebSocket | undefined,
  key: Redacted.Redacted<string>,
  connectTimeout: Duration.Duration,
  settings: Settings
): AttemptOutcome => {
  // A frame over `maxPayload`: refused while read, never retried (the service would send it
  // again). Its exact size is unknown: it is at least one byte over what the socket accepted.
  if (error.reason === "Read" && isPayloadTooLarge(error.cause)) {
    return Fatal(new FrameTooLarge({ size: maxPayloadOf(settings) + 1, limit: settings.maxFrameSize }), "failed")
  }
  // A text frame that is not UTF-8: the socket is closed by `ws` (1007); a frame error.
  if (error.reason === "Read" && wsErrorCode(error.cause) === "WS_ERR_INVALID_UTF8") {
    return Fatal(new MalformedFrame({ raw: "", message: "a text frame that is not valid UTF-8" }), "failed")
  }
  if (error.reason === "Close") {
    // 1000 only reaches here when the close raced the open: the service ended the session.
    if (error.code === 1000) return End("closed-by-service")
    const reason = scrub(error.closeReason ?? "", key)
    if (rejectionCloseCodes.has(error.code)) {
      return Fatal(new HandshakeRejected({ code: error.code, reason }), "handshake-rejected")
    }
    return Retry(`closed with code ${error.code}${reason.length > 0 ? `: ${reason}` : ""}`)
  }
  if (error.reason === "OpenTimeout") return Retry(new ConnectTimeout({ timeout: connectTimeout }))
  if (error.reason === "Open") {
    const rejection = Option.orElse(
      ws === undefined ? Option.none() : rejectionOf(ws),
      () => rejectionFromError(error.cause)
    )
    if (Option.isSome(rejection)) {
      const { reason, status } = rejection.value
      if (rejectionStatuses.has(status)) {
        return Fatal(new HandshakeRejected({ code: status, reason: scrub(reason, key) }), "handshake-rejected")
      }
      return Retry(`upgrade refused with HTTP ${status}`)
    }
    return Retry(`open failed: ${scrub(describeCause(error.cause), key)}`)
  }
  return Retry(`${error.reason.toLowerCase()} failed: ${scrub(describeCause(error.cause), key)}`)
}

/** The WebSocket transport: one socket per attempt through the platform's `Socket`. */
export const webSocketTransport = (options: {
  readonly base: string
  readonly dialect: Dialect.Dialect
  readonly sessionId: string
  readonly settings: Settings
  readonly constructor: (url: string, protocols?: string | Array<string> | undefined) => globalThis.WebSocket
}): Transport =>
(hooks) =>
  Effect.gen(function*() {
    const { dialect, sessionId } = options
    const url = Wire.connectUrl({
      base: options.base,
      path: dialect.connectPath,
      handshake: dialect.handshake,
      sessionId,
      apiKey: hooks.key
    })
    let ws: globalThis.WebSocket | undefined
    const socket = yield* Socket.fromWebSocket(
      Effect.acquireRelease(
        Effect.try({
          try: () => {
            const sized = sizedConstructors.get(options.constructor)
            const created = sized === undefined
              ? options.constructor(url)
              : sized(url, maxPayloadOf(options.settings))
            ws = created
            hooks.attach(socketIo(created))
            return created
          },
          catch: (cause) => new Socket.SocketGenericError({ reason: "Open", cause: scrub(describeCause(cause), hooks.key) })
        }),
        (socket) => Effect.sync(() => closeQuietly(socket))
      ),
      {
        // 1006 (an abrupt drop) is an error to reconnect from, unlike the platform's default.
        closeCodeIsError: (code) => code !== 1000,
        openTimeout: options.settings.connectTimeout
      }
    )
    yield* Effect.logDebug(`Connecting to ${Wire.redactUrl(url)}`)
    const onOpen = Effect.suspend(() => {
      if (ws === undefined) return Effect.void
      if (dialect.handshake !== "query") ws.send(Wire.handshakeMessage(hooks.key, sessionId))
      return hooks.opened
    })
    // The handler is synchronous on purpose: `runRaw` forks an Effect returned by the handler
    // into a FiberSet and takes the next message at once (it never awaits it), so an Effect that
    // offers to a bounded queue would pile up fibers instead of applying back-pressure. Instead
    // the engine pauses the `ws` socket (`pause()`/`resume()`) when its buffer is full.
    return yield* socket.runRaw(hooks.frame, { onOpen }).pipe(
      Effect.as(End("closed-by-service")),
      Effect.catchAll((error) => Effect.succeed(socketOutcome(error, ws, hooks.key, options.settings.connectTimeout, options.settings)))
    )
  })

// ---------------------------------------------------------------------------
// The service
// ---------------------------------------------------------------------------

/** The layer's options, checked. */
export interface ServiceOptions extends Omit<EventStream.ConnectOptions, "agent"> {
  readonly url: string
  readonly dialect?: Dialect.Dialect | undefined
  readonly allowInsecure?: boolean | undefined
}

/** Checks the address for a connection: `wss`, or plain to loopback or with `allowInsecure`. */
export const checkAddress = (url: string, allowInsecure: boolean | undefined): Effect.Effect<string, InsecureTransport> =>
  Either.match(checkSecureUrl(url, allowInsecure === true), {
    onLeft: Effect.fail,
    onRight: () => Effect.succeed(url)
  })

/**
 * Opens a WebSocket connection's engine (the service's `connect`, with the internals tests
 * observe).
 */
export const connectEngine = (
  options: ServiceOptions,
  sessionId: string,
  connectOptions: EventStream.ConnectOptions = {}
): Effect.Effect<Engine, InsecureTransport, Scope.Scope | Credentials.Credentials | Socket.WebSocketConstructor> =>
  Effect.gen(function*() {
    const base = yield* checkAddress(options.url, options.allowInsecure)
    const constructor = yield* Socket.WebSocketConstructor
    const dialect = options.dialect ?? Dialect.documented
    const settings = resolveSettings(options, connectOptions)
    return yield* makeEngine({
      sessionId,
      settings,
      dialect,
      agent: connectOptions.agent,
      printableUrl: printableUrl(Wire.joinPath(base, dialect.connectPath)),
      transport: webSocketTransport({ base, dialect, sessionId, settings, constructor })
    })
  })

/**
 * A service over a transport's `connectEngine`, run with exactly the services it needs (captured
 * when the service is made: the context of `make` may hold a Scope that is not the caller's).
 */
export const serviceOf = <R>(
  context: Context.Context<R>,
  connectEngine: (
    sessionId: string,
    connectOptions: EventStream.ConnectOptions
  ) => Effect.Effect<Engine, InsecureTransport, Scope.Scope | R>
): EventStream.Service => {
  const connect = (sessionId: string, connectOptions: EventStream.ConnectOptions = {}) =>
    Effect.map(connectEngine(sessionId, connectOptions), (engine) => engine.connection).pipe(
      Effect.provide(context)
    )
  return {
    connect,
    events: (sessionId, connectOptions) =>
      Stream.unwrapScoped(Effect.map(connect(sessionId, connectOptions), (connection) => connection.events))
  }
}

/** The WebSocket service. */
export const make = (
  options: ServiceOptions
): Effect.Effect<EventStream.Service, never, Credentials.Credentials | Socket.WebSocketConstructor> =>
  Effect.gen(function*() {
    const context = Context.make(Credentials.Credentials, yield* Credentials.Credentials).pipe(
      Context.add(Socket.WebSocketConstructor, yield* Socket.WebSocketConstructor)
    )
    return serviceOf(context, (sessionId, connectOptions) => connectEngine(options, sessionId, connectOptions))
  })
