/**
 * The options of one connection with their defaults applied (the core's `ConnectionSettings`),
 * and the default schedules (the protocol core's `Connection.defaults` as `Schedule`s of the
 * edition's Effect line).
 */
import * as Duration from "effect/Duration"
import * as Schedule from "effect/Schedule"
import { Connection } from "effect-agent-session-core"
import { ConnectionSettings } from "effect-agent-session-shell"
import type * as EventStream from "../../../src/EventStream.js"
import type * as SessionEvent from "../../../src/SessionEvent.js"
import { delaysCappedAt, type DurationInput, durationOf, recurringUpTo } from "../../../src/internal/line.js"

const { firstConnect, reconnect } = Connection.defaults

/** The protocol's reconnect schedule (`Connection.defaults.reconnect`) as an Effect `Schedule`. */
export const defaultReconnectSchedule: Schedule.Schedule<Duration.Duration, unknown> = Schedule.exponential(
  Duration.millis(reconnect.initialMillis),
  reconnect.factor
).pipe(
  Schedule.jittered,
  delaysCappedAt(Duration.millis(reconnect.maxDelayMillis)),
  recurringUpTo(reconnect.retries)
)

/**
 * The default retry of a channel that has never been open (`Connection.defaults.firstConnect`): a
 * wrong address fails in about a second (plus one connect time-out at most) with
 * `NeverConnected`, not after the reconnect schedule's minute.
 */
export const defaultFirstConnectSchedule: Schedule.Schedule<Duration.Duration, unknown> = Schedule.exponential(
  Duration.millis(firstConnect.initialMillis),
  firstConnect.factor
).pipe(recurringUpTo(firstConnect.retries))

/** A retry schedule of a connection. */
type Retry = Schedule.Schedule<unknown, EventStream.AttemptError>

/** Every option of a connection, with its default applied. */
export interface Settings
  extends ConnectionSettings.Settings<Duration.Duration, Retry, SessionEvent.ExternalResourceRequested>
{}

const edition: ConnectionSettings.Edition<DurationInput, Duration.Duration, Retry> = {
  duration: (given, defaultMillis) => given === undefined ? Duration.millis(defaultMillis) : durationOf(given),
  reconnect: defaultReconnectSchedule,
  firstConnect: defaultFirstConnectSchedule
}

/** A count option: a finite number >= 1 (rounded down), else the default (`Connection.positiveInt`). */
export const positiveInt = Connection.positiveInt

const resolveShared = ConnectionSettings.resolver(edition)

/**
 * The settings of one connection: its own options over the layer's, over the defaults. A
 * connection that sets none of its own shares its layer's settings (`ConnectionSettings.resolver`).
 */
export const resolveSettings = (
  layer: Omit<EventStream.ConnectOptions, "agent">,
  own: EventStream.ConnectOptions,
  dialect?: { readonly replaysOnReconnect?: boolean | undefined }
): Settings => resolveShared(layer, own, dialect)
