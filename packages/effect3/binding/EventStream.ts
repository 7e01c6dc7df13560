/**
 * The event channel: `{ws_url}/v1/connect` as a `Stream` of typed session events that survives
 * dropped connections, through which the caller answers the agent's requests.
 *
 * The declarations of the public module `EventStream`, written once for both editions:
 * each edition's `src/EventStream.ts` is its entry point and re-exports them.
 *
 * @since 0.1.0
 */
import * as Config from "effect/Config"
import type * as Data from "effect/Data"
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Option from "effect/Option"
import type * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import type * as Stream from "effect/Stream"
import type * as SubscriptionRef from "effect/SubscriptionRef"
import type * as Answer from "../src/Answer.js"
import type * as Credentials from "../src/Credentials.js"
import * as Dialect from "../src/Dialect.js"
import type { ConnectTimeout, EventStreamError, InsecureTransport, RespondError } from "../src/Errors.js"
import * as internal from "./internal/eventStream.js"
import {
  type ConfigError,
  configString,
  configValidated,
  type DurationInput,
  type HttpClient,
  layerFromConfig,
  ServiceTag,
  type Socket
} from "../src/internal/line.js"
import * as sse from "./internal/sse.js"
import type * as SessionEvent from "../src/SessionEvent.js"
import { type Connection as CoreConnection, Http, type Ledger } from "effect-agent-session-core"
import { ChannelAddress } from "effect-agent-session-shell"

/**
 * The state of a connection: `Connecting -> Open -> Reconnecting { attempt } -> Open ... -> Closed`.
 *
 * @since 0.1.0
 * @category models
 */
export type ConnectionState = Data.TaggedEnum<{
  /** Not open yet (the consumer of `events` has not started, or the first attempt is under way). */
  Connecting: Record<never, never>
  /** Open. `reconnects` counts the reopenings; `downtime` is how long the last gap lasted. */
  Open: { readonly reconnects: number; readonly downtime: Option.Option<Duration.Duration> }
  /** Down, retrying on the schedule. `attempt` starts at 1. */
  Reconnecting: { readonly attempt: number; readonly lastError: string }
  /**
   * Closed for good. `unsent` (present only when not empty) lists the answers accepted by
   * `respond` that were never written (or never confirmed) when it closed, such as answers in
   * flight as the service closed with 1000: they were not delivered.
   */
  Closed: { readonly reason: CloseReason; readonly unsent?: ReadonlyArray<UnsentAnswer> }
}>

/**
 * An answer accepted by `respond` but not delivered when the connection closed for good (the
 * protocol core's `Ledger.UnsentAnswer`).
 *
 * @since 0.1.0
 * @category models
 */
export interface UnsentAnswer extends Ledger.UnsentAnswer {}

/**
 * The constructors and matchers of {@link ConnectionState}.
 *
 * @since 0.1.0
 * @category constructors
 */
export const ConnectionState: Data.TaggedEnum.Constructor<ConnectionState> = internal.ConnectionState

/**
 * Why a connection closed for good: `complete` (received and delivered), `closed-by-caller`
 * (`close` was called, or the connection's scope closed), `closed-by-service` (the service closed
 * the channel with 1000 before `complete`: the session ended), `error-event` (an `error` event
 * arrived with `endOnError` set), `connection-lost` (the reconnect schedule gave up),
 * `handshake-rejected` (the service refused the credentials), `failed` (a frame error
 * with `failOnFrameError`, or a missing key, ended the stream). The protocol core's
 * `Connection.CloseReason`.
 *
 * @since 0.1.0
 * @category models
 */
export type CloseReason = CoreConnection.CloseReason

/**
 * What ended a connection attempt that will be retried, as the `reconnect` and `firstConnect`
 * schedules see it: a `ConnectTimeout`, or a description such as `closed with code 1006`.
 *
 * @since 0.1.0
 * @category models
 */
export type AttemptError = ConnectTimeout | string

/**
 * Options of one connection. Every time-out and bound is a typed error or behaviour.
 *
 * @since 0.1.0
 * @category models
 */
export interface ConnectOptions {
  /** Whose key to connect with: an agent (or its id); default per `Credentials`. */
  readonly agent?: Credentials.AgentKeyRef | string | undefined
  /**
   * The reconnect schedule. Its input is what ended the last attempt ({@link AttemptError}: a
   * `ConnectTimeout`, or a description such as `closed with code 1006`). Default
   * {@link defaultReconnectSchedule}: exponential from 250 ms, factor 2, jittered, capped at
   * 10 s, at most 10 attempts. It restarts after an attempt that received an event (keep-alives
   * aside). It governs a channel that has been open: when it ends, `events` fails with
   * `ConnectionLost { attempts, lastError }` (a channel never open fails with `NeverConnected`,
   * see `firstConnect`).
   */
  readonly reconnect?: Schedule.Schedule<unknown, AttemptError> | undefined
  /**
   * The retry of a channel that has never been open: a first connection refused,
   * unresolvable or refused at the upgrade is tried again on this schedule, then `events` fails
   * with `NeverConnected` (the state stays `Connecting`). A first attempt that did not open within
   * `connectTimeout` is not tried again. Default: 2 more tries, 250 ms then 500 ms apart, so a
   * wrong address fails in about a second (at most one connect time-out plus that). The
   * `reconnect` schedule governs a channel that has been open.
   */
  readonly firstConnect?: Schedule.Schedule<unknown, AttemptError> | undefined
  /**
   * The channel continues one watched before, by this process or another (a cluster runner
   * runs each session it takes over with it): until it first opens it is retried on `reconnect`
   * like a dropped channel, a first attempt that timed out included, instead of on
   * `firstConnect`; when `reconnect` gives up, `events` fails with `NeverConnected`. For a
   * session known to exist, whose channel may be slow to open on a loaded machine. Default false.
   */
  readonly resumes?: boolean | undefined
  /**
   * No frame for this long is an idle time-out: the connection is dropped and reopened on the
   * schedule. Not counted while reading is paused for a slow consumer. Default 60 s.
   */
  readonly idleTimeout?: DurationInput | undefined
  /**
   * An attempt that does not open within this ends with `ConnectTimeout`, fed to the `reconnect`
   * schedule (never the failure of `events`). Default 10 s.
   */
  readonly connectTimeout?: DurationInput | undefined
  /**
   * Server-Sent Events: an answer `POST` with no response within this is abandoned (the
   * answer stays queued and the connection is reopened); `close` and scope exit wait at most
   * this for an answer in flight. Default 10 s.
   */
  readonly answerTimeout?: DurationInput | undefined
  /**
   * Frames held for a slow consumer before reading pauses (frames the socket had already read
   * still arrive); reading resumes once half are taken. Default 1024.
   */
  readonly bufferSize?: number | undefined
  /** Answers waiting to be written (while disconnected) before `AnswerBufferFull`. Default 64. */
  readonly answerBufferSize?: number | undefined
  /** The largest frame accepted, in bytes (`FrameTooLarge`). Default 1 MiB. */
  readonly maxFrameSize?: number | undefined
  /** Unknown events fail with `UnknownEvent` instead of arriving as `Unrecognized`. Default false. */
  readonly strict?: boolean | undefined
  /** An `error` event ends the stream after it is delivered. Default false. */
  readonly endOnError?: boolean | undefined
  /** Frame errors (malformed, undecodable, too large) fail the stream instead of being skipped with a warning log. Default true: they fail. */
  readonly failOnFrameError?: boolean | undefined
  /**
   * Whether the service sends again, on a reopened connection, the last events it had sent before
   * (default: the dialect's `replaysOnReconnect`, false for both built-in dialects). When true, the
   * frames a reopened connection starts with are held while they repeat, in order, the last events
   * delivered, and a proven replay is dropped: the longest run of those first frames equal to
   * the tail of what was delivered, decided by the first frame that breaks it, a keep-alive, a frame
   * error, the attempt's end or `replayHold`. When false, every event received is delivered,
   * repeats included (an `action_run` repeated is two actions). Either way the `action_run` events
   * delivered are never fewer than those the newest connection sent (docs/reliability.md#replays).
   */
  readonly replaysOnReconnect?: boolean | undefined
  /**
   * With `replaysOnReconnect`: how long after a reconnect frames that may be a replay are held
   * at most; then they are judged with what has arrived (the replay is the part proven so far).
   * Default 1 s.
   */
  readonly replayHold?: DurationInput | undefined
  /**
   * Requests this session received on an earlier connection (another process's, such as a
   * cluster runner that died) and that are still unanswered: `respond` accepts them as if this
   * connection had received them. Default none.
   */
  readonly pendingRequests?: ReadonlyArray<SessionEvent.ExternalResourceRequested> | undefined
}

/**
 * An open (or opening) connection to a session's event channel.
 *
 * @since 0.1.0
 * @category models
 */
export interface Connection {
  readonly sessionId: string
  /**
   * The events, in arrival order, ending after `complete` (also after `close`, after an `error`
   * event with `endOnError`, or when the service closes with 1000 first). Run it once: the
   * connection opens when it starts, and a second run continues from the same buffer. Fails with
   * a typed {@link EventStreamError}, after delivering the events received before the failure.
   */
  readonly events: Stream.Stream<SessionEvent.SessionEvent, EventStreamError>
  /** The connection's state: a `SubscriptionRef`, whose changes can be observed. */
  readonly state: SubscriptionRef.SubscriptionRef<ConnectionState>
  /**
   * Returns once the connection has first opened (its state left `Connecting`), or has ended
   * without opening (`events` then fail, with `NeverConnected` for one): what `state` tells,
   * without a `SubscriptionRef` made for it. The connection opens when `events` start: it waits
   * for them to run, or for `close`.
   */
  readonly opened: Effect.Effect<void>
  /**
   * Answers a request this connection received and has not answered, else
   * `RequestNotPending`. It returns once the answer is queued: it is written at once when open,
   * or in order right after the next handshake (`AnswerBufferFull` past `answerBufferSize`).
   * An answer written just before an abrupt drop, with no frame after it, is written again
   * after the reconnect.
   */
  readonly respond: (
    request: SessionEvent.ExternalResourceRequested,
    answer: Answer.Answer
  ) => Effect.Effect<void, RespondError>
  /**
   * Closes the socket with code 1000; no reconnect follows; `events` ends after the events
   * already received; `state` becomes `Closed { reason: "closed-by-caller" }`.
   */
  readonly close: Effect.Effect<void>
  /**
   * Ends the connection without losing what the service sent: asks the service to close it (a
   * WebSocket close, code 1000) and reads on until it has, so that every event the service sent
   * before it closed arrives on `events`, which then end; no reconnect follows; `state` becomes
   * `Closed { reason: "closed-by-caller" }` (or what the service ended it with first, such as
   * `complete`). Returns once the connection has ended. The service resumes a later connection
   * after the last event it sent: with `close`, the events it had sent that had not been read
   * yet (in the sockets' buffers) are lost to both connections.
   *
   * Keep consuming `events` meanwhile (a paused socket reads nothing, the service's close
   * included). A service that never answers the close is waited for 10 s: the connection then
   * ends as it stands, as the caller's close. Where the connection is not open, or the transport
   * cannot read on once closing (Server-Sent Events; a standard WHATWG `WebSocket`, which drops
   * what arrives while closing), it is `close`.
   */
  readonly drain: Effect.Effect<void>
}

/**
 * The operations of the event channel: `connect` a session (scoped), or its `events` as a plain
 * stream.
 *
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /**
   * Opens a connection for a session, closed when the scope closes. Nothing is sent before its
   * `events` are consumed: it fails only with `InsecureTransport` (a plain address to a host
   * that is not loopback).
   */
  readonly connect: (
    sessionId: string,
    options?: ConnectOptions
  ) => Effect.Effect<Connection, InsecureTransport, Scope.Scope>
  /** The events of a session as a plain stream (connect, run, close): the errors of both. */
  readonly events: (
    sessionId: string,
    options?: ConnectOptions
  ) => Stream.Stream<SessionEvent.SessionEvent, EventStreamError | InsecureTransport>
}

/**
 * The event channel service.
 *
 * @since 0.1.0
 * @category tags
 */
export class EventStream extends ServiceTag<EventStream, Service>()("effect-agent-session/EventStream") {}

/**
 * Options of the layer: where to connect, in which dialect, and defaults for every connection.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options extends Omit<ConnectOptions, "agent"> {
  /** The WebSocket base URL (`{ws_url}`), such as `wss://host`; for {@link layerSse}, the HTTP base URL. */
  readonly url: string
  /** The dialect (default `Dialect.documented`; for {@link layerSse}, `Dialect.observed`). */
  readonly dialect?: Dialect.Dialect | undefined
  /** Allows `ws://` (or `http://` for SSE) to hosts that are not loopback. Default false. */
  readonly allowInsecure?: boolean | undefined
}

/**
 * The default reconnect schedule: exponential from 250 ms, factor 2, jittered, capped at 10 s,
 * at most 10 attempts.
 *
 * @since 0.1.0
 * @category constructors
 */
export const defaultReconnectSchedule: Schedule.Schedule<Duration.Duration, unknown> =
  internal.defaultReconnectSchedule

/**
 * The requirements of the WebSocket layer.
 *
 * @since 0.1.0
 * @category models
 */
export type Requirements = Credentials.Credentials | Socket.WebSocketConstructor

/**
 * The type of {@link layer}.
 *
 * @since 0.1.0
 * @category models
 */
export type LayerType = Layer.Layer<EventStream, never, Requirements>

/**
 * Builds the WebSocket event channel service.
 *
 * Semantics of every connection it opens:
 * - **Address.** `{url}{dialect.connectPath}`; with the `query` or `both` handshake the address
 *   carries `sessionId` and `apiKey`; with `message` or `both` the first frame sent once open is
 *   `{ apiKey, sessionId }`. The key is `Credentials.keyFor("connect", agent)`, read afresh
 *   for every attempt. Addresses are logged and traced only through `Wire.redactUrl`.
 * - **Insecure transport.** `connect` fails with `InsecureTransport` for `ws://` to a host that is
 *   not loopback, unless `allowInsecure` is set.
 * - **Subscribe-then-connect.** The socket opens when `events` starts being consumed.
 * - **End.** `events` ends after delivering `complete` (the socket is closed with 1000), after
 *   delivering an `error` event with `endOnError`, after `close`, or when the service closes
 *   the channel with code 1000 before `complete` (the session ended: `AgentSessions` reports
 *   `SessionEndedWithoutComplete`). None of these reconnects.
 * - **Reconnect.** An abnormal close (any code but 1000, 1006 included), an open failure, a
 *   connect time-out (`ConnectTimeout`) or an idle time-out ends the attempt; the `reconnect`
 *   schedule, fed the error, decides the delay before the next one. The schedule restarts after
 *   an attempt that received at least one frame. When it gives up, `events` fails with
 *   `ConnectionLost { attempts, lastError }`, where `attempts` counts the attempts since the
 *   channel was last alive, the dropped one included; a channel that was never open fails with
 *   `NeverConnected` instead (see `firstConnect`).
 * - **Refused handshake.** HTTP 400, 401, 403, 404 or 410 at the upgrade (the key, or no such
 *   session), or close codes 1008, 4001, 4003, 4401, 4403: `HandshakeRejected { code, reason }`
 *   at once, never retried. Another status at the upgrade is an open failure (retried). A missing key:
 *   `MissingCredentials` / `MissingAgentKey`, not retried.
 * - **Superseded.** Close code 4000 (a newer connection to the same session took it over):
 *   `Superseded { reason }` at once, never reopened.
 * - **Replays.** Every event received is delivered, repeats included, unless the service is
 *   declared to replay (`replaysOnReconnect`): then a proven replay (the longest run of a reopened
 *   connection's first events equal, in order, to the last events delivered) is held and dropped.
 * - **Frames.** Decoded synchronously by one decoder per connection. A frame error
 *   (`MalformedFrame`, `EventDecodeError`, `FrameTooLarge`, `UnknownEvent` in strict mode) fails
 *   the stream, after the events before it; with `failOnFrameError: false` it is logged as a
 *   warning (raw frame cut to 4 KiB, never a key) and skipped, except an `action_run` that does
 *   not decode (chargeable: skipping it would hide it from the budget).
 * - **Back-pressure.** At most `bufferSize` frames wait for the consumer; then the socket stops
 *   reading (frames the socket had already read when it paused still arrive) until the consumer
 *   has taken half. The idle timer does not run while reading is paused. Pausing needs a socket
 *   with `pause()`/`resume()`, as the `ws` package's sockets have.
 * - **Answers.** `respond` accepts an answer for a request received on this connection
 *   and not yet answered (keyed by `action_session_id` and raw `resource_type`), else
 *   `RequestNotPending`. Accepted answers queue (at most `answerBufferSize`, then
 *   `AnswerBufferFull`) and are written in order while open, or right after the next handshake.
 *   An answer handed to an open socket counts as delivered once a later event arrives on the
 *   same connection (or the connection ends cleanly); if the socket drops abruptly first, it is
 *   written again after the reconnect (at least once: the service may see it twice). A write
 *   that fails leaves it queued and reopens the connection. A request asked again after its
 *   answer went through is pending again. When the channel closes for good, no request is pending any more, and answers still
 *   queued are reported with a warning log.
 * - **Close.** `close` (or closing the connection's scope) closes the socket with 1000; no
 *   reconnect follows; `events` ends after the events already received; `state` becomes
 *   `Closed { reason: "closed-by-caller" }`.
 * - **Observability.** Logs carry the `sessionId` annotation, spans `EventStream.connection` and
 *   `EventStream.attempt` the `sessionId` and redacted address; never the key.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: (options: Options) => Effect.Effect<Service, never, Requirements> = internal.make

/**
 * The WebSocket event channel as a layer.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options): LayerType => Layer.effect(EventStream, make(options))

/**
 * The requirements of the Server-Sent Events layer.
 *
 * @since 0.1.0
 * @category models
 */
export type SseRequirements = Credentials.Credentials | HttpClient.HttpClient

/**
 * Builds the event channel over Server-Sent Events, the observed client's second transport:
 * `GET {url}{dialect.sse.connectPath}?sessionId=...&apiKey=...` read as named SSE events
 * (`event:` is the wire event name, `data:` its JSON payload), answers `POST`ed to
 * `{url}{dialect.sse.egressPath}?sessionId=...&apiKey=...` as
 * `{ "event": "external_resource_granted", "data": ... }`. Here `url` is the HTTP base URL
 * (`https://host`), and the dialect defaults to `Dialect.observed`.
 *
 * The same `Connection` and the same guarantees as {@link make}, with these differences:
 * - the key always travels in the query (as the observed client sends it); it is kept out of
 *   logs, error messages and spans (the platform's HTTP span, which records the full URL, is
 *   turned off for these requests);
 * - HTTP 400, 401, 403, 404 or 410 on the `GET` is `HandshakeRejected`; any other status, a
 *   connect time-out, a broken or ended response body is retried on the schedule (an SSE stream
 *   that ends before `complete` is reopened, as an `EventSource` would);
 * - reading pauses by no longer pulling the response body; comments (`:` lines) keep the
 *   connection from being idle;
 * - an answer is sent once the `POST` is answered with a 2xx; a 5xx, 408, 429, time-out or
 *   network failure keeps it queued and reopens the connection; another status means the
 *   service refused it: the error is logged and the request is pending again.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeSse: (options: Options) => Effect.Effect<Service, never, SseRequirements> = sse.make

/**
 * The event channel over Server-Sent Events as a layer: see {@link makeSse}.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerSse = (options: Options): Layer.Layer<EventStream, never, SseRequirements> =>
  Layer.effect(EventStream, makeSse(options))

/**
 * The environment variable of the WebSocket base URL (`{ws_url}`).
 *
 * @since 0.1.0
 * @category models
 */
export const ENV_WS_URL: typeof ChannelAddress.environment.wsUrl = ChannelAddress.environment.wsUrl

/**
 * The environment variable naming the dialect: `documented` (default) or `observed`.
 *
 * @since 0.1.0
 * @category models
 */
export const ENV_DIALECT: typeof Http.environment.dialect = Http.environment.dialect

/**
 * The WebSocket base URL of a service whose HTTP base URL is given: the same address with
 * `http:` turned into `ws:` and `https:` into `wss:` (same host, port and base path; the
 * dialect's `connectPath` is appended to it, as to a `wsUrl` given explicitly).
 *
 * @example
 * ```ts
 * import { EventStream } from "effect-agent-session"
 *
 * EventStream.wsUrlFromBaseUrl("https://agents.example.com/api") // "wss://agents.example.com/api"
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const wsUrlFromBaseUrl: (baseUrl: string) => string = ChannelAddress.fromBaseUrl

/**
 * The options of {@link layerConfig}: each value a `Config` (defaults: the documented
 * variables), the rest as in {@link Options}.
 *
 * @since 0.1.0
 * @category models
 */
export interface ConfigOptions extends Omit<Options, "url" | "dialect" | "allowInsecure"> {
  /**
   * The WebSocket base URL (default: `AGENT_SESSION_WS_URL`, else derived from
   * `AGENT_SESSION_BASE_URL` with {@link wsUrlFromBaseUrl}).
   */
  readonly url?: Config.Config<string> | undefined
  /** The dialect (default: `AGENT_SESSION_DIALECT`, `documented` or `observed`, else `documented`). */
  readonly dialect?: Config.Config<Dialect.Dialect> | undefined
  /** Allows `ws://` to hosts that are not loopback (default: `false`). */
  readonly allowInsecure?: Config.Config<boolean> | undefined
}

/**
 * The WebSocket base URL from the environment: `AGENT_SESSION_WS_URL`, else derived from
 * `AGENT_SESSION_BASE_URL` ({@link wsUrlFromBaseUrl}).
 *
 * @since 0.1.0
 * @category constructors
 */
export const wsUrlConfig: Config.Config<string> = configString(ENV_WS_URL).pipe(
  Config.orElse(() => Config.map(configString(ChannelAddress.environment.baseUrl), wsUrlFromBaseUrl))
)

/**
 * The WebSocket event channel configured from `Config`s: `url` (default `AGENT_SESSION_WS_URL`,
 * else derived from `AGENT_SESSION_BASE_URL`), `dialect` (default `AGENT_SESSION_DIALECT`, else
 * `documented`) and `allowInsecure` (default `false`); every other option from `options`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerConfig = (
  options: ConfigOptions = {}
): Layer.Layer<EventStream, ConfigError, Requirements> =>
  layerFromConfig(
    Config.all({
      url: (options.url ?? wsUrlConfig).pipe(
        configValidated(ChannelAddress.isWebSocketUrl, ChannelAddress.invalidUrlMessage)
      ),
      dialect: options.dialect ??
        Dialect.config(ENV_DIALECT).pipe(
          Config.withDefault<Dialect.DialectName>("documented"),
          Config.map(Dialect.fromName)
        ),
      allowInsecure: options.allowInsecure ?? Config.succeed(false)
    }),
    (config) => layer({ ...options, ...config })
  )
