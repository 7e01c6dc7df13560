/**
 * The options of one connection with their defaults applied, and the default schedules (the
 * protocol core's `Connection.defaults` as Effect 4 `Schedule`s).
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import { Connection } from "effect-agent-session-core"
import type * as EventStream from "../../EventStream.js"
import type * as SessionEvent from "../../SessionEvent.js"
import * as Wire from "../../Wire.js"

const { firstConnect, reconnect } = Connection.defaults

/** The protocol's reconnect schedule (`Connection.defaults.reconnect`) as an Effect `Schedule`. */
export const defaultReconnectSchedule: Schedule.Schedule<Duration.Duration, unknown> = Schedule.exponential(
  Duration.millis(reconnect.initialMillis),
  reconnect.factor
).pipe(
  Schedule.jittered,
  Schedule.modifyDelay(({ duration }) =>
    Effect.succeed(Duration.min(duration, Duration.millis(reconnect.maxDelayMillis)))
  ),
  Schedule.upTo({ times: reconnect.retries })
)

/**
 * The default retry of a channel that has never been open (`Connection.defaults.firstConnect`): a
 * wrong address fails in about a second (plus one connect time-out at most) with
 * `NeverConnected`, not after the reconnect schedule's minute.
 */
export const defaultFirstConnectSchedule: Schedule.Schedule<Duration.Duration, unknown> = Schedule.exponential(
  Duration.millis(firstConnect.initialMillis),
  firstConnect.factor
).pipe(Schedule.upTo({ times: firstConnect.retries }))

/** Every option of a connection, with its default applied. */
export interface Settings {
  readonly reconnect: Schedule.Schedule<unknown, EventStream.AttemptError>
  readonly firstConnect: Schedule.Schedule<unknown, EventStream.AttemptError>
  readonly idleTimeout: Duration.Duration
  readonly connectTimeout: Duration.Duration
  readonly answerTimeout: Duration.Duration
  readonly bufferSize: number
  readonly answerBufferSize: number
  readonly maxFrameSize: number
  readonly strict: boolean
  readonly endOnError: boolean
  readonly failOnFrameError: boolean
  /** The service is known to replay on a reconnect: a proven replay is dropped (the core's `Replay`). */
  readonly dropReplays: boolean
  /** How long after an open frames that may be a replay are held at most. */
  readonly replayHold: Duration.Duration
  readonly pendingRequests: ReadonlyArray<SessionEvent.ExternalResourceRequested>
}

/** A count option: a finite number >= 1 (rounded down), else the default (`Connection.positiveInt`). */
export const positiveInt = Connection.positiveInt

const duration = (input: Duration.Input | undefined, fallbackMillis: number): Duration.Duration =>
  input === undefined ? Duration.millis(fallbackMillis) : Duration.fromInputUnsafe(input)

/** The settings of one connection: its own options over the layer's, over the defaults. */
export const resolveSettings = (
  layer: Omit<EventStream.ConnectOptions, "agent">,
  own: EventStream.ConnectOptions,
  dialect?: { readonly replaysOnReconnect?: boolean | undefined }
): Settings => ({
  reconnect: own.reconnect ?? layer.reconnect ?? defaultReconnectSchedule,
  firstConnect: own.firstConnect ?? layer.firstConnect ?? defaultFirstConnectSchedule,
  idleTimeout: duration(own.idleTimeout ?? layer.idleTimeout, Connection.defaults.idleTimeoutMillis),
  connectTimeout: duration(own.connectTimeout ?? layer.connectTimeout, Connection.defaults.connectTimeoutMillis),
  answerTimeout: duration(own.answerTimeout ?? layer.answerTimeout, Connection.defaults.answerTimeoutMillis),
  bufferSize: positiveInt(own.bufferSize ?? layer.bufferSize, Connection.defaults.bufferSize),
  answerBufferSize: positiveInt(own.answerBufferSize ?? layer.answerBufferSize, Connection.defaults.answerBufferSize),
  maxFrameSize: positiveInt(own.maxFrameSize ?? layer.maxFrameSize, Wire.defaultMaxFrameSize),
  pendingRequests: own.pendingRequests ?? [],
  strict: own.strict ?? layer.strict ?? false,
  endOnError: own.endOnError ?? layer.endOnError ?? false,
  failOnFrameError: own.failOnFrameError ?? layer.failOnFrameError ?? true,
  dropReplays: own.replaysOnReconnect ?? layer.replaysOnReconnect ?? dialect?.replaysOnReconnect ?? false,
  replayHold: duration(own.replayHold ?? layer.replayHold, Connection.defaults.replayHoldMillis)
})
