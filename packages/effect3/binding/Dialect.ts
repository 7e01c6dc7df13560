/**
 * Every wire choice the document leaves open, gathered in one value. `Dialect.documented` (the
 * default) follows `service-interface.md`; `Dialect.observed` is how the service's own JavaScript
 * client talks to the live service. `Dialect.make` mixes the two.
 *
 * The declarations of the public module `Dialect`, written once for both editions:
 * each edition's `src/Dialect.ts` is its entry point and re-exports them.
 *
 * @since 0.1.0
 */
import type * as Config from "effect/Config"
import { Dialect as Core } from "effect-agent-session-core"
import { configLiterals, literals } from "../src/internal/line.js"

/**
 * How frames carry the event name and payload:
 * - `"event-data"`: `{ "event": name, "data": payload }`
 * - `"type-data"`: `{ "type": name, "data": payload }`
 * - `"flat"`: `{ "event": name, ...payload }`
 *
 * @since 0.1.0
 * @category models
 */
export type Framing = Core.Framing

/**
 * How the connection payload `{ apiKey, sessionId }` is delivered: as the first text
 * message, as query parameters of the address, or both.
 *
 * @since 0.1.0
 * @category models
 */
export type Handshake = Core.Handshake

/**
 * A path relative to a base URL.
 *
 * @since 0.1.0
 * @category models
 */
export type Path = Core.Path

/**
 * Every choice of a dialect: the auth header, the paths, the session envelope, the handshake,
 * the framing, the answer frame, heartbeats, the cost summary, the SSE paths
 * (the fields are documented on the protocol core's `Dialect`).
 *
 * @since 0.1.0
 * @category models
 */
export interface Dialect extends Core.Dialect {}

/**
 * The dialect of `service-interface.md`: Bearer auth, `/api/v1sessions`, a flat session,
 * the connection payload as the first message, frames `{ event, data }`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const documented: Dialect = Core.documented

/**
 * The dialect of the service's own JavaScript client (`spec/observed-dialect.md`): `x-api-key`,
 * `/api/v1/sessions`, `{ data: { sessionId } }`, the connection payload in the query string,
 * answers framed with `type`, `connected` and `heartbeat` events, `cost_summary` on `complete`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const observed: Dialect = Core.observed

/**
 * A custom dialect: the documented one with the given choices changed.
 *
 * @example
 * ```ts
 * import { Dialect } from "effect-agent-session"
 *
 * // The documented wire, but the handshake in the query string as well.
 * const mine = Dialect.make({ name: "mine", handshake: "both" })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: (choices: Partial<Dialect> & { readonly base?: Dialect }) => Dialect = Core.make

/**
 * The dialects by name, for configuration (`AGENT_SESSION_DIALECT`).
 *
 * @since 0.1.0
 * @category models
 */
export const DialectName = literals(Core.names)

/**
 * @since 0.1.0
 * @category models
 */
export type DialectName = typeof DialectName.Type

/**
 * The dialect of a name.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromName: (name: DialectName) => Dialect = Core.fromName

/**
 * A dialect name read from configuration (`documented` or `observed`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const config = (name: string): Config.Config<DialectName> => configLiterals(Core.names, name)
