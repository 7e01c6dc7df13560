/**
 * The agent session protocol, written once, without I/O and without a framework (sans-I/O):
 * plain TypeScript that decides, while a shell (the Effect 3 SDK `effect-agent-session`, the
 * Effect 4 edition) owns sockets, fibers, schedules, schemas, spans and errors.
 *
 * @since 0.1.0
 */

/**
 * The Server-Sent Events line parser.
 *
 * @since 0.1.0
 */
export * as Sse from "./Sse.js"
