/**
 * The names of Effect 3 that the binding (the repository's `binding/`, Effect code written once
 * for both editions) uses where Effect 4 names the same thing differently. The Effect 4 edition's
 * `line.ts` exports the same names, bound to Effect 4: a binding module imports them from here
 * (`../src/internal/line.js`, relative to where it lies), never from the line's own module.
 */
import * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import type * as Either from "effect/Either"
import { identity } from "effect/Function"
import * as Schema from "effect/Schema"
import * as Socket from "@effect/platform/Socket"
import type * as Context from "effect/Context"

/** What a duration may be given as (`"5 seconds"`, millis, a `Duration`). */
export type DurationInput = Duration.DurationInput

/** The `Duration` of an input (a malformed one is a defect: inputs are typed). */
export const durationOf: (input: DurationInput) => Duration.Duration = Duration.decode

/** The result of a synchronous decode or validation: the value, or the error. */
export type Decoded<A, E> = Either.Either<A, E>

/** The effect of a synchronous decode's result: succeeds with the value, fails with the error. */
export const fromDecoded: <A, E>(decoded: Decoded<A, E>) => Effect.Effect<A, E> = identity

/** Decodes unknown input with a schema, as an effect. */
export const decodeUnknownEffect = Schema.decodeUnknown

/** The platform's sockets (`Socket.Socket`, `Socket.WebSocketConstructor`, ...). */
export { Socket }

/** What a WebSocket constructor is given beside the address: its subprotocols. */
export type WebSocketConstructorOptions = string | Array<string> | undefined

/** A WebSocket constructor: the service of `Socket.WebSocketConstructor`. */
export type WebSocketConstructorService = Context.Tag.Service<typeof Socket.WebSocketConstructor>

/** The subprotocols among a WebSocket constructor's options. */
export const protocolsOf: (options: WebSocketConstructorOptions) => string | Array<string> | undefined = identity
