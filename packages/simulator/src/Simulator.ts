/**
 * The reference simulator of the agent session service: a real server on loopback that serves the
 * HTTP contract of `ServiceApi.make(dialect)` with `HttpApiBuilder`, the WebSocket event channel
 * (`/v1/connect`) and the observed client's Server-Sent Events transport on the same port, runs a
 * deterministic scripted agent per session (see {@link Script}), and injects faults on demand.
 *
 * What it serves:
 * - `POST /agent/onboard` (account key only): agents in memory, unique names (409), a fresh
 *   `agk_...` key per agent.
 * - `POST {sessionsPath}` (account key or an agent key; the session then belongs to that agent):
 *   status `started`, an ISO `start_time`. `GET {sessionsPath}/:id` in the observed dialect only.
 * - Bad bodies are 400, bodies over `maxBodyBytes` 413, unknown paths and methods no route serves
 *   (`PUT`, `TRACE`, `CONNECT`, ...) 404, missing, empty or unknown keys 401; every error body is
 *   `{ _tag, error }`.
 * - The event channel: the handshake of the dialect (first message, query or both); an unknown
 *   session, another agent's session or a bad key is refused before the upgrade (404/403/401) with
 *   the query handshake, or with close 1008 after the message handshake. A session belongs to the
 *   principal that created it: the account key opens any session (its agents' too), an agent key
 *   only its own. Only the principal of a session's open connection may supersede it (close 4000);
 *   any other is refused (409 at the upgrade and on SSE, close 1008 after the message handshake).
 * - Bounds on everything a client sends ({@link Limits}): body size, drain and time, JSON depth,
 *   UTF-8, goal length, sessions per key and in all, agents, answers, client frames. Each refusal
 *   is a status with a `{ _tag, error }` body or a close code; nothing a client sends crashes it.
 * - Each session has a cursor: a client that reconnects after a drop receives the next unsent
 *   event, so every scripted event reaches it exactly once and in order.
 *
 * @example
 * ```ts
 * import { Simulator } from "effect-agent-session-simulator"
 * import * as Effect from "effect/Effect"
 *
 * const program = Effect.gen(function*() {
 *   const sim = yield* Simulator.make({ scenario: { ask: "none" } })
 *   yield* Effect.log(`serving on ${sim.baseUrl}`)
 * }).pipe(Effect.scoped)
 * ```
 *
 * @since 0.1.0
 */
import type * as HttpServerError from "@effect/platform/HttpServerError"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as Dialect from "effect-agent-session/Dialect"
import type * as SessionEvent from "effect-agent-session/SessionEvent"
import * as Wire from "effect-agent-session/Wire"
import * as Listen from "./internal/listen.js"
import * as Server from "./internal/server.js"
import type * as Script from "./Script.js"

/**
 * How the scripted agent of a session runs. Applies to sessions created after it is set.
 *
 * @since 0.1.0
 * @category models
 */
export interface Scenario {
  /** The actions the agent would like to run; it runs `min(actions, max_actions)`. Default 5. */
  readonly actions: number
  /** The pause before each event frame. Default 5 millis. */
  readonly frameDelay: Duration.DurationInput
  /**
   * What the agent asks in the middle of its run, waiting for the answer: nothing, an input
   * (`request_user_input`, field `email`) or a permission (`admin_permission_request`).
   * Default `"permission"`.
   */
  readonly ask: Script.Ask
  /**
   * How many actions the agent runs before it asks (with `ask`): a test that wants every
   * session waiting early, then all of them streaming at once after the answers. Default half
   * of them.
   */
  readonly askAfter?: number | undefined
  /**
   * Benchmarks: send `started`, `browser_started`, this many `action_run` frames as fast as the
   * socket takes them (back-pressure respected, no frame delay, no request), then `complete`.
   * Not capped by `max_actions`: create the session with `max_actions` at least this large.
   */
  readonly bulkActions?: number | undefined
  /**
   * The `action_session_id` of every session's events (a long one tests the bounds of a request's
   * key). Default derived from the session id (`as_<id>`).
   */
  readonly actionSessionId?: string | undefined
}

/**
 * Faults of the HTTP side, consumed in order: the 503s, then the 429s, then success.
 *
 * @since 0.1.0
 * @category models
 */
export interface HttpFaults {
  /** The next N HTTP requests answer 503 (no `Retry-After`). */
  readonly fail503?: number | undefined
  /** The next `count` requests (after the 503s) answer 429 with `Retry-After: retryAfter` (seconds or an HTTP date). */
  readonly rateLimit?: { readonly count: number; readonly retryAfter: string } | undefined
  /** Delay every response by this much. */
  readonly delay?: Duration.DurationInput | undefined
}

/**
 * Faults of the event channel (WebSocket and SSE). A session takes the faults current when it is
 * created (`setFaults` applies to sessions created later), except `rejectHandshake`, which is read
 * at each handshake. Event numbers `N` are 1-based positions in the session's script.
 *
 * @since 0.1.0
 * @category models
 */
export interface WsFaults {
  /**
   * Drop the connection abruptly (no close frame: the TCP socket is destroyed, a WebSocket client
   * sees 1006; an SSE response ends without its final chunk) right after the Nth event frame of
   * the session is flushed. Each count is used once per session.
   */
  readonly dropAfter?: ReadonlyArray<number> | undefined
  /** Send a frame that is not JSON before event N (once). */
  readonly malformedAt?: number | undefined
  /** Send `{"event":"mystery_event","data":{...}}` (in the dialect's framing) before event N (once). */
  readonly unknownEventAt?: number | undefined
  /** Send a valid-shaped `thoughts_and_memories` frame of `bytes` bytes before event N (once). */
  readonly oversize?: { readonly at: number; readonly bytes: number } | undefined
  /** Send nothing (heartbeats included) for `duration` after N event frames (once). */
  readonly stall?: { readonly after: number; readonly duration: Duration.DurationInput } | undefined
  /** Refuse every handshake: 401 before the upgrade (query handshake, SSE) or close 1008 (message handshake). */
  readonly rejectHandshake?: boolean | undefined
  /** Run this many `action_run` events beyond `max_actions` (the agent runs `max_actions + N` actions). */
  readonly exceedMaxActions?: number | undefined
  /** Close with 1011 where `complete` would be sent; `complete` is never sent (nor in the script). */
  readonly closeBeforeComplete?: boolean | undefined
  /**
   * Replay: a reopened connection starts with the last N events already flushed, then goes on
   * (a service that replays on reconnect; by default the simulator resumes at its cursor).
   */
  readonly replayOnReconnect?: number | undefined
}

/**
 * All faults.
 *
 * @since 0.1.0
 * @category models
 */
export interface Faults {
  readonly http?: HttpFaults | undefined
  readonly ws?: WsFaults | undefined
}

/**
 * The bounds the simulator keeps, so that no input crashes it and no flood grows it without limit.
 * Every refusal is an answer with a `{ _tag, error }` body (HTTP) or a close code and reason
 * (WebSocket); docs/reliability.md lists them.
 *
 * @since 0.1.0
 * @category models
 */
export interface Limits {
  /** The largest request body kept, in bytes; larger is 413 `PayloadTooLarge`. Default 64 KiB. */
  readonly maxBodyBytes: number
  /**
   * A body over `maxBodyBytes` is read to its end and thrown away (so the client reads the 413)
   * up to this many bytes; past it, the 413 is sent and the connection closed. Default 16 MiB.
   */
  readonly maxDrainBytes: number
  /** The longest a request body may take to arrive; then 408 `RequestTimeout`. Default 10 seconds. */
  readonly bodyTimeout: Duration.DurationInput
  /** The deepest JSON nesting of a body or a client frame; deeper is 400 / close 1007. Default 64. */
  readonly maxDepth: number
  /** The longest `goal`, in characters; longer is 400 `BadRequest`. Default 8,192. */
  readonly maxGoalLength: number
  /**
   * The most sessions one key (principal) holds. Past it the oldest session without an open
   * connection is forgotten; when all have one, 429 `RateLimited`. Default 1,000.
   */
  readonly maxSessionsPerKey: number
  /** The most sessions the simulator holds in all (same rule as per key). Default 5,000. */
  readonly maxSessions: number
  /** The most agents; onboarding past it is 403 `Forbidden`. Default 1,000. */
  readonly maxAgents: number
  /** The most answers a session keeps; one more is close 1008 (WebSocket) or 409 `Conflict` (egress). Default 4. */
  readonly maxAnswersPerRequest: number
  /** The longest string field of an answer; longer is close 1008 or 400. Default 4,096 characters. */
  readonly maxAnswerFieldLength: number
  /** The largest frame a client sends (handshake, answer); larger is close 1009 (WebSocket) or 413 (egress). Default 16 KiB. */
  readonly maxClientFrameBytes: number
}

/**
 * The default {@link Limits}.
 *
 * @since 0.1.0
 * @category models
 */
export const defaultLimits: Limits = {
  maxBodyBytes: 64 * 1024,
  maxDrainBytes: 16 * 1024 * 1024,
  bodyTimeout: Duration.seconds(10),
  maxDepth: Wire.defaultMaxDepth,
  maxGoalLength: 8192,
  maxSessionsPerKey: 1000,
  maxSessions: 5000,
  maxAgents: 1000,
  maxAnswersPerRequest: 4,
  maxAnswerFieldLength: 4096,
  maxClientFrameBytes: 16 * 1024
}

/**
 * The options of a simulator.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** The port; 0 (the default) picks a free one. */
  readonly port?: number | undefined
  /** The address to listen on. Default `127.0.0.1`. */
  readonly host?: string | undefined
  /**
   * The account key. Default, on loopback: {@link defaultAccountKey} (`sim-account-key`, printed
   * in the README). Listening beyond loopback ({@link isLoopback}: `0.0.0.0`, `::`, an interface's
   * address, a host name), the default is a random key (`sim_` and 32 base64url characters, read
   * it from `Service.accountKey`): with the well-known key, whoever reaches the port would be the
   * account.
   */
  readonly accountKey?: string | undefined
  /** The dialect the simulator speaks. Default `Dialect.documented`. */
  readonly dialect?: Dialect.Dialect | undefined
  /** The scenario of the sessions (see {@link Scenario} for the defaults). */
  readonly scenario?: Partial<Scenario> | undefined
  /** The faults from the start. */
  readonly faults?: Faults | undefined
  /** The largest request body; larger is 413. Default 64 KiB (the same as `limits.maxBodyBytes`, which it overrides). */
  readonly maxBodyBytes?: number | undefined
  /** The bounds (see {@link Limits}; each defaults to {@link defaultLimits}). */
  readonly limits?: Partial<Limits> | undefined
  /** The interval of `heartbeat` frames when the dialect sends them (observed). Default 2 seconds. */
  readonly heartbeatInterval?: Duration.DurationInput | undefined
  /** How long the message handshake may take before the socket is closed with 1008. Default 5 seconds (under the SDK's 10 s connect time-out, so a dialect mismatch shows as `HandshakeRejected` first). */
  readonly handshakeTimeout?: Duration.DurationInput | undefined
}

/**
 * A running simulator.
 *
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /** `http://127.0.0.1:PORT` */
  readonly baseUrl: string
  /** `ws://127.0.0.1:PORT` */
  readonly wsUrl: string
  readonly port: number
  readonly accountKey: string
  readonly dialect: Dialect.Dialect
  /** Replaces the faults: HTTP faults apply to later requests, event channel faults to sessions created later. */
  readonly setFaults: (faults: Faults) => Effect.Effect<void>
  /** Changes the scenario of sessions created later (merged with the current one). */
  readonly setScenario: (scenario: Partial<Scenario>) => Effect.Effect<void>
  /** The HTTP requests received so far, all routes (WebSocket upgrades are not counted). */
  readonly httpRequests: Effect.Effect<number>
  /**
   * The events the session's scripted agent sends, in order: what a client must receive exactly
   * once. For a session that asks, the events up to and including `external_resource_requested`
   * until the answer arrives, then the whole script. Empty for an unknown session.
   */
  readonly script: (sessionId: string) => Effect.Effect<ReadonlyArray<SessionEvent.SessionEvent>>
  /** The answers received for the session, in order (WebSocket frames and SSE egress). */
  readonly answers: (sessionId: string) => Effect.Effect<ReadonlyArray<Wire.AnswerData>>
  /** The handshakes accepted so far for the session (WebSocket and SSE). */
  readonly connections: (sessionId: string) => Effect.Effect<number>
}

/**
 * The simulator as a service.
 *
 * @since 0.1.0
 * @category tags
 */
export class Simulator extends Context.Tag("effect-agent-session/Simulator")<Simulator, Service>() {}

/**
 * The account key of a simulator on loopback when none is given.
 *
 * @since 0.1.0
 * @category constructors
 */
export const defaultAccountKey = "sim-account-key"

/**
 * Whether listening on `host` reaches only this machine: `localhost`, `127.0.0.0/8`, `::1` (also
 * in brackets, or IPv4-mapped). `0.0.0.0`, `::`, an interface's address and any other host name
 * are not loopback.
 *
 * @since 0.1.0
 * @category guards
 */
export const isLoopback = (host: string): boolean => {
  const h = host.trim().toLowerCase().replace(/^\[|\]$/g, "")
  return h === "localhost" || h === "::1" || h === "0:0:0:0:0:0:0:1" ||
    /^(::ffff:)?127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h)
}

/**
 * Starts a simulator in the current scope (closed with the scope).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: Options = {}): Effect.Effect<Service, HttpServerError.ServeError, Scope.Scope> =>
  Effect.gen(function*() {
    const dialect = options.dialect ?? Dialect.documented
    const host = options.host ?? "127.0.0.1"
    const accountKey = Listen.accountKeyFor(host, options.accountKey, isLoopback, defaultAccountKey)
    const limits: Limits = {
      ...defaultLimits,
      ...options.limits,
      ...(options.maxBodyBytes === undefined ? {} : { maxBodyBytes: options.maxBodyBytes })
    }
    return Simulator.of(yield* Server.serve(options, { dialect, host, accountKey, limits }))
  })

/**
 * A simulator on `options.port` (default: a free port) for the lifetime of the layer. A port that
 * cannot be bound is a defect; use {@link make} to handle it.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options?: Options): Layer.Layer<Simulator> =>
  Layer.scoped(Simulator, Effect.orDie(make(options)))
