/**
 * Every wire choice the service's document leaves open, gathered in one value: how the key is
 * sent, the paths, the session envelope, the handshake, the framing, the answer frame.
 * `documented` follows `service-interface.md`; `observed` is how the service's own
 * JavaScript client talks to the live service. Plain data: each edition re-exports it.
 *
 * @since 0.1.0
 */

/**
 * How frames carry the event name and payload:
 * - `"event-data"`: `{ "event": name, "data": payload }`
 * - `"type-data"`: `{ "type": name, "data": payload }`
 * - `"flat"`: `{ "event": name, ...payload }`
 *
 * @since 0.1.0
 * @category models
 */
export type Framing = "event-data" | "type-data" | "flat"

/**
 * How the connection payload `{ apiKey, sessionId }` is delivered: as the first text
 * message, as query parameters of the address, or both.
 *
 * @since 0.1.0
 * @category models
 */
export type Handshake = "message" | "query" | "both"

/**
 * A path relative to a base URL.
 *
 * @since 0.1.0
 * @category models
 */
export type Path = `/${string}`

/**
 * Every choice of a dialect.
 *
 * @since 0.1.0
 * @category models
 */
export interface Dialect {
  /** A name for logs and errors. */
  readonly name: string
  /** The HTTP header that carries the key: `Authorization: Bearer <key>` or `x-api-key: <key>`. */
  readonly auth: "bearer" | "x-api-key"
  /** The onboard path, relative to the base URL. */
  readonly onboardPath: Path
  /** The create-session path: `/api/v1sessions` (documented) or `/api/v1/sessions` (observed). */
  readonly sessionsPath: Path
  /** The body sent to create a session: `start_url`, `max_actions`, `goal` (documented) or `goal`, `url`, `max_actions`, `auto_trigger` (observed). */
  readonly createSessionBody: "documented" | "observed"
  /** The create-session response: flat `{ session_id, status, ... }` or `{ data: { sessionId, ... } }`. */
  readonly sessionResponse: "flat" | "data-envelope"
  /** Whether `GET {sessionsPath}/<id>` exists (observed dialect only). */
  readonly retrieve: boolean
  /** The event channel path, relative to the WebSocket base URL. */
  readonly connectPath: Path
  /** How the connection payload is delivered. */
  readonly handshake: Handshake
  /** How server frames are wrapped. */
  readonly framing: Framing
  /** The key that names the event on frames the client sends (answers): `event` or `type`. */
  readonly answerKey: "event" | "type"
  /** Whether the server sends `connected` on open and `heartbeat` every few seconds. */
  readonly heartbeats: boolean
  /** Whether `complete` carries `cost_summary` (observed) rather than only `total_cost`. */
  readonly costSummary: boolean
  /**
   * Whether the service is known to send again, on a reopened connection, the last events it had
   * sent before (a replay). When true, a proven replay is dropped: the longest run of the
   * reopened connection's first events that equals, in order, the last events delivered
   * (`Replay`). When false (both built-in dialects: neither the document nor the observed client
   * says the service replays), every event received is delivered, repeats included.
   */
  readonly replaysOnReconnect: boolean
  /** The Server-Sent Events transport's paths (observed dialect's second transport). */
  readonly sse: {
    readonly connectPath: Path
    readonly egressPath: string
  }
}

/**
 * The dialect of `service-interface.md`: Bearer auth, `/api/v1sessions`, a flat session,
 * the connection payload as the first message, frames `{ event, data }`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const documented: Dialect = {
  name: "documented",
  auth: "bearer",
  onboardPath: "/agent/onboard",
  sessionsPath: "/api/v1sessions",
  createSessionBody: "documented",
  sessionResponse: "flat",
  retrieve: false,
  connectPath: "/v1/connect",
  handshake: "message",
  framing: "event-data",
  answerKey: "event",
  heartbeats: false,
  costSummary: false,
  replaysOnReconnect: false,
  sse: { connectPath: "/events/v1/connect", egressPath: "/events/v1/egress" }
}

/**
 * The dialect of the service's own JavaScript client (`spec/observed-dialect.md`): `x-api-key`,
 * `/api/v1/sessions`, `{ data: { sessionId } }`, the connection payload in the query string,
 * answers framed with `type`, `connected` and `heartbeat` events, `cost_summary` on `complete`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const observed: Dialect = {
  name: "observed",
  auth: "x-api-key",
  onboardPath: "/agent/onboard",
  sessionsPath: "/api/v1/sessions",
  createSessionBody: "observed",
  sessionResponse: "data-envelope",
  retrieve: true,
  connectPath: "/v1/connect",
  handshake: "query",
  framing: "event-data",
  answerKey: "type",
  heartbeats: true,
  costSummary: true,
  replaysOnReconnect: false,
  sse: { connectPath: "/events/v1/connect", egressPath: "/events/v1/egress" }
}

/**
 * A custom dialect: the `base` one (default {@link documented}) with the given choices changed.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (choices: Partial<Dialect> & { readonly base?: Dialect }): Dialect => {
  const { base = documented, ...rest } = choices
  return { ...base, ...rest }
}

/**
 * The names of the built-in dialects, as a configuration gives them (`AGENT_SESSION_DIALECT`).
 *
 * @since 0.1.0
 * @category models
 */
export const names = ["documented", "observed"] as const

/**
 * The dialects by name.
 *
 * @since 0.1.0
 * @category models
 */
export type DialectName = (typeof names)[number]

/**
 * The dialect of a name.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromName = (name: DialectName): Dialect => name === "observed" ? observed : documented

/**
 * The HTTP header that carries a key in a dialect: its name and value.
 *
 * @since 0.1.0
 * @category constructors
 */
export const authHeader = (auth: Dialect["auth"], key: string): readonly [name: string, value: string] =>
  auth === "bearer" ? ["authorization", `Bearer ${key}`] : ["x-api-key", key]
