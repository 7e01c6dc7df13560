/**
 * The agent session protocol, written once, without I/O and without a framework (sans-I/O):
 * plain TypeScript that decides, while a shell (the Effect 3 SDK `effect-agent-session`, the
 * Effect 4 edition) owns sockets, fibers, schedules, schemas, spans and errors.
 *
 * @since 0.1.0
 * @module effect-agent-session-core
 */

/**
 * How an attempt ends: close codes, refused upgrades, socket errors.
 *
 * @since 0.1.0
 */
export * as Close from "./Close.js"

/**
 * One connection of the event channel, as a state machine without I/O.
 *
 * @since 0.1.0
 */
export * as Connection from "./Connection.js"

/**
 * The errors' texts, and how a failed HTTP attempt is treated (retried, proving nothing was done).
 *
 * @since 0.1.0
 */
export * as Failures from "./Failures.js"

/**
 * The wire choices the service's document leaves open, as one value.
 *
 * @since 0.1.0
 */
export * as Dialect from "./Dialect.js"

/**
 * The events as the service names them: wire names, known values, the cost.
 *
 * @since 0.1.0
 */
export * as Events from "./Events.js"

/**
 * The answer ledger: which requests may be answered, where each answer is.
 *
 * @since 0.1.0
 */
export * as Ledger from "./Ledger.js"

/**
 * Flow control: when reading pauses and resumes.
 *
 * @since 0.1.0
 */
export * as Flow from "./Flow.js"

/**
 * The codecs a dialect selects, without the schemas: frames, handshake, answers.
 *
 * @since 0.1.0
 */
export * as Frame from "./Frame.js"

/**
 * The HTTP rules: status kinds, error messages, Retry-After, retries, Idempotency-Key, bodies.
 *
 * @since 0.1.0
 */
export * as Http from "./Http.js"

/**
 * Bounds on JSON text before it is parsed (nesting depth).
 *
 * @since 0.1.0
 */
export * as Json from "./Json.js"

/**
 * Which key each operation uses, what a usable key is.
 *
 * @since 0.1.0
 */
export * as Keys from "./Keys.js"

/**
 * The data model as values: agent domains, session statuses, a request's rules, timestamps
 *, the observed dialect's bodies.
 *
 * @since 0.1.0
 */
export * as Model from "./Model.js"

/**
 * Keys out of text; raw text bounded.
 *
 * @since 0.1.0
 */
export * as Secrets from "./Secrets.js"

/**
 * Recorded sessions: the format's lines parsed, validated and scrubbed; a recording read line by
 * line with bounded memory.
 *
 * @since 0.1.0
 */
export * as Recording from "./Recording.js"

/**
 * Replay detection after a reconnect.
 *
 * @since 0.1.0
 */
export * as Replay from "./Replay.js"

/**
 * A watched session: event kinds, the action budget, the outcome, the requests waiting for
 * an answer and their warnings.
 *
 * @since 0.1.0
 */
export * as Session from "./Session.js"

/**
 * The Server-Sent Events line parser.
 *
 * @since 0.1.0
 */
export * as Sse from "./Sse.js"

/**
 * Address rules: secure transport, printable addresses, paths, the handshake in the query.
 *
 * @since 0.1.0
 */
export * as Url from "./Url.js"
